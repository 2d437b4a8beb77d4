"""End-to-end generators for the GEMM kernels' edges with compile-time
packed weights (v4f-pack-weights): sizes that are not multiples of the
register tile on any target, batched and shared constant weights, a weight
also read as a plain tensor, grouped / pointwise convs with bias, residual
and activation epilogues, and a run-time batch. Part of models.py's
all_generators(); each case also runs compiled for AVX2 and SSE tiles."""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np

from models import F32, Case, GraphBuilder, _randn, _vi


def make_packed_matmuls(flags=()) -> Case:
    g = GraphBuilder(seed=31)
    w = g.randn([37, 45], 0.2)                          # N = 45: whole panels + a 13-column edge
    h = g.op("MatMul", ["x", w])
    h = g.op("Add", [h, g.randn([45], 0.1)])            # per-column bias epilogue
    h = g.op("Relu", [h])
    y2 = g.op("MatMul", ["x", w])                        # the same packed weight again
    # ... and read as a plain tensor too (its plain copy stays in the artifact)
    y3 = g.op("Add", [y2, g.op("ReduceSum", [w, g.const(np.array([0], np.int64), "axes")], keepdims=0)])
    wb = g.randn([3, 45, 7], 0.2)                        # batched constant B, N = 7 (edge only)
    hb = g.op("Reshape", [h, g.const(np.array([-1, 1, 1, 45], np.int64), "shape")])
    yb = g.op("MatMul", [g.op("Expand", [hb, g.const(np.array([1, 3, 2, 45], np.int64), "shape")]), wb])
    gw = g.randn([45, 37], 0.2)                          # Gemm transB over the plain copy below
    yg = g.op("Gemm", ["x", gw], transB=1)
    g.op("ReduceSum", [gw, g.const(np.array([1], np.int64), "axes")], out_names=["gw_sum"], keepdims=0)
    g.op("Identity", [h], out_names=["y"])
    g.op("Identity", [y3], out_names=["y3"])
    g.op("Identity", [yb], out_names=["yb"])
    g.op("Identity", [yg], out_names=["yg"])
    m = g.model("packed_matmuls", [_vi("x", F32, ["N", 37])],
                [_vi("y", F32, ["N", 45]), _vi("y3", F32, ["N", 45]), _vi("yb", F32, ["N", 3, 2, 7]),
                 _vi("yg", F32, ["N", 45]), _vi("gw_sum", F32, [45])])
    rng = np.random.default_rng(131)
    return Case(m, [{"x": _randn(rng, [7, 37])}, {"x": _randn(rng, [1, 37])}, {"x": _randn(rng, [13, 37])}],
                note="N = 7, 1, 13", compile_flags=list(flags))


def make_packed_convs(flags=()) -> Case:
    g = GraphBuilder(seed=32)
    # 13 output channels (not a multiple of 6 or 8), 5 x 7 = 35 output columns.
    h = g.conv("x", 5, 13, 3, pads=[1, 1, 1, 1])
    h = g.op("Relu", [h])
    # grouped: 2 groups of 7 output channels
    h2 = g.conv(g.conv(h, 13, 14, 1, pads=[0, 0, 0, 0]), 14, 14, 3, group=2, pads=[1, 1, 1, 1])
    # pointwise conv with bias + residual add + relu (the residual read masked at the edge)
    r = g.conv(h2, 14, 14, 1, pads=[0, 0, 0, 0])
    y = g.op("Relu", [g.op("Add", [r, h2])])
    # depthwise 3x3, stride 2
    d = g.conv(y, 14, 14, 3, stride=2, group=14, pads=[1, 1, 1, 1])
    g.op("Identity", [y], out_names=["y"])
    g.op("Identity", [d], out_names=["d"])
    m = g.model("packed_convs", [_vi("x", F32, ["N", 5, 5, 7])],
                [_vi("y", F32, ["N", 14, 5, 7]), _vi("d", F32, ["N", 14, 3, 4])])
    rng = np.random.default_rng(132)
    return Case(m, [{"x": _randn(rng, [2, 5, 5, 7])}, {"x": _randn(rng, [1, 5, 5, 7])}],
                note="N = 2, 1", compile_flags=list(flags))


def make_depthwise_convs(flags=()) -> Case:
    """The direct depthwise kernel (v4f.conv_algorithm = "depthwise") at
    run-time H and W: rows narrower than one vector, whole interior chunks
    plus masked border chunks, stride 2 with odd and even widths, dilation,
    asymmetric pads, a 5x5 kernel, a channel multiplier, a one-channel input,
    fused bias / residual / activations, a weight computed at run time, and
    a stride-3 depthwise conv that stays on im2col + GEMM."""
    g = GraphBuilder(seed=33)
    a = g.op("Relu", [g.conv("x", 6, 6, 3, group=6)])                       # 3x3 s1 p1 + relu
    b = g.conv(a, 6, 6, 3, stride=2, group=6, pads=[1, 0, 1, 2])              # s2, asymmetric pads
    c = g.conv("x", 6, 12, 5, group=6, dilation=2)                           # 5x5, dilation 2, multiplier 2
    hs = g.op("HardSwish", [c])
    r = g.op("Add", [g.conv(a, 6, 6, 3, group=6, bias=False), "x"])           # residual epilogue
    one = g.conv(g.op("ReduceMean", ["x"], axes=[1], keepdims=1), 1, 4, 3)
    wt = g.op("Mul", ["wr", g.const(np.array(0.5, np.float32), "half")])      # run-time weight
    rw = g.op("Conv", ["x", wt], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=6)
    s3 = g.conv("x", 6, 6, 3, stride=3, group=6)                              # stays im2col + GEMM
    for name, v in (("b", b), ("hs", hs), ("r", r), ("one", one), ("rw", rw), ("s3", s3)):
        g.op("Identity", [v], out_names=[name])
    m = g.model("depthwise_convs", [_vi("x", F32, ["N", 6, "H", "W"]), _vi("wr", F32, [6, 1, 3, 3])],
                [_vi(n, F32, ["N", c, n + "_h", n + "_w"])
                 for n, c in (("b", 6), ("hs", 12), ("r", 6), ("one", 4), ("rw", 6), ("s3", 6))])
    rng = np.random.default_rng(133)
    wr = _randn(rng, [6, 1, 3, 3], 0.3)
    return Case(m, [{"x": _randn(rng, [1, 6, 9, 40]), "wr": wr}, {"x": _randn(rng, [2, 6, 5, 7]), "wr": wr},
                    {"x": _randn(rng, [1, 6, 12, 71]), "wr": wr}],
                note="H x W = 9x40, 5x7 (N = 2), 12x71", compile_flags=list(flags))


def make_depthwise_static(flags=()) -> Case:
    """The depthwise kernel's row blocks at static shapes: 7 x 7 and 14 x 14
    planes split into even blocks of output rows (7 = 4 + 3 rows), a 5x5
    stride-1 conv (each input row read by up to 5 output rows), stride 2
    from 14 x 14, and a stride-2 conv over an input larger than 1 MB (one
    row per work item), with bias + residual + ReLU6 epilogues."""
    g = GraphBuilder(seed=39)
    relu6 = [g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")]
    a = g.op("Clip", [g.op("Add", [g.conv("x", 16, 16, 5, group=16), "x"])] + relu6)  # 7x7, 5x5 s1, residual
    b = g.conv("y", 24, 24, 5, stride=2, group=24)                              # 14x14 -> 7x7
    c = g.conv("y", 24, 24, 3, group=24, pads=[0, 1, 2, 1])                      # 14x14 asymmetric
    d = g.conv("z", 72, 72, 3, stride=2, group=72)                              # 72x64x64 (1.2 MB) -> 32x32
    for name, v in (("a", a), ("b", b), ("c", c), ("d", d)):
        g.op("Identity", [v], out_names=[name])
    m = g.model("depthwise_static", [_vi("x", F32, [1, 16, 7, 7]), _vi("y", F32, [1, 24, 14, 14]),
                                     _vi("z", F32, [1, 72, 64, 64])],
                [_vi("a", F32, [1, 16, 7, 7]), _vi("b", F32, [1, 24, 7, 7]), _vi("c", F32, [1, 24, 14, 14]),
                 _vi("d", F32, [1, 72, 32, 32])])
    rng = np.random.default_rng(139)
    return Case(m, [{"x": _randn(rng, [1, 16, 7, 7]), "y": _randn(rng, [1, 24, 14, 14]),
                     "z": _randn(rng, [1, 72, 64, 64])}], compile_flags=list(flags))


def make_gemm_edges(flags=()) -> Case:
    """Row and K edges of the GEMM: a run-time M whose remainder after the
    whole MR tiles takes every combination of the 4-, 2- and 1-row edge
    tiles (M = 7, 11, 13, 15, 50, 1), K = 1000 and 520 split into equal K
    blocks (the epilogue only on the last), a bias + relu epilogue, and a
    matmul of two run-time operands (unpacked B)."""
    g = GraphBuilder(seed=35)
    h = g.op("Relu", [g.op("Add", [g.op("MatMul", ["x", g.randn([1000, 40], 0.05)]), g.randn([40], 0.1)])])
    y2 = g.op("MatMul", ["x2", g.randn([520, 21], 0.05)])
    y3 = g.op("MatMul", [h, g.op("Transpose", [h], perm=[1, 0])])   # [M, 40] x [40, M]
    for name, v in (("y", h), ("y2", y2), ("y3", y3)):
        g.op("Identity", [v], out_names=[name])
    m = g.model("gemm_edges", [_vi("x", F32, ["M", 1000]), _vi("x2", F32, ["M", 520])],
                [_vi("y", F32, ["M", 40]), _vi("y2", F32, ["M", 21]), _vi("y3", F32, ["M", "M"])])
    rng = np.random.default_rng(135)
    return Case(m, [{"x": _randn(rng, [M, 1000]), "x2": _randn(rng, [M, 520])} for M in (7, 11, 13, 15, 50, 1)],
                note="M = 7, 11, 13, 15, 50, 1", compile_flags=list(flags))


def make_im2col_rows(flags=()) -> Case:
    """The im2col paths at run-time H and W: rows of several vectors written
    in vector chunks (stride 1 and 2 contiguous loads, chunks at padding
    borders and row ends lane by lane, columns past P), dilation, stride 3
    (always lane by lane), asymmetric pads, a 5x5 kernel, a 1x1 stride-2
    conv, and narrow rows element by element; widths 61, 50, 100 and 9 make
    the chunked and row-by-row paths meet on every target."""
    g = GraphBuilder(seed=37)
    outs = {
        "s1": g.conv("x", 3, 5, 3),                                   # stride 1, pad 1
        "s2": g.conv("x", 3, 4, 3, stride=2, pads=[0, 1, 1, 0]),       # stride 2, asymmetric pads
        "d2": g.conv("x", 3, 4, 3, dilation=2),                        # dilation 2
        "s3": g.conv("x", 3, 4, 3, stride=3),                          # stride 3
        "k5": g.op("Relu", [g.conv("x", 3, 6, 5)]),                   # 5x5, pad 2, epilogue
        "p1": g.conv("x", 3, 4, 1, stride=2, pads=[0, 0, 0, 0]),       # 1x1 stride 2 (not pointwise)
    }
    for name, v in outs.items():
        g.op("Identity", [v], out_names=[name])
    m = g.model("im2col_rows", [_vi("x", F32, ["N", 3, "H", "W"])],
                [_vi(n, F32, ["N", c, n + "_h", n + "_w"])
                 for n, c in (("s1", 5), ("s2", 4), ("d2", 4), ("s3", 4), ("k5", 6), ("p1", 4))])
    rng = np.random.default_rng(137)
    # 37 x 61: P >= 4 column blocks for s1, k5 and d2, whose B the GEMM then
    # packs per workgroup (the run-time choice of emitConv), while s2, s3 and
    # p1 stay below and materialize im2col.
    return Case(m, [{"x": _randn(rng, [1, 3, 7, 61])}, {"x": _randn(rng, [2, 3, 5, 50])},
                    {"x": _randn(rng, [1, 3, 4, 100])}, {"x": _randn(rng, [1, 3, 6, 9])},
                    {"x": _randn(rng, [1, 3, 37, 61])}],
                note="H x W = 7x61, 5x50 (N = 2), 4x100, 6x9, 37x61", compile_flags=list(flags))


def make_conv_packed_b(flags=()) -> Case:
    """Convs whose im2col is packed per workgroup into scratch (G = 1, static
    P >= 4 column blocks): several K blocks (K = 32 x 9 = 288 and 32 x 25 =
    800),
    M = 50 rows (a partial row block and edge tiles), P not a multiple of the
    column block, batch 2, stride 1 and 2, wide rows (chunks) and narrow ones
    (element loop: 11 wide), bias + residual + relu epilogue, and a grouped
    conv that keeps the materialized im2col."""
    g = GraphBuilder(seed=39)
    a = g.op("Relu", [g.op("Add", [g.conv("x", 32, 50, 3), "r"])])          # 40x30 -> 40x30, residual
    b2 = g.conv("xs", 8, 20, 5, stride=2, pads=[2, 1, 2, 2])                  # 80x62 -> 40x31
    n = g.conv("xn", 32, 18, 5, dilation=2)                                   # 100x11, narrow rows, K = 800
    gr = g.conv("x", 32, 16, 3, group=2)                                      # grouped: materialized
    for name, v in (("a", a), ("b2", b2), ("n", n), ("gr", gr)):
        g.op("Identity", [v], out_names=[name])
    m = g.model("conv_packed_b", [_vi("x", F32, [2, 32, 40, 30]), _vi("r", F32, [2, 50, 40, 30]),
                                  _vi("xn", F32, [1, 32, 100, 11]), _vi("xs", F32, [1, 8, 80, 62])],
                [_vi("a", F32, [2, 50, 40, 30]), _vi("b2", F32, [1, 20, 40, 31]), _vi("n", F32, [1, 18, 100, 11]),
                 _vi("gr", F32, [2, 16, 40, 30])])
    rng = np.random.default_rng(139)
    return Case(m, [{"x": _randn(rng, [2, 32, 40, 30]), "r": _randn(rng, [2, 50, 40, 30]),
                     "xn": _randn(rng, [1, 32, 100, 11]), "xs": _randn(rng, [1, 8, 80, 62])}],
                note="static 2x32x40x30, 1x32x100x11, 1x8x80x62", compile_flags=list(flags))


def make_channel_lanes_convs(flags=()) -> Case:
    """Convs with few output pixels, which compute output channels in vector
    lanes (v4f.conv_algorithm = "channel_lanes") on every target: 1x1 and
    3x3 (read from the input, or a zero-padded copy, through a per-K offset
    table: no im2col), stride 2, dilation, asymmetric pads, 9 / 49 / 196 pixels (edge
    row tiles; 196 spans several row blocks), strided convs through a copy
    split into stride phases, 80 output channels (an edge
    column tile on AVX-512), K = 1024 in several K blocks (partial sums in
    scratch), bias, a residual gathered in the epilogue, Relu and Clip, and a
    run-time batch."""
    g = GraphBuilder(seed=40)
    a = g.op("Relu", [g.conv("x", 96, 48, 1)])                                   # P = 9
    b = g.op("Relu", [g.op("Add", [g.conv(a, 48, 48, 3), a])])                    # 3x3 + residual
    c = g.op("Clip", [g.conv("xb", 160, 80, 1, stride=2, pads=[0, 0, 0, 0]),     # 5x5 -> 3x3, 80 channels
                      g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")])
    d = g.conv("x7", 64, 64, 3)                                                   # 7x7: ResNet stage 4
    e = g.op("Relu", [g.conv("x14", 1024, 64, 1)])                                # 14x14, K = 1024
    f = g.conv(g.op("Slice", ["x14", g.const(np.array([0], np.int64)), g.const(np.array([64], np.int64)),
                              g.const(np.array([1], np.int64))]),
               64, 64, 3, stride=2, dilation=2, pads=[2, 1, 1, 2])                 # 14x14 -> 7x7, dilated, asymmetric pads
    # Strided convs read a copy split into stride phases (odd 15 x 15 planes:
    # phases of 8 and 7 rows): 3x3 stride 2; stride 3 with dilation 2 (all
    # three phases, gathered); a 2x2 dilation-2 stride-3 window, whose taps
    # read phases {0, 2} only (no split); strides (2, 1); a padded 1x1
    # stride-2 conv (phase (0, 0) only).
    s1 = g.conv("x15", 64, 64, 3, stride=2)                                       # 8x8
    s2 = g.conv("x15", 64, 32, 3, stride=3, dilation=2)                           # 5x5
    s3 = g.conv("x15", 64, 32, 2, stride=3, dilation=2, pads=[0, 0, 0, 0])        # 5x5
    s4 = g.conv("x15", 64, 64, 3, stride=(2, 1))                                  # 8x15
    s5 = g.conv("x14", 1024, 64, 1, stride=2, pads=[1, 1, 0, 0])                  # 8x8
    # Wider planes: copy chunks inside the row, at both borders and past it.
    s6 = g.conv("x40", 16, 32, 3, stride=2)                                       # 20x20
    s7 = g.conv("x40", 16, 32, 3)                                                 # 40x40, padded copy
    outs = (("b", b), ("c", c), ("d", d), ("e", e), ("f", f), ("s1", s1), ("s2", s2), ("s3", s3), ("s4", s4),
            ("s5", s5), ("s6", s6), ("s7", s7))
    for name, v in outs:
        g.op("Identity", [v], out_names=[name])
    m = g.model("channel_lanes_convs",
                [_vi("x", F32, ["N", 96, 3, 3]), _vi("xb", F32, ["N", 160, 5, 5]), _vi("x7", F32, ["N", 64, 7, 7]),
                 _vi("x14", F32, ["N", 1024, 14, 14]), _vi("x15", F32, ["N", 64, 15, 15]),
                 _vi("x40", F32, ["N", 16, 40, 40])],
                [_vi("b", F32, ["N", 48, 3, 3]), _vi("c", F32, ["N", 80, 3, 3]), _vi("d", F32, ["N", 64, 7, 7]),
                 _vi("e", F32, ["N", 64, 14, 14]), _vi("f", F32, ["N", 64, 7, 7]), _vi("s1", F32, ["N", 64, 8, 8]),
                 _vi("s2", F32, ["N", 32, 5, 5]), _vi("s3", F32, ["N", 32, 5, 5]), _vi("s4", F32, ["N", 64, 8, 15]),
                 _vi("s5", F32, ["N", 64, 8, 8]), _vi("s6", F32, ["N", 32, 20, 20]), _vi("s7", F32, ["N", 32, 40, 40])])
    rng = np.random.default_rng(140)
    sets = [{"x": _randn(rng, [n, 96, 3, 3]), "xb": _randn(rng, [n, 160, 5, 5]), "x7": _randn(rng, [n, 64, 7, 7]),
             "x14": _randn(rng, [n, 1024, 14, 14]), "x15": _randn(rng, [n, 64, 15, 15]),
             "x40": _randn(rng, [n, 16, 40, 40])} for n in (2, 1)]
    return Case(m, sets, note="N = 2, 1", compile_flags=list(flags))


def make_winograd_convs(flags=()) -> Case:
    """3x3 stride-1 convs that v4f-select-cpu-strategy gives Winograd
    (WinogradConvKernels.cpp) on every target. F(4x4, 3x3) with the
    transformed weight stored ("winograd_4x4"): a ResNet stage-1 conv
    (56 x 56, 64 -> 64, bias + Relu, tile blocks over several rows; 7 of
    them on AVX-512, so one output-channel group transforming its input
    inline; the last block's 4 tiles in one vector of the two) and one with a
    residual added before Relu; on AVX2 and SSE a 29 x 27 plane (edges no
    multiple of 4, asymmetric pads, no bias; few tile blocks, so
    output-channel groups share a separate input-transform dispatch).
    F(2x2, 3x3) ("winograd_2x2", AVX-512 and AVX2): 24 -> 20 channels at
    21 x 21 (the last tile row and column half outside; the last
    output-channel tile zero-padded: MR = 8 on AVX-512, 6 on AVX2;
    output-channel groups sharing the input transform), and on AVX2 the same
    at 23 x 21. F(4x4) from the direct weight, transformed in the kernel
    ("winograd_4x4_direct_weights"): the 29 x 27 conv on AVX-512, the 21 x 21
    one on SSE, and on every target the 23 x 21 ones of 24 -> 40 channels (no
    padding: 23 x 21 -> 21 x 19; asymmetric pads, no bias and Clip; ragged
    output-channel tiles with MR = 6 and ragged channel chunks; a last tile
    block of fewer vectors), a 14 x 14 plane with 64 channels, and 21 -> 21
    channels at 13 x 15 with the input added as a residual before Relu (an
    odd channel count: one channel per transform vector, two with an even
    count on AVX-512); and a run-time batch. Which conv takes which: `v4fc
    compile --print-ir-after-all`; the choices are also checked in
    test/Codegen/CPU/winograd.mlir."""
    g = GraphBuilder(seed=41)
    a = g.op("Relu", [g.conv("x56", 64, 64, 3)])
    h = g.op("Relu", [g.conv("x29", 64, 64, 3, pads=[2, 1, 0, 1], bias=False)])
    b = g.op("Relu", [g.op("Add", [g.conv(a, 64, 64, 3), a])])
    c = g.conv("x23", 24, 20, 3)
    d = g.conv("x23", 24, 40, 3, pads=[0, 0, 0, 0])
    e = g.op("Clip", [g.conv("x23", 24, 40, 3, pads=[2, 0, 1, 1], bias=False),
                      g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")])
    f = g.op("Relu", [g.conv("x14", 64, 64, 3)])
    r = g.op("Relu", [g.op("Add", [g.conv("x13", 21, 21, 3), "x13"])])
    q = g.conv("x21", 24, 20, 3)
    outs = (("b", b), ("c", c), ("d", d), ("e", e), ("f", f), ("h", h), ("r", r), ("q", q))
    for name, v in outs:
        g.op("Identity", [v], out_names=[name])
    m = g.model("winograd_convs",
                [_vi("x56", F32, ["N", 64, 56, 56]), _vi("x23", F32, ["N", 24, 23, 21]),
                 _vi("x14", F32, ["N", 64, 14, 14]), _vi("x29", F32, ["N", 64, 29, 27]),
                 _vi("x13", F32, ["N", 21, 13, 15]), _vi("x21", F32, ["N", 24, 21, 21])],
                [_vi("b", F32, ["N", 64, 56, 56]), _vi("c", F32, ["N", 20, 23, 21]), _vi("d", F32, ["N", 40, 21, 19]),
                 _vi("e", F32, ["N", 40, 24, 20]), _vi("f", F32, ["N", 64, 14, 14]), _vi("h", F32, ["N", 64, 29, 27]),
                 _vi("r", F32, ["N", 21, 13, 15]), _vi("q", F32, ["N", 20, 21, 21])])
    rng = np.random.default_rng(141)
    sets = [{"x56": _randn(rng, [n, 64, 56, 56]), "x23": _randn(rng, [n, 24, 23, 21]),
             "x14": _randn(rng, [n, 64, 14, 14]), "x29": _randn(rng, [n, 64, 29, 27]),
             "x13": _randn(rng, [n, 21, 13, 15]), "x21": _randn(rng, [n, 24, 21, 21])} for n in (2, 1)]
    return Case(m, sets, note="N = 2, 1", compile_flags=list(flags))


def make_maxpool_3x3s2(flags=()) -> Case:
    """3x3 stride-2 max pools, which take the column-max kernel
    (PoolKernels.cpp, emitMaxPool3x3s2): ResNet's stem pool (pads 1,
    even 40 x 36 planes), odd 15 x 13 planes, no padding, padding only at
    the top and left or only at the bottom and right, ceil_mode (the last
    window half outside), and inputs all below zero (a padded element read as
    0 instead of -inf would win); a run-time batch and planes."""
    g = GraphBuilder(seed=42)
    outs = []
    for i, (x, kw) in enumerate((("xa", dict(pads=[1, 1, 1, 1])), ("xb", dict(pads=[1, 1, 1, 1])),
                                 ("xb", dict(pads=[0, 0, 0, 0])), ("xb", dict(pads=[1, 1, 0, 0])),
                                 ("xb", dict(pads=[0, 0, 1, 1])), ("xb", dict(pads=[0, 0, 0, 0], ceil_mode=1)),
                                 ("xn", dict(pads=[1, 1, 1, 1])))):
        y = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], **kw)
        g.op("Identity", [y], out_names=["y%d" % i])
        outs.append("y%d" % i)
    shapes = {"y0": [20, 18], "y1": [8, 7], "y2": [7, 6], "y3": [7, 6], "y4": [7, 6], "y5": [7, 6], "y6": ["OH", "OW"]}
    m = g.model("maxpool_3x3s2",
                [_vi("xa", F32, ["N", 16, 40, 36]), _vi("xb", F32, ["N", 24, 15, 13]), _vi("xn", F32, ["N", 8, "H", "W"])],
                [_vi(o, F32, ["N", 16 if o == "y0" else 8 if o == "y6" else 24] + shapes[o]) for o in outs])
    rng = np.random.default_rng(142)
    sets = [{"xa": _randn(rng, [n, 16, 40, 36]), "xb": _randn(rng, [n, 24, 15, 13]),
             "xn": (-np.abs(_randn(rng, [n, 8, h, w])) - 0.5).astype(np.float32)}
            for n, h, w in ((2, 17, 23), (1, 9, 40))]
    return Case(m, sets, note="N = 2, 1; negative planes 17 x 23, 9 x 40", compile_flags=list(flags))


def make_channel_scaled_convs(flags=()) -> Case:
    """Squeeze-and-excite blocks whose per-image channel scale feeds a 1x1
    conv, which v4f-fuse-channel-scale merges (the conv of x with its packed
    weight scaled per image: ConvKernels.cpp, emitChannelScaledConv):
    depthwise -> GlobalAveragePool -> 1x1 + Relu -> 1x1 + HardSigmoid -> Mul
    -> 1x1, with pixels in lanes (14 x 14, 24 output channels: edge panel),
    with channels in lanes (7 x 7, 64 output channels), the scale as the
    second operand, a strided 1x1 conv (im2col), a constant [1, C, 1, 1]
    scale, run-time planes; two images with different scales, then one."""
    g = GraphBuilder(seed=43)

    def se(x, c, squeeze):
        pooled = g.op("GlobalAveragePool", [x])
        h = g.op("Relu", [g.conv(pooled, c, squeeze, 1, pads=[0, 0, 0, 0])])
        return g.op("HardSigmoid", [g.conv(h, squeeze, c, 1, pads=[0, 0, 0, 0])], alpha=1.0 / 6, beta=0.5)

    a = g.op("Relu", [g.conv("x14", 48, 48, 3, group=48)])
    ya = g.conv(g.op("Mul", [se(a, 48, 12), a]), 48, 24, 1, pads=[0, 0, 0, 0])
    b = g.op("Relu", [g.conv("x7", 96, 96, 3, group=96)])
    yb = g.op("Relu", [g.conv(g.op("Mul", [b, se(b, 96, 24)]), 96, 64, 1, pads=[0, 0, 0, 0])])
    c = g.op("Relu", [g.conv("x15", 32, 32, 3, group=32)])
    yc = g.conv(g.op("Mul", [se(c, 32, 8), c]), 32, 16, 1, stride=2, pads=[0, 0, 0, 0])
    k = g.const((g.rng.uniform(0.2, 1.5, [1, 32, 1, 1])).astype(np.float32), "k")
    yk = g.conv(g.op("Mul", ["x15", k]), 32, 16, 1, pads=[0, 0, 0, 0], bias=False)
    d = g.op("Relu", [g.conv("xs", 24, 24, 3, group=24)])
    yd = g.conv(g.op("Mul", [se(d, 24, 8), d]), 24, 16, 1, pads=[0, 0, 0, 0])
    outs = (("ya", ya), ("yb", yb), ("yc", yc), ("yk", yk), ("yd", yd))
    for name, v in outs:
        g.op("Identity", [v], out_names=[name])
    m = g.model("channel_scaled_convs",
                [_vi("x14", F32, ["N", 48, 14, 14]), _vi("x7", F32, ["N", 96, 7, 7]),
                 _vi("x15", F32, ["N", 32, 15, 15]), _vi("xs", F32, ["N", 24, "H", "W"])],
                [_vi("ya", F32, ["N", 24, 14, 14]), _vi("yb", F32, ["N", 64, 7, 7]), _vi("yc", F32, ["N", 16, 8, 8]),
                 _vi("yk", F32, ["N", 16, 15, 15]), _vi("yd", F32, ["N", 16, "H", "W"])])
    rng = np.random.default_rng(143)
    sets = [{"x14": _randn(rng, [n, 48, 14, 14]), "x7": _randn(rng, [n, 96, 7, 7]),
             "x15": _randn(rng, [n, 32, 15, 15]), "xs": _randn(rng, [n, 24, h, w])} for n, h, w in ((2, 20, 17), (1, 9, 33))]
    return Case(m, sets, note="N = 2, 1; run-time planes 20 x 17, 9 x 33", compile_flags=list(flags))


def make_pointwise_rows(flags=()) -> Case:
    """1x1 convs that write more than they read over many pixels, whose
    register tiles run across all of the workgroup's columns
    (pointwiseRowTilesOuter, GemmSpec::rowTilesOuter): 20 -> 52 channels
    on 37 x 29 (edge rows and an edge column panel) with bias, a residual
    add and Relu; 300 -> 340 on 24 x 23 (K in two blocks on AVX2 and
    AVX-512); two groups of 8 -> 20; run-time planes (12 -> 36, small and
    large); and a reducing 52 -> 20 conv, which keeps its panels outside."""
    g = GraphBuilder(seed=47)
    ya = g.op("Relu", [g.op("Add", [g.conv("xa", 20, 52, 1, pads=[0, 0, 0, 0]), "ra"])])
    yb = g.conv("xb", 300, 340, 1, pads=[0, 0, 0, 0])
    yg = g.conv("xg", 16, 40, 1, pads=[0, 0, 0, 0], group=2)
    yn = g.op("Relu", [g.conv("xn", 12, 36, 1, pads=[0, 0, 0, 0])])
    yr = g.conv(ya, 52, 20, 1, pads=[0, 0, 0, 0])
    outs = (("ya", ya), ("yb", yb), ("yg", yg), ("yn", yn), ("yr", yr))
    for name, v in outs:
        g.op("Identity", [v], out_names=[name])
    m = g.model("pointwise_rows",
                [_vi("xa", F32, ["N", 20, 37, 29]), _vi("ra", F32, ["N", 52, 37, 29]),
                 _vi("xb", F32, ["N", 300, 24, 23]), _vi("xg", F32, ["N", 16, 30, 20]),
                 _vi("xn", F32, ["N", 12, "H", "W"])],
                [_vi("ya", F32, ["N", 52, 37, 29]), _vi("yb", F32, ["N", 340, 24, 23]),
                 _vi("yg", F32, ["N", 40, 30, 20]), _vi("yn", F32, ["N", 36, "H", "W"]),
                 _vi("yr", F32, ["N", 20, 37, 29])])
    rng = np.random.default_rng(149)
    sets = [{"xa": _randn(rng, [n, 20, 37, 29]), "ra": _randn(rng, [n, 52, 37, 29]),
             "xb": _randn(rng, [n, 300, 24, 23]), "xg": _randn(rng, [n, 16, 30, 20]),
             "xn": _randn(rng, [n, 12, h, w])} for n, h, w in ((2, 33, 20), (1, 9, 7))]
    return Case(m, sets, note="N = 2, 1; run-time planes 33 x 20, 9 x 7", compile_flags=list(flags))


def make_pointwise_depthwise(flags=()) -> Case:
    """Inverted-residual expansions that v4f-fuse-pointwise-depthwise merges
    with their depthwise conv (the expanded tensor is over 1 MB, so it never
    exists): 8 -> 36 channels (4 full groups of 8 + a tail of 4) with bias
    and Relu6 (Clip), then a 3x3 depthwise conv at stride 1 with a residual
    (an Add fused into it), at stride 2, a 5x5 one with padding 2 and stride
    2 (odd 101 x 75 planes: masked column tails), and a dilated 3x3 (dilation
    2, padding 2); two images."""
    g = GraphBuilder(seed=53)
    relu6 = lambda x: g.op("Clip", [x, g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")])
    def expand():
        return relu6(g.conv("x", 8, 36, 1))
    a = relu6(g.conv(expand(), 36, 36, 3, group=36))
    g.op("Add", [g.conv(expand(), 36, 36, 3, group=36), "r"], out_names=["res"])
    g.op("Identity", [a], out_names=["s1"])
    g.op("Identity", [relu6(g.conv(expand(), 36, 36, 3, stride=2, group=36))], out_names=["s2"])
    g.op("Identity", [g.conv(expand(), 36, 36, 5, stride=2, group=36)], out_names=["k5"])
    g.op("Identity", [relu6(g.conv(expand(), 36, 36, 3, dilation=2, group=36))], out_names=["dil"])
    m = g.model("pointwise_depthwise", [_vi("x", F32, [2, 8, 101, 75]), _vi("r", F32, [2, 36, 101, 75])],
                [_vi("s1", F32, [2, 36, 101, 75]), _vi("res", F32, [2, 36, 101, 75]), _vi("s2", F32, [2, 36, 51, 38]),
                 _vi("k5", F32, [2, 36, 51, 38]), _vi("dil", F32, [2, 36, 101, 75])])
    rng = np.random.default_rng(153)
    return Case(m, [{"x": _randn(rng, [2, 8, 101, 75]), "r": _randn(rng, [2, 36, 101, 75])}],
                note="2 x 8 x 101 x 75 -> 36 channels", compile_flags=list(flags))


def make_depthwise_pointwise(flags=()) -> Case:
    """Depthwise convs read only by a 1x1 conv, which
    v4f-fuse-depthwise-pointwise merges (the depthwise result is over 1 MB,
    so it never exists): 3x3 stride 1 with Relu6, then 36 -> 20 channels (2
    groups of 8 + a tail of 4) with bias, a residual Add and Relu, two images
    of 61 x 75 (masked column tails on every ISA); 5x5 stride 2 with padding 2
    at 131 x 151 (two images; 40 -> 12); a dilated 3x3 (dilation 2, padding
    2) into a 1x1 conv without bias; an unpadded 3x3 and an asymmetrically
    padded one (top 1, left 2, bottom 0, right 1); 512 channels at 48 x 48,
    whose row blocks the scratch bound shortens to 2 rows."""
    g = GraphBuilder(seed=59)
    relu6 = lambda x: g.op("Clip", [x, g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")])
    a = relu6(g.conv("x", 36, 36, 3, group=36))
    g.op("Relu", [g.op("Add", [g.conv(a, 36, 20, 1), "r"])], out_names=["s1"])
    b = g.conv("x2", 40, 40, 5, stride=2, group=40)
    g.op("Identity", [g.conv(b, 40, 12, 1)], out_names=["s2"])
    c = relu6(g.conv("x3", 24, 24, 3, dilation=2, group=24))
    g.op("Identity", [g.conv(c, 24, 8, 1, bias=False)], out_names=["dil"])
    d = g.op("Relu", [g.conv("x4", 48, 48, 3, pads=[0, 0, 0, 0], group=48)])
    g.op("Relu", [g.conv(d, 48, 24, 1)], out_names=["valid"])
    e = g.conv("x4", 48, 48, 3, pads=[1, 2, 0, 1], group=48)
    g.op("Identity", [g.conv(e, 48, 16, 1)], out_names=["asym"])
    f = relu6(g.conv("x5", 512, 512, 3, group=512))
    g.op("Identity", [g.conv(f, 512, 8, 1)], out_names=["wide"])
    m = g.model("depthwise_pointwise",
                [_vi("x", F32, [2, 36, 61, 75]), _vi("r", F32, [2, 20, 61, 75]), _vi("x2", F32, [2, 40, 131, 151]),
                 _vi("x3", F32, [1, 24, 117, 99]), _vi("x4", F32, [1, 48, 90, 90]), _vi("x5", F32, [1, 512, 48, 48])],
                [_vi("s1", F32, [2, 20, 61, 75]), _vi("s2", F32, [2, 12, 66, 76]), _vi("dil", F32, [1, 8, 117, 99]),
                 _vi("valid", F32, [1, 24, 88, 88]), _vi("asym", F32, [1, 16, 89, 91]),
                 _vi("wide", F32, [1, 8, 48, 48])])
    rng = np.random.default_rng(159)
    shapes = {"x": [2, 36, 61, 75], "r": [2, 20, 61, 75], "x2": [2, 40, 131, 151], "x3": [1, 24, 117, 99],
              "x4": [1, 48, 90, 90], "x5": [1, 512, 48, 48]}
    return Case(m, [{k: _randn(rng, v) for k, v in shapes.items()}], note="six depthwise + 1x1 pairs",
                compile_flags=list(flags))


def make_small_input_convs(flags=()) -> Case:
    """Convs over at most 4 input channels, which take the direct small-input
    kernel (v4f.conv_algorithm = "small_input"): a ResNet-style 7x7 stride-2
    RGB stem to 64 channels with Relu at odd planes (masked column tails), a
    MobileNet-style 3x3 stride-2 one with Relu6, a two-channel 5x5 to 10
    channels (a tail of the 8- and 6-channel tiles) with a residual Add, a
    dilated 3x3 over 4 channels without bias, asymmetric pads (top 0, left 1,
    bottom 2, right 0) at stride 2, an unpadded stride-2 3x3; at run-time
    batch sizes 2 and 1."""
    g = GraphBuilder(seed=61)
    relu6 = lambda x: g.op("Clip", [x, g.const(np.array(0, np.float32), "lo"), g.const(np.array(6, np.float32), "hi")])
    g.op("Relu", [g.conv("img", 3, 64, 7, stride=2)], out_names=["stem7"])
    g.op("Identity", [relu6(g.conv("img", 3, 32, 3, stride=2))], out_names=["stem3"])
    g.op("Add", [g.conv("gray", 2, 10, 5), "r"], out_names=["gray5"])
    g.op("Identity", [g.conv("rgba", 4, 13, 3, dilation=2, bias=False)], out_names=["dil"])
    g.op("Identity", [g.conv("two", 2, 9, 3, stride=2, pads=[0, 1, 2, 0])], out_names=["asym"])
    g.op("Identity", [g.conv("img", 3, 16, 3, stride=2, pads=[0, 0, 0, 0])], out_names=["valid"])
    m = g.model("small_input_convs",
                [_vi("img", F32, ["N", 3, 67, 61]), _vi("gray", F32, ["N", 2, 33, 37]), _vi("r", F32, ["N", 10, 33, 37]),
                 _vi("rgba", F32, ["N", 4, 29, 30]), _vi("two", F32, ["N", 2, 41, 43])],
                [_vi("stem7", F32, ["N", 64, 34, 31]), _vi("stem3", F32, ["N", 32, 34, 31]),
                 _vi("gray5", F32, ["N", 10, 33, 37]), _vi("dil", F32, ["N", 13, 29, 30]),
                 _vi("asym", F32, ["N", 9, 21, 21]), _vi("valid", F32, ["N", 16, 33, 30])])
    rng = np.random.default_rng(161)
    sets = []
    for n in (2, 1):
        shapes = {"img": [n, 3, 67, 61], "gray": [n, 2, 33, 37], "r": [n, 10, 33, 37], "rgba": [n, 4, 29, 30],
                  "two": [n, 2, 41, 43]}
        sets.append({k: _randn(rng, v) for k, v in shapes.items()})
    return Case(m, sets, note="N = 2, 1", compile_flags=list(flags))


def make_gelu_epilogue(flags=()) -> Case:
    """GELU as exporters write it fused into GEMM epilogues (v4f-fuse-epilogues):
    a matmul + bias at 37 x 70 (edge tiles on every target, N rows at run time)
    as x * (1 + erf(x / sqrt 2)) * 0.5, a 3x3 conv as (x * 0.5) * (1 + erf(x *
    1/sqrt 2)); beside it the same chain on a matmul whose result is also an
    output (not fused) and on a plain input (one elementwise pass), the ONNX
    Gelu op after a matmul in both forms (fused too), and GPT-2's tanh
    GELU chain (Pow by 3) after a matmul + bias (a gelu_tanh epilogue)."""
    g = GraphBuilder(seed=47)
    c = lambda v, p: g.const(np.array(v, np.float32), p)  # noqa: E731
    sqrt2, inv_sqrt2, one, half = c(1.4142135, "sqrt2"), c(0.70710677, "inv_sqrt2"), c(1.0, "one"), c(0.5, "half")

    def gelu_div(x, out):
        erf = g.op("Erf", [g.op("Div", [x, sqrt2])])
        return g.op("Mul", [g.op("Mul", [x, g.op("Add", [erf, one])]), half], out_names=[out])

    h = g.op("Add", [g.op("MatMul", ["x", g.randn([37, 70], 0.3)]), g.randn([70], 0.5)])
    gelu_div(h, "mm_gelu")
    conv = g.conv("img", 3, 5, 3)
    erf = g.op("Erf", [g.op("Mul", [inv_sqrt2, conv])])
    g.op("Mul", [g.op("Mul", [conv, half]), g.op("Add", [one, erf])], out_names=["conv_gelu"])
    shared = g.op("MatMul", ["x", g.randn([37, 9], 0.3)], out_names=["shared"])
    gelu_div(shared, "shared_gelu")
    gelu_div("x", "plain_gelu")
    # The ONNX Gelu op (opset 20): exact after a matmul (the same epilogue),
    # and the tanh approximation (an elementwise pass).
    g.op("Gelu", [g.op("MatMul", ["x", g.randn([37, 21], 0.3)])], out_names=["onnx_gelu"])
    g.op("Gelu", [g.op("MatMul", ["x", g.randn([37, 11], 0.3)])], out_names=["onnx_gelu_tanh"], approximate="tanh")
    # GPT-2's gelu_new as torch.onnx writes it: Pow by 3, then the tanh form.
    t = g.op("Add", [g.op("MatMul", ["x", g.randn([37, 19], 0.3)]), g.randn([19], 0.5)])
    inner = g.op("Add", [t, g.op("Mul", [c(0.044715, "c1"), g.op("Pow", [t, c(3.0, "three")])])])
    th = g.op("Tanh", [g.op("Mul", [c(0.7978845608, "c2"), inner])])
    g.op("Mul", [g.op("Mul", [half, t]), g.op("Add", [one, th])], out_names=["mm_gelu_tanh"])
    # SiLU, x * sigmoid(x) (the "silu" epilogue): after a conv, a depthwise
    # conv (EfficientNet) and a matmul with bias (operands swapped).
    cs = g.conv("img", 3, 6, 3)
    g.op("Mul", [cs, g.op("Sigmoid", [cs])], out_names=["conv_silu"])
    ds = g.conv("img", 3, 3, 3, group=3)
    g.op("Mul", [ds, g.op("Sigmoid", [ds])], out_names=["dw_silu"])
    ms = g.op("Add", [g.op("MatMul", ["x", g.randn([37, 23], 0.3)]), g.randn([23], 0.5)])
    g.op("Mul", [g.op("Sigmoid", [ms]), ms], out_names=["mm_silu"])
    m = g.model("gelu_epilogue", [_vi("x", F32, ["N", 37]), _vi("img", F32, [1, 3, 9, 11])],
                [_vi("mm_gelu", F32, ["N", 70]), _vi("conv_gelu", F32, [1, 5, 9, 11]), _vi("shared", F32, ["N", 9]),
                 _vi("shared_gelu", F32, ["N", 9]), _vi("plain_gelu", F32, ["N", 37]),
                 _vi("onnx_gelu", F32, ["N", 21]), _vi("onnx_gelu_tanh", F32, ["N", 11]),
                 _vi("mm_gelu_tanh", F32, ["N", 19]), _vi("conv_silu", F32, [1, 6, 9, 11]),
                 _vi("dw_silu", F32, [1, 3, 9, 11]), _vi("mm_silu", F32, ["N", 23])], opset=20)
    rng = np.random.default_rng(147)
    sets = [{"x": _randn(rng, [n, 37], 1.5), "img": _randn(rng, [1, 3, 9, 11])} for n in (1, 13)]
    return Case(m, sets, note="N = 1, 13", compile_flags=list(flags))


def make_channels_last(flags=()) -> Case:
    """Tensors v4f-assign-cpu-layouts stores channels-last (physically N, H,
    W, C), read and written by channels-in-lanes convs: a 1x1 conv from the
    channels-first input (A read down its plane rows, C stored channels-last)
    whose result is also the residual of a later 1x1 conv (one group of two
    tensors), a 1x1 conv reading channels-last rows; readers in place at
    window origins through the offset table: a strided 1x1 conv and an
    unpadded dilated 3x3 conv; a GlobalAveragePool of a channels-last tensor;
    a channels-last read with a channels-first store (a graph output). Batch
    2 and 1 (per-image offsets)."""
    g = GraphBuilder(seed=53)
    # Readers that compute pixels in lanes switch only with K >= 4 x LANES
    # (64 on AVX-512): every K here is at least 64.
    a = g.op("Relu", [g.conv("x", 64, 96, 1, pads=[0, 0, 0, 0])])
    b = g.op("Relu", [g.conv(a, 96, 64, 1, pads=[0, 0, 0, 0])])
    c = g.op("Relu", [g.op("Add", [g.conv(b, 64, 96, 1, pads=[0, 0, 0, 0]), a])])
    d = g.op("Relu", [g.conv(c, 96, 64, 1, stride=2, pads=[0, 0, 0, 0])])
    e = g.op("Relu", [g.conv(c, 96, 64, 3, dilation=2, pads=[0, 0, 0, 0])])
    f = g.conv(e, 64, 64, 1, pads=[0, 0, 0, 0])
    m_ = g.op("GlobalAveragePool", [d])
    # Elementwise maps between channels-last convs: a product of two conv
    # results (its own region), then a fused chain with a per-channel
    # broadcast scale, read by a 1x1 conv and a GlobalAveragePool.
    p = g.conv("x", 64, 96, 1, pads=[0, 0, 0, 0])
    q = g.op("Relu", [g.conv("x", 64, 96, 1, pads=[0, 0, 0, 0])])
    k = g.const((g.rng.uniform(0.5, 1.5, [1, 96, 1, 1])).astype(np.float32), "k")
    sc = g.op("Mul", [g.op("Sigmoid", [g.op("Mul", [p, q])]), k])
    r = g.conv(sc, 96, 32, 1, pads=[0, 0, 0, 0])
    ms = g.op("GlobalAveragePool", [sc])
    # A concat of channels between channels-last convs (32 + 48 -> 80).
    u = g.op("Relu", [g.conv("x", 64, 32, 1, pads=[0, 0, 0, 0])])
    v = g.op("Relu", [g.conv("x", 64, 48, 1, pads=[0, 0, 0, 0])])
    w = g.conv(g.op("Concat", [u, v], axis=1), 80, 64, 1, pads=[0, 0, 0, 0])
    # A product of channels-last tensors whose batches come from different
    # run-time dims (N = 2 against M = 1: the batch broadcasts).
    pm = g.conv("y", 64, 96, 1, pads=[0, 0, 0, 0])
    t2 = g.conv(g.op("Mul", [p, pm]), 96, 32, 1, pads=[0, 0, 0, 0])
    for name, val in (("mean", m_), ("f", f), ("r", r), ("ms", ms), ("w", w), ("t2", t2)):
        g.op("Identity", [val], out_names=[name])
    m = g.model("channels_last",
                [_vi("x", F32, ["N", 64, 12, 10]), _vi("y", F32, ["M", 64, 12, 10])],
                [_vi("mean", F32, ["N", 64, 1, 1]), _vi("f", F32, ["N", 64, 8, 6]),
                 _vi("r", F32, ["N", 32, 12, 10]), _vi("ms", F32, ["N", 96, 1, 1]),
                 _vi("w", F32, ["N", 64, 12, 10]), _vi("t2", F32, ["N", 32, 12, 10])])
    rng = np.random.default_rng(151)
    sets = [{"x": _randn(rng, [n, 64, 12, 10]), "y": _randn(rng, [1, 64, 12, 10])} for n in (2, 1)]
    return Case(m, sets, note="N = 2, 1", compile_flags=list(flags))


def make_channels_last_followers(flags=()) -> Case:
    """Channels-last groups through the ops that store what they read
    (followsDataLayout): max and average pools (3x3 stride 1 and 2, 2x2
    with ceil_mode, 3x3 stride 2 with ceil_mode and count_include_pad, 5x5
    chained as in SPP, a dilated 3x3), pads (constant with a value, reflect, edge, a negative crop),
    Resize by constant scales (nearest 2x, linear 1.5 x 2) and by static
    sizes along H and W only: each becomes a gather along H or W, and the
    nearest one no copy after it; a split of channels (YOLOv8's C2f).
    Every branch ends in a 1x1 conv reading
    the channels-last result. A 100-channel branch is channels-last only
    where 100 channels fill whole vectors of the target's conv (SSE's 4
    lanes; its pool then masks the last chunk of 8). Batch 2 and 1."""
    g = GraphBuilder(seed=59)
    a = g.op("Relu", [g.conv("x", 64, 96, 1, pads=[0, 0, 0, 0])])
    outs = []

    def head(t, cin, cout, name, shape):
        g.op("Identity", [g.conv(t, cin, cout, 1, pads=[0, 0, 0, 0])], out_names=[name])
        outs.append(_vi(name, F32, ["N", cout] + shape))

    def c(arr, dtype, prefix):
        return g.const(np.array(arr, dtype), prefix)

    head(g.op("MaxPool", [a], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), 96, 64, "max3", [12, 10])
    head(g.op("AveragePool", [a], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 96, 32, "avg3s2", [6, 5])
    head(g.op("AveragePool", [a], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1), 96, 32,
         "avg2ceil", ["P", "Q"])  # 6 x 5: ORT and v4f skip windows starting in the padding; onnx's shape inference says 7 x 6
    # count_include_pad: the last row and column of windows reach past the
    # padded input (ceil_mode), whose elements are not counted.
    head(g.op("AveragePool", [a], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
              count_include_pad=1), 96, 32, "avg3pad", [7, 6])
    m1 = g.op("MaxPool", [a], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    m2 = g.op("MaxPool", [m1], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    md = g.op("MaxPool", [a], kernel_shape=[3, 3], strides=[1, 1], pads=[2, 2, 2, 2], dilations=[2, 2])
    head(g.op("Concat", [a, m1, m2, md], axis=1), 384, 64, "spp", [12, 10])
    head(g.op("Pad", [a, c([0, 0, 1, 2, 0, 0, 2, 1], np.int64, "pads"), c(0.5, np.float32, "pv")], mode="constant"),
         96, 32, "pad_const", [15, 13])
    head(g.op("Pad", [a, c([0, 0, 1, 1, 0, 0, 1, 1], np.int64, "pads")], mode="reflect"), 96, 32, "pad_reflect", [14, 12])
    head(g.op("Pad", [a, c([0, 0, 2, 0, 0, 0, 0, 3], np.int64, "pads")], mode="edge"), 96, 32, "pad_edge", [14, 13])
    head(g.op("Pad", [a, c([0, 0, -1, 0, 0, 0, 0, -2], np.int64, "pads")], mode="constant"), 96, 32, "pad_crop",
         [11, 8])
    empty = c(np.zeros([0], np.float32), np.float32, "roi")
    head(g.op("Resize", [a, empty, c([1, 1, 2, 2], np.float32, "sc")], mode="nearest"), 96, 32, "up_nearest", [24, 20])
    head(g.op("Resize", [a, empty, c([1, 1, 1.5, 2], np.float32, "sc")], mode="linear"), 96, 32, "up_linear", [18, 20])
    head(g.op("Resize", [a, "", "", c([7, 13], np.int64, "sz")], mode="linear", axes=[2, 3],
              coordinate_transformation_mode="align_corners"), 96, 32, "sized", [7, 13])
    # A pool result added to its own input (one group through the map).
    head(g.op("Add", [g.op("MaxPool", [a], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), a]), 96, 32,
         "pool_add", [12, 10])
    # YOLOv8's C2f: a conv's channels split in two (96 = 32 + 64), a conv
    # on the second part, the parts and its result concatenated, a conv.
    # (A 1x1 reader with K < 4 x 16 would keep the group channels-first on
    # AVX-512: readers computing pixels in lanes switch only from K = 64.)
    h0, h1 = g.op("Split", [a, g.const(np.array([32, 64], np.int64), "split")], n_out=2, axis=1)
    hb = g.op("Relu", [g.conv(h1, 64, 64, 1, pads=[0, 0, 0, 0])])
    head(g.op("Concat", [h0, h1, hb], axis=1), 160, 32, "c2f", [12, 10])
    b = g.op("Relu", [g.conv("x", 64, 100, 1, pads=[0, 0, 0, 0])])
    head(g.op("MaxPool", [b], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), 100, 64, "max100", [12, 10])
    head(g.op("AveragePool", [b], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), 100, 64, "avg100",
         [12, 10])
    m = g.model("channels_last_followers", [_vi("x", F32, ["N", 64, 12, 10])], outs, opset=18)
    rng = np.random.default_rng(157)
    sets = [{"x": _randn(rng, [n, 64, 12, 10])} for n in (2, 1)]
    return Case(m, sets, note="N = 2, 1", compile_flags=list(flags))


# Every case of this module and of models_rows.py runs compiled for these
# targets (case name + suffix). /multi_isa: one artifact with SSE, AVX2 and
# AVX-512 plans; the runtime runs the best one this machine has.
ISA_VARIANTS = (("", ()), ("/avx2", ("--target-cpu=x86-64-v3",)), ("/sse", ("--target-cpu=x86-64-v2",)),
                ("/multi_isa", ("--target-cpu=x86-64-v2,x86-64-v3,x86-64-v4",)))


def isa_variants(makers: Dict[str, Callable[..., Case]]) -> Dict[str, Callable[[], Case]]:
    """Each maker (called with the compile flags) under every ISA_VARIANTS suffix."""
    return {name + suffix: (lambda make=make, f=flags: make(f))
            for suffix, flags in ISA_VARIANTS for name, make in makers.items()}


def generators() -> Dict[str, Callable[[], Case]]:
    return isa_variants({
        "packed_matmuls": make_packed_matmuls, "packed_convs": make_packed_convs,
        "depthwise_convs": make_depthwise_convs, "depthwise_static": make_depthwise_static,
        "gemm_edges": make_gemm_edges, "im2col_rows": make_im2col_rows, "conv_packed_b": make_conv_packed_b,
        "channel_lanes_convs": make_channel_lanes_convs, "winograd_convs": make_winograd_convs,
        "maxpool_3x3s2": make_maxpool_3x3s2, "channel_scaled_convs": make_channel_scaled_convs,
        "pointwise_rows": make_pointwise_rows, "channels_last": make_channels_last,
        "channels_last_followers": make_channels_last_followers, "pointwise_depthwise": make_pointwise_depthwise,
        "depthwise_pointwise": make_depthwise_pointwise, "small_input_convs": make_small_input_convs,
        "gelu_epilogue": make_gelu_epilogue,
    })
