//===- Passes.td - v4f transformation passes ---------------*- tablegen -*-===//
#ifndef V4F_TRANSFORMS_PASSES_TD
#define V4F_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph-level rewrites
//===----------------------------------------------------------------------===//

def FoldBatchNorm : Pass<"v4f-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold inference BatchNormalization into the preceding conv";
  let description = [{
    Input invariants: `v4f.batch_norm` with constant scale/bias/mean/variance.
    Output: when the input is produced by a `v4f.conv` with a constant weight
    (and optional constant bias) that has no other user, the conv's weight is
    rescaled per output channel and its bias shifted, and the batch norm is
    removed. Any other batch norm becomes `v4f.mul` + `v4f.add` with folded
    `[C, 1, ...]` constants. Preserves: results up to float rounding.
    After this pass no `v4f.batch_norm` remains.
  }];
  let constructor = "v4f::createFoldBatchNormPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FuseNormalizations : Pass<"v4f-fuse-normalizations", "mlir::func::FuncOp"> {
  let summary = "Recognize LayerNorm as exporters write it and make it one v4f.layer_norm";
  let description = [{
    Input invariants: canonicalized (a Pow by 2 is already `v4f.mul d, d`).
    Output: `(x - reduce_mean(x)) / sqrt(reduce_mean((x - mean)^2) + eps)`
    over the trailing axes of a float32 `x` with static normalized dims,
    optionally followed by `* scale` and `+ bias` constants that broadcast
    over the normalized dims only, becomes `v4f.layer_norm` (ones as the
    scale when there is none). Intermediates other than the difference must
    have a single use; the difference may feed only the square and the
    division. Preserves: results up to float rounding (the kernel multiplies
    by 1/sqrt instead of dividing).
  }];
  let constructor = "v4f::createFuseNormalizationsPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FuseEpilogues : Pass<"v4f-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Fuse bias, residual add and activation into conv and matmul";
  let description = [{
    Input invariants: batch norms folded (run after `v4f-fold-batch-norm`).
    Output: `v4f.add` of a per-channel constant into a conv (or of an `[N]`
    constant into a matmul) becomes the op's `bias`; a following `v4f.add`
    of a same-shaped tensor becomes the conv's `residual`; a following
    `v4f.relu`, `v4f.leaky_relu`, `v4f.clip`, `v4f.sigmoid`, `v4f.tanh`,
    `v4f.hard_sigmoid` or `v4f.hard_swish` becomes its `activation`; so do
    GELU in the exporters' erf and tanh forms (`gelu`, `gelu_tanh`) and
    SiLU written as `v4f.mul(x, v4f.sigmoid(x))` (`silu`). Only
    intermediates used by nothing else are fused.
    Preserves: results up to float rounding.
  }];
  let constructor = "v4f::createFuseEpiloguesPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def Quantize : Pass<"v4f-quantize", "mlir::func::FuncOp"> {
  let summary = "Quantize matmuls and convs with a constant weight to int8 or int4 weights";
  let description = [{
    Input invariants: the graph pipeline has run (bias and activation are
    fused into the matmul). For `mode=int8` (static), the matmuls to quantize
    carry `v4f.calibration = array<f32: MIN, MAX>`, the range of their lhs
    on the calibration data (v4fc's calibration step sets it).
    Output: every `v4f.matmul` whose rhs is a rank-2 float32 constant and
    whose ONNX node is not in `exclude` becomes a `v4f.quantized_matmul`:
    the weight is quantized per output column (`per-channel`) or per
    tensor, symmetric, to [-127, 127] (scale `max |W[:, n]| / 127`, or
    `max |W| / 127`), stored as an i8 constant with its f32
    scales; bias and activation move over. `mode=dynamic-int8` quantizes the
    lhs per row at run time; `mode=int8` with the calibrated range
    (asymmetric: the range widened to contain 0, `scale = (max - min) / 255`,
    zero point `round(-128 - min / scale)`). A matmul that stays float32
    gets `v4f.precision_note` saying why (excluded, not calibrated, weight
    not constant). `mode=int4-weight` makes a `v4f.int4_matmul` instead:
    the weight in groups of `group-size` K rows per column, int4 [-8, 7]
    with one f32 scale per group (the group's largest magnitude maps to -8),
    activations float; with `int4-zero-points` each group is asymmetric
    (range [min, max] widened to contain 0 over 16 levels, scale (max - min)
    / 15, an int4 zero point per group: the op's `rhs_zero_point`).
    `mode=w4a8` makes the same symmetric int4 weights with
    `int8_activations` (integer products, activations quantized per row at
    run time).
    Convolutions: with `mode=int8`, a calibrated `v4f.conv` with a constant
    float32 weight, `groups` 1 and static input height and width becomes a
    `v4f.quantized_conv` (weights per output channel or per tensor, the
    input with its calibrated scale and zero point; bias, residual and
    activation move over). Other modes, grouped/depthwise convs and convs
    with run-time height or width stay float32 with a `v4f.precision_note`.
    Preserves: results within the quantization error.
  }];
  let constructor = "v4f::createQuantizePass()";
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"dynamic-int8\"",
           "dynamic-int8 (activation scales per row at run time), int8 (static, from v4f.calibration), "
           "int4-weight (block-wise int4 weights, float activations) or w4a8 (block-wise int4 weights, "
           "int8 activations per row at run time)">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"128",
           "int4-weight: K rows per weight scale">,
    ListOption<"exclude", "exclude", "std::string", "ONNX node names to keep in float32">,
    Option<"perChannel", "per-channel", "bool", /*default=*/"false",
           "one weight scale per output column (default: one per matrix)">,
    Option<"int4ZeroPoints", "int4-zero-points", "bool", /*default=*/"false",
           "int4-weight: asymmetric groups with an int4 zero point each">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def InsertCalibrationTaps : Pass<"v4f-insert-calibration-taps", "mlir::ModuleOp"> {
  let summary = "Make the activations static int8 will quantize observable as extra results of @main";
  let description = [{
    Input invariants: the graph pipeline has run (bias and activation fused).
    Output: every `v4f.matmul` with a float32 lhs and every `v4f.conv` with
    groups 1 and a float32 input in @main's body (not inside a loop or
    branch) carries `v4f.calibration_tap = i` (in program order from 0), and
    @main returns each such activation after its own results, named
    `v4f.calibration_tap<i>` (`v4f.name`). v4fc compiles a copy of this
    module, runs it on the calibration samples and passes what it observed
    to v4f-apply-calibration. Preserves: the original results (the taps are
    extra).
  }];
  let constructor = "v4f::createInsertCalibrationTapsPass()";
}

def ApplyCalibration : Pass<"v4f-apply-calibration", "mlir::ModuleOp"> {
  let summary = "Choose each tapped activation's int8 range from its calibration statistics";
  let description = [{
    Input invariants: v4f-insert-calibration-taps has run; statistics for
    every tap index (from v4fc, or the `stats` JSON file:
    `{"taps": [{"min", "max", "value_histogram", "abs_histogram"}, ...]}`).
    Output: each op with `v4f.calibration_tap = i` gets `v4f.calibration =
    array<f32: lo, hi>`, the range `method` chooses from tap i's statistics
    (`minmax`: [min, max]; `percentile[:P]`: the P-th / (100-P)-th
    percentiles of the value histogram; `entropy`: TensorRT's KL-divergence
    threshold on the |x| histogram, docs/quantization.md), loses the tap
    attribute, and @main's tap results are removed. A tap index without
    statistics is an error at the op. Preserves: semantics (attributes and
    the extra results only).
  }];
  let constructor = "v4f::createApplyCalibrationPass()";
  let options = [
    Option<"methodName", "method", "std::string", /*default=*/"\"minmax\"",
           "minmax, entropy, percentile or percentile:P">,
    Option<"statsFile", "stats", "std::string", /*default=*/"\"\"", "JSON file of the taps' statistics">
  ];
}

def CarryInt8 : Pass<"v4f-carry-int8", "mlir::func::FuncOp"> {
  let summary = "Keep int8 values between integer convolutions (requantize in the producer's epilogue)";
  let description = [{
    Input invariants: `v4f.quantized_conv` ops from v4f-quantize or
    v4f-fold-qdq (float inputs and results).
    Output: a `v4f.quantized_conv` whose result's users are all
    `v4f.quantized_conv`s reading it as their `input` with one and the same
    `act_scale` / `act_zero_point` gets those as its `out_scale` /
    `out_zero_point` and an i8 result (requantized after its activation);
    its consumers then read int8 input and quantize nothing. Likewise
    through `v4f.max_pool`, `v4f.reshape` and `v4f.transpose` ops whose
    users are all such convs (recursively; the pool then runs on int8:
    quantization is monotonic). Users that take the result as
    their fused `residual` (at least one input user fixing the scale) get
    it as int8 with `residual_scale` / `residual_zero_point`. A
    `v4f.concat` whose inputs are all quantized convs used only by it and
    whose users all are such convs of one scale concatenates int8 (its
    producers requantize to that scale). Anything else
    is left as it is. Preserves: the integers every integer product sees
    (the producer rounds `y * (1 / s)` as the consumer did); a residual
    carried in int8 is rounded to that grid (the only change of results).
  }];
  let constructor = "v4f::createCarryInt8Pass()";
}

//===----------------------------------------------------------------------===//
// Decomposition of the composite ops the importer keeps whole
//===----------------------------------------------------------------------===//
// These run first in the graph pipeline (buildDecompositionPipeline). Each
// rewrites its ops into the compositions of core v4f ops that codegen
// handles; an op it cannot decompose is an error at the op's location (the
// ONNX node's name) and fails the pass.

def DecomposeActivations : Pass<"v4f-decompose-activations", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.gelu into a v4f.elementwise";
  let description = [{
    Input invariants: none beyond verified `v4f.gelu` ops.
    Output: each `v4f.gelu` becomes one `v4f.elementwise` (same type) whose
    body computes `0.5 * x * (1 + erf(x / sqrt(2)))`, or with
    `approximate = "tanh"` `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`,
    in the input's float type. No `v4f.gelu` remains.
    Preserves: results exactly (the same scalar arithmetic); every other op.
  }];
  let constructor = "v4f::createDecomposeActivationsPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def DecomposeAttention : Pass<"v4f-decompose-attention", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.attention into matmuls, a softmax and elementwise masks";
  let description = [{
    Input invariants: verified `v4f.attention` ops (any dim may be known only
    at run time: heads, head sizes and the group count are then read or
    computed by the plan, and the views are run-time reshapes).
    Output: 3-D inputs split into heads (`v4f.reshape` + `v4f.transpose`),
    the KV cache as a `v4f.concat`, Q and K scaled by `v4f.mul`, the scores
    as a float32 `v4f.matmul` (grouped-query heads through a 5-D broadcast
    view, never copied), the softcap and the mask / causal / window /
    nonpad bias as `v4f.elementwise` ops (a bias over constants only is
    evaluated to an `arith.constant`), `v4f.softmax`, a `v4f.reduce` max +
    select zeroing rows that attend no key (only when such a row can
    exist), the matmul with V and the heads merged back. float16 / bfloat16
    are converted to float32 on entry and back on exit. No `v4f.attention`
    remains. Preserves: results up to float32 rounding; every other op.
  }];
  let constructor = "v4f::createDecomposeAttentionPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def DecomposeDepthSpace : Pass<"v4f-decompose-depth-space", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.depth_space into reshape, transpose, reshape";
  let description = [{
    Input invariants: verified `v4f.depth_space` ops (4-D input).
    Output: each becomes a 6-D `v4f.reshape`, a `v4f.transpose` in the
    order of its mode (DCR / CRD) and direction, and a 4-D `v4f.reshape`;
    where dims are known only at run time, the reshapes take shape operands
    computed from the input's dims (`v4f.shape`, elementwise multiply /
    divide, `v4f.concat`). No `v4f.depth_space` remains.
    Preserves: results exactly; every other op.
  }];
  let constructor = "v4f::createDecomposeDepthSpacePass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def DecomposeEinsum : Pass<"v4f-decompose-einsum", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.einsum into diagonals, sums, batched matmuls and transposes";
  let description = [{
    Input invariants: verified `v4f.einsum` ops (one float element type;
    sizes known only at run time give run-time reshapes and slices).
    Output: per operand, a `v4f.transpose` / `v4f.reshape` / `v4f.slice`
    (step n+1) for each repeated label (diagonal) and a `v4f.reduce` sum over
    labels no later step needs; operands fold left to right as batched
    `v4f.matmul`s of `[batch.., M, K] x [batch.., K, N]` (float64: broadcast
    `v4f.elementwise` multiply + `v4f.reduce` sum over K); a final transpose
    to the output order. float16 / bfloat16 / float8 operands are converted
    to float32 and the result back. No `v4f.einsum` remains.
    Preserves: results up to float32 summation order; every other op.
  }];
  let constructor = "v4f::createDecomposeEinsumPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def DecomposeGemm : Pass<"v4f-decompose-gemm", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.gemm into transpose / mul / matmul / add";
  let description = [{
    Input invariants: verified `v4f.gemm` ops (2-D float32 a and b).
    Output: `op(a) x (alpha * op(b)) + beta * c` as `v4f.transpose` (for
    `trans_a` / `trans_b`), `v4f.mul` by a scalar constant (only when alpha
    or beta is not 1), `v4f.matmul` and `v4f.add` (only when `c` is present
    and beta is not 0). Constant folding then folds transposed and scaled
    weights, and `v4f-fuse-epilogues` turns the add into the matmul's bias.
    No `v4f.gemm` remains. Preserves: results exactly; every other op.
  }];
  let constructor = "v4f::createDecomposeGemmPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FoldQDQ : Pass<"v4f-fold-qdq", "mlir::func::FuncOp"> {
  let summary = "Turn QDQ-quantized matmuls and convs into integer kernels";
  let description = [{
    Input invariants: imported ops, Gemm decomposed (v4f-decompose-gemm), the
    quantization ops still whole (before v4f-decompose-quantization).
    Output: every `v4f.matmul(v4f.dequantize(v4f.quantize(x, s, zp), s, zp),
    v4f.dequantize(W, s_w))` with x float32, an 8-bit activation with one
    constant scale and zero point (the same in both ops), W a constant signed
    int8 `[K, N]` with zero point 0 and one scale or one per column (axis 1)
    is a `v4f.quantized_matmul %x, %W, %s_w` with `act_quant = "static"`,
    `act_scale = s` and `act_zero_point = zp` (uint8: `zp - 128`). Likewise
    `v4f.conv(dq(q(x)), dq(W))` with groups 1, no residual yet, x of static
    channels/height/width and W a constant signed int8 OIHW weight with zero
    point 0 and one scale or one per output channel (axis 0) is a
    `v4f.quantized_conv` (its bias operand kept). The QOperator forms too:
    `v4f.qlinear_matmul` with a constant signed int8 `[K, N]` weight of zero
    point 0 (one scale or one per column) and `v4f.qlinear_conv` (group 1,
    static input H/W, constant int8 OIHW weight of zero point 0, an int32
    constant bias or none) become the int8 kernel on `v4f.dequantize` of the
    8-bit input, followed by `v4f.quantize` to the output's scale and zero
    point (the bias as `bias * s_x * s_w[o]` in float). Anything else is left
    as written. Preserves: the quantized arithmetic (the
    activation is quantized the same way; the integer sum is exact; the
    result is computed as `x * (1 / s)` rounded instead of `x / s`, which can
    differ at a rounding tie; a QLinear op's requantization is float32
    instead of the reference's float64, which can move a value at a rounding
    tie by one step).
  }];
  let constructor = "v4f::createFoldQDQPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def DecomposeNormalizations : Pass<"v4f-decompose-normalizations", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.moment_norm, group_norm, lp_norm and lrn into reductions and elementwise ops";
  let description = [{
    Input invariants: verified `v4f.moment_norm`, `v4f.group_norm`,
    `v4f.lp_norm` and `v4f.lrn` ops (group_norm and lrn: static channel and
    spatial dims).
    Output: moment_norm: `v4f.reduce` means of x and of its squared
    deviation, one `v4f.elementwise` for `(x - mean) / sqrt(var + eps)`
    with the per-channel scale and bias reshaped to `[C, 1, ...]`;
    group_norm: the same over a `[N, groups, C / groups * spatial]` view,
    then per-channel scale and bias; lp_norm: an `l1` / `l2` `v4f.reduce`
    and a division that leaves zero norms alone; lrn: the square, a
    `v4f.avg_pool` over the channel window of a `[N, 1, C, rest]` view and
    one `v4f.elementwise`. None of the four ops remains.
    Preserves: results up to float rounding of the reductions; every other op.
  }];
  let constructor = "v4f::createDecomposeNormalizationsPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def DecomposeQuantization : Pass<"v4f-decompose-quantization", "mlir::func::FuncOp"> {
  let summary = "Rewrite the quantization ops into float32 / integer compositions";
  let description = [{
    Input invariants: verified `v4f.quantize`, `v4f.dequantize`,
    `v4f.matmul_integer`, `v4f.qlinear_matmul`, `v4f.conv_integer` and
    `v4f.qlinear_conv` ops.
    Output: quantize / dequantize become one `v4f.elementwise` each, with
    per-axis parameters reshaped to broadcast along the axis and blocked ones
    repeated along it (broadcasting identity elementwise, reshape, split of a
    partial last block). The integer products compute `x - zero_point` as
    exact integers held in float32 and run float32 `v4f.matmul` /
    `v4f.conv`, split along K (or each group's input channels) into chunks
    whose partial sums cannot reach 2^24 (bounded from the element types and
    constant zero points), each chunk converted to int32 and summed in int32.
    The QLinear requantization is one `v4f.elementwise` computing in float64.
    None of these ops remains.
    Preserves: exact int32 accumulators (except a matmul with a dynamic K:
    one float32 matmul, exact while partial sums stay below 2^24); every
    other op. Fails on a conv whose input channels must be split but are
    dynamic.
  }];
  let constructor = "v4f::createDecomposeQuantizationPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def DecomposeRotary : Pass<"v4f-decompose-rotary", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.rotary_embedding into gathers, splits, elementwise products and concats";
  let description = [{
    Input invariants: verified `v4f.rotary_embedding` ops (any dim may be
    known only at run time: the views and splits are then computed and
    checked by the plan; caches giving `[batch, seq, rotary_dim / 2]`
    directly or through `position_ids`).
    Output: the heads in `[batch, seq, heads, head_size]` order (transpose
    or reshape), the caches gathered by `position_ids` when given, the
    rotated features split into halves (or adjacent pairs when
    interleaved), two `v4f.elementwise` ops for the rotated pairs
    (`cos * a - sin * b`, `sin * a + cos * b`), `v4f.concat`s with the
    features left as they are, and the input's layout restored.
    No `v4f.rotary_embedding` remains. Preserves: results exactly; every other op.
  }];
  let constructor = "v4f::createDecomposeRotaryPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def DecomposeWindowConv : Pass<"v4f-decompose-window-conv", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.window_conv into a pad, gathers of the window taps and a matmul per group";
  let description = [{
    Input invariants: verified `v4f.window_conv` ops (any of their dims may
    be known only at run time).
    Output: the input padded (`v4f.pad`, constant pads), then per spatial
    dim a `v4f.gather` with indices `k * dilation + o * stride` ([kernel,
    output] from two `v4f.range`s, sizes computed by the plan), a
    `v4f.transpose` to `[N, C, K1..Kk, O1..Ok]`, reshapes to
    `[N, groups, C / groups * K, O]` and the weight to `[1, groups,
    F / groups, C / groups * K]`, one `v4f.matmul`, the result viewed as
    `[N, F, O1..Ok]` plus the bias. No `v4f.window_conv` remains.
    Preserves: results up to float32 summation order; every other op.
  }];
  let constructor = "v4f::createDecomposeWindowConvPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def DecomposeSignal : Pass<"v4f-decompose-signal", "mlir::func::FuncOp"> {
  let summary = "Rewrite v4f.window, v4f.dft and v4f.stft into a range, gathers, elementwise ops and matmuls";
  let description = [{
    Input invariants: verified `v4f.window`, `v4f.dft` and `v4f.stft` ops.
    Output: window: a `v4f.range` over `[0, size)` and one
    `v4f.elementwise` evaluating the window in float64, converted to the
    result type; dft: the transform axis moved last and the signal viewed
    as `[rows, length]` (`v4f.slice` / `v4f.pad` to the length), float32
    `v4f.matmul`s with constant cos / sin matrices (scaled by 1 / length,
    and doubled for the mirrored bins of a one-sided inverse), `v4f.add` /
    `v4f.sub` of the real and imaginary parts, and the layout restored with
    the parts concatenated in the last dim; stft: the frames gathered by
    indices `f * frame_step + k` (a `v4f.range` over the frame count, computed
    from the signal's length at run time when it is dynamic), times the
    window, matmuls with constant cos / sin matrices `[frame_length, bins]`.
    No `v4f.window`, `v4f.dft` or `v4f.stft` remains. Preserves: results up to float32
    rounding of the matmuls (the window: exactly); every other op.
  }];
  let constructor = "v4f::createDecomposeSignalPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def DecomposeRecurrent : Pass<"v4f-decompose-recurrent", "mlir::func::FuncOp"> {
  let summary = "Unroll v4f.recurrent (RNN / GRU / LSTM) over its static sequence";
  let description = [{
    Input invariants: verified `v4f.recurrent` ops (static shapes).
    Output: per direction, one float32 `v4f.matmul` projecting every step's
    input at once (the input-side biases as its bias) split into steps;
    per step, the state times R^T (`v4f.matmul`) and one `v4f.elementwise`
    per new state (H; LSTM also C) whose body applies the clip, the
    activations and, with `sequence_lens` (not all equal to the sequence
    length), the mask that keeps the state past a batch entry's length and
    outputs 0 there; GRU without `linear_before_reset` a second matmul
    `(r * H) x Rh^T`; Y, Y_h, Y_c as `v4f.concat` (+ `v4f.transpose` for
    layout 1). Other float types are converted to float32 and back. No
    `v4f.recurrent` remains.
    Preserves: results up to float32 rounding; every other op.
  }];
  let constructor = "v4f::createDecomposeRecurrentPass()";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

//===----------------------------------------------------------------------===//
// Dispatch formation
//===----------------------------------------------------------------------===//

def FormDispatchRegions : Pass<"v4f-form-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Group the graph's ops into v4f.dispatch regions (the fusion decisions)";
  let description = [{
    Input invariants: graph-level rewrites done (decomposition, folding,
    epilogue fusion); no v4f.dispatch yet.
    Output: every v4f op that computes a tensor is inside a `v4f.dispatch`
    region; only `arith.constant`, buffer views (`v4f.reshape`,
    `v4f.unsqueeze`) and `func.return` stay outside. Each region has a root
    op; an elementwise op (`v4f.add` ... `v4f.clip`, `v4f.elementwise`) whose
    operand is the single-use result of a region made only of elementwise
    ops joins that region, provided its other operands are available before
    it, so producer/consumer chains (up to 32 ops) become one kernel with no
    intermediate buffer. Conv/matmul epilogues were already fused into the root by
    `v4f-fuse-epilogues`.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFormDispatchRegionsPass()";
}

def FuseAttentionRegions : Pass<"v4f-fuse-attention-regions", "mlir::func::FuncOp"> {
  let summary = "Merge the regions of attention (matmul -> softmax -> matmul, with their transposes) into one";
  let description = [{
    Input invariants: dispatch regions formed (`v4f-form-dispatch-regions`),
    placement assigned if the GPU is a target (`v4f-assign-placement`).
    Output: for every `v4f.softmax` over the last axis of a static float32
    [batch..., S, L] tensor that is the single-use result of a one-op region
    `v4f.matmul(Q, KT)` (no bias, no activation) and whose result is only
    the left operand of a one-op region `v4f.matmul(P, V)`, with equal batch
    dims everywhere, those regions become one region — together with the
    one-op, single-use `v4f.transpose` regions (rank 4, batch dim kept)
    that produce Q or KT, that produce V keeping its last dim last, or that
    consume the output keeping its last dim last. The CPU kernel generator
    lowers such a region as one fused attention kernel whose scores stay in
    the worker's scratch. Regions placed on the GPU (`v4f.placement` =
    "cuda") are left alone, and so are scores whose per-block scratch
    (16 query rows) would exceed 1 MiB.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFuseAttentionRegionsPass()";
}

def FusePointwiseDepthwise : Pass<"v4f-fuse-pointwise-depthwise", "mlir::func::FuncOp"> {
  let summary = "Merge a 1x1 conv's region into the depthwise conv region that alone reads it";
  let description = [{
    Input invariants: dispatch regions formed (`v4f-form-dispatch-regions`),
    placement assigned if the GPU is a target (`v4f-assign-placement`).
    Output: a one-op region holding a `v4f.conv` that is 1x1, stride 1,
    unpadded, of one group, with a constant weight and no residual (bias and
    activation allowed), static float32 NCHW, whose result (at least 1 MiB:
    smaller ones make their round trip through L2) is used only as
    the input of a one-op region holding a depthwise `v4f.conv` (groups =
    input channels = output channels, constant [C, 1, KH, KW] weight,
    KH, KW <= 7, strides 1 or 2 no wider than the dilated window, left
    padding <= 4, input rows <= 4096, static float32) is merged into that region,
    the 1x1 conv first. The CPU kernel generator lowers such a region as one
    kernel that never writes the expanded tensor. Regions placed on the GPU
    (`v4f.placement` = "cuda") are left alone.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFusePointwiseDepthwisePass()";
}

def FuseDepthwisePointwise : Pass<"v4f-fuse-depthwise-pointwise", "mlir::func::FuncOp"> {
  let summary = "Merge a depthwise conv's region into the 1x1 conv region that alone reads it";
  let description = [{
    Input invariants: dispatch regions formed (`v4f-form-dispatch-regions`),
    placement assigned if the GPU is a target (`v4f-assign-placement`); runs
    after `v4f-fuse-pointwise-depthwise` (a depthwise conv merged with its
    expansion is not a one-op region and is left alone).
    Output: a one-op region holding a depthwise `v4f.conv` (groups = input
    channels = output channels, constant [C, 1, KH, KW] weight, KH, KW <= 7,
    strides 1 or 2 no wider than the dilated window, left padding <= 4,
    input rows <= 4096, no residual, static float32 NCHW), whose result (at
    least 1 MiB: smaller ones make their round trip through L2) is used only
    as the input of a one-op region holding a 1x1, stride-1, unpadded conv of
    one group with a constant weight (bias, residual and activation allowed),
    is merged with it into one region, the depthwise conv first, placed where
    the 1x1 conv's region was — when the fused kernel's per-worker scratch
    with one output row per block ((KH - 1) * dh + 1 input rows of one
    channel, each padded to 16-float vectors plus three vectors, and one
    depthwise output row of every channel in 16-float vectors) is at most
    512 KiB. The CPU kernel generator lowers such a region as one kernel
    that never writes the depthwise result. Regions placed on the GPU
    (`v4f.placement` = "cuda") are left alone.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFuseDepthwisePointwisePass()";
}

def FuseChannelScale : Pass<"v4f-fuse-channel-scale", "mlir::func::FuncOp"> {
  let summary = "Merge a per-channel scaling (squeeze-and-excite) into the 1x1 conv that alone reads it";
  let description = [{
    Input invariants: dispatch regions formed (`v4f-form-dispatch-regions`),
    placement assigned if the GPU is a target (`v4f-assign-placement`).
    Output: a one-op region holding a `v4f.mul` of x [N, C, H, W] and a
    float32 scale s [N or 1, C, 1, 1] (either order; the product has x's
    type), whose product is used only as the input of a one-op region holding
    a 1x1 `v4f.conv` of one group with a constant float32 weight, is merged
    into that region, the multiplication first. The CPU kernel generator
    lowers such a region as the conv of x with its packed weight scaled per
    image and input channel (W diag(s)); the product is never written.
    Regions placed on the GPU (`v4f.placement` = "cuda") are left alone.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFuseChannelScalePass()";
}

#endif // V4F_TRANSFORMS_PASSES_TD
