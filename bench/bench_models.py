"""Benchmark-only ONNX models for bench/suite.py, built with onnx.helper.

Like the generators of test/e2e/models.py (whose GraphBuilder they use), every
builder is deterministic (fixed seed) and returns a `models.Case`; weights are
random normal values scaled so that activations stay O(1).  Nothing here is
written to disk: the suite generates the models into its work dir at run time.

  mobilenet_v2()          MobileNetV2 1.0, 224x224, batch 1 (Sandler et al. 2018)
  bert_base(seq)          BERT-base encoder, 12 layers, exporter-style graph
  tiny_chain(n)           n tiny elementwise ops in a chain (per-dispatch overhead)
  gemm(n)                 MatMul [n,n] x constant [n,n]
  gemv(k, n)              MatMul [1,k] x constant [k,n] (batch-1 decoding)
  conv3x3(c, hw)          Conv c->c, 3x3, pad 1, on [1,c,hw,hw], constant weights
  yolo_neck()             YOLOv5-style SPPF + upsampling FPN step (pools, Resize, concats)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Dict, Tuple

import numpy as np
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "e2e"))
from models import Case, GraphBuilder  # noqa: E402

F32 = TensorProto.FLOAT


def _vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def _randn(seed: int, shape, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------------------
# MobileNetV2

# The standard table: expansion t, output channels c, repeats n, first stride s.
MOBILENET_V2_BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenet_v2(batch: int = 1, size: int = 224, num_classes: int = 1000) -> Case:
    """MobileNetV2, width 1.0: conv 3x3/2 (32), 17 inverted residual blocks (1x1 expand,
    depthwise 3x3, linear 1x1 project; residual when stride 1 and cin == cout), conv 1x1
    (1280), global average pool, FC.  Every conv has no bias and is followed by
    BatchNormalization; ReLU6 is Clip(0, 6) (the torch exporter's form)."""
    g = GraphBuilder(seed=2)
    zero = g.const(np.array(0.0, np.float32), "relu6_min")
    six = g.const(np.array(6.0, np.float32), "relu6_max")

    def conv_bn(x, cin, cout, k, stride=1, group=1, relu6=True, gamma_scale=1.0):
        h = g.conv(x, cin, cout, k, stride=stride, pads=[k // 2] * 4, group=group, bias=False)
        h = g.bn(h, cout, gamma_scale=gamma_scale)
        return g.op("Clip", [h, zero, six]) if relu6 else h

    h = conv_bn("input", 3, 32, 3, stride=2)                                 # [1,32,112,112]
    cin = 32
    nblocks = 0
    for t, c, n, s in MOBILENET_V2_BLOCKS:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            r = conv_bn(h, cin, hidden, 1) if t != 1 else h
            r = conv_bn(r, hidden, hidden, 3, stride=stride, group=hidden)  # depthwise
            # Small gamma on the linear projection keeps the residual stream bounded.
            r = conv_bn(r, hidden, c, 1, relu6=False, gamma_scale=0.5)
            h = g.op("Add", [h, r]) if stride == 1 and cin == c else r
            cin = c
            nblocks += 1
    assert nblocks == 17
    h = conv_bn(h, cin, 1280, 1)                                             # [1,1280,7,7]
    h = g.op("GlobalAveragePool", [h])
    h = g.op("Flatten", [h], axis=1)
    g.op("Gemm", [h, g.randn([num_classes, 1280], 1.0 / math.sqrt(1280), "fc_w"),
                  g.randn([num_classes], 0.1, "fc_b")], out_names=["logits"], transB=1)
    m = g.model("mobilenet_v2", [_vi("input", [batch, 3, size, size])], [_vi("logits", [batch, num_classes])])
    return Case(m, [{"input": _randn(202, [batch, 3, size, size])}])


# ---------------------------------------------------------------------------
# BERT-base encoder, the way the torch exporter writes it


def bert_base(seq: int = 128, layers: int = 12, hidden: int = 768, heads: int = 12, ffn: int = 3072,
              batch: int = 1) -> Case:
    """BERT encoder layers on given hidden states (no embedding lookup).  Inputs:
    `hidden_states` float [B,S,H] and `attention_mask` float [B,1,1,S] (0 = attend,
    -10000 = masked), added to the scores.  Per layer: Q/K/V MatMul+Add, Reshape and
    Transpose to heads (K transposed to [B,h,d,S]), MatMul, Div by sqrt(d), Add mask,
    Softmax, MatMul, Transpose/Reshape back, output MatMul+Add, residual Add, LayerNorm
    (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add), FFN MatMul+Add, GELU in erf
    form (Div sqrt2, Erf, Add 1, Mul, Mul 0.5), MatMul+Add, residual Add, LayerNorm."""
    assert hidden % heads == 0
    d = hidden // heads
    g = GraphBuilder(seed=768 + seq)
    c = lambda v, p="c": g.const(np.array(v, np.float32), p)  # noqa: E731
    i64 = lambda v, p="shape": g.const(np.array(v, np.int64), p)  # noqa: E731
    sqrt_d, sqrt2, one, half, two, eps = c(math.sqrt(d), "sqrt_d"), c(math.sqrt(2.0), "sqrt2"), \
        c(1.0, "one"), c(0.5, "half"), c(2.0, "two"), c(1e-12, "eps")
    heads_shape = i64([batch, seq, heads, d], "heads_shape")
    merged_shape = i64([batch, seq, hidden], "merged_shape")

    def linear(x, din, dout, scale=1.0):
        w = g.randn([din, dout], scale / math.sqrt(din), "w")
        b = g.randn([dout], 0.02, "b")
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    def layernorm(x):
        mean = g.op("ReduceMean", [x], axes=[-1], keepdims=1)
        xc = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [xc, two])], axes=[-1], keepdims=1)
        y = g.op("Div", [xc, g.op("Sqrt", [g.op("Add", [var, eps])])])
        gamma = g.const((1.0 + 0.1 * g.rng.standard_normal(hidden)).astype(np.float32), "ln_g")
        beta = g.const((0.02 * g.rng.standard_normal(hidden)).astype(np.float32), "ln_b")
        return g.op("Add", [g.op("Mul", [y, gamma]), beta])

    h = "hidden_states"
    for _ in range(layers):
        q = g.op("Transpose", [g.op("Reshape", [linear(h, hidden, hidden), heads_shape])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [linear(h, hidden, hidden), heads_shape])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [linear(h, hidden, hidden), heads_shape])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), sqrt_d]), "attention_mask"])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("MatMul", [probs, v])                                       # [B,h,S,d]
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merged_shape])
        h = layernorm(g.op("Add", [linear(ctx, hidden, hidden), h]))
        f = linear(h, hidden, ffn)
        f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [g.op("Erf", [g.op("Div", [f, sqrt2])]), one])]), half])
        h = layernorm(g.op("Add", [linear(f, ffn, hidden), h]))
    g.nodes[-1].output[0] = "last_hidden_state"
    m = g.model(f"bert_base_s{seq}", [_vi("hidden_states", [batch, seq, hidden]),
                                      _vi("attention_mask", [batch, 1, 1, seq])],
                [_vi("last_hidden_state", [batch, seq, hidden])])
    mask = np.zeros([batch, 1, 1, seq], np.float32)
    mask[..., seq - max(1, seq // 8):] = -10000.0  # the last eighth is padding
    return Case(m, [{"hidden_states": _randn(301, [batch, seq, hidden]), "attention_mask": mask}])


# ---------------------------------------------------------------------------
# micro-benchmarks


def tiny_chain(n: int = 100, width: int = 64) -> Case:
    """n elementwise ops in one chain on a [1,width] tensor, cycling Add(c), Mul(c), Relu,
    Sigmoid with small constants: the time per op is dispatch overhead."""
    g = GraphBuilder(seed=100)
    h = "x"
    for i in range(n):
        kind = i % 4
        if kind == 0:
            h = g.op("Add", [h, g.randn([width], 0.1, "add_c")])
        elif kind == 1:
            h = g.op("Mul", [h, g.const((1.0 + 0.1 * g.rng.standard_normal(width)).astype(np.float32), "mul_c")])
        elif kind == 2:
            h = g.op("Relu", [h])
        else:
            h = g.op("Sigmoid", [h])
    g.nodes[-1].output[0] = "y"
    m = g.model(f"tiny_chain{n}", [_vi("x", [1, width])], [_vi("y", [1, width])])
    return Case(m, [{"x": _randn(101, [1, width])}])


def gemm(n: int = 1024) -> Case:
    """MatMul of an input [n,n] by a constant [n,n] (n^3 MACs)."""
    g = GraphBuilder(seed=1024)
    g.op("MatMul", ["a", g.randn([n, n], 1.0 / math.sqrt(n), "b")], out_names=["y"])
    m = g.model(f"gemm{n}", [_vi("a", [n, n])], [_vi("y", [n, n])])
    return Case(m, [{"a": _randn(1025, [n, n])}])


def gemv(k: int = 4096, n: int = 4096) -> Case:
    """MatMul of one row [1,k] by a constant [k,n]: batch-1 decoding, memory bound."""
    g = GraphBuilder(seed=4096)
    g.op("MatMul", ["x", g.randn([k, n], 1.0 / math.sqrt(k), "w")], out_names=["y"])
    m = g.model(f"gemv{k}x{n}", [_vi("x", [1, k])], [_vi("y", [1, n])])
    return Case(m, [{"x": _randn(4097, [1, k])}])


def conv3x3(c: int = 256, hw: int = 28) -> Case:
    """Conv c->c, 3x3, stride 1, pad 1 on [1,c,hw,hw], constant weights, no bias."""
    g = GraphBuilder(seed=256)
    w = g.randn([c, c, 3, 3], math.sqrt(1.0 / (9 * c)), "w")
    g.op("Conv", ["x", w], out_names=["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    m = g.model(f"conv3x3_{c}", [_vi("x", [1, c, hw, hw])], [_vi("y", [1, c, hw, hw])])
    return Case(m, [{"x": _randn(257, [1, c, hw, hw])}])


def yolo_neck(c: int = 512, hw: int = 20) -> Case:
    """The neck of a YOLOv5-style detector at 640 x 640 (stride 32): SPPF (a 1x1
    conv c -> c/2, three chained 5x5 stride-1 max pools, a concat of the four,
    a 1x1 conv 2c -> c), a 1x1 conv c -> c/2, a nearest 2x Resize by constant
    scales, a concat with the stride-16 lateral (a 1x1 conv of the second
    input) and a 1x1 conv c -> c/2; SiLU after every conv but the last."""
    g = GraphBuilder(seed=520)
    h = c // 2

    def conv_silu(x, cin, cout, act=True):
        y = g.conv(x, cin, cout, 1, pads=[0, 0, 0, 0])
        return g.op("Mul", [y, g.op("Sigmoid", [y])]) if act else y

    a = conv_silu("x", c, h)
    m1 = g.op("MaxPool", [a], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    m2 = g.op("MaxPool", [m1], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    m3 = g.op("MaxPool", [m2], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    sppf = conv_silu(g.op("Concat", [a, m1, m2, m3], axis=1), 4 * h, c)
    top = conv_silu(sppf, c, h)
    up = g.op("Resize", [top, "", g.const(np.array([1, 1, 2, 2], np.float32), "scales")], mode="nearest")
    lateral = conv_silu("lat", h, h)
    out = conv_silu(g.op("Concat", [up, lateral], axis=1), 2 * h, h, act=False)
    g.op("Identity", [out], out_names=["y"])
    m = g.model("yolo_neck", [_vi("x", [1, c, hw, hw]), _vi("lat", [1, h, 2 * hw, 2 * hw])],
                [_vi("y", [1, h, 2 * hw, 2 * hw])])
    return Case(m, [{"x": _randn(521, [1, c, hw, hw]), "lat": _randn(522, [1, h, 2 * hw, 2 * hw])}])
