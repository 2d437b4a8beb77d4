"""ONNX model generators for the v4f end-to-end tests and benchmarks.

Every generator is deterministic (fixed seed) and builds the model with the
`onnx.helper` API.  A generator returns a `Case`:

    Case(model=<onnx.ModelProto>, inputs={name: np.ndarray}, ...)

Weights are random normal values scaled so that activations stay O(1); this
keeps absolute FP32 tolerances meaningful.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


@dataclass
class Case:
    model: onnx.ModelProto
    # One or more input sets; each is {input name: array}.  Several sets are
    # used to run one compiled artifact at different (symbolic) shapes.
    input_sets: List[Dict[str, np.ndarray]]
    note: str = ""
    # Extra `v4fc compile` flags (e.g. --dim N=2).
    compile_flags: List[str] = field(default_factory=list)
    # Input sets the artifact must refuse at run time: (inputs, a substring
    # of v4f-run's error message).
    refused_sets: List[Tuple[Dict[str, np.ndarray], str]] = field(default_factory=list)


# --------------------------------------------------------------------------
# helpers


class GraphBuilder:
    """Tiny convenience layer over onnx.helper with unique names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self._n = 0

    def uniq(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}_{self._n}"

    def const(self, arr: np.ndarray, prefix: str = "w") -> str:
        name = self.uniq(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def randn(self, shape, scale: float, prefix: str = "w") -> str:
        arr = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.const(arr, prefix)

    def op(self, op_type: str, inputs: List[str], n_out: int = 1,
           out_names: Optional[List[str]] = None, **attrs):
        outs = out_names or [self.uniq(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs,
                                           name=self.uniq("n_" + op_type), **attrs))
        return outs[0] if len(outs) == 1 else outs

    def model(self, name: str, inputs, outputs, opset: int = 17) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", opset)]
        m = helper.make_model(graph, opset_imports=opsets,
                              producer_name="v4f-e2e")
        m.ir_version = helper.find_min_ir_version_for(opsets)
        onnx.checker.check_model(m, full_check=True)
        return m

    # common layers ---------------------------------------------------------

    def conv(self, x, cin, cout, k, *, stride=1, pads=None, dilation=1,
             group=1, bias=True, gain=2.0):
        kh, kw = (k, k) if isinstance(k, int) else k
        fan_in = (cin // group) * kh * kw
        w = self.randn([cout, cin // group, kh, kw], math.sqrt(gain / fan_in), "conv_w")
        ins = [x, w]
        if bias:
            ins.append(self.randn([cout], 0.05, "conv_b"))
        if pads is None:
            pads = [kh // 2 * dilation, kw // 2 * dilation] * 2
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        return self.op("Conv", ins, kernel_shape=[kh, kw], strides=[sh, sw],
                       pads=pads, dilations=[dilation, dilation], group=group)

    def bn(self, x, c, gamma_scale=1.0):
        r = self.rng
        scale = self.const((r.uniform(0.5, 1.5, c) * gamma_scale).astype(np.float32), "bn_s")
        bias = self.const((r.standard_normal(c) * 0.1).astype(np.float32), "bn_b")
        mean = self.const((r.standard_normal(c) * 0.1).astype(np.float32), "bn_m")
        var = self.const(r.uniform(0.5, 1.5, c).astype(np.float32), "bn_v")
        return self.op("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --------------------------------------------------------------------------
# models


def make_mlp(batch: int = 4) -> Case:
    g = GraphBuilder(seed=1)
    h = g.op("Gemm", ["x", g.randn([128, 64], math.sqrt(2 / 64)), g.randn([128], 0.05)], transB=1)
    h = g.op("Relu", [h])
    h = g.op("Gemm", [h, g.randn([64, 128], math.sqrt(2 / 128)), g.randn([64], 0.05)], transB=1)
    h = g.op("Relu", [h])
    h = g.op("Gemm", [h, g.randn([10, 64], math.sqrt(1 / 64)), g.randn([10], 0.05)], transB=1)
    # The output name contains ':' to exercise output-name sanitization.
    g.op("Softmax", [h], out_names=["probs:0"], axis=-1)
    m = g.model("mlp", [_vi("x", F32, [batch, 64])], [_vi("probs:0", F32, [batch, 10])])
    rng = np.random.default_rng(101)
    return Case(m, [{"x": _randn(rng, [batch, 64])}])


def make_cnn() -> Case:
    g = GraphBuilder(seed=2)
    h = g.conv("x", 3, 8, 3, pads=[1, 1, 1, 1])                    # [2,8,32,32]
    h = g.bn(h, 8)
    h = g.op("Relu", [h])
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])  # [2,8,16,16]
    # grouped, dilated, strided conv with asymmetric pads (top,left,bottom,right)
    h = g.conv(h, 8, 16, 3, stride=2, dilation=2, group=2, pads=[1, 0, 2, 1])  # [2,16,8,7]
    h = g.op("LeakyRelu", [h], alpha=0.1)
    # ceil_mode=1 makes the last window in W partially outside (count_include_pad=0)
    h = g.op("AveragePool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0],
             ceil_mode=1, count_include_pad=0)                      # [2,16,4,4]
    h = g.op("AveragePool", [h], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
             count_include_pad=1)                                   # [2,16,4,4]
    h = g.conv(h, 16, 8, 1, pads=[0, 0, 0, 0], gain=4.0)           # [2,8,4,4]
    h = g.op("Sigmoid", [h])
    h = g.op("Clip", [h, g.const(np.array(0.2, np.float32), "lo"),
                      g.const(np.array(0.8, np.float32), "hi")])
    h = g.op("GlobalAveragePool", [h])                              # [2,8,1,1]
    h = g.op("Flatten", [h], axis=1)                                # [2,8]
    g.op("Gemm", [h, g.randn([8, 10], 1.0), g.randn([10], 0.1)], out_names=["logits"],
         alpha=1.0, beta=1.0)
    m = g.model("cnn", [_vi("x", F32, [2, 3, 32, 32])], [_vi("logits", F32, [2, 10])])
    rng = np.random.default_rng(102)
    return Case(m, [{"x": _randn(rng, [2, 3, 32, 32])}])


def make_transformer(seq: int = 16, d: int = 64, heads: int = 4, vocab: int = 100,
                     ffn: int = 128) -> Case:
    g = GraphBuilder(seed=3)
    dh = d // heads
    s = 1 / math.sqrt(d)

    def layernorm(x):
        gamma = g.const((1 + 0.1 * g.rng.standard_normal(d)).astype(np.float32), "ln_g")
        beta = g.randn([d], 0.05, "ln_b")
        return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)

    def linear(x, din, dout, scale=None):
        w = g.randn([din, dout], scale if scale is not None else 1 / math.sqrt(din))
        return g.op("Add", [g.op("MatMul", [x, w]), g.randn([dout], 0.02)])

    emb = g.op("Gather", [g.randn([vocab, d], 1.0, "emb"), "ids"], axis=0)  # [1,seq,d]
    x0 = g.op("Add", [emb, g.randn([1, seq, d], 0.1, "pos")])
    h = layernorm(x0)
    q, k, v = (linear(h, d, d) for _ in range(3))
    heads_shape = g.const(np.array([1, seq, heads, dh], np.int64), "shape")
    qt = g.op("Transpose", [g.op("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])  # [1,H,S,dh]
    kt = g.op("Transpose", [g.op("Reshape", [k, heads_shape])], perm=[0, 2, 3, 1])  # [1,H,dh,S]
    vt = g.op("Transpose", [g.op("Reshape", [v, heads_shape])], perm=[0, 2, 1, 3])  # [1,H,S,dh]
    scores = g.op("Div", [g.op("MatMul", [qt, kt]),
                          g.const(np.array(math.sqrt(dh), np.float32), "sqrt_dh")])
    p = g.op("Softmax", [scores], axis=-1)
    att = g.op("Transpose", [g.op("MatMul", [p, vt])], perm=[0, 2, 1, 3])  # [1,S,H,dh]
    att = g.op("Reshape", [att, g.const(np.array([1, seq, d], np.int64), "shape")])
    x1 = g.op("Add", [linear(att, d, d, scale=s), x0])

    h2 = layernorm(x1)
    u = linear(h2, d, ffn)
    # Erf-GELU: u * 0.5 * (1 + erf(u / sqrt(2)))
    erf = g.op("Erf", [g.op("Div", [u, g.const(np.array(math.sqrt(2), np.float32), "sqrt2")])])
    gelu = g.op("Mul", [g.op("Mul", [u, g.const(np.array(0.5, np.float32), "half")]),
                        g.op("Add", [erf, g.const(np.array(1.0, np.float32), "one")])])
    # Tanh/Exp gate branch, concatenated with the GELU features.
    t = g.op("Tanh", [linear(h2, d, 32)])
    te = g.op("Exp", [g.op("Sub", [t, g.const(np.array(1.0, np.float32), "one")])])
    cat = g.op("Concat", [gelu, te], axis=-1)                        # [1,S,ffn+32]
    y = g.op("Add", [x1, linear(cat, ffn + 32, d, scale=0.5 / math.sqrt(ffn + 32))])
    # RMS normalization of the output: y / sqrt(mean(y^2) + eps)
    ms = g.op("ReduceMean", [g.op("Mul", [y, y])], axes=[-1], keepdims=1)
    rms = g.op("Sqrt", [g.op("Add", [ms, g.const(np.array(1e-5, np.float32), "eps")])])
    g.op("Div", [y, rms], out_names=["hidden"])
    g.op("ReduceMean", ["hidden"], out_names=["pooled"], axes=[-1], keepdims=1)
    m = g.model("transformer", [_vi("ids", I64, [1, seq])],
                [_vi("hidden", F32, [1, seq, d]), _vi("pooled", F32, [1, seq, 1])])
    rng = np.random.default_rng(103)
    return Case(m, [{"ids": rng.integers(0, vocab, size=[1, seq], dtype=np.int64)}])


def make_resnet50(batch: int = 1, variant: str = "v1", num_classes: int = 1000) -> Case:
    """ResNet-50 (He et al. 2015).  variant "v1": the stride-2 of a downsampling
    bottleneck is on its first 1x1 conv (original paper / Caffe); "v1.5": on the 3x3
    (torchvision).  Every conv has no bias and is followed by BatchNormalization."""
    assert variant in ("v1", "v1.5")
    g = GraphBuilder(seed=50)

    def conv_bn(x, cin, cout, k, stride=1, relu=True, gamma_scale=1.0):
        pad = k // 2
        h = g.conv(x, cin, cout, k, stride=stride, pads=[pad] * 4, bias=False)
        h = g.bn(h, cout, gamma_scale=gamma_scale)
        return g.op("Relu", [h]) if relu else h

    h = conv_bn("data", 3, 64, 7, stride=2)                                   # [1,64,112,112]
    h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 56x56
    cin = 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512])):
        cout = width * 4
        for b in range(blocks):
            stride = 2 if (b == 0 and stage > 0) else 1
            s1, s3 = (stride, 1) if variant == "v1" else (1, stride)
            r = conv_bn(h, cin, width, 1, stride=s1)
            r = conv_bn(r, width, width, 3, stride=s3)
            # Small gamma on the last BN of the residual branch keeps the
            # residual stream bounded through 16 blocks.
            r = conv_bn(r, width, cout, 1, relu=False, gamma_scale=0.25)
            if b == 0:
                sc = conv_bn(h, cin, cout, 1, stride=stride, relu=False, gamma_scale=0.5)
            else:
                sc = h
            h = g.op("Relu", [g.op("Add", [r, sc])])
            cin = cout
    h = g.op("GlobalAveragePool", [h])
    h = g.op("Flatten", [h], axis=1)                                          # [N,2048]
    g.op("Gemm", [h, g.randn([num_classes, 2048], 0.5 / math.sqrt(2048), "fc_w"),
                  g.randn([num_classes], 0.1, "fc_b")],
         out_names=["logits"], transB=1)
    m = g.model("resnet50", [_vi("data", F32, [batch, 3, 224, 224])],
                [_vi("logits", F32, [batch, num_classes])])
    rng = np.random.default_rng(150)
    return Case(m, [{"data": _randn(rng, [batch, 3, 224, 224])}])


def make_symbolic_batch(batch_dim="N") -> Case:
    g = GraphBuilder(seed=4)
    h = g.conv("x", 3, 16, 3, pads=[1, 1, 1, 1])
    h = g.op("Relu", [h])
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.conv(h, 16, 32, 3, stride=2, pads=[1, 1, 1, 1])
    h = g.op("Relu", [h])
    h = g.op("GlobalAveragePool", [h])
    h = g.op("Flatten", [h], axis=1)
    h = g.op("Gemm", [h, g.randn([10, 32], 1 / math.sqrt(32)), g.randn([10], 0.05)], transB=1)
    g.op("Softmax", [h], out_names=["probs"], axis=-1)
    m = g.model("symbolic_batch", [_vi("x", F32, [batch_dim, 3, 16, 16])], [_vi("probs", F32, [batch_dim, 10])])
    rng = np.random.default_rng(104)
    return Case(m, [{"x": _randn(rng, [1, 3, 16, 16])}, {"x": _randn(rng, [5, 3, 16, 16])}],
                note="compiled once, run at N=1 and N=5")


def make_negative_batch() -> Case:
    """The batch declared as dim_value -1 (as some exporters write it): a
    dynamic dim, as ONNX Runtime takes it."""
    case = make_symbolic_batch(batch_dim=-1)
    case.note = "dim_value -1 taken as dynamic; compiled once, run at batch 1 and 5"
    return case


def _compile_flag_variant(seed: int, flags: List[str], batches: List[int], refused_batch: int,
                          message: str) -> Case:
    """The symbolic-batch model compiled with `flags`: runs at `batches`,
    and `refused_batch` must be refused with `message`."""
    case = make_symbolic_batch()
    rng = np.random.default_rng(seed)
    case.input_sets = [{"x": _randn(rng, [n, 3, 16, 16])} for n in batches]
    case.compile_flags = flags
    case.refused_sets = [({"x": _randn(rng, [refused_batch, 3, 16, 16])}, message)]
    case.note = " ".join(flags) + " at compile time"
    return case


def make_pinned_batch() -> Case:
    """--dim N=2 fixes the symbolic batch at compile time."""
    return _compile_flag_variant(105, ["--dim", "N=2"], [2], 3, "does not match input 'x' [2, 3, 16, 16]")


def make_bounded_batch() -> Case:
    """--dim N=1..4 bounds the symbolic batch; the refusal names the bounds."""
    return _compile_flag_variant(107, ["--dim", "N=1..4"], [1, 4], 5, "dim 0 ('N') is 5, outside the bounds [1, 4]")


def make_pinned_shape() -> Case:
    """--input-shape fixes every dim of an input at compile time."""
    return _compile_flag_variant(106, ["--input-shape", "x=4,3,16,16"], [4], 1,
                                 "does not match input 'x' [4, 3, 16, 16]")


# ----- opset variants: same op, different opset semantics ---------------------


def _single_op_model(name, opset, op_type, inputs_vi, output_vi, extra_inits=(), **attrs):
    g = GraphBuilder(seed=5)
    ins = [vi.name for vi in inputs_vi] + [g.const(a, n) if a is not None else ""
                                            for n, a in extra_inits]
    g.op(op_type, ins, out_names=[output_vi.name], **attrs)
    return g.model(name, inputs_vi, [output_vi], opset=opset)


def make_softmax11() -> Case:
    # Opset < 13: Softmax(axis=1) on [2,3,4] coerces the input to 2-D [2,12]
    # and normalizes over all 12 values of each batch row.
    m = _single_op_model("softmax11", 11, "Softmax", [_vi("x", F32, [2, 3, 4])],
                         _vi("y", F32, [2, 3, 4]), axis=1)
    return Case(m, [{"x": _randn(np.random.default_rng(111), [2, 3, 4], 2.0)}])


def make_softmax11_default_axis() -> Case:
    # Opset < 13 default axis is 1 (coerced to 2-D); opset 13+ default is -1.
    m = _single_op_model("softmax11_default", 11, "Softmax", [_vi("x", F32, [2, 3, 4])],
                         _vi("y", F32, [2, 3, 4]))
    return Case(m, [{"x": _randn(np.random.default_rng(112), [2, 3, 4], 2.0)}])


def make_softmax13() -> Case:
    # Opset 13+: Softmax(axis=1) normalizes along axis 1 only.
    m = _single_op_model("softmax13", 13, "Softmax", [_vi("x", F32, [2, 3, 4])],
                         _vi("y", F32, [2, 3, 4]), axis=1)
    return Case(m, [{"x": _randn(np.random.default_rng(113), [2, 3, 4], 2.0)}])


def make_reducemean13() -> Case:
    # Opset 13: axes is an attribute.
    m = _single_op_model("reducemean13", 13, "ReduceMean", [_vi("x", F32, [2, 3, 4, 5])],
                         _vi("y", F32, [2, 4]), axes=[1, -1], keepdims=0)
    return Case(m, [{"x": _randn(np.random.default_rng(114), [2, 3, 4, 5])}])


def make_reducemean18() -> Case:
    # Opset 18: axes is an (initializer) input.
    m = _single_op_model("reducemean18", 18, "ReduceMean", [_vi("x", F32, [2, 3, 4, 5])],
                         _vi("y", F32, [2, 4]),
                         extra_inits=[("axes", np.array([1, -1], np.int64))], keepdims=0)
    return Case(m, [{"x": _randn(np.random.default_rng(115), [2, 3, 4, 5])}])


def make_reducemean18_all() -> Case:
    # Opset 18 without axes (noop_with_empty_axes=0): reduce over all axes.
    m = _single_op_model("reducemean18_all", 18, "ReduceMean", [_vi("x", F32, [2, 3, 4])],
                         _vi("y", F32, [1, 1, 1]), keepdims=1)
    return Case(m, [{"x": _randn(np.random.default_rng(116), [2, 3, 4])}])


def make_clip6() -> Case:
    # Opset 6..10: min/max are attributes.
    m = _single_op_model("clip6", 10, "Clip", [_vi("x", F32, [3, 7])], _vi("y", F32, [3, 7]),
                         min=-0.5, max=0.75)
    return Case(m, [{"x": _randn(np.random.default_rng(117), [3, 7])}])


def make_clip11_min_only() -> Case:
    # Opset 11+: min/max are optional inputs; here max is omitted ("").
    m = _single_op_model("clip11", 11, "Clip", [_vi("x", F32, [3, 7])], _vi("y", F32, [3, 7]),
                         extra_inits=[("min", np.array(-0.25, np.float32)), ("max", None)])
    return Case(m, [{"x": _randn(np.random.default_rng(118), [3, 7])}])


def make_clip13() -> Case:
    m = _single_op_model("clip13", 13, "Clip", [_vi("x", F32, [3, 7])], _vi("y", F32, [3, 7]),
                         extra_inits=[("min", np.array(-0.5, np.float32)),
                                      ("max", np.array(0.5, np.float32))])
    return Case(m, [{"x": _randn(np.random.default_rng(119), [3, 7])}])


def make_reshape14() -> Case:
    # Reshape with 0 (copy dim) and -1 (infer), opset 14 (allowzero=0).
    m = _single_op_model("reshape14", 14, "Reshape", [_vi("x", F32, [2, 3, 4])],
                         _vi("y", F32, [2, 12]),
                         extra_inits=[("shape", np.array([0, -1], np.int64))])
    return Case(m, [{"x": _randn(np.random.default_rng(120), [2, 3, 4])}])


def make_flatten_axis2() -> Case:
    m = _single_op_model("flatten_axis2", 13, "Flatten", [_vi("x", F32, [2, 3, 4, 5])],
                         _vi("y", F32, [6, 20]), axis=2)
    return Case(m, [{"x": _randn(np.random.default_rng(121), [2, 3, 4, 5])}])


OPSET_VARIANTS: Dict[str, Callable[[], Case]] = {
    "softmax11_axis1": make_softmax11,
    "softmax11_default_axis": make_softmax11_default_axis,
    "softmax13_axis1": make_softmax13,
    "reducemean13_attr_axes": make_reducemean13,
    "reducemean18_input_axes": make_reducemean18,
    "reducemean18_no_axes": make_reducemean18_all,
    "clip10_attrs": make_clip6,
    "clip11_min_only": make_clip11_min_only,
    "clip13_inputs": make_clip13,
    "reshape14_zero_minus1": make_reshape14,
    "flatten13_axis2": make_flatten_axis2,
}


# ----- shapes that depend on input values ------------------------------------


def make_data_dependent() -> Case:
    """NonZero and Compress (sizes known only after their counting dispatch),
    with ops downstream of the data-dependent dim; one set selects nothing."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("NonZero", ["pos"], ["where"]),
        helper.make_node("Compress", ["x", "keep"], ["rows"], axis=0),
        helper.make_node("Relu", ["rows"], ["rows_relu"]),
        helper.make_node("ReduceSum", ["rows_relu", "axes"], ["row_sums"], keepdims=0),
    ]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array([1], np.int64), "axes")]
    graph = helper.make_graph(nodes, "data_dependent",
                              [_vi("x", F32, [4, 6]), _vi("keep", TensorProto.BOOL, [4])],
                              [_vi("where", I64, [2, "nnz"]), _vi("row_sums", F32, ["kept"])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rng = np.random.default_rng(106)
    return Case(m, [{"x": _randn(rng, [4, 6]), "keep": np.array([True, False, True, True])},
                    {"x": -np.abs(_randn(rng, [4, 6])) - 0.1, "keep": np.array([False] * 4)}],
                note="counts differ per input set; the second selects nothing")


def make_resize_runtime_scales() -> Case:
    """Resize whose scales are a graph input: one artifact, two output shapes."""
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="linear")
    graph = helper.make_graph([node], "resize_runtime_scales",
                              [_vi("X", F32, [1, 2, 4, 4]), _vi("scales", F32, [4])],
                              [_vi("Y", F32, [1, 2, "H", "W"])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    rng = np.random.default_rng(107)
    x = _randn(rng, [1, 2, 4, 4])
    return Case(m, [{"X": x, "scales": np.array([1, 1, 2, 2], np.float32)},
                    {"X": x, "scales": np.array([1, 1, 0.5, 1.5], np.float32)}],
                note="upsample and mixed down/upsample from the same artifact")


def make_dynamic_hw_upsample() -> Case:
    """Decoder ops at dynamic N/H/W: ConvTranspose (stride 2, pads,
    output_padding), Resize by constant scales (linear, half_pixel), Resize
    to sizes from a Shape -> Slice -> Concat chain (nearest, asymmetric),
    and ConvTranspose with SAME_UPPER padding; one artifact, two shapes."""
    g = GraphBuilder(seed=21)
    w1 = g.randn([4, 3, 3, 3], 0.3)
    h = g.op("ConvTranspose", ["x", w1, g.randn([3], 0.1)], strides=[2, 2], pads=[1, 1, 0, 0],
             output_padding=[1, 0], kernel_shape=[3, 3])
    empty = g.const(np.zeros([0], np.float32), "empty")
    up = g.op("Resize", [h, empty, g.const(np.array([1, 1, 2, 0.5], np.float32), "scales")], mode="linear")
    shp = g.op("Shape", ["x"])
    hw = g.op("Slice", [shp, g.const(np.array([2], np.int64)), g.const(np.array([4], np.int64))])
    nc = g.op("Slice", [g.op("Shape", [up]), g.const(np.array([0], np.int64)), g.const(np.array([2], np.int64))])
    sizes = g.op("Concat", [nc, hw], axis=0)
    down = g.op("Resize", [up, empty, empty, sizes], mode="nearest", coordinate_transformation_mode="asymmetric")
    w2 = g.randn([3, 2, 2, 2], 0.4)
    g.op("ConvTranspose", [down, w2], out_names=["y"], strides=[2, 2], auto_pad="SAME_UPPER", kernel_shape=[2, 2])
    m = g.model("dynamic_hw_upsample", [_vi("x", F32, ["N", 4, "H", "W"])], [_vi("y", F32, ["N", 2, "H2", "W2"])])
    rng = np.random.default_rng(121)
    return Case(m, [{"x": _randn(rng, [1, 4, 5, 6])}, {"x": _randn(rng, [2, 4, 8, 3])}],
                note="ConvTranspose / Resize at dynamic N, H, W")


def make_attention_dynamic() -> Case:
    """ONNX Attention (opset 23) at dynamic batch, query and past lengths:
    3-D grouped-query attention (4 query heads over 2 KV heads) with a KV
    cache and a causal mask, compiled once and run at three shapes (past
    length 0 included)."""
    g = GraphBuilder(seed=23)
    g.op("Attention", ["q", "k", "v", "", "past_k", "past_v"], n_out=3,
         out_names=["y", "present_k", "present_v"], q_num_heads=4, kv_num_heads=2, is_causal=1)
    m = g.model("attention_dynamic",
                [_vi("q", F32, ["B", "S", 32]), _vi("k", F32, ["B", "S", 16]), _vi("v", F32, ["B", "S", 16]),
                 _vi("past_k", F32, ["B", 2, "P", 8]), _vi("past_v", F32, ["B", 2, "P", 8])],
                [_vi("y", F32, ["B", "S", 32]), _vi("present_k", F32, ["B", 2, "L", 8]),
                 _vi("present_v", F32, ["B", 2, "L", 8])], opset=23)
    rng = np.random.default_rng(123)
    sets = []
    for b, sq, p in [(1, 4, 0), (2, 1, 5), (3, 3, 2)]:
        sets.append({"q": _randn(rng, [b, sq, 32]), "k": _randn(rng, [b, sq, 16]), "v": _randn(rng, [b, sq, 16]),
                     "past_k": _randn(rng, [b, 2, p, 8]), "past_v": _randn(rng, [b, 2, p, 8])})
    return Case(m, sets, note="Attention with dynamic B, S and past length")


def make_dynamic_broadcast_runs() -> Case:
    """Broadcast elementwise ops at run-time H, W (the strided maps merge the
    last two dims at run time when every operand walks them as one): a
    squeeze-excite scale [N,C,H,W] * [N,C,1,1] (merges), + [1,C,H,1] (does
    not: stride 0 along W, H along H), * [N,1,H,W] (merges; broadcast along
    C only), and an operand whose dims are 1 only at run time (Q: [N,C,A,B]
    with A = B = 1 in one input set, full size in another). Shapes include a
    large plane (several workgroups whose row ranges split one channel)."""
    g = GraphBuilder(seed=37)
    pooled = g.op("GlobalAveragePool", ["x"])
    se = g.op("Mul", ["x", g.op("Sigmoid", [pooled])])
    col = g.op("Add", [se, "colb"])
    plane = g.op("Mul", [col, "p"])
    g.op("Add", [plane, "q"], out_names=["y"])
    m = g.model("dynamic_broadcast_runs",
                [_vi("x", F32, ["N", 6, "H", "W"]), _vi("colb", F32, [1, 6, "H", 1]),
                 _vi("p", F32, ["N", 1, "H", "W"]), _vi("q", F32, ["N", 6, "A", "B"])],
                [_vi("y", F32, ["N", 6, "H", "W"])])
    rng = np.random.default_rng(137)
    sets = []
    for n, h, w, a in [(1, 7, 7, 1), (2, 5, 3, 5), (1, 1, 9, 1), (1, 96, 200, 96), (1, 4, 1, 4)]:
        b = w if a > 1 else 1
        sets.append({"x": _randn(rng, [n, 6, h, w]), "colb": _randn(rng, [1, 6, h, 1]),
                     "p": _randn(rng, [n, 1, h, w]), "q": _randn(rng, [n, 6, a, b])})
    return Case(m, sets, note="broadcast maps at run-time H, W (run-time row merging)")


def make_reduce_runtime_axes() -> Case:
    """ReduceSum / ReduceMax with axes given at run time (keepdims 0 and 1,
    negative axes); axes that repeat a dim or lie out of range are refused
    at run time (they would reduce fewer dims than the result has)."""
    g = GraphBuilder(seed=41)
    g.op("ReduceSum", ["x", "axes"], out_names=["s"], keepdims=0)
    g.op("ReduceMax", ["x", "axes"], out_names=["m"], keepdims=1)
    m = g.model("reduce_runtime_axes", [_vi("x", F32, [3, 4, 5]), _vi("axes", I64, [2])],
                [_vi("s", F32, ["S"]), _vi("m", F32, ["A", "B", "C"])], opset=18)
    rng = np.random.default_rng(141)
    x = _randn(rng, [3, 4, 5])
    ax = lambda *a: np.array(a, np.int64)
    return Case(m, [{"x": x, "axes": ax(0, 2)}, {"x": x, "axes": ax(-1, 1)}, {"x": x, "axes": ax(2, 0)}],
                refused_sets=[({"x": x, "axes": ax(1, 1)}, "axes check"), ({"x": x, "axes": ax(0, 3)}, "axes check"),
                              ({"x": x, "axes": ax(-4, 0)}, "axes check")],
                note="run-time axes; repeated and out-of-range axes refused")


def make_variadic_wide() -> Case:
    """Sum, Mean and Max over 150 distinct inputs (folded in a tree of
    elementwise ops of at most 64 inputs each)."""
    g = GraphBuilder(seed=31)
    terms = ["x"] + [g.randn([3, 5], 1.0, "t") for _ in range(149)]
    g.op("Sum", terms, out_names=["sum"])
    g.op("Mean", terms, out_names=["mean"])
    g.op("Max", terms, out_names=["max"])
    m = g.model("variadic_wide", [_vi("x", F32, [3, 5])],
                [_vi("sum", F32, [3, 5]), _vi("mean", F32, [3, 5]), _vi("max", F32, [3, 5])])
    rng = np.random.default_rng(131)
    return Case(m, [{"x": _randn(rng, [3, 5])}], note="150-input Sum / Mean / Max")


def make_slice_extreme_steps() -> Case:
    """Slice with steps of INT64_MIN and 2^62 (and ends at the int64
    extremes), on a static and on a dynamic input (constant parameters
    folded at import vs followed by the shape program): the step magnitude
    must not overflow."""
    g = GraphBuilder(seed=41)
    c = lambda v: g.const(np.array(v, np.int64))
    g.op("Slice", ["x", c([3]), c([-2**63]), c([0]), c([-2**63])], out_names=["y_min"])
    g.op("Slice", ["x", c([0]), c([2**63 - 1]), c([1]), c([2**62])], out_names=["y_big"])
    g.op("Slice", ["xd", c([-1]), c([-2**63]), c([0]), c([-2**63])], out_names=["yd_min"])
    g.op("Slice", ["xd", c([1]), c([2**63 - 1]), c([1]), c([2**62])], out_names=["yd_big"])
    m = g.model("slice_extreme_steps", [_vi("x", F32, [4, 5]), _vi("xd", F32, ["N", "M"])],
                [_vi("y_min", F32, [1, 5]), _vi("y_big", F32, [4, 1]), _vi("yd_min", F32, ["A", "M"]),
                 _vi("yd_big", F32, ["N", "B"])])
    rng = np.random.default_rng(141)
    return Case(m, [{"x": _randn(rng, [4, 5]), "xd": _randn(rng, [3, 6])},
                    {"x": _randn(rng, [4, 5]), "xd": _randn(rng, [5, 2])}],
                note="Slice steps INT64_MIN and 2^62")


def make_slice_runtime_bounds() -> Case:
    """Slice whose starts and ends are graph inputs (known only at run time)
    at the int64 extremes, as exporters write `x[1:]` (ends = INT64_MAX) or
    `x[:-2]` with a start of INT64_MIN: the shape program clamps them as the
    spec says instead of overflowing."""
    g = GraphBuilder(seed=43)
    c = lambda v: g.const(np.array(v, np.int64))
    g.op("Slice", ["xd", "s", "e", c([1])], out_names=["y"])
    # Backwards with the bounds swapped (an end of INT64_MAX with a negative
    # step is left out: ONNX Runtime reads it as "to the front", numpy and
    # the ONNX reference as "nothing").
    g.op("Slice", ["xd", "e", "s", c([0]), c([-1])], out_names=["y_rev"])
    m = g.model("slice_runtime_bounds",
                [_vi("xd", F32, ["N", "M"]), _vi("s", TensorProto.INT64, [1]), _vi("e", TensorProto.INT64, [1])],
                [_vi("y", F32, ["N", "B"]), _vi("y_rev", F32, ["A", "M"])])
    rng = np.random.default_rng(143)
    big, small = 2**63 - 1, -2**63
    return Case(m, [{"xd": _randn(rng, [3, 6]), "s": np.array([1], np.int64), "e": np.array([big], np.int64)},
                    {"xd": _randn(rng, [5, 4]), "s": np.array([small], np.int64), "e": np.array([-2], np.int64)},
                    {"xd": _randn(rng, [4, 7]), "s": np.array([2], np.int64), "e": np.array([small], np.int64)}],
                note="Slice bounds at the int64 extremes given at run time")


def make_same_pad_runtime() -> Case:
    """auto_pad SAME_UPPER / SAME_LOWER with stride 2 over spatial dims known
    only at run time (odd and even sizes): the pads depend on the size, so
    the input is padded at run time before the Conv / MaxPool window; a
    stride-1 SAME conv keeps its static pads."""
    g = GraphBuilder(seed=44)
    w1 = g.randn([4, 3, 3, 3], 0.3, "w")
    w2 = g.randn([4, 4, 2, 2], 0.3, "w")
    w3 = g.randn([2, 3, 3, 3], 0.3, "w")
    g.op("Conv", ["x", w1], out_names=["c1"], auto_pad="SAME_UPPER", strides=[2, 2])
    g.op("Conv", ["c1", w2], out_names=["c2"], auto_pad="SAME_LOWER", strides=[2, 2])
    g.op("MaxPool", ["c1"], out_names=["p"], auto_pad="SAME_UPPER", kernel_shape=[3, 3], strides=[2, 2])
    g.op("Conv", ["x", w3], out_names=["c3"],
         auto_pad="SAME_UPPER")
    # AveragePool: the run-time pads count (count_include_pad=1) or not.
    g.op("AveragePool", ["x"], out_names=["a0"], auto_pad="SAME_UPPER", kernel_shape=[3, 2], strides=[2, 2])
    g.op("AveragePool", ["x"], out_names=["a1"], auto_pad="SAME_LOWER", kernel_shape=[3, 3], strides=[2, 3],
         count_include_pad=1)
    m = g.model("same_pad_runtime", [_vi("x", F32, ["N", 3, "H", "W"])],
                [_vi("c2", F32, ["N", 4, "A", "B"]), _vi("p", F32, ["N", 4, "C", "D"]),
                 _vi("c3", F32, ["N", 2, "H", "W"]), _vi("a0", F32, ["N", 3, "E", "F"]),
                 _vi("a1", F32, ["N", 3, "G", "I"])])
    rng = np.random.default_rng(144)
    return Case(m, [{"x": _randn(rng, [1, 3, 7, 10])}, {"x": _randn(rng, [2, 3, 8, 5])},
                    {"x": _randn(rng, [1, 3, 1, 2])}],
                note="auto_pad SAME with stride 2 over run-time spatial dims")


def make_stft_runtime_length() -> Case:
    """STFT with a Hann window over a signal whose length is known only at
    run time (opset 17): frames of 16 samples every 4, one-sided (9 bins);
    and one without a window over a static signal."""
    g = GraphBuilder(seed=45)
    step = g.const(np.array(4, np.int64))
    length = g.const(np.array(16, np.int64))
    window = g.const((0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32))
    g.op("STFT", ["x", step, window, length], out_names=["y"], onesided=1)
    g.op("STFT", ["xs", step, "", length], out_names=["ys"], onesided=1)
    m = g.model("stft_runtime_length", [_vi("x", F32, [1, "N", 1]), _vi("xs", F32, [2, 40, 1])],
                [_vi("y", F32, [1, "F", 9, 2]), _vi("ys", F32, [2, 7, 9, 2])], opset=17)
    rng = np.random.default_rng(145)
    return Case(m, [{"x": _randn(rng, [1, 100, 1]), "xs": _randn(rng, [2, 40, 1])},
                    {"x": _randn(rng, [1, 37, 1]), "xs": _randn(rng, [2, 40, 1])}],
                note="STFT over a run-time length")


def make_transposes() -> Case:
    """Transposes whose output rows run along a strided input dim (the 8 x 8
    register-tile kernel: dims multiples of 8), one that falls back to the
    strided map (a 3-wide output row), an int32 one, and a plain one."""
    g = GraphBuilder(seed=142)
    g.op("Transpose", ["x"], out_names=["y0"], perm=[0, 3, 2, 1])   # [2,16,3,8]: tiled
    g.op("Transpose", ["x"], out_names=["y1"], perm=[3, 1, 0, 2])   # [16,8,2,3]: strided map
    g.op("Transpose", ["m"], out_names=["y2"], perm=[1, 0])         # [40,24]: tiled
    g.op("Transpose", ["i"], out_names=["y3"], perm=[1, 0])         # int32 [16,8]: tiled
    g.op("Transpose", ["x"], out_names=["y4"], perm=[0, 2, 1, 3])   # [2,3,8,16]: rows contiguous
    m = g.model("transposes", [_vi("x", F32, [2, 8, 3, 16]), _vi("m", F32, [24, 40]),
                               _vi("i", TensorProto.INT32, [8, 16])],
                [_vi("y0", F32, [2, 16, 3, 8]), _vi("y1", F32, [16, 8, 2, 3]), _vi("y2", F32, [40, 24]),
                 _vi("y3", TensorProto.INT32, [16, 8]), _vi("y4", F32, [2, 3, 8, 16])])
    rng = np.random.default_rng(142)
    return Case(m, [{"x": _randn(rng, [2, 8, 3, 16]), "m": _randn(rng, [24, 40]),
                     "i": rng.integers(-1000, 1000, size=[8, 16]).astype(np.int32)}])


def make_scaled_masked_softmax() -> Case:
    """Attention's softmax(scores / c + mask) and its variants fused into one
    softmax (v4f-fuse-normalizations): a row mask broadcast over heads and
    queries (20 wide: a vector tail), a per-query mask (one value a row,
    with a Mul scale), a full-shape mask without scale, and a scale alone."""
    g = GraphBuilder(seed=143)
    c = g.const(np.array(np.sqrt(8.0), np.float32), "c")
    h = g.const(np.array(0.3, np.float32), "h")
    g.op("Softmax", [g.op("Add", [g.op("Div", ["s", c]), "m1"])], out_names=["y0"], axis=-1)
    g.op("Softmax", [g.op("Add", ["m2", g.op("Mul", [h, "s"])])], out_names=["y1"], axis=-1)
    g.op("Softmax", [g.op("Add", ["s", "m3"])], out_names=["y2"], axis=-1)
    g.op("Softmax", [g.op("Div", ["s", c])], out_names=["y3"], axis=3)
    shape = [2, 3, 8, 20]
    m = g.model("scaled_masked_softmax",
                [_vi("s", F32, shape), _vi("m1", F32, [1, 1, 1, 20]), _vi("m2", F32, [2, 1, 8, 1]),
                 _vi("m3", F32, shape)],
                [_vi(f"y{i}", F32, shape) for i in range(4)])
    rng = np.random.default_rng(143)
    m1 = np.where(rng.random([1, 1, 1, 20]) < 0.3, -10000.0, 0.0).astype(np.float32)
    return Case(m, [{"s": _randn(rng, shape, 3.0), "m1": m1, "m2": _randn(rng, [2, 1, 8, 1]),
                     "m3": _randn(rng, shape)}])


def all_generators() -> Dict[str, Callable[[], Case]]:
    gens: Dict[str, Callable[[], Case]] = {
        "mlp": make_mlp,
        "cnn": make_cnn,
        "transformer": make_transformer,
        "resnet50": make_resnet50,
        "symbolic_batch": make_symbolic_batch,
        "negative_batch": make_negative_batch,
        "pinned_batch": make_pinned_batch,
        "pinned_shape": make_pinned_shape,
        "bounded_batch": make_bounded_batch,
        "dynamic_hw_upsample": make_dynamic_hw_upsample,
        "attention_dynamic": make_attention_dynamic,
        "dynamic_broadcast_runs": make_dynamic_broadcast_runs,
        "reduce_runtime_axes": make_reduce_runtime_axes,
        "variadic_wide": make_variadic_wide,
        "slice_extreme_steps": make_slice_extreme_steps,
        "slice_runtime_bounds": make_slice_runtime_bounds,
        "same_pad_runtime": make_same_pad_runtime,
        "stft_runtime_length": make_stft_runtime_length,
        "data_dependent": make_data_dependent,
        "resize_runtime_scales": make_resize_runtime_scales,
        "transposes": make_transposes,
        "scaled_masked_softmax": make_scaled_masked_softmax,
    }
    # Run-time control flow, recurrences and shape checks (models_control_flow.py).
    import models_control_flow
    gens.update(models_control_flow.generators())
    # Operators over dims known only at run time, and op families (models_runtime_dims.py).
    import models_runtime_dims
    gens.update(models_runtime_dims.generators())
    # GEMM edges with compile-time packed weights (models_gemm.py).
    import models_gemm
    gens.update(models_gemm.generators())
    # Softmax, LayerNorm and attention rows (models_rows.py).
    import models_rows
    gens.update(models_rows.generators())
    for k, fn in OPSET_VARIANTS.items():
        gens[f"opset_variants/{k}"] = fn
    return gens


# Every op of the v4f skeleton list must appear in at least one model above.
SKELETON_OPS = sorted("""Conv MatMul Gemm Add Sub Mul Div Relu LeakyRelu Sigmoid Tanh Clip
Erf Exp Sqrt MaxPool AveragePool GlobalAveragePool Reshape Flatten Transpose Concat Softmax
ReduceMean Gather LayerNormalization BatchNormalization""".split())


def ops_used(model: onnx.ModelProto) -> set:
    return {n.op_type for n in model.graph.node}
