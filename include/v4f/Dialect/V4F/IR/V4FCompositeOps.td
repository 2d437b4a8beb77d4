// V4FCompositeOps.td - composite ops kept whole until a Decompose pass.
// Included at the end of V4FOps.td (uses its op classes and constraints).
#ifndef V4F_COMPOSITE_OPS_TD
#define V4F_COMPOSITE_OPS_TD

//===----------------------------------------------------------------------===//
// Composite ops kept whole until a Decompose pass
//===----------------------------------------------------------------------===//
// ONNX operators that a later pass may want to see whole (fusion,
// quantization, per-target lowering) import 1:1 as these ops. The
// `v4f-decompose-*` passes (lib/Transforms/Decompose*.cpp, run first in the
// graph pipeline) rewrite them into the ops above. Verifiers and shape rules
// are in lib/Dialect/V4F/IR/V4FCompositeOps.cpp.

def V4F_GemmOp : V4F_Op<"gemm", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "ONNX Gemm: alpha * op(a) x op(b) + beta * c";
  let description = [{
    `op(x)` is `x`, or its transpose when `trans_a` / `trans_b` is set; `a`
    and `b` are 2-D and the result is `[M, N]`. The optional `c` broadcasts
    to `[M, N]` (numpy rules); with `beta = 0` it is ignored.
    `v4f-decompose-gemm` rewrites it to `transpose` / `mul` / `matmul` / `add`.

    ```mlir
    %y = v4f.gemm %a, %b, %c {alpha = 2.0 : f32, trans_b = true}
         : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$a, V4F_FloatTensor:$b, Optional<V4F_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_GeluOp : V4F_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX Gelu: x * Phi(x), exact (erf) or with the tanh approximation";
  let description = [{
    `approximate = "none"`: `0.5 * x * (1 + erf(x / sqrt(2)))`;
    `"tanh"`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`,
    computed in the input's float type. `v4f-decompose-activations` rewrites
    it to one `v4f.elementwise`.

    ```mlir
    %y = v4f.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F16, F32, F64]>:$input,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs RankedTensorOf<[F16, F32, F64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def V4F_QuantizeOp : V4F_Op<"quantize", [Pure]> {
  let summary = "ONNX QuantizeLinear: saturate(roundeven(x / scale) + zero_point)";
  let description = [{
    The result element type is the target: a 2/4/8/16-bit integer, or a
    float8 type (then `x / scale` is converted with the `saturate` rule and
    the zero point, which must be 0, is ignored). `scale` and `zero_point`
    are one value, 1-D along `axis` (per-axis), or, with `block_size > 0`,
    the input's shape with `ceil(dim / block_size)` along `axis` (blocked).
    `axis` is non-negative; it is ignored when both have one element.
    `x / scale` is computed in `precision` when given, else in numpy's
    promotion of the two types. For integer targets NaN quantizes to the
    minimum and +-Inf saturates. `v4f-decompose-quantization` rewrites it to
    `v4f.elementwise` (plus reshapes that broadcast the parameters).

    ```mlir
    %q = v4f.quantize %x, %s zero_point(%z) {axis = 1 : i64}
         : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_AnyTensor:$scale, Optional<V4F_AnyTensor>:$zero_point,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<I64Attr, "0">:$block_size,
                   DefaultValuedAttr<BoolAttr, "true">:$saturate,
                   OptionalAttr<TypeAttr>:$precision);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` `(` $zero_point^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_DequantizeOp : V4F_Op<"dequantize", [Pure]> {
  let summary = "ONNX DequantizeLinear: (x - zero_point) * scale";
  let description = [{
    `x` is a 2/4/8/16/32-bit integer or float8 tensor; `x - zero_point` is
    exact (integers), then converted to float32 and multiplied by the scale
    in float32 (float64 for a float64 scale); the result element type is a
    float type. `scale` / `zero_point` follow `v4f.quantize`'s per-tensor,
    per-axis and blocked rules. `v4f-decompose-quantization` rewrites it to
    one `v4f.elementwise`.

    ```mlir
    %y = v4f.dequantize %q, %s zero_point(%z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_AnyTensor:$scale, Optional<V4F_AnyTensor>:$zero_point,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<I64Attr, "0">:$block_size);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` `(` $zero_point^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_MatMulIntegerOp : V4F_Op<"matmul_integer", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX MatMulInteger: (a - a_zero_point) x (b - b_zero_point) with int32 accumulation";
  let description = [{
    numpy `matmul` of 8-bit integer tensors (rank-1 operands allowed) after
    subtracting the zero points (one value, per row of `a` as `[M]`, per
    column of `b` as `[N]`, or N-D broadcasting ones); the result is the exact
    int32 sum. `v4f-decompose-quantization` computes it with float32
    `v4f.matmul`s over chunks of K small enough that every partial sum is an
    exact float32 integer, summed in int32 (one matmul when K is dynamic).

    ```mlir
    %y = v4f.matmul_integer %a, %b a_zero_point(%za) : (tensor<4x8xui8>, tensor<8x5xi8>, tensor<ui8>) -> tensor<4x5xi32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$a, V4F_AnyTensor:$b,
                   Optional<V4F_AnyTensor>:$a_zero_point, Optional<V4F_AnyTensor>:$b_zero_point);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $a `,` $b (`a_zero_point` `(` $a_zero_point^ `)`)? (`b_zero_point` `(` $b_zero_point^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_QLinearMatMulOp : V4F_Op<"qlinear_matmul", [Pure]> {
  let summary = "ONNX QLinearMatMul: a quantized matmul requantized to the output's scale and zero point";
  let description = [{
    `y = saturate(roundeven(acc * (a_scale * b_scale / y_scale)) + y_zero_point)`
    where `acc` is `v4f.matmul_integer`'s exact int32 result; the product of
    the scales and `acc * ...` are computed in float64, as the ONNX
    reference does. The result has `y_zero_point`'s element type (`a`'s when
    absent), int8 or uint8.

    ```mlir
    %y = v4f.qlinear_matmul %a, %sa, %za, %b, %sb, %zb, %sy, %zy
         : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<f32>, tensor<ui8>,
            tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$a, V4F_AnyTensor:$a_scale, V4F_AnyTensor:$a_zero_point,
                   V4F_AnyTensor:$b, V4F_AnyTensor:$b_scale, V4F_AnyTensor:$b_zero_point,
                   V4F_AnyTensor:$y_scale, Optional<V4F_AnyTensor>:$y_zero_point);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $a `,` $a_scale `,` $a_zero_point `,` $b `,` $b_scale `,` $b_zero_point `,` $y_scale
    (`,` $y_zero_point^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_ConvIntegerOp : V4F_Op<"conv_integer", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX ConvInteger: 2-D convolution of 8-bit integers with int32 accumulation";
  let description = [{
    `conv(x - x_zero_point, w - w_zero_point)` (NCHW / OIHW, explicit pads
    `[top, left, bottom, right]`, padding with the zero point, i.e. with 0
    after centering); `x_zero_point` is one value, `w_zero_point` one value
    or one per output channel (`[M]`). The result is the exact int32 sum.
    `v4f-decompose-quantization` computes it with float32 `v4f.conv`s over
    chunks of input channels small enough to stay exact, summed in int32.

    ```mlir
    %y = v4f.conv_integer %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
           pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}
         : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xi32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$x, V4F_AnyTensor:$w,
                   Optional<V4F_AnyTensor>:$x_zero_point, Optional<V4F_AnyTensor>:$w_zero_point,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $x `,` $w (`x_zero_point` `(` $x_zero_point^ `)`)? (`w_zero_point` `(` $w_zero_point^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_QLinearConvOp : V4F_Op<"qlinear_conv", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX QLinearConv: a quantized 2-D convolution requantized to the output's scale and zero point";
  let description = [{
    `v4f.conv_integer`'s exact int32 accumulator plus the optional int32
    `bias` (`[M]`), requantized like `v4f.qlinear_matmul` (float64). `x`'s
    and `y`'s scales and zero points are one value; `w`'s one value or one
    per output channel. The result has `y_zero_point`'s element type (`x`'s
    when absent).

    ```mlir
    %y = v4f.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy
           {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}
         : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>,
            tensor<f32>, tensor<ui8>) -> tensor<1x1x3x3xui8>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$x, V4F_AnyTensor:$x_scale, V4F_AnyTensor:$x_zero_point,
                   V4F_AnyTensor:$w, V4F_AnyTensor:$w_scale, V4F_AnyTensor:$w_zero_point,
                   V4F_AnyTensor:$y_scale, Optional<V4F_AnyTensor>:$y_zero_point,
                   Optional<V4F_AnyTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $x `,` $x_scale `,` $x_zero_point `,` $w `,` $w_scale `,` $w_zero_point `,` $y_scale
    (`,` $y_zero_point^)? (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_EinsumOp : V4F_Op<"einsum", [Pure]> {
  let summary = "ONNX Einsum: a sum of products over labelled dims";
  let description = [{
    `equation` is ONNX's (numpy's) Einsum notation: one comma-separated term
    per input, an optional `->` output term, `...` for broadcast dims; the
    implicit output holds the ellipsis dims, then the letters used once, in
    alphabetical order. Inputs share one float element type and have static
    shapes; dims labelled alike agree or are 1 (broadcast). float32 and
    float64 are computed in their type, other float types in float32.
    `v4f-decompose-einsum` rewrites it to diagonals (`v4f.slice`),
    `v4f.reduce` sums, batched `v4f.matmul`s and transposes.

    ```mlir
    %y = v4f.einsum %a, %b {equation = "bij,bjk->bik"}
         : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Variadic<V4F_AnyTensor>:$inputs, StrAttr:$equation);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sequence ops: attention and the recurrences
//===----------------------------------------------------------------------===//
// Verifiers in lib/Dialect/V4F/IR/V4FSequenceOps.cpp.

def V4F_AttentionOp : V4F_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX Attention (opset 23+): scaled dot-product attention with masks, a KV cache and grouped heads";
  let description = [{
    `query`, `key` and `value` are all 3-D (`[batch, seq, heads * size]`,
    split by `q_num_heads` / `kv_num_heads`) or all 4-D (`[batch, heads,
    seq, size]`); `q_num_heads` must be a multiple of `kv_num_heads`
    (grouped-query attention). Any dim may be known only at run time: 4-D
    inputs whose head counts are then carry 0 in `q_num_heads` /
    `kv_num_heads`, and `scale` 0 stands for the default 1/sqrt(head_size)
    of a head size known only at run time. `past_key` / `past_value` (`[batch,
    kv_heads, past, size]`) are concatenated before the new keys and values
    and returned as `present_key` / `present_value` (without a cache those
    are the keys and values in 4-D form). Scores are `(Q * sqrt(scale)) x
    (K * sqrt(scale))^T`, optionally soft-capped `softcap * tanh(x /
    softcap)`, plus a bias from the boolean or float `attn_mask` (its last
    dim padded to the total length with false / -inf), `is_causal`, the
    `left_window_size` / `right_window_size` sliding window and
    `nonpad_kv_seqlen`; softmax over the keys, with rows that attend no key
    giving 0; then times V. `qk_matmul_output` is the scores after the
    matmul (mode 0), the softcap (1), the bias (2) or the softmax (3).
    float16 / bfloat16 are computed in float32 and rounded at the end.
    `v4f-decompose-attention` rewrites it into matmuls, a softmax and
    elementwise ops.

    ```mlir
    %y, %pk, %pv, %qk = v4f.attention %q, %k, %v
        {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.5 : f32, is_causal = true}
        : (tensor<2x3x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>)
        -> (tensor<2x3x16xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x4x3x3xf32>)
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$query, V4F_AnyTensor:$key, V4F_AnyTensor:$value,
                   Optional<V4F_AnyTensor>:$attn_mask, Optional<V4F_AnyTensor>:$past_key,
                   Optional<V4F_AnyTensor>:$past_value, Optional<V4F_AnyTensor>:$nonpad_kv_seqlen,
                   I64Attr:$q_num_heads, I64Attr:$kv_num_heads, F32Attr:$scale,
                   DefaultValuedAttr<F32Attr, "0.0f">:$softcap,
                   DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                   DefaultValuedAttr<I64Attr, "-1">:$left_window_size,
                   DefaultValuedAttr<I64Attr, "-1">:$right_window_size,
                   DefaultValuedAttr<I64Attr, "0">:$qk_matmul_output_mode);
  let results = (outs V4F_AnyTensor:$output, V4F_AnyTensor:$present_key, V4F_AnyTensor:$present_value,
                 V4F_AnyTensor:$qk_matmul_output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $attn_mask^ `)`)? (`past` `(` $past_key^ `,` $past_value `)`)?
    (`nonpad_kv_seqlen` `(` $nonpad_kv_seqlen^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_RecurrentOp : V4F_Op<"recurrent", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX RNN, GRU and LSTM: a recurrent layer over a sequence, one or two directions";
  let description = [{
    `cell` is `"rnn"` (gates i), `"gru"` (z, r, h) or `"lstm"` (i, o, f, c,
    peepholes i, o, f), with ONNX's operands: `x` (`[seq, batch, input]`,
    layout 1: `[batch, seq, input]`), `w` `[dirs, gates * hidden, input]`,
    `r` `[dirs, gates * hidden, hidden]`, and the optional biases `b`
    `[dirs, 2 * gates * hidden]`, `sequence_lens` `[batch]` (int32/int64;
    steps at or past a batch entry's length keep the state and output 0),
    `initial_h` / `initial_c` `[dirs, batch, hidden]` (layout 1: `[batch,
    dirs, hidden]`) and `peepholes` `[dirs, 3 * hidden]` (LSTM).
    `activations` lists the cell's functions for every direction
    (direction-major, lower case: relu, tanh, sigmoid, affine, leakyrelu,
    thresholdedrelu, scaledtanh, hardsigmoid, elu, softsign, softplus) with
    their resolved `activation_alpha` / `activation_beta` (one each per
    function). `clip` bounds the gate inputs when present. Results: `y`
    `[seq, dirs, batch, hidden]` (layout 1: `[batch, seq, dirs, hidden]`),
    `y_h` and, for LSTM only, `y_c` (`initial_h`'s shape).
    Every float type but float64 is computed in float32.
    `v4f-decompose-recurrent` unrolls it over the static sequence.

    ```mlir
    %y, %yh = v4f.recurrent %x, %w, %r
        {cell = "rnn", direction = "forward", hidden_size = 3 : i64, activations = ["tanh"],
         activation_alpha = array<f32: 0.0>, activation_beta = array<f32: 0.0>}
        : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$x, V4F_AnyTensor:$w, V4F_AnyTensor:$r,
                   Optional<V4F_AnyTensor>:$b, Optional<V4F_AnyTensor>:$sequence_lens,
                   Optional<V4F_AnyTensor>:$initial_h, Optional<V4F_AnyTensor>:$initial_c,
                   Optional<V4F_AnyTensor>:$peepholes,
                   StrAttr:$cell, StrAttr:$direction, I64Attr:$hidden_size,
                   DefaultValuedAttr<I64Attr, "0">:$layout,
                   StrArrayAttr:$activations, DenseF32ArrayAttr:$activation_alpha,
                   DenseF32ArrayAttr:$activation_beta,
                   OptionalAttr<F32Attr>:$clip,
                   DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset,
                   DefaultValuedAttr<BoolAttr, "false">:$input_forget);
  let results = (outs V4F_AnyTensor:$y, V4F_AnyTensor:$y_h, Optional<V4F_AnyTensor>:$y_c);
  let assemblyFormat = [{
    $x `,` $w `,` $r (`bias` `(` $b^ `)`)? (`sequence_lens` `(` $sequence_lens^ `)`)?
    (`initial_h` `(` $initial_h^ `)`)? (`initial_c` `(` $initial_c^ `)`)? (`peepholes` `(` $peepholes^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layout, normalizations and signal processing
//===----------------------------------------------------------------------===//
// Verifiers in lib/Dialect/V4F/IR/V4FNormAndSignalOps.cpp.

def V4F_DepthSpaceOp : V4F_Op<"depth_space", [Pure]> {
  let summary = "ONNX DepthToSpace / SpaceToDepth: blocks of pixels moved between channels and space";
  let description = [{
    `input` is `[N, C, H, W]`. With `to_space`, each group of `blocksize^2`
    channels becomes a `blocksize x blocksize` block of pixels (`[N, C / bs^2,
    H * bs, W * bs]`); without, the inverse (`[N, C * bs^2, H / bs, W / bs]`).
    `mode` is ONNX's channel order, `"DCR"` (depth, column, row) or `"CRD"`.
    `v4f-decompose-depth-space` rewrites it to reshape, transpose, reshape.

    ```mlir
    %y = v4f.depth_space %x {blocksize = 2 : i64, to_space = true, mode = "CRD"}
         : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, I64Attr:$blocksize, BoolAttr:$to_space,
                   DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def V4F_MomentNormOp : V4F_Op<"moment_norm", [Pure, AttrSizedOperandSegments,
                                              AllTypesMatch<["input", "result"]>]> {
  let summary = "ONNX InstanceNormalization / MeanVarianceNormalization: (x - mean) / sqrt(var + eps)";
  let description = [{
    Mean and (biased) variance over `axes`, then the optional per-channel
    `scale` and `bias` (both or neither, `[C]` for dim 1 of the input).
    `v4f-decompose-normalizations` rewrites it to `v4f.reduce` means and
    `v4f.elementwise` ops.

    ```mlir
    %y = v4f.moment_norm %x scale(%s) bias(%b) {axes = array<i64: 2, 3>, epsilon = 1.0e-05 : f32}
         : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, Optional<V4F_AnyTensor>:$scale, Optional<V4F_AnyTensor>:$bias,
                   DenseI64ArrayAttr:$axes, F32Attr:$epsilon);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)? (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_GroupNormOp : V4F_Op<"group_norm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "ONNX GroupNormalization: statistics per group of channels, then scale and bias";
  let description = [{
    The `C` channels of `input` (`[N, C, ...]`, float32) form `num_groups`
    groups; each group is normalized over its channels and all spatial
    positions, then multiplied by `scale` and offset by `bias`, per channel
    (`[C]`) or, with `per_group`, per group (`[num_groups]`, opset 18).
    `v4f-decompose-normalizations` rewrites it to reshapes, `v4f.reduce`
    means and `v4f.elementwise` ops.

    ```mlir
    %y = v4f.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 1.0e-05 : f32, per_group = false}
         : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_AnyTensor:$scale, V4F_AnyTensor:$bias,
                   I64Attr:$num_groups, F32Attr:$epsilon, BoolAttr:$per_group);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_LpNormOp : V4F_Op<"lp_norm", [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX LpNormalization: x divided by its L1 or L2 norm along one axis";
  let description = [{
    `p` is 1 or 2; a zero norm leaves the zeros as they are.
    `v4f-decompose-normalizations` rewrites it to a `v4f.reduce` and a
    `v4f.elementwise`.

    ```mlir
    %y = v4f.lp_norm %x {axis = 1 : i64, p = 2 : i64} : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, I64Attr:$axis, I64Attr:$p);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def V4F_LRNOp : V4F_Op<"lrn", [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX LRN: local response normalization across channels";
  let description = [{
    `x / (bias + alpha / size * sum of x^2 over size neighbouring channels)^beta`
    on a float32 `[N, C, ...]` input. `v4f-decompose-normalizations`
    rewrites it to the square, an average pool over the channel window and
    one `v4f.elementwise`.

    ```mlir
    %y = v4f.lrn %x {size = 3 : i64, alpha = 1.0e-04 : f32, beta = 7.5e-01 : f32, bias = 1.0 : f32}
         : tensor<1x5x4x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, I64Attr:$size, F32Attr:$alpha, F32Attr:$beta, F32Attr:$bias);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def V4F_WindowOp : V4F_Op<"window", [Pure]> {
  let summary = "ONNX HannWindow / HammingWindow / BlackmanWindow of a run-time length";
  let description = [{
    `size` is an int32 or int64 scalar (one element); the result is the 1-D
    window (`kind` `"hann"`, `"hamming"` or `"blackman"`; `periodic` or
    symmetric) computed in float64 and converted to the result's element
    type. `v4f-decompose-signal` rewrites it to a `v4f.range` and one
    `v4f.elementwise`.

    ```mlir
    %w = v4f.window %n {kind = "hann", periodic = true} : tensor<i64> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins V4F_IndexTensor:$size, StrAttr:$kind, BoolAttr:$periodic);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$size attr-dict `:` type($size) `->` type($result)";
  let hasVerifier = 1;
}

def V4F_DFTOp : V4F_Op<"dft", [Pure]> {
  let summary = "ONNX DFT: discrete Fourier transform along one axis";
  let description = [{
    `input` (float32, static shape) ends in a dim of 1 (real) or 2 (complex
    pairs). The transform of `length` points runs along `axis` (not the
    last dim); the signal is zero-padded or truncated to it. `inverse` and
    `onesided` select the forward, inverse, one-sided forward (real input,
    `length / 2 + 1` bins) and one-sided inverse (real output of `length`
    samples from `length / 2 + 1` bins) transforms.
    `v4f-decompose-signal` rewrites it to matmuls with constant cos / sin
    matrices.

    ```mlir
    %y = v4f.dft %x {axis = 1 : i64, length = 8 : i64, inverse = false, onesided = true}
         : tensor<2x8x1xf32> -> tensor<2x5x2xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, I64Attr:$axis, I64Attr:$length, BoolAttr:$inverse,
                   BoolAttr:$onesided);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def V4F_STFTOp : V4F_Op<"stft", [Pure]> {
  let summary = "ONNX STFT: the discrete Fourier transform of frames of a real signal";
  let description = [{
    `signal` is a float32 `[batch, length, 1]`; frames of `frame_length`
    samples start every `frame_step` samples (no padding: `floor((length -
    frame_length) / frame_step) + 1` frames, known at run time when the
    length is), each multiplied by `window` (`[frame_length]`) when given,
    then transformed (`frame_length` points; `onesided`: the first
    `frame_length / 2 + 1` bins). The result is `[batch, frames, bins, 2]`
    (real, imaginary). `v4f-decompose-signal` rewrites it to a gather of the
    frames (indices from a `v4f.range` over the frame count), the window
    product and matmuls with constant cos / sin matrices.

    ```mlir
    %y = v4f.stft %x window(%w) {frame_step = 160 : i64, frame_length = 400 : i64, onesided = true}
         : (tensor<1x?x1xf32>, tensor<400xf32>) -> tensor<1x?x201x2xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$signal, Optional<V4F_AnyTensor>:$window, I64Attr:$frame_step,
                   I64Attr:$frame_length, BoolAttr:$onesided);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$signal (`window` `(` $window^ `)`)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_RotaryEmbeddingOp : V4F_Op<"rotary_embedding", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "ONNX RotaryEmbedding: rotate pairs of features of each head by position-dependent angles";
  let description = [{
    `input` is `[batch, heads, seq, head_size]` or `[batch, seq, heads *
    head_size]` (`num_heads` given). The first `rotary_dim` features of each
    head (the whole head when 0) are rotated in pairs — its two halves, or
    adjacent features when `interleaved` — by `cos_cache` / `sin_cache`:
    `[batch, seq, rotary_dim / 2]`, or `[max_position, rotary_dim / 2]`
    gathered by `position_ids` (`[batch, seq]`).
    `v4f-decompose-rotary` rewrites it to gathers, splits, elementwise
    products and concats.

    ```mlir
    %y = v4f.rotary_embedding %x, %cos, %sin {rotary_dim = 0 : i64, num_heads = 0 : i64, interleaved = false}
         : (tensor<1x2x3x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_AnyTensor:$cos_cache, V4F_AnyTensor:$sin_cache,
                   Optional<V4F_IndexTensor>:$position_ids,
                   I64Attr:$rotary_dim, I64Attr:$num_heads, BoolAttr:$interleaved);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos_cache `,` $sin_cache (`positions` `(` $position_ids^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_WindowConvOp : V4F_Op<"window_conv", [Pure]> {
  let summary = "convolution of 1 to 3 spatial dims whose weight dims may be known only at run time";
  let description = [{
    ONNX Conv for what `v4f.conv` (2-D, static weight shape) does not take:
    3-D convolutions, and weights whose kernel or channel dims are known
    only at run time. `input` is `[N, C, S1..Sk]`, `weight` `[F, C / group,
    K1..Kk]`, `bias` `[F]`; `strides` and `dilations` have k entries,
    `pads` the k begin pads then the k end pads. `v4f-decompose-window-conv`
    rewrites it to a pad, one gather of the window taps per spatial dim
    (indices from `v4f.range`s over the run-time kernel and output sizes),
    a transpose and a matmul per group.

    ```mlir
    %y = v4f.window_conv %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>,
                                 pads = array<i64: 0, 1, 1, 0, 1, 1>, groups = 1 : i64}
         : (tensor<1x3x8x16x16xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x6x16x16xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_AnyTensor:$weight, Optional<V4F_AnyTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   I64Attr:$groups);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // V4F_COMPOSITE_OPS_TD
