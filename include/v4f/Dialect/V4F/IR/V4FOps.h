//===- V4FOps.h - v4f dialect and operations --------------------*- C++ -*-===//
#ifndef V4F_DIALECT_V4F_IR_V4FOPS_H
#define V4F_DIALECT_V4F_IR_V4FOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "v4f/Dialect/V4F/IR/DimBuilder.h"

#include "v4f/Dialect/V4F/IR/V4FOpsDialect.h.inc"
#include "v4f/Dialect/V4F/IR/V4FInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOps.h.inc"

namespace v4f {
/// Numpy-style broadcast of two shapes (dynamic dims as ShapedType::kDynamic).
/// Returns failure when two static dims differ and neither is 1.
mlir::LogicalResult broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                                    llvm::SmallVectorImpl<int64_t> &out);
/// The scalar type an element of type `t` has inside a v4f.elementwise body:
/// unsigned integers become signless of the same width.
mlir::Type bodyScalarType(mlir::Type t);
/// Storage-only element types: bfloat16, the float8 formats and the 2/4-bit
/// integers. Kernels see them as their storage integers (bf16 -> i16, float8
/// -> i8, [u]int4/[u]int2 -> i8 holding the sign- or zero-extended value);
/// only conversions (Cast, QuantizeLinear, ...) and data movement act on them.
bool isStorageOnlyType(mlir::Type t);
/// Dispatch formation: ops computed element by element that may share a
/// fused kernel with their producer, and ops that only alias a buffer
/// (no kernel; they stay outside v4f.dispatch regions).
bool isFusibleElementwise(mlir::Operation *op);
bool isBufferView(mlir::Operation *op);
/// Whether a region's ops are those v4f-fuse-attention-regions merges: two
/// matmuls, one softmax, transposes (one fused attention kernel on the CPU
/// and on the GPU).
bool isAttentionRegion(llvm::ArrayRef<mlir::Operation *> ops);
/// The fused kernel a fusion pass chose for a v4f.dispatch region it merged,
/// recorded on the region as `v4f.fused_kernel = "<kind>"`: codegen emits
/// that kind's registered kernel and never re-matches the region's ops. A
/// region without it holds one op, or a chain of elementwise ops.
inline constexpr const char *kFusedKernelAttr = "v4f.fused_kernel";
inline constexpr const char *kFusedAttention = "attention";                    // v4f-fuse-attention-regions
inline constexpr const char *kFusedChannelScaledConv = "channel_scaled_conv";  // v4f-fuse-channel-scale
inline constexpr const char *kFusedPointwiseDepthwise = "pointwise_depthwise"; // v4f-fuse-pointwise-depthwise
inline constexpr const char *kFusedDepthwisePointwise = "depthwise_pointwise"; // v4f-fuse-depthwise-pointwise
/// Whether `op` is (or is inside) a dispatch region placed on the GPU
/// (`v4f.placement = "cuda"`, v4f-assign-placement).
bool isPlacedOnCuda(mlir::Operation *op);
/// The `v4f.fused_kernel` kind of dispatch region `region`, "" when none.
llvm::StringRef fusedKernelOf(mlir::Operation *region);
/// Attaches the shape rules (ShapeRuleOpInterface) to the ops that have one
/// (V4FShapeRules.cpp); called when the dialect is loaded.
void attachShapeRules(mlir::MLIRContext &ctx);
/// Output extent of a conv/pool window along one axis; kDynamic if `in` is.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                         bool ceilMode);
} // namespace v4f

// Shape and type rules of the composite ops (V4FCompositeOps.cpp), shared
// with the importer so that it reports the same problems at import.
namespace v4f {
/// float8 formats (the builtin ones: E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ).
bool isFloat8Type(mlir::Type t);
/// [min, max] of a quantized integer type (2/4/8/16-bit, signed or unsigned).
std::optional<std::pair<int64_t, int64_t>> quantizedIntRange(mlir::Type t);
/// Why `param` (scale or zero point, named `what`) cannot broadcast
/// against `x` for quantization `axis` (non-negative, or -1 when out of
/// range) and `blockSize` (0: not blocked); "" when it can.
std::string quantParamShapeError(mlir::RankedTensorType x, mlir::RankedTensorType param, int64_t axis,
                                 int64_t blockSize, llvm::StringRef what);
/// An Einsum equation resolved against its operands: one label per operand
/// dim (letters as their character codes; ellipsis dims as
/// kEinsumEllipsisLabel + their position among the right-aligned broadcast
/// ellipsis dims), the output labels (implicit output: the ellipsis dims,
/// then the letters used once, alphabetically) and the result shape.
constexpr int kEinsumEllipsisLabel = 1000;
struct EinsumEquation {
  llvm::SmallVector<llvm::SmallVector<int>> operandLabels;
  llvm::SmallVector<int> outputLabels;
  llvm::SmallVector<int64_t> resultShape;
};
/// Parses `equation` (whitespace ignored) for operands of static `shapes`;
/// returns why it does not fit them, or "" and fills `out`.
std::string parseEinsumEquation(llvm::StringRef equation, llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                                EinsumEquation &out);
/// Attention's dims resolved from its operand types (V4FSequenceOps.cpp):
/// 3-D (`rank` 3) or 4-D inputs, q/kv heads, query length S, past length P,
/// total key length L = P + new keys, head sizes D (Q, K) and Dv (V).
/// Attention's dims; any may be mlir::ShapedType::kDynamic (known only at
/// run time).
struct AttentionShape {
  int64_t rank = 0, B = 0, Hq = 0, Hkv = 0, S = 0, P = 0, L = 0, D = 0, Dv = 0;
};
/// The output extent of a window_conv dim (0 when the window does not fit;
/// mlir::ShapedType::kDynamic when the input or kernel size is).
int64_t windowConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                             int64_t padEnd);
/// heads * size, dynamic when either is.
inline int64_t attentionHidden(int64_t heads, int64_t size) {
  return heads == mlir::ShapedType::kDynamic || size == mlir::ShapedType::kDynamic ? mlir::ShapedType::kDynamic
                                                                                   : heads * size;
}
/// Checks Attention's operands (null types for absent optional ones; the
/// head counts are only read for 3-D inputs) and fills `out`; returns why
/// they do not fit, or "".
std::string resolveAttentionShape(mlir::RankedTensorType q, mlir::RankedTensorType k, mlir::RankedTensorType v,
                                  mlir::RankedTensorType pastKey, mlir::RankedTensorType pastValue,
                                  mlir::RankedTensorType mask, mlir::RankedTensorType nonpad, int64_t qHeads,
                                  int64_t kvHeads, AttentionShape &out);
/// A recurrent layer's dims (V4FSequenceOps.cpp): sequence T, batch B,
/// input I, hidden H, directions (1 or 2) and gates per step.
struct RecurrentShape {
  int64_t T = 0, B = 0, I = 0, H = 0, dirs = 1, gates = 1;
};
/// Checks a recurrent layer's operand types (null for absent optional
/// ones) for `cell` ("rnn", "gru", "lstm"), `direction` and `layout`; a
/// `hiddenSize` >= 0 must agree with R. Returns why they do not fit, or "".
std::string resolveRecurrentShape(llvm::StringRef cell, llvm::StringRef direction, int64_t layout, int64_t hiddenSize,
                                  mlir::RankedTensorType x, mlir::RankedTensorType w, mlir::RankedTensorType r,
                                  mlir::RankedTensorType b, mlir::RankedTensorType lens, mlir::RankedTensorType h0,
                                  mlir::RankedTensorType c0, mlir::RankedTensorType p, RecurrentShape &out);
/// A recurrent activation's default alpha / beta and whether it reads them;
/// false for an unknown (lower-case) name.
bool recurrentActivationParams(llvm::StringRef name, bool &usesAlpha, bool &usesBeta, float &alpha, float &beta);
/// numpy matmul result shape (rank-1 operands allowed); failure when the
/// contraction or batch dims disagree.
mlir::LogicalResult matmulResultShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                                      llvm::SmallVectorImpl<int64_t> &out);
} // namespace v4f

#endif // V4F_DIALECT_V4F_IR_V4FOPS_H
