"""End-to-end cases: operators over dims known only at run time (3-D pooling,
convolutions with run-time weight dims, float Range of integers) and op
families outside the default domain's core (ai.onnx.ml TreeEnsemble, opset-7
BatchNormalization, com.microsoft DynamicQuantizeLSTM, ai.onnx.ml pre-processing). Registered through models.all_generators()."""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from models import F32, Case, GraphBuilder, _randn, _vi


def make_pool3d_runtime() -> Case:
    """3-D max / average pooling (separable: over H, W, then D) of a video
    tensor whose channels and spatial dims are all known only at run time."""
    g = GraphBuilder(seed=46)
    g.op("MaxPool", ["x"], out_names=["m"], kernel_shape=[2, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 1, 1, 1])
    g.op("AveragePool", ["x"], out_names=["a"], kernel_shape=[3, 2, 2], strides=[2, 1, 2], pads=[1, 0, 0, 1, 1, 1])
    m = g.model("pool3d_runtime", [_vi("x", F32, ["N", "C", "D", "H", "W"])],
                [_vi("m", F32, ["N", "C", "A", "B", "E"]), _vi("a", F32, ["N", "C", "F", "G", "I"])])
    rng = np.random.default_rng(146)
    return Case(m, [{"x": _randn(rng, [1, 3, 4, 7, 6])}, {"x": _randn(rng, [2, 2, 5, 4, 9])}],
                note="3-D pooling over run-time channels and spatial dims")


def make_window_conv() -> Case:
    """Convolutions v4f.conv does not take, through v4f.window_conv: a 3-D
    conv (video) with bias, strides, dilations and asymmetric pads over
    run-time frames and planes; a grouped 2-D conv and a 1-D conv whose
    weights are graph inputs with dims known only at run time."""
    g = GraphBuilder(seed=47)
    w3 = g.randn([4, 3, 3, 2, 3], 0.3, "w")
    b3 = g.randn([4], 0.1, "b")
    g.op("Conv", ["x", w3, b3], out_names=["v"], strides=[1, 2, 1], dilations=[2, 1, 1], pads=[1, 0, 1, 1, 1, 0])
    g.op("Conv", ["x2", "w2"], out_names=["y2"], group=2, strides=[2, 1], pads=[1, 1, 0, 1])
    g.op("Conv", ["x1", "w1", "b1"], out_names=["y1"], pads=[2, 0])
    m = g.model("window_conv",
                [_vi("x", F32, ["N", 3, "D", "H", "W"]), _vi("x2", F32, ["N", "C", "H2", "W2"]),
                 _vi("w2", F32, ["F", "Cg", "KH", "KW"]), _vi("x1", F32, [1, "C1", "L"]),
                 _vi("w1", F32, ["F1", "C1", "K1"]), _vi("b1", F32, ["F1"])],
                [_vi("v", F32, ["N", 4, "A", "B", "E"]), _vi("y2", F32, ["N", "F", "G", "I"]),
                 _vi("y1", F32, [1, "F1", "J"])])
    rng = np.random.default_rng(147)

    def inputs(n, d, h, w, c2, f2, kh, kw, c1, f1, k1, length):
        return {"x": _randn(rng, [n, 3, d, h, w]), "x2": _randn(rng, [n, c2, h + 1, w + 2]),
                "w2": _randn(rng, [f2, c2 // 2, kh, kw]), "x1": _randn(rng, [1, c1, length]),
                "w1": _randn(rng, [f1, c1, k1]), "b1": _randn(rng, [f1])}
    return Case(m, [inputs(1, 6, 7, 5, 4, 6, 3, 2, 3, 5, 3, 9), inputs(2, 5, 4, 6, 6, 4, 2, 3, 2, 3, 1, 6)],
                note="3-D conv and convs with run-time weight dims")


def make_tree_ensemble() -> Case:
    """ai.onnx.ml TreeEnsemble (opset 5) with random trees of mixed depth:
    two targets summed; one target averaged with BRANCH_LT splits (its
    post_transform is ignored, as by ONNX's reference implementation and ONNX
    Runtime); NaN features follow the true branch where the node says so.
    Rows are known only at run time."""
    from onnx import numpy_helper
    rng = np.random.default_rng(148)
    F = 6

    def forest(trees, targets, max_depth):
        feat, split, tnode, tleaf, fnode, fleaf, missing, roots, ltarget, lweight = ([] for _ in range(10))

        def grow(depth):
            i = len(feat)
            feat.append(0), split.append(0.0), tnode.append(0), tleaf.append(0), fnode.append(0), fleaf.append(0)
            missing.append(int(rng.integers(0, 2)))
            feat[i] = int(rng.integers(0, F))
            split[i] = float(rng.normal())
            for side in (0, 1):
                if depth + 1 < max_depth and rng.random() < 0.7:
                    child, leaf = grow(depth + 1), 0
                else:
                    child, leaf = len(ltarget), 1
                    ltarget.append(int(rng.integers(0, targets)))
                    lweight.append(float(rng.normal()))
                (tnode if side else fnode)[i] = child
                (tleaf if side else fleaf)[i] = leaf
            return i

        for _ in range(trees):
            roots.append(grow(0))
        return dict(nodes_featureids=feat, nodes_splits=numpy_helper.from_array(np.array(split, np.float32)),
                    nodes_truenodeids=tnode, nodes_trueleafs=tleaf, nodes_falsenodeids=fnode,
                    nodes_falseleafs=fleaf, nodes_missing_value_tracks_true=missing, tree_roots=roots,
                    leaf_targetids=ltarget, leaf_weights=numpy_helper.from_array(np.array(lweight, np.float32)),
                    n_targets=targets)

    a = forest(12, 2, 5)
    a["nodes_modes"] = numpy_helper.from_array(np.zeros(len(a["nodes_featureids"]), np.uint8))
    b = forest(7, 1, 4)
    b["nodes_modes"] = numpy_helper.from_array(np.full(len(b["nodes_featureids"]), 1, np.uint8))
    nodes = [onnx.helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", aggregate_function=1, **a),
             onnx.helper.make_node("TreeEnsemble", ["x"], ["p"], domain="ai.onnx.ml", aggregate_function=0,
                                   post_transform=2, **b)]
    g = onnx.helper.make_graph(nodes, "tree_ensemble", [_vi("x", F32, ["N", F])],
                               [_vi("y", F32, ["N", 2]), _vi("p", F32, ["N", 1])])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 21),
                                                 onnx.helper.make_opsetid("ai.onnx.ml", 5)])
    m.ir_version = 10

    def rows(n):
        x = _randn(rng, [n, F])
        x[rng.random([n, F]) < 0.15] = np.nan
        return {"x": x}
    return Case(m, [rows(9), rows(33)], note="tree ensembles with NaN features")


def make_range_float_runtime() -> Case:
    """A float Range whose limit is a dim cast to float (YOLOv8's anchor
    grid: arange(end=w) + 0.5 over the feature map's width and height), and
    one with a negative integral step over an int32 dim."""
    g = GraphBuilder(seed=49)
    g.op("Shape", ["x"], out_names=["s"])
    g.op("Gather", ["s", g.const(np.array(3, np.int64))], out_names=["w"])
    g.op("Cast", ["w"], out_names=["wf"], to=TensorProto.FLOAT)
    g.op("Range", [g.const(np.array(0.0, np.float32)), "wf", g.const(np.array(1.0, np.float32))], out_names=["r"])
    g.op("Add", ["r", g.const(np.array(0.5, np.float32))], out_names=["gx"])
    g.op("Gather", ["s", g.const(np.array(2, np.int64))], out_names=["h"])
    g.op("Cast", ["h"], out_names=["h32"], to=TensorProto.INT32)
    g.op("Cast", ["h32"], out_names=["hf"], to=TensorProto.FLOAT)
    g.op("Range", ["hf", g.const(np.array(-1.0, np.float32)), g.const(np.array(-2.0, np.float32))],
         out_names=["gy"])
    m = g.model("range_float_runtime", [_vi("x", F32, [1, 2, "H", "W"])],
                [_vi("gx", F32, ["W"]), _vi("gy", F32, ["K"])])
    rng = np.random.default_rng(149)
    return Case(m, [{"x": _randn(rng, [1, 2, 5, 8])}, {"x": _randn(rng, [1, 2, 10, 3])}],
                note="float Range over run-time dims")


def make_batchnorm_opset7() -> Case:
    """BatchNormalization as opset 7 writes it (the `spatial` attribute, 1:
    one mean per channel) in a model of opset 7 over run-time N, H, W (IR
    version 3: the initializers are graph inputs too)."""
    rng = np.random.default_rng(152)
    params = {"s": rng.standard_normal(4) * 0.5, "b": rng.standard_normal(4) * 0.1,
              "m": rng.standard_normal(4) * 0.1, "v": np.abs(rng.standard_normal(4)) + 0.5}
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3, spatial=1)
    graph = helper.make_graph([node], "batchnorm_opset7",
                              [_vi("x", F32, ["N", 4, "H", "W"])] + [_vi(k, F32, [4]) for k in params],
                              [_vi("y", F32, ["N", 4, "H", "W"])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)], producer_name="v4f-e2e")
    m.ir_version = 3
    return Case(m, [{"x": _randn(rng, [1, 4, 5, 6])}, {"x": _randn(rng, [3, 4, 2, 7])}],
                note="BatchNormalization-7")


def _dq_lstm_model(name: str, direction: str, I: int, H: int, with_states: bool, seed: int) -> onnx.ModelProto:
    D = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, size=(D, I, 4 * H)).astype(np.int8)
    r = rng.integers(-127, 128, size=(D, H, 4 * H)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array((rng.normal(size=(D, 8 * H)) * 0.3).astype(np.float32), "B"),
             numpy_helper.from_array(np.full(D, 0.02, np.float32) + np.arange(D, dtype=np.float32) * 0.005, "ws"),
             numpy_helper.from_array(np.zeros(D, np.int8), "wz"),
             numpy_helper.from_array(np.full(D, 0.03, np.float32), "rs"),
             numpy_helper.from_array(np.zeros(D, np.int8), "rz")]
    ins = ["x", "W", "R", "B", "", "h0" if with_states else "", "c0" if with_states else "", "", "ws", "wz", "rs", "rz"]
    node = helper.make_node("DynamicQuantizeLSTM", ins, ["y", "yh", "yc"], domain="com.microsoft",
                            direction=direction, hidden_size=H)
    inputs = [_vi("x", F32, ["T", "N", I])]
    if with_states:
        inputs += [_vi("h0", F32, [D, "N", H]), _vi("c0", F32, [D, "N", H])]
    graph = helper.make_graph([node], name, inputs,
                              [_vi("y", F32, ["T", D, "N", H]), _vi("yh", F32, [D, "N", H]),
                               _vi("yc", F32, [D, "N", H])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def make_dynamic_quantize_lstm() -> Case:
    """com.microsoft DynamicQuantizeLSTM (onnxruntime's quantize_dynamic of an
    LSTM): int8 W and R, expanded into ops that round as ONNX Runtime does (X
    quantized as a whole, h per row each step). Bidirectional with initial
    states over run-time T; one row per batch, where ONNX Runtime's numbers do
    not depend on its thread count."""
    m = _dq_lstm_model("dynamic_quantize_lstm", "bidirectional", 6, 8, True, 301)
    rng = np.random.default_rng(302)

    def inputs(T):
        return {"x": _randn(rng, [T, 1, 6]), "h0": _randn(rng, [2, 1, 8]) * 0.5, "c0": _randn(rng, [2, 1, 8]) * 0.5}

    return Case(m, [inputs(5), inputs(2), inputs(9)], note="T = 5 / 2 / 9, one row")


def make_dynamic_quantize_lstm_wide() -> Case:
    """DynamicQuantizeLSTM with a hidden size above 256 (ONNX Runtime then
    quantizes h over the whole batch) in reverse, two rows, zero initial
    states."""
    m = _dq_lstm_model("dynamic_quantize_lstm_wide", "reverse", 4, 260, False, 303)
    rng = np.random.default_rng(304)
    return Case(m, [{"x": _randn(rng, [3, 2, 4])}, {"x": _randn(rng, [4, 2, 4])}], note="H = 260, T = 3 / 4")


def make_ml_preprocessing() -> Case:
    """The ai.onnx.ml pre-processing operators skl2onnx writes in front of a
    model: Scaler (per-feature offset and scale) of int64 features, then
    Normalizer (MAX, L1, L2, with an all-zero row), Binarizer and
    ArrayFeatureExtractor, over run-time rows."""
    ml = "ai.onnx.ml"
    nodes = [helper.make_node("Scaler", ["x"], ["s"], domain=ml, offset=[1.0, -2.0, 0.5, 3.0],
                              scale=[0.5, 2.0, -1.0, 0.25]),
             helper.make_node("Normalizer", ["s"], ["nmax"], domain=ml, norm="MAX"),
             helper.make_node("Normalizer", ["s"], ["nl1"], domain=ml, norm="L1"),
             helper.make_node("Normalizer", ["s"], ["nl2"], domain=ml, norm="L2"),
             helper.make_node("Binarizer", ["s"], ["bin"], domain=ml, threshold=0.75),
             helper.make_node("ArrayFeatureExtractor", ["s", "pick"], ["picked"], domain=ml)]
    graph = helper.make_graph(
        nodes, "ml_preprocessing", [_vi("x", TensorProto.INT64, ["N", 4])],
        [_vi("nmax", F32, ["N", 4]), _vi("nl1", F32, ["N", 4]), _vi("nl2", F32, ["N", 4]), _vi("bin", F32, ["N", 4]),
         _vi("picked", F32, ["N", 2])],
        [numpy_helper.from_array(np.array([3, 1], np.int64), "pick")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ml, 3)])
    rng = np.random.default_rng(216)
    zero_row = np.array([[1, -2, 0, 3]], np.int64)  # scales to all zeros
    sets = [{"x": np.concatenate([rng.integers(-5, 6, size=(3, 4)), zero_row]).astype(np.int64)},
            {"x": rng.integers(-9, 10, size=(6, 4)).astype(np.int64)}]
    return Case(m, sets, note="4 rows (one scaling to zeros) / 6 rows")


def _legacy_trees(rng, trees: int, depth: int, features: int):
    """Random legacy node tables (tree id, node id) and the leaves' keys."""
    attrs = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes",
                             "nodes_truenodeids", "nodes_falsenodeids")}
    leaves = []
    for t in range(trees):
        counter = [0]

        def grow(d):
            i = counter[0]
            counter[0] += 1
            slot = len(attrs["nodes_treeids"])
            for k in attrs:
                attrs[k].append(0)
            attrs["nodes_treeids"][slot], attrs["nodes_nodeids"][slot] = t, i
            if d == depth or (d > 0 and rng.random() < 0.25):
                attrs["nodes_modes"][slot] = "LEAF"
                leaves.append((t, i))
                return i
            attrs["nodes_modes"][slot] = "BRANCH_LEQ"
            attrs["nodes_featureids"][slot] = int(rng.integers(0, features))
            attrs["nodes_values"][slot] = float(rng.normal())
            attrs["nodes_truenodeids"][slot] = grow(d + 1)
            attrs["nodes_falsenodeids"][slot] = grow(d + 1)
            return i

        grow(0)
    return attrs, leaves


def make_tree_ensemble_legacy() -> Case:
    """The legacy ai.onnx.ml tree operators skl2onnx writes for scikit-learn
    forests: a 3-class TreeEnsembleClassifier (SOFTMAX, base values), a
    binary one with one weight column (s = the positive class's
    probability: scores [1 - s, s]) and a TreeEnsembleRegressor (AVERAGE of
    two targets plus base values), over run-time rows."""
    rng = np.random.default_rng(217)
    ml = "ai.onnx.ml"
    F = 5
    multi, multi_leaves = _legacy_trees(rng, 3, 3, F)
    multi.update(class_treeids=[t for t, _ in multi_leaves for _ in range(3)],
                 class_nodeids=[n for _, n in multi_leaves for _ in range(3)],
                 class_ids=[k for _ in multi_leaves for k in range(3)],
                 class_weights=[float(rng.normal()) for _ in multi_leaves for _ in range(3)])
    binary, binary_leaves = _legacy_trees(rng, 2, 3, F)
    binary.update(class_treeids=[t for t, _ in binary_leaves], class_nodeids=[n for _, n in binary_leaves],
                  class_ids=[0] * len(binary_leaves), class_weights=[float(rng.random() / 2) for _ in binary_leaves])
    reg, reg_leaves = _legacy_trees(rng, 4, 4, F)
    reg.update(target_treeids=[t for t, _ in reg_leaves for _ in range(2)],
               target_nodeids=[n for _, n in reg_leaves for _ in range(2)],
               target_ids=[k for _ in reg_leaves for k in range(2)],
               target_weights=[float(rng.normal()) for _ in reg_leaves for _ in range(2)])
    nodes = [helper.make_node("TreeEnsembleClassifier", ["x"], ["label3", "prob3"], domain=ml,
                              classlabels_int64s=[4, 7, 9], post_transform="SOFTMAX", base_values=[0.1, -0.2, 0.3],
                              **multi),
             helper.make_node("TreeEnsembleClassifier", ["x"], ["label2", "prob2"], domain=ml,
                              classlabels_int64s=[0, 1], **binary),
             helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain=ml, n_targets=2,
                              aggregate_function="AVERAGE", base_values=[0.5, -1.0], **reg)]
    graph = helper.make_graph(nodes, "tree_ensemble_legacy", [_vi("x", F32, ["N", F])],
                              [_vi("label3", TensorProto.INT64, ["N"]), _vi("prob3", F32, ["N", 3]),
                               _vi("label2", TensorProto.INT64, ["N"]), _vi("prob2", F32, ["N", 2]),
                               _vi("y", F32, ["N", 2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ml, 3)])
    return Case(m, [{"x": _randn(rng, [7, F])}, {"x": _randn(rng, [2, F])}], note="7 rows / 2 rows")


def make_contrib_transformer_ops() -> Case:
    """The com.microsoft operators ONNX Runtime's transformer optimizer and
    GenAI model builder write around attention (SimplifiedLayerNormalization
    in the default domain, SkipSimplifiedLayerNormalization with its
    residual sum output, SkipLayerNormalization with bias, FastGelu with
    bias, BiasGelu, Gelu, QuickGelu), compared with ONNX Runtime's contrib
    kernels over run-time batch and sequence."""
    ms = "com.microsoft"
    rng = np.random.default_rng(218)
    D = 16
    inits = [numpy_helper.from_array((rng.normal(size=D) * 0.5 + 1).astype(np.float32), n) for n in ("g1", "g2", "g3")]
    inits += [numpy_helper.from_array((rng.normal(size=D) * 0.1).astype(np.float32), n) for n in ("b1", "b2", "beta")]
    nodes = [helper.make_node("SimplifiedLayerNormalization", ["x", "g1"], ["rms"], axis=-1, epsilon=1e-6),
             helper.make_node("SkipSimplifiedLayerNormalization", ["rms", "y", "g2"], ["ssln", "", "", "resid"],
                              domain=ms, epsilon=1e-6),
             helper.make_node("SkipLayerNormalization", ["ssln", "resid", "g3", "beta", "b1"], ["sln"], domain=ms,
                              epsilon=1e-5),
             helper.make_node("FastGelu", ["sln", "b2"], ["fg"], domain=ms),
             helper.make_node("BiasGelu", ["fg", "b1"], ["bg"], domain=ms),
             helper.make_node("Gelu", ["bg"], ["g"], domain=ms),
             helper.make_node("QuickGelu", ["g"], ["out"], domain=ms, alpha=1.5)]
    graph = helper.make_graph(nodes, "contrib_transformer_ops", [_vi("x", F32, ["B", "S", D]), _vi("y", F32, ["B", "S", D])],
                              [_vi("out", F32, ["B", "S", D]), _vi("resid", F32, ["B", "S", D])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    return Case(m, [{"x": _randn(rng, [2, 5, D]), "y": _randn(rng, [2, 5, D])},
                    {"x": _randn(rng, [1, 9, D]), "y": _randn(rng, [1, 9, D])}], note="[2, 5] / [1, 9] tokens")


def _matmul_nbits_weights(rng, K: int, N: int, bs: int, with_zp: bool):
    blocks = (K + bs - 1) // bs
    q = rng.integers(0, 16, size=(N, blocks * bs)).astype(np.uint8)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(N, blocks, bs // 2)
    scales = (rng.random(N * blocks) * 0.05 + 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "scales")]
    if with_zp:
        z = rng.integers(0, 16, size=(N, blocks + blocks % 2)).astype(np.uint8)
        inits.append(numpy_helper.from_array((z[:, 0::2] | (z[:, 1::2] << 4)).astype(np.uint8).ravel(), "zp"))
    return inits


def make_matmul_nbits() -> Case:
    """com.microsoft MatMulNBits (the GenAI model builder's int4 weights:
    uint8 nibbles in blocks, per-block scales, packed zero points or the
    default 8) kept int4 (v4f.int4_matmul): K not a multiple of the block
    (the last block padded), one with zero points and a bias at
    accuracy_level 0 (float activations), one without at level 4
    (activations rounded to int8 per block, as ONNX Runtime does), over
    run-time rows."""
    rng = np.random.default_rng(219)
    K, N, bs = 80, 24, 32
    w1 = _matmul_nbits_weights(rng, K, N, bs, True)
    w2 = [numpy_helper.from_array(numpy_helper.to_array(x), n) for x, n in
          zip(_matmul_nbits_weights(rng, N, 8, 16, False), ("B2", "scales2"))]
    bias = numpy_helper.from_array((rng.normal(size=N) * 0.1).astype(np.float32), "bias")
    ms = "com.microsoft"
    nodes = [helper.make_node("MatMulNBits", ["a", "B", "scales", "zp", "", "bias"], ["h"], domain=ms, K=K, N=N,
                              bits=4, block_size=bs, accuracy_level=0),
             helper.make_node("MatMulNBits", ["h", "B2", "scales2"], ["y"], domain=ms, K=N, N=8, bits=4,
                              block_size=16, accuracy_level=4)]
    graph = helper.make_graph(nodes, "matmul_nbits", [_vi("a", F32, ["B", "S", K])], [_vi("y", F32, ["B", "S", 8])],
                              w1 + w2 + [bias])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    return Case(m, [{"a": _randn(rng, [1, 3, K])}, {"a": _randn(rng, [2, 7, K])}], note="[1, 3] / [2, 7] rows")


def make_ms_rotary() -> Case:
    """com.microsoft RotaryEmbedding as the GenAI model builder writes it:
    3-D [B, S, hidden] input with num_heads, position_ids as [B, S] and as one
    offset (decode steps past a cache), the half-split and interleaved
    forms, against ONNX Runtime's contrib kernel."""
    ms = "com.microsoft"
    rng = np.random.default_rng(220)
    H, N, P = 8, 2, 32
    ang = rng.random((P, H // 2)).astype(np.float32) * 3
    inits = [numpy_helper.from_array(np.cos(ang), "cos"), numpy_helper.from_array(np.sin(ang), "sin")]
    nodes = [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=ms, num_heads=N),
             helper.make_node("RotaryEmbedding", ["x", "off", "cos", "sin"], ["z"], domain=ms, num_heads=N,
                              interleaved=1)]
    graph = helper.make_graph(nodes, "ms_rotary",
                              [_vi("x", F32, ["B", "S", N * H]), _vi("pos", TensorProto.INT64, ["B", "S"]),
                               _vi("off", TensorProto.INT64, [1])],
                              [_vi("y", F32, ["B", "S", N * H]), _vi("z", F32, ["B", "S", N * H])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])

    def inputs(B, S, off):
        return {"x": _randn(rng, [B, S, N * H]), "pos": rng.integers(0, P, size=(B, S)).astype(np.int64),
                "off": np.array([off], np.int64)}

    return Case(m, [inputs(2, 5, 3), inputs(1, 1, 17)], note="prefill [2, 5] at 3 / one decode step at 17")


def make_group_query_attention() -> Case:
    """com.microsoft GroupQueryAttention as the GenAI model builder writes it
    (BNSH past / present kept apart, 4 query heads over 2 KV heads, rotary
    inside with do_rotary; separate and packed QKV): a prompt of 5 tokens with an empty past, then
    one decode step over a 5-token past, against ONNX Runtime's kernel."""
    ms = "com.microsoft"
    rng = np.random.default_rng(221)
    Nq, Nkv, H, MAXP = 4, 2, 16, 64
    ang = rng.random((MAXP, H // 2)).astype(np.float32) * 3
    inits = [numpy_helper.from_array(np.cos(ang), "cos"), numpy_helper.from_array(np.sin(ang), "sin")]
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens", "total", "cos", "sin"],
                            ["y", "present_k", "present_v"], domain=ms, num_heads=Nq, kv_num_heads=Nkv, do_rotary=1)
    # The model builder's form: one packed [q | k | v] query, no key / value.
    packed = helper.make_node("GroupQueryAttention", ["qkv", "", "", "pk", "pv", "seqlens", "total", "cos", "sin"],
                              ["y_packed", "pk_packed", "pv_packed"], domain=ms, num_heads=Nq, kv_num_heads=Nkv,
                              do_rotary=1)
    concat = helper.make_node("Concat", ["q", "k", "v"], ["qkv"], axis=2)
    graph = helper.make_graph(
        [node, concat, packed], "group_query_attention",
        [_vi("q", F32, ["B", "S", Nq * H]), _vi("k", F32, ["B", "S", Nkv * H]), _vi("v", F32, ["B", "S", Nkv * H]),
         _vi("pk", F32, ["B", Nkv, "P", H]), _vi("pv", F32, ["B", Nkv, "P", H]),
         _vi("seqlens", TensorProto.INT32, ["B"]), _vi("total", TensorProto.INT32, [])],
        [_vi("y", F32, ["B", "S", Nq * H]), _vi("present_k", F32, ["B", Nkv, "T", H]),
         _vi("present_v", F32, ["B", Nkv, "T", H]), _vi("y_packed", F32, ["B", "S", Nq * H])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])

    def inputs(B, S, P):
        return {"q": _randn(rng, [B, S, Nq * H]), "k": _randn(rng, [B, S, Nkv * H]), "v": _randn(rng, [B, S, Nkv * H]),
                "pk": _randn(rng, [B, Nkv, P, H]), "pv": _randn(rng, [B, Nkv, P, H]),
                "seqlens": np.full(B, P + S - 1, np.int32), "total": np.array(P + S, np.int32)}

    return Case(m, [inputs(1, 5, 0), inputs(1, 1, 5), inputs(2, 1, 4), inputs(1, 3, 4)],
                note="prompt of 5 / a decode step after 5 / two rows, one step after 4 / 3 tokens after 4")


def generators() -> Dict[str, Callable[[], Case]]:
    return {
        "pool3d_runtime": make_pool3d_runtime,
        "window_conv": make_window_conv,
        "tree_ensemble": make_tree_ensemble,
        "range_float_runtime": make_range_float_runtime,
        "batchnorm_opset7": make_batchnorm_opset7,
        "dynamic_quantize_lstm": make_dynamic_quantize_lstm,
        "dynamic_quantize_lstm_wide": make_dynamic_quantize_lstm_wide,
        "ml_preprocessing": make_ml_preprocessing,
        "tree_ensemble_legacy": make_tree_ensemble_legacy,
        "contrib_transformer_ops": make_contrib_transformer_ops,
        "matmul_nbits": make_matmul_nbits,
        "ms_rotary": make_ms_rotary,
        "group_query_attention": make_group_query_attention,
    }
