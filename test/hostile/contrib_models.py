"""Models for the hostile cases of the legacy ai.onnx.ml tree operators, the
ai.onnx.ml pre-processing operators and com.microsoft DynamicQuantizeLSTM,
MatMulNBits and GroupQueryAttention (run_hostile_models.py)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ML = "ai.onnx.ml"


def legacy_classifier(**over) -> onnx.ModelProto:
    """A one-tree TreeEnsembleClassifier over X [N, 3] (node 0 splits, nodes 1
    and 2 are leaves) with three classes; `over` replaces attributes."""
    attrs = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0],
                 nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0],
                 nodes_falsenodeids=[2, 0, 0], class_treeids=[0, 0, 0, 0, 0, 0], class_nodeids=[1, 1, 1, 2, 2, 2],
                 class_ids=[0, 1, 2, 0, 1, 2], class_weights=[0.2, 0.5, 0.3, 0.6, 0.1, 0.3],
                 classlabels_int64s=[10, 20, 30])
    attrs.update(over)
    attrs = {k: v for k, v in attrs.items() if v is not None}  # None removes an attribute
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], name="forest0", domain=ML, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
                          [helper.make_tensor_value_info("label", TensorProto.INT64, [None]),
                           helper.make_tensor_value_info("prob", TensorProto.FLOAT, [None, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])


def scaler(offset, scale) -> onnx.ModelProto:
    node = helper.make_node("Scaler", ["X"], ["Y"], name="scale0", domain=ML, offset=offset, scale=scale)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])


def dq_lstm(w_shape=(1, 4, 8), hidden=2, with_lens=False, **attrs) -> onnx.ModelProto:
    """A forward com.microsoft DynamicQuantizeLSTM over X [T, N, 4]."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.integers(-9, 9, size=w_shape).astype(np.int8), "W"),
             numpy_helper.from_array(rng.integers(-9, 9, size=(1, hidden, 4 * hidden)).astype(np.int8), "R"),
             numpy_helper.from_array(np.array([0.1], np.float32), "ws"),
             numpy_helper.from_array(np.zeros(1, np.int8), "wz"),
             numpy_helper.from_array(np.array([0.1], np.float32), "rs"),
             numpy_helper.from_array(np.zeros(1, np.int8), "rz"),
             numpy_helper.from_array(np.array([2, 2], np.int32), "lens")]
    ins = ["X", "W", "R", "", "lens" if with_lens else "", "", "", "", "ws", "wz", "rs", "rz"]
    node = helper.make_node("DynamicQuantizeLSTM", ins, ["Y"], name="qlstm0", domain="com.microsoft",
                            hidden_size=hidden, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2, 4])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def matmul_nbits(b_shape=(4, 1, 8), bits=4, **attrs) -> onnx.ModelProto:
    """com.microsoft MatMulNBits of A [N, 16] by a 16 x 4 weight in one block."""
    inits = [numpy_helper.from_array(np.zeros(b_shape, np.uint8), "B"),
             numpy_helper.from_array(np.ones(4, np.float32), "scales")]
    node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], name="nbits0", domain="com.microsoft",
                            K=16, N=4, bits=bits, block_size=16, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [None, 16])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def gqa(**attrs) -> onnx.ModelProto:
    """com.microsoft GroupQueryAttention over [B, S, 32] queries, 16-wide heads."""
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(n, f, s) for n, s in
           (("q", [1, 2, 32]), ("k", [1, 2, 32]), ("v", [1, 2, 32]), ("pk", [1, 2, 0, 16]), ("pv", [1, 2, 0, 16]))]
    ins += [helper.make_tensor_value_info("sl", TensorProto.INT32, [1]), helper.make_tensor_value_info("tot", TensorProto.INT32, [])]
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sl", "tot"], ["y", "pko", "pvo"],
                            name="gqa0", domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", f, [1, 2, 32])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def register(case) -> None:
    """The hostile cases over these models (`case` as in run_hostile_models.py)."""
    case("legacy_tree_missing_child", lambda c: c.write(legacy_classifier(nodes_falsenodeids=[5, 0, 0])),
         ["'forest0'", "branches to node 5, which does not exist"])
    case("legacy_tree_weight_on_branch", lambda c: c.write(legacy_classifier(class_nodeids=[0, 1, 1, 2, 2, 2])),
         ["'forest0'", "not a leaf"])
    case("legacy_tree_class_out_of_range", lambda c: c.write(legacy_classifier(class_ids=[0, 1, 7, 0, 1, 2])),
         ["'forest0'", "class 7 of 3"])
    case("legacy_tree_two_roots", lambda c: c.write(legacy_classifier(nodes_truenodeids=[2, 0, 0])),
         ["'forest0'", "more than one root"])
    case("legacy_tree_duplicate_node", lambda c: c.write(legacy_classifier(nodes_nodeids=[0, 1, 1])),
         ["'forest0'", "defined twice"])
    case("legacy_tree_bad_mode", lambda c: c.write(legacy_classifier(nodes_modes=["BRANCH_XX", "LEAF", "LEAF"])),
         ["'forest0'", "'BRANCH_XX'"])
    case("legacy_tree_cycle",
         lambda c: c.write(legacy_classifier(nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"],
                                             nodes_truenodeids=[1, 1, 0], nodes_falsenodeids=[2, 2, 0],
                                             class_nodeids=[2] * 6)),
         ["'forest0'", "cycle"])
    case("legacy_tree_string_labels",
         lambda c: c.write(legacy_classifier(classlabels_int64s=None, classlabels_strings=["a", "b", "c"])),
         ["'forest0'", "string class labels"])
    case("scaler_wrong_length", lambda c: c.write(scaler([1.0, 2.0], [1.0])),
         ["'scale0'", "offset has 2 values for 3 features"])
    case("dq_lstm_weight_shape", lambda c: c.write(dq_lstm(w_shape=(1, 4, 6))),
         ["'qlstm0'", "W must be [1, input_size, 8]"])
    case("dq_lstm_sequence_lens", lambda c: c.write(dq_lstm(with_lens=True)),
         ["'qlstm0'", "sequence_lens"])
    case("nbits_wrong_blob", lambda c: c.write(matmul_nbits(b_shape=(4, 1, 6))),
         ["'nbits0'", "B must be uint8 [4, 1, 8]"])
    case("nbits_eight_bits", lambda c: c.write(matmul_nbits(bits=8)), ["'nbits0'", "bits = 8 is not supported"])
    case("gqa_heads_not_multiple", lambda c: c.write(gqa(num_heads=3, kv_num_heads=2)),
         ["'gqa0'", "num_heads must be a multiple of kv_num_heads"])
    case("gqa_softcap", lambda c: c.write(gqa(num_heads=2, kv_num_heads=2, softcap=30.0)),
         ["'gqa0'", "'softcap' is not supported"])
    case("dq_lstm_clip", lambda c: c.write(dq_lstm(clip=3.0)), ["'qlstm0'", "'clip' is not supported"],
         check_too=True)
