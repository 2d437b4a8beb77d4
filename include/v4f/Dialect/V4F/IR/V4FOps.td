//===- V4FOps.td - v4f dialect operations ------------------*- tablegen -*-===//
#ifndef V4F_OPS_TD
#define V4F_OPS_TD

include "v4f/Dialect/V4F/IR/V4FDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def V4F_FloatTensor : RankedTensorOf<[F32]>;
def V4F_IndexTensor : RankedTensorOf<[I32, I64]>;
// Every element type a tensor may have: ONNX bool is i1 (one byte in memory),
// signed integers are signless, unsigned integers are ui*. The storage-only
// types (bf16, the float8 formats, i4/ui4/i2/ui2) are moved and converted
// but not computed on (see isStorageOnlyType).
def V4F_AnyTensor : RankedTensorOf<[F16, F32, F64, I1, I8, I16, I32, I64,
                                    UI8, UI16, UI32, UI64, BF16, F8E4M3FN, F8E4M3FNUZ,
                                    F8E5M2, F8E5M2FNUZ, I<4>, UI<4>, I<2>, UI<2>,
                                    V4F_Float4E2M1, V4F_Float8E8M0]>;

// Fused epilogue activation, shared by conv and matmul.
defvar V4F_ActivationArgs = (ins
    DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
    DefaultValuedAttr<F32Attr, "0.0f">:$act_alpha,
    DefaultValuedAttr<F32Attr, "0.0f">:$act_beta);

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class V4F_BinaryOp<string mnemonic, string what> : V4F_Op<mnemonic,
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise " # what # " with numpy broadcasting";
  let description = [{
    Computes the elementwise }] # what # [{ of `lhs` and `rhs` after
    broadcasting both to a common shape (numpy rules, trailing dims aligned).

    ```mlir
    %r = v4f.}] # mnemonic # [{ %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$lhs, V4F_FloatTensor:$rhs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def V4F_AddOp : V4F_BinaryOp<"add", "sum">;
def V4F_SubOp : V4F_BinaryOp<"sub", "difference">;
def V4F_MulOp : V4F_BinaryOp<"mul", "product">;
def V4F_DivOp : V4F_BinaryOp<"div", "quotient">;

class V4F_UnaryOp<string mnemonic, string what, dag extraArgs = (ins)> : V4F_Op<mnemonic,
    [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    Applies }] # what # [{ to every element of `input`.

    ```mlir
    %r = v4f.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = !con((ins V4F_FloatTensor:$input), extraArgs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def V4F_ReluOp : V4F_UnaryOp<"relu", "max(x, 0)">;
def V4F_SigmoidOp : V4F_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def V4F_TanhOp : V4F_UnaryOp<"tanh", "the hyperbolic tangent">;
def V4F_ErfOp : V4F_UnaryOp<"erf", "the Gauss error function">;
def V4F_ExpOp : V4F_UnaryOp<"exp", "e^x">;
def V4F_SqrtOp : V4F_UnaryOp<"sqrt", "the square root">;
def V4F_LeakyReluOp : V4F_UnaryOp<"leaky_relu", "x if x >= 0 else alpha * x",
    (ins F32Attr:$alpha)>;
def V4F_HardSigmoidOp : V4F_UnaryOp<"hard_sigmoid", "min(max(alpha * x + beta, 0), 1)",
    (ins F32Attr:$alpha, F32Attr:$beta)>;
def V4F_HardSwishOp : V4F_UnaryOp<"hard_swish", "x * min(max(x / 6 + 1/2, 0), 1)">;
def V4F_ClipOp : V4F_UnaryOp<"clip", "min(max(x, min), max)",
    (ins F32Attr:$min, F32Attr:$max)> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def V4F_ConvOp : V4F_Op<"conv", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "2-D convolution (NCHW) with fused bias, residual and activation";
  let description = [{
    `result = act(conv(input, weight) + bias[c] + residual)`, NCHW input,
    OIHW weight with `O = groups * (O / groups)`, explicit pads
    `[top, left, bottom, right]`. `bias` and `residual` are optional and are
    usually introduced by the `v4f-fuse-epilogues` pass.

    ```mlir
    %y = v4f.conv %x, %w, %b {strides = [1, 1], dilations = [1, 1],
           pads = [1, 1, 1, 1], groups = 1 : i64, activation = "relu"}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins V4F_FloatTensor:$input, V4F_FloatTensor:$weight,
                       Optional<V4F_FloatTensor>:$bias,
                       Optional<V4F_FloatTensor>:$residual,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<I64Attr, "1">:$groups),
                       V4F_ActivationArgs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_MatMulOp : V4F_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "batched matrix product with broadcasting, fused bias and activation";
  let description = [{
    numpy `matmul` semantics for operands of rank >= 2 (rank-1 operands are
    reshaped by the importer); leading batch dims broadcast. An optional
    `bias` of shape `[N]` is added to every row, then `activation` applies.

    ```mlir
    %y = v4f.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = !con((ins V4F_FloatTensor:$lhs, V4F_FloatTensor:$rhs,
                       Optional<V4F_FloatTensor>:$bias),
                       V4F_ActivationArgs);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_BatchNormOp : V4F_Op<"batch_norm", [Pure]> {
  let summary = "inference batch normalization over channel axis 1";
  let description = [{
    `scale * (x - mean) / sqrt(var + epsilon) + bias` per channel. Never
    reaches codegen: `v4f-fold-batch-norm` folds it into the producing conv
    or rewrites it to a multiply-add with folded constants.

    ```mlir
    %y = v4f.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32}
         : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$input, V4F_FloatTensor:$scale,
                   V4F_FloatTensor:$bias, V4F_FloatTensor:$mean,
                   V4F_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling, normalization, reductions
//===----------------------------------------------------------------------===//

class V4F_PoolOp<string mnemonic, string what> : V4F_Op<mnemonic, [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "2-D " # what # " pooling (NCHW) with explicit pads";
  let description = [{
    Pools windows of `kernel_shape` over H and W. Pads are
    `[top, left, bottom, right]`; `ceil_mode` rounds the output size up, and
    windows that start inside the padded input are clipped to it.
    For average pooling `count_include_pad` selects whether the divisor counts
    explicit padding (never the ceil-mode overhang). Max pooling also takes
    int8 values (quantized activations carried by v4f-carry-int8); average
    pooling is float32 only.

    ```mlir
    %y = v4f.}] # mnemonic # [{ %x {kernel_shape = [2, 2], strides = [2, 2], dilations = [1, 1],
           pads = [0, 0, 0, 0]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, I8]>:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs RankedTensorOf<[F32, I8]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_MaxPoolOp : V4F_PoolOp<"max_pool", "max">;
def V4F_AvgPoolOp : V4F_PoolOp<"avg_pool", "average">;

def V4F_ReduceMeanOp : V4F_Op<"reduce_mean", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "mean over the listed axes";
  let description = [{
    Averages `input` over `axes` (sorted, non-negative, unique). With
    `keepdims` the reduced dims stay as size 1.

    ```mlir
    %y = v4f.reduce_mean %x {axes = [2, 3], keepdims = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$input, DenseI64ArrayAttr:$axes, BoolAttr:$keepdims);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_ReduceOp : V4F_Op<"reduce", [Pure]> {
  let summary = "reduction over axes given as an attribute or as a run-time tensor";
  let description = [{
    `kind` is one of `sum`, `mean`, `max`, `min`, `prod`, `l1`, `l2`,
    `log_sum`, `log_sum_exp`, `sum_square` (ONNX ReduceX semantics). The
    reduced axes are `axes` (attribute, non-negative, sorted) or, when the
    `axes_tensor` operand is present, its values at run time (negative values
    count from the end). With `keepdims` reduced dims stay as size 1.
    An empty reduction yields the identity of the combiner (0 for sums, 1 for
    products, -inf / +inf for max / min, -inf for log_sum_exp).

    ```mlir
    %y = v4f.reduce %x {kind = "max", axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, Optional<V4F_IndexTensor>:$axes_tensor,
                   StrAttr:$kind, DenseI64ArrayAttr:$axes, BoolAttr:$keepdims);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input (`axes` `(` $axes_tensor^ `)`)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_ArgReduceOp : V4F_Op<"arg_reduce", [Pure]> {
  let summary = "index of the max or min along one axis (ONNX ArgMax / ArgMin)";
  let description = [{
    `kind` is `max` or `min`; ties go to the first index unless
    `select_last_index`. The result is i64 with the axis kept as 1 when
    `keepdims`, removed otherwise.

    ```mlir
    %i = v4f.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = false, select_last_index = false}
        : (tensor<2x3xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, StrAttr:$kind, I64Attr:$axis, BoolAttr:$keepdims,
                   BoolAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_SoftmaxOp : V4F_Op<"softmax", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "softmax, log-softmax or hardmax along one axis";
  let description = [{
    `mode = "softmax"` (default): `exp(x - max) / sum(exp(x - max))` along
    `axis` (non-negative); `"log_softmax"`: `x - max - log(sum(exp(x - max)))`;
    `"hardmax"`: 1 at the first maximum, 0 elsewhere.

    Attention's scaled, masked softmax in one pass (v4f-fuse-normalizations):
    with `scale` and an additive `mask` (broadcast to the input; softmax
    mode along the last axis only) the softmax is of `x * scale + mask`.
    `nan_to_zero` (softmax along the last axis) replaces NaN probabilities
    by 0, as exporters guard a fully masked row (`Where(IsNaN(p), 0, p)`,
    torch's scaled_dot_product_attention): a row is all NaN or has none.

    ```mlir
    %y = v4f.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
    %p = v4f.softmax %s mask(%m : tensor<1x1x1x8xf32>) {axis = 3 : i64, scale = 0.125 : f32} : tensor<1x2x8x8xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$input, Optional<V4F_FloatTensor>:$mask, I64Attr:$axis,
                   DefaultValuedAttr<StrAttr, "\"softmax\"">:$mode,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$nan_to_zero);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "$input (`mask` `(` $mask^ `:` type($mask) `)`)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def V4F_LayerNormOp : V4F_Op<"layer_norm", [Pure]> {
  let summary = "layer normalization over the trailing dims from `axis`";
  let description = [{
    Normalizes over dims `[axis, rank)` to zero mean and unit variance, then
    applies `scale` and optional `bias` (shaped like those trailing dims).
    With `rms` (ONNX RMSNormalization) the mean is not subtracted:
    `x / sqrt(mean(x^2) + epsilon) * scale`.

    ```mlir
    %y = v4f.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
         : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins V4F_FloatTensor:$input, V4F_FloatTensor:$scale,
                   Optional<V4F_FloatTensor>:$bias, I64Attr:$axis, F32Attr:$epsilon,
                   DefaultValuedAttr<BoolAttr, "false">:$rms);
  let results = (outs V4F_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def V4F_ReshapeOp : V4F_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with a new shape of the same element count";
  let description = [{
    Without `shape`, the result type carries the new shape; a `?` dim takes
    whatever the element count leaves, so at most one result dim may be
    dynamic unless the input's dynamic dims are carried over in place
    (`dim_sources[i]` is the input dim copied into result dim `i`, or -1).

    With a `shape` operand (a 1-D integer tensor known only at run time, ONNX
    Reshape semantics: 0 copies the input dim unless `allowzero`, -1 is
    inferred), the result dims are computed from its values when the plan is
    evaluated; `dim_sources` is then all -1.

    ```mlir
    %y = v4f.reshape %x {dim_sources = array<i64: 0, -1>} : (tensor<?x4x2xf32>) -> tensor<?x8xf32>
    %z = v4f.reshape %x shape(%s) {dim_sources = array<i64: -1, -1>}
        : (tensor<?x4x2xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, Optional<V4F_IndexTensor>:$shape,
                   DenseI64ArrayAttr:$dim_sources,
                   DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input (`shape` `(` $shape^ `)`)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def V4F_ScaledSizesOp : V4F_Op<"scaled_sizes", [Pure]> {
  let summary = "floor(dim * scale) of chosen dims, with scales known at run time";
  let description = [{
    `result[i] = floor(dim(input, axes[i]) * scales[i])` as a 1-D i64 tensor
    (Resize output sizes from its `scales` input; OneHot's float depth). The
    plan follows the values (shape registers): scales must be a graph input or
    a constant, with one element per axis.

    ```mlir
    %s = v4f.scaled_sizes %x, %scales {axes = array<i64: 2, 3>} : (tensor<1x1x4x4xf32>, tensor<2xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, RankedTensorOf<[F32]>:$scales, DenseI64ArrayAttr:$axes);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input `,` $scales attr-dict `:` functional-type(operands, results)";
}

def V4F_ShapeOp : V4F_Op<"shape", [Pure]> {
  let summary = "the dims [start, end) of a tensor as a 1-D i64 tensor";
  let description = [{
    Only created for inputs with dynamic dims (static shapes import as
    constants). Its values are known to the plan (shape registers), so ops
    consuming them (reshape, expand, slice ...) follow the run-time shape.

    ```mlir
    %s = v4f.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x4x2xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_ExpandOp : V4F_Op<"expand", [Pure]> {
  let summary = "broadcast a tensor to a shape given by a 1-D integer tensor";
  let description = [{
    ONNX Expand: the result shape is the numpy broadcast of the input shape
    and the values of `shape`.

    ```mlir
    %y = v4f.expand %x, %s : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$shape);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_UnsqueezeOp : V4F_Op<"unsqueeze", [Pure]> {
  let summary = "insert size-1 dims at positions given at run time";
  let description = [{
    ONNX Unsqueeze with an `axes` tensor known only at run time (constant
    axes import as `v4f.reshape`). A view: no data moves.

    ```mlir
    %y = v4f.unsqueeze %x, %axes : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$axes);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input `,` $axes attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_SliceOp : V4F_Op<"slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "strided slice with starts/ends/axes/steps given as 1-D integer tensors";
  let description = [{
    ONNX Slice semantics (negative indices count from the end, values are
    clamped, negative steps walk backwards). `axes` and `steps` are optional.
    The values may be constants or known only at run time.

    ```mlir
    %y = v4f.slice %x, %starts, %ends : (tensor<8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$starts, V4F_IndexTensor:$ends,
                   Optional<V4F_IndexTensor>:$axes, Optional<V4F_IndexTensor>:$steps);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends (`axes` `(` $axes^ `)`)? (`steps` `(` $steps^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def V4F_TransposeOp : V4F_Op<"transpose", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "permute dimensions";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    ```mlir
    %y = v4f.transpose %x {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def V4F_SplitOp : V4F_Op<"split", [Pure]> {
  let summary = "split a tensor along an axis into parts of given sizes";
  let description = [{
    Result `k` holds the `sizes[k]` (or, with the `split` operand, its k-th
    value at run time) consecutive slices along `axis`, starting where the
    previous part ended.

    ```mlir
    %a, %b = v4f.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>}
        : (tensor<6x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>)
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, Optional<V4F_IndexTensor>:$split, I64Attr:$axis,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<V4F_AnyTensor>:$parts);
  let assemblyFormat = "$input (`split` `(` $split^ `)`)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_GatherElementsOp : V4F_Op<"gather_elements", [Pure]> {
  let summary = "ONNX GatherElements: index one axis elementwise";
  let description = [{
    `result[i...] = data[i... with i[axis] replaced by indices[i...]]`; the
    result has the shape of `indices`. Negative indices count from the end;
    out-of-range indices fail the run.

    ```mlir
    %y = v4f.gather_elements %d, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$data, V4F_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_ScatterElementsOp : V4F_Op<"scatter_elements", [Pure]> {
  let summary = "ONNX ScatterElements: write or combine updates into a copy of data along one axis";
  let description = [{
    The result is a copy of `data`; then, for every element of `indices`
    (row-major order), the element of `updates` at the same position is
    written into the result at that position with its `axis` coordinate
    replaced by the index. `reduction` is `none` (later writes win), `add`,
    `mul`, `max` or `min` (combined with the value already there). Negative
    indices count from the end; out-of-range indices fail the run.

    ```mlir
    %y = v4f.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"}
        : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$data, V4F_IndexTensor:$indices, V4F_AnyTensor:$updates, I64Attr:$axis,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_ScatterNDOp : V4F_Op<"scatter_nd", [Pure]> {
  let summary = "ONNX ScatterND: write or combine slices of updates into a copy of data";
  let description = [{
    `indices` has shape `[..., q]` with a static `q <= rank(data)`; every
    index tuple (row-major order) addresses a slice `data[i0, ..., iq-1]` of
    shape `data.shape[q:]`, which receives the matching slice of `updates`
    (shape `indices.shape[:-1] + data.shape[q:]`). `reduction` is `none`
    (later writes win), `add`, `mul`, `max` or `min`. Negative indices count
    from the end; out-of-range indices fail the run.

    ```mlir
    %y = v4f.scatter_nd %d, %i, %u {reduction = "none"}
        : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$data, V4F_IndexTensor:$indices, V4F_AnyTensor:$updates,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_GatherNDOp : V4F_Op<"gather_nd", [Pure]> {
  let summary = "ONNX GatherND: gather slices of data addressed by index tuples";
  let description = [{
    `indices` has shape `[b..., n..., q]` where the first `batch_dims` dims
    equal those of `data` and `q` (static) is at most `rank(data) -
    batch_dims`. Each tuple addresses the slice `data[b..., i0, ..., iq-1]`;
    the result has shape `indices.shape[:-1] + data.shape[batch_dims + q:]`.
    Negative indices count from the end; out-of-range indices (and batch
    dims that disagree at run time) fail the run.

    ```mlir
    %y = v4f.gather_nd %d, %i {batch_dims = 0 : i64} : (tensor<2x2x2xf32>, tensor<2x1x2xi64>) -> tensor<2x1x2xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$data, V4F_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_TopKOp : V4F_Op<"top_k", [Pure]> {
  let summary = "ONNX TopK: the k largest (or smallest) elements along an axis, and their indices";
  let description = [{
    `k` is a one-element integer tensor whose value may be known only at run
    time (the result dim along `axis`, non-negative, then follows it); a
    value above the axis length fails the run. The results are always sorted
    (best first); among equal values the lower index comes first. NaN counts
    as larger than every number.

    ```mlir
    %v, %i = v4f.top_k %x, %k {axis = 1 : i64, largest = true}
        : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$k, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs V4F_AnyTensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input `,` $k attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_TriluOp : V4F_Op<"trilu", [Pure]> {
  let summary = "keep the upper or lower triangle of the last two dims (ONNX Trilu)";
  let description = [{
    Elements with `col - row >= k` (upper) or `col - row <= k` (lower) are
    kept, others become 0. `k` is an optional scalar known at run time.

    ```mlir
    %y = v4f.trilu %x {upper = true} : (tensor<4x5xf32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, Optional<V4F_IndexTensor>:$k, BoolAttr:$upper);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input (`k` `(` $k^ `)`)? attr-dict `:` functional-type(operands, results)";
}

def V4F_FillOp : V4F_Op<"fill", [Pure]> {
  let summary = "a tensor of a run-time shape filled with one value (ONNX ConstantOfShape)";
  let description = [{
    ```mlir
    %y = v4f.fill %s {value = 1.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins V4F_IndexTensor:$shape, TypedAttrInterface:$value);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
}

def V4F_PadOp : V4F_Op<"pad", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX Pad: constant, reflect, edge or wrap padding";
  let description = [{
    `pads` holds the begin pads of every padded dim, then their end pads, for the
    dims listed in `axes` (all dims when absent); negative pads crop. The
    values may be known only at run time. `constant_value` (a scalar of the
    input's type) fills in `constant` mode; 0 when absent.

    ```mlir
    %y = v4f.pad %x, %pads {mode = "reflect"} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$pads,
                   Optional<V4F_AnyTensor>:$constant_value, Optional<V4F_IndexTensor>:$axes,
                   StrAttr:$mode);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $pads (`value` `(` $constant_value^ `)`)? (`axes` `(` $axes^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def V4F_CumSumOp : V4F_Op<"cumsum", [Pure]> {
  let summary = "cumulative sum or product along an axis given as a scalar tensor (ONNX CumSum/CumProd)";
  let description = [{
    `exclusive` leaves out the current element; `reverse` sums from the end;
    `product` multiplies instead (ONNX CumProd).
    The axis may be known only at run time.

    ```mlir
    %y = v4f.cumsum %x, %axis {exclusive = false, reverse = false} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, V4F_IndexTensor:$axis, BoolAttr:$exclusive, BoolAttr:$reverse,
                       DefaultValuedAttr<BoolAttr, "false">:$product);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$input `,` $axis attr-dict `:` functional-type(operands, results)";
}

def V4F_RangeOp : V4F_Op<"range", [Pure]> {
  let summary = "integer sequence start, start + delta, ... below limit (ONNX Range)";
  let description = [{
    `start`, `limit` and `delta` are integer scalars whose values may be known
    only at run time; the length is `max(ceil((limit - start) / delta), 0)`.
    (Float ranges are folded to constants at import when their inputs are.)

    ```mlir
    %r = v4f.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins V4F_IndexTensor:$start, V4F_IndexTensor:$limit, V4F_IndexTensor:$delta);
  let results = (outs RankedTensorOf<[I32, I64]>:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
}

def V4F_ConcatOp : V4F_Op<"concat", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "concatenate tensors along an axis";
  let description = [{
    All inputs agree on every dim except `axis` (non-negative).

    ```mlir
    %y = v4f.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<V4F_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_GatherOp : V4F_Op<"gather", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gather slices of `data` along `axis` by integer indices";
  let description = [{
    ONNX Gather: result shape is `data[:axis] + indices.shape + data[axis+1:]`.
    Negative indices count from the end; out-of-range indices make the run
    fail with an error (never an out-of-bounds read).

    ```mlir
    %y = v4f.gather %table, %ids {axis = 0 : i64} : (tensor<100x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$data, V4F_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs V4F_AnyTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Generic elementwise
//===----------------------------------------------------------------------===//

def V4F_ElementwiseOp : V4F_Op<"elementwise", [Pure, IsolatedFromAbove]> {
  let summary = "elementwise computation given by a scalar region, with broadcasting";
  let description = [{
    Broadcasts all `inputs` to the result shape (numpy rules) and evaluates
    the body once per element: block argument `i` is the element of input
    `i`, `v4f.yield` gives the result element. The body holds scalar
    `arith` / `math` ops. Unsigned tensor element types (`ui8` ...) appear as
    signless integers of the same width inside the body; the ops chosen by
    the importer carry the signedness (`divui`, `cmpi ult`, `uitofp` ...).
    This is how most of ONNX's elementwise operators are imported; named ops
    (`v4f.add`, `v4f.relu` ...) remain for the float forms that fusion
    patterns match.

    ```mlir
    %y = v4f.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: f32):
      %s = math.sin %a : f32
      v4f.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<V4F_AnyTensor>:$inputs);
  let results = (outs V4F_AnyTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results) $body";
  let hasVerifier = 1;
  // Pow by a constant 2 or 1 (LayerNorm as exporters write it squares with
  // Pow) becomes a multiply / the input itself.
  let hasCanonicalizer = 1;
  // Over constants only, a small one (<= 4096 elements) folds to its value.
  let hasFolder = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::ValueRange":$inputs)>
  ];
}

def V4F_YieldOp : V4F_Op<"yield", [Pure, Terminator, HasParent<"ElementwiseOp">]> {
  let summary = "result element of a v4f.elementwise body";
  let description = [{
    ```mlir
    v4f.yield %r : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

include "v4f/Dialect/V4F/IR/V4FDataDependentOps.td"
include "v4f/Dialect/V4F/IR/V4FCompositeOps.td"
include "v4f/Dialect/V4F/IR/V4FQuantizedOps.td"
include "v4f/Dialect/V4F/IR/V4FPlanOps.td"

#endif // V4F_OPS_TD
