"""End-to-end generators for the row-wise kernels and attention: Softmax
with scale and mask, LayerNorm (the op and as exporters write it), attention
that v4f-fuse-attention-regions merges into one kernel (as exporters and as
torch's scaled_dot_product_attention write it). Part of models.py's
all_generators(); each case also runs compiled for AVX2 and SSE tiles and as
a multi-ISA artifact (models_gemm.isa_variants)."""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np

from models import F32, Case, GraphBuilder, _randn, _vi
from models_gemm import isa_variants


def make_softmax_rows(flags=()) -> Case:
    """Softmax over the last axis (the vector path: whole vectors, a masked
    tail, lengths 1, 7, 8, 13, 130) with large logits and an additive mask of
    -1e9, beside Softmax over axis 1 (the scalar path), and ReduceMean over
    the last axis (vector partial sums and a masked tail)."""
    g = GraphBuilder(seed=41)
    masked = g.op("Add", [g.op("Mul", ["x", g.const(np.array(30.0, np.float32), "scale")]), "mask"])
    g.op("Softmax", [masked], out_names=["last"], axis=-1)
    g.op("Softmax", ["x"], out_names=["mid"], axis=1)
    g.op("ReduceMean", ["x"], out_names=["mean"], axes=[2], keepdims=1)      # contiguous rows: vector sums
    m = g.model("softmax_rows", [_vi("x", F32, ["N", 3, "L"]), _vi("mask", F32, [1, 1, "L"])],
                [_vi("last", F32, ["N", 3, "L"]), _vi("mid", F32, ["N", 3, "L"]), _vi("mean", F32, ["N", 3, 1])])
    rng = np.random.default_rng(141)
    sets = []
    for n, length in ((2, 1), (1, 7), (3, 8), (1, 13), (2, 130)):
        mask = np.zeros([1, 1, length], np.float32)
        mask[..., length // 2:] = -1e9 if length > 1 else 0
        sets.append({"x": _randn(rng, [n, 3, length]), "mask": mask})
    return Case(m, sets, note="L = 1, 7, 8, 13, 130", compile_flags=list(flags))



def make_layer_norm_rows(flags=()) -> Case:
    """LayerNormalization over contiguous rows (vector sums and
    normalization with a masked tail): 37 columns (4 vectors + 5), the last
    two axes (185), a 1-column row, without bias, a scale broadcast inside
    the row (the scalar normalization pass), and LayerNorm as exporters
    write it (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add)."""
    g = GraphBuilder(seed=43)
    g.op("LayerNormalization", ["x", g.randn([37], 0.5), g.randn([37], 0.1)], out_names=["a"], axis=-1,
         epsilon=1e-5)
    g.op("LayerNormalization", ["x", g.randn([5, 37], 0.5), g.randn([5, 37], 0.1)], out_names=["b"], axis=-2)
    g.op("LayerNormalization", ["x1", g.randn([1], 0.5)], out_names=["c"], axis=-1)
    g.op("LayerNormalization", ["x", g.randn([1, 37], 0.5)], out_names=["d"], axis=-2)   # scale broadcast over rows
    # As exporters write it (v4f-fuse-normalizations makes it one layer_norm).
    mean = g.op("ReduceMean", ["x"], axes=[-1], keepdims=1)
    dlt = g.op("Sub", ["x", mean])
    var = g.op("ReduceMean", [g.op("Pow", [dlt, g.const(np.array(2.0, np.float32), "two")])], axes=[-1], keepdims=1)
    norm = g.op("Div", [dlt, g.op("Sqrt", [g.op("Add", [var, g.const(np.array(1e-5, np.float32), "eps")])])])
    g.op("Add", [g.op("Mul", [norm, g.randn([37], 0.5)]), g.randn([37], 0.1)], out_names=["e"])
    m = g.model("layer_norm_rows", [_vi("x", F32, [2, 5, 37]), _vi("x1", F32, [3, 1])],
                [_vi("a", F32, [2, 5, 37]), _vi("b", F32, [2, 5, 37]), _vi("c", F32, [3, 1]),
                 _vi("d", F32, [2, 5, 37]), _vi("e", F32, [2, 5, 37])], opset=17)
    rng = np.random.default_rng(143)
    return Case(m, [{"x": _randn(rng, [2, 5, 37]) * 3 + 1, "x1": _randn(rng, [3, 1])}],
                note="rows of 37, 185 and 1", compile_flags=list(flags))



def make_fused_attention(flags=()) -> Case:
    """Attention as exporters write it, which v4f-fuse-attention-regions
    merges into one kernel (AttentionKernels.cpp): BERT-style heads split by
    Reshape + Transpose (Q [0,2,1,3], K^T [0,2,3,1], V [0,2,1,3]) and merged
    back, Div by sqrt(D), an additive [B,1,1,L] mask of -1e4; 13 queries and
    keys (a partial query block, key tiles of 8 + 5), D = 24. Rank 3 without
    transposes: a full [B,S,L] mask (gathered per key), Mul scale, 21 x 37
    scores, D = 40, an odd value width of 19 (masked tail). No mask and no
    scale, K^T from a [0,1,3,2] transpose, 40 queries (2 query blocks of 16
    + 8 one row at a time on AVX-512), values 64 wide."""
    g = GraphBuilder(seed=47)
    B, S, H, D = 2, 13, 3, 24
    heads = lambda x, perm: g.op("Transpose", [g.op("Reshape", [x, g.const(np.array([B, S, H, D], np.int64))])],
                                 perm=perm)
    q, kt, v = heads("xq", [0, 2, 1, 3]), heads("xk", [0, 2, 3, 1]), heads("xv", [0, 2, 1, 3])
    scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, kt]), g.const(np.array(np.sqrt(D), np.float32))]),
                          "mask"])
    o = g.op("Transpose", [g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])], perm=[0, 2, 1, 3])
    g.op("Reshape", [o, g.const(np.array([B, S, H * D], np.int64))], out_names=["bert"])
    s3 = g.op("Add", [g.op("Mul", [g.op("MatMul", ["q3", "kt3"]), g.const(np.array(0.3, np.float32))]), "mask3"])
    g.op("MatMul", [g.op("Softmax", [s3], axis=-1), "v3"], out_names=["rank3"])
    kt4 = g.op("Transpose", ["k4"], perm=[0, 1, 3, 2])
    g.op("MatMul", [g.op("Softmax", [g.op("MatMul", ["q4", kt4])], axis=-1), "v4"], out_names=["plain"])
    m = g.model("fused_attention",
                [_vi("xq", F32, [B, S, H * D]), _vi("xk", F32, [B, S, H * D]), _vi("xv", F32, [B, S, H * D]),
                 _vi("mask", F32, [B, 1, 1, S]), _vi("q3", F32, [6, 21, 40]), _vi("kt3", F32, [6, 40, 37]),
                 _vi("v3", F32, [6, 37, 19]), _vi("mask3", F32, [6, 21, 37]), _vi("q4", F32, [1, 2, 40, 16]),
                 _vi("k4", F32, [1, 2, 40, 16]), _vi("v4", F32, [1, 2, 40, 64])],
                [_vi("bert", F32, [B, S, H * D]), _vi("rank3", F32, [6, 21, 19]), _vi("plain", F32, [1, 2, 40, 64])])
    rng = np.random.default_rng(147)
    mask = np.zeros([B, 1, 1, S], np.float32)
    mask[0, ..., 9:] = -1e4
    mask3 = np.where(rng.random([6, 21, 37]) < 0.3, -1e4, 0).astype(np.float32)
    inputs = {"xq": _randn(rng, [B, S, H * D]), "xk": _randn(rng, [B, S, H * D]), "xv": _randn(rng, [B, S, H * D]),
              "mask": mask, "q3": _randn(rng, [6, 21, 40]), "kt3": _randn(rng, [6, 40, 37]),
              "v3": _randn(rng, [6, 37, 19]), "mask3": mask3, "q4": _randn(rng, [1, 2, 40, 16]),
              "k4": _randn(rng, [1, 2, 40, 16]), "v4": _randn(rng, [1, 2, 40, 64])}
    return Case(m, [inputs], note="BERT-style heads, rank 3 with a full mask, no mask", compile_flags=list(flags))



def make_sdpa_attention(flags=()) -> Case:
    """Attention as torch's scaled_dot_product_attention exports it: Q and
    K^T each multiplied by sqrt(1/sqrt(D)), a boolean key mask turned into
    Where(mask, 0, -inf) and added, Softmax, then Where(IsNaN(p), 0, p) --
    v4f-fuse-normalizations folds the factors into the softmax's scale and
    the guard into its nan_to_zero, so v4f-fuse-attention-regions fuses the
    whole. Batch item 1 has every key masked: its rows are NaN before the
    guard and its output is 0. 2 x 4 heads, 40 queries and keys (two tiles
    of 32 on the GPU), D = 16."""
    g = GraphBuilder(seed=53)
    B, S, H, D = 2, 40, 4, 16
    heads = lambda x, perm: g.op("Transpose", [g.op("Reshape", [x, g.const(np.array([B, S, H, D], np.int64))])],
                                 perm=perm)
    root = g.const(np.array(np.sqrt(1.0 / np.sqrt(D)), np.float32))
    q = g.op("Mul", [heads("xq", [0, 2, 1, 3]), root])
    kt = g.op("Mul", [heads("xk", [0, 2, 3, 1]), root])
    v = heads("xv", [0, 2, 1, 3])
    keep = g.op("Greater", ["keys", g.const(np.array(0.5, np.float32))])
    bias = g.op("Where", [keep, g.const(np.array(0.0, np.float32)), g.const(np.array(-np.inf, np.float32))])
    p = g.op("Softmax", [g.op("Add", [g.op("MatMul", [q, kt]), bias])], axis=-1)
    p = g.op("Where", [g.op("IsNaN", [p]), g.const(np.array([0.0], np.float32)), p])
    o = g.op("Transpose", [g.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    g.op("Reshape", [o, g.const(np.array([B, S, H * D], np.int64))], out_names=["y"])
    m = g.model("sdpa_attention",
                [_vi("xq", F32, [B, S, H * D]), _vi("xk", F32, [B, S, H * D]), _vi("xv", F32, [B, S, H * D]),
                 _vi("keys", F32, [B, 1, 1, S])],
                [_vi("y", F32, [B, S, H * D])])
    rng = np.random.default_rng(153)
    keys = np.ones([B, 1, 1, S], np.float32)
    keys[0, ..., 29:] = 0
    keys[1] = 0
    inputs = {"xq": _randn(rng, [B, S, H * D]), "xk": _randn(rng, [B, S, H * D]), "xv": _randn(rng, [B, S, H * D]),
              "keys": keys}
    return Case(m, [inputs], note="torch SDPA export: scaled operands, -inf mask, NaN guard; one item fully masked",
                compile_flags=list(flags))


def generators() -> Dict[str, Callable[[], Case]]:
    return isa_variants({"softmax_rows": make_softmax_rows, "fused_attention": make_fused_attention,
                         "sdpa_attention": make_sdpa_attention, "layer_norm_rows": make_layer_norm_rows})
