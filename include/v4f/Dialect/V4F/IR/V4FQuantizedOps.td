// V4FQuantizedOps.td - the integer kernels' ops: matmuls by a quantized
// constant weight, produced by v4f-quantize (--quantize) and v4f-fold-qdq
// (QDQ models). Included by V4FOps.td (V4F_Op, V4F_FloatTensor and
// V4F_ActivationArgs come from there).

def V4F_QuantizedMatMulOp : V4F_Op<"quantized_matmul", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "matrix product of int8-quantized activations and an int8 weight, float result";
  let description = [{
    `lhs` (float32 `[..., M, K]`, any batch dims) is quantized to int8 row by
    row, multiplied by the int8 weight `rhs` (`[K, N]`, quantized per output
    column with the scales `rhs_scale`, `[N]`) with int32 accumulation, and
    the sums are dequantized: `y[r, n] = s_r * rhs_scale[n] * sum_k q[r, k] *
    rhs[k, n]`, then `bias` (`[N]`) is added and `activation` applies.

    `act_quant` says how `lhs` is quantized:
    - `"dynamic"`: per row at run time, symmetric: `s_r = max_k |lhs[r, k]| /
      127` (1 for a zero row) and `q = clamp(round(lhs / s_r), -127, 127)`;
    - `"static"`: one scale and zero point for the tensor, chosen at compile
      time from calibration data: `q = clamp(round(lhs / act_scale) +
      act_zero_point, qmin, qmax) - act_zero_point` with `[qmin, qmax]` =
      `[-128, 127]` (`act_zero_point` in that range).

    Produced by `v4f-quantize` from `v4f.matmul` with a constant weight.

    ```mlir
    %y = v4f.quantized_matmul %a, %w, %ws {act_quant = "dynamic"}
         : (tensor<4x64xf32>, tensor<64x10xi8>, tensor<10xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = !con((ins V4F_FloatTensor:$lhs, RankedTensorOf<[I8]>:$rhs,
                       V4F_FloatTensor:$rhs_scale, Optional<V4F_FloatTensor>:$bias,
                       StrAttr:$act_quant,
                       DefaultValuedAttr<F32Attr, "1.0f">:$act_scale,
                       DefaultValuedAttr<I32Attr, "0">:$act_zero_point),
                       V4F_ActivationArgs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $rhs_scale (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_Int4MatMulOp : V4F_Op<"int4_matmul", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "matrix product of float activations and a block-wise int4 weight";
  let description = [{
    Weight-only quantization: `rhs` (`[K, N]`, int4 values in [-8, 7] held
    one per i8 element in the IR; the artifact stores two per byte) is
    quantized in groups of `group_size` consecutive K rows per column with
    the scales `rhs_scale` (`[ceil(K / group_size), N]`):
    `y[r, n] = sum_k lhs[r, k] * rhs[k, n] * rhs_scale[k / group_size, n]`
    in float32, then `bias` (`[N]`) is added and `activation` applies.
    `lhs` (float32 `[..., M, K]`) stays float. With `rhs_zero_point`
    (i8 `[ceil(K / group_size), N]`, values in [-8, 7]) the groups are
    asymmetric: the weight is `(rhs[k, n] - rhs_zero_point[k / group_size, n])
    * rhs_scale[k / group_size, n]`.

    With `int8_activations` (w4a8, symmetric groups only) `lhs` is quantized
    to int8 per row at run time as in `v4f.quantized_matmul`'s dynamic mode
    (`s_r = max_k |lhs[r, k]| / 127`), the products are integer, summed per
    group in int32 and dequantized per group:
    `y[r, n] = s_r * sum_g rhs_scale[g, n] * sum_{k in g} q[r, k] * rhs[k, n]`.

    Produced by `v4f-quantize` (mode `int4-weight`) from `v4f.matmul` with a
    constant weight.

    ```mlir
    %y = v4f.int4_matmul %a, %w, %ws {group_size = 32 : i64}
         : (tensor<1x64xf32>, tensor<64x10xi8>, tensor<2x10xf32>) -> tensor<1x10xf32>
    ```
  }];
  let arguments = !con((ins V4F_FloatTensor:$lhs, RankedTensorOf<[I8]>:$rhs,
                       V4F_FloatTensor:$rhs_scale, Optional<RankedTensorOf<[I8]>>:$rhs_zero_point,
                       Optional<V4F_FloatTensor>:$bias,
                       I64Attr:$group_size, UnitAttr:$int8_activations),
                       V4F_ActivationArgs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $rhs_scale (`zero_point` `(` $rhs_zero_point^ `)`)? (`bias` `(` $bias^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_QuantizedConvOp : V4F_Op<"quantized_conv", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "2-D int8 convolution (NCHW, groups 1), float or requantized int8 result";
  let description = [{
    Static INT8 convolution: `input` (float32 NCHW) is quantized with one
    calibrated scale and zero point for the tensor,
    `q = clamp(round(input / act_scale) + act_zero_point, -128, 127)`, the
    padding taking the value of a real 0 (`act_zero_point`); `weight`
    (int8 OIHW, quantized per output channel or per tensor with the scales
    `weight_scale`, `[O]`) multiplies `q - act_zero_point` with int32
    accumulation, and the sums are dequantized:
    `y[n, o, p] = act_scale * weight_scale[o] * sum_k (q - zp) * weight`,
    then `bias` (`[O]`) and `residual` (the result's type) are added and
    `activation` applies, as in `v4f.conv`.

    Produced by `v4f-quantize` (mode `int8`) from a calibrated `v4f.conv`
    with a constant weight, `groups` 1 and static input height and width.

    int8 carried between layers (set by `v4f-carry-int8`): an `input` of
    element type i8 already holds the quantized values `q` (with this op's
    `act_scale` and `act_zero_point`), so nothing is quantized; with
    `out_scale` the result is i8, the float result requantized after the
    activation: `clamp(roundeven(y / out_scale) + out_zero_point, -128, 127)`
    (`y / out_scale` computed as `y * (1 / out_scale)`, as an int8 consumer
    quantizes its float input). An int8 `residual` (with `residual_scale`)
    holds quantized values, added as `(q - residual_zero_point) *
    residual_scale` (the skip connection carried in int8, as ONNX Runtime's
    QDQ ResNets do).

    ```mlir
    %y = v4f.quantized_conv %x, %w, %ws bias(%b) {strides = array<i64: 1, 1>,
           dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
           act_scale = 0.02 : f32, act_zero_point = -3 : i32, activation = "relu"}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins RankedTensorOf<[F32, I8]>:$input, RankedTensorOf<[I8]>:$weight,
                       V4F_FloatTensor:$weight_scale,
                       Optional<V4F_FloatTensor>:$bias,
                       Optional<RankedTensorOf<[F32, I8]>>:$residual,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       F32Attr:$act_scale,
                       DefaultValuedAttr<I32Attr, "0">:$act_zero_point,
                       OptionalAttr<F32Attr>:$out_scale,
                       DefaultValuedAttr<I32Attr, "0">:$out_zero_point,
                       OptionalAttr<F32Attr>:$residual_scale,
                       DefaultValuedAttr<I32Attr, "0">:$residual_zero_point),
                       V4F_ActivationArgs);
  let results = (outs RankedTensorOf<[F32, I8]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $weight_scale (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_IntegerMatMulOp : V4F_Op<"integer_matmul", [Pure, AttrSizedOperandSegments]> {
  let summary = "exact int32 matrix product of 8-bit activations and a constant int8 weight";
  let description = [{
    `y[r, n] = sum_k (lhs[r, k] - lhs_zero_point) * (rhs[k, n] -
    rhs_zero_point[n])` in int32, exactly (ONNX MatMulInteger with a constant
    weight). `lhs` (int8 or uint8 `[..., M, K]`, any batch dims) arrives at
    run time, its zero point (one value of its element type, rank 0 or `[1]`,
    often computed at run time by DynamicQuantizeLinear) is optional (0);
    `rhs` is a constant int8 `[K, N]`, `rhs_zero_point` an optional constant
    int32 `[N]` (uint8 weights arrive as `w - 128` with zero points
    `zp - 128`). Runs on the integer GEMM (vpdpbusd / pmaddwd).

    Produced by `v4f-fold-qdq` from `v4f.matmul_integer`.

    ```mlir
    %y = v4f.integer_matmul %a, %w lhs_zero_point(%za)
         : (tensor<4x64xui8>, tensor<64x10xi8>, tensor<ui8>) -> tensor<4x10xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8, UI8]>:$lhs, RankedTensorOf<[I8]>:$rhs,
                   Optional<RankedTensorOf<[I8, UI8]>>:$lhs_zero_point,
                   Optional<RankedTensorOf<[I32]>>:$rhs_zero_point);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`lhs_zero_point` `(` $lhs_zero_point^ `)`)? (`rhs_zero_point` `(` $rhs_zero_point^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}
