"""ai.onnx.ml TreeEnsemble models for the hostile cases (run_hostile_models.py)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tree_model(**over) -> onnx.ModelProto:
    """A two-tree ai.onnx.ml TreeEnsemble over X [N, 3]; `over` replaces
    attributes (lists of ints, or numpy arrays for the tensor ones)."""
    attrs = dict(nodes_featureids=[0, 1, 2], nodes_splits=np.array([0.5, -0.2, 1.0], np.float32),
                 nodes_modes=np.array([0, 0, 0], np.uint8), nodes_truenodeids=[1, 1, 3], nodes_trueleafs=[0, 1, 1],
                 nodes_falsenodeids=[0, 2, 4], nodes_falseleafs=[1, 1, 1], tree_roots=[0, 2],
                 leaf_targetids=[0, 1, 0, 1, 0], leaf_weights=np.array([1, 2, 3, 4, 5], np.float32), n_targets=2,
                 aggregate_function=1, post_transform=0)
    attrs.update(over)
    kw = {k: (numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v) for k, v in attrs.items()}
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], name="trees0", domain="ai.onnx.ml", **kw)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])
    m.ir_version = 10
    return m


def deep_tree() -> onnx.ModelProto:
    """One tree of 2000 nodes in a chain (each node's false branch the next)."""
    n = 2000
    return tree_model(nodes_featureids=[0] * n, nodes_splits=np.zeros(n, np.float32),
                      nodes_modes=np.zeros(n, np.uint8), nodes_truenodeids=list(range(n)),
                      nodes_trueleafs=[1] * n, nodes_falsenodeids=list(range(1, n)) + [n],
                      nodes_falseleafs=[0] * (n - 1) + [1], tree_roots=[0], leaf_targetids=[0] * (n + 1),
                      leaf_weights=np.ones(n + 1, np.float32))


def register(case) -> None:
    """The hostile cases over these models (`case` as in run_hostile_models.py)."""
    case("tree_branch_to_missing_node", lambda c: c.write(tree_model(nodes_truenodeids=[7, 1, 3])),
         ["'trees0'", "branches to node 7, which does not exist"])
    case("tree_branch_to_missing_leaf", lambda c: c.write(tree_model(nodes_falsenodeids=[9, 2, 4])),
         ["'trees0'", "branches to leaf 9, which does not exist"])
    case("tree_cycle", lambda c: c.write(tree_model(nodes_truenodeids=[1, 0, 3], nodes_trueleafs=[0, 0, 1])),
         ["'trees0'", "form a cycle"])
    case("tree_feature_out_of_range", lambda c: c.write(tree_model(nodes_featureids=[0, 5, 2])),
         ["'trees0'", "reads feature 5 of 3"])
    case("tree_target_out_of_range", lambda c: c.write(tree_model(leaf_targetids=[0, 1, 0, 2, 0])),
         ["'trees0'", "adds to target 2 of 2"])
    case("tree_root_not_a_node", lambda c: c.write(tree_model(tree_roots=[0, 3])),
         ["'trees0'", "tree root 3 is not a node"])
    case("tree_lengths_differ", lambda c: c.write(tree_model(nodes_trueleafs=[0, 1])),
         ["'trees0'", "one entry per node"])
    case("tree_member_mode", lambda c: c.write(tree_model(nodes_modes=np.array([0, 6, 0], "uint8"))),
         ["'trees0'", "BRANCH_MEMBER"])
    case("tree_too_deep", lambda c: c.write(deep_tree()), ["'trees0'", "2000 levels deep; at most 1024"])
    case("tree_bad_post_transform", lambda c: c.write(tree_model(post_transform=7)),
         ["'trees0'", "post_transform must be 0 to 4"], check_too=True)
