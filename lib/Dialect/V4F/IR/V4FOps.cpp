//===- V4FOps.cpp - v4f op verifiers and shape inference: compute ops -----===//
//
// Elementwise, conv/matmul, pooling and normalization ops; the data-movement
// and shape ops are in V4FDataMovementOps.cpp, dispatch regions in
// V4FDispatch.cpp.
//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "OpHelpers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace v4f;
using namespace v4f::detail;

LogicalResult v4f::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b, SmallVectorImpl<int64_t> &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1)
      out[i] = db;
    else if (db == 1)
      out[i] = da;
    else if (da == kDyn)
      out[i] = db;
    else if (db == kDyn || da == db)
      out[i] = da;
    else
      return failure();
  }
  return success();
}

int64_t v4f::windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                              int64_t padEnd, bool ceilMode) {
  if (in == kDyn) return kDyn;
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // ceil mode: the last window must start inside the input or left padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin) --out;
  return out;
}

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

static LogicalResult inferBinary(std::optional<Location> loc, ValueRange operands, SmallVectorImpl<Type> &inferred) {
  auto a = rankedOrNull(operands[0]), b = rankedOrNull(operands[1]);
  if (!a || !b) return emitOptionalError(loc, "operands must be ranked tensors");
  SmallVector<int64_t> shape;
  if (failed(broadcastShapes(a.getShape(), b.getShape(), shape)))
    return emitOptionalError(loc, "operand shapes are not broadcast-compatible");
  inferred.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

#define V4F_BINARY_IMPL(OP)                                                                                            \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands, DictionaryAttr,  \
                                     OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferred) {                 \
    return inferBinary(loc, operands, inferred);                                                                       \
  }                                                                                                                    \
  LogicalResult OP::verify() {                                                                                         \
    SmallVector<int64_t> shape;                                                                                        \
    if (failed(broadcastShapes(getLhs().getType().getShape(), getRhs().getType().getShape(), shape)))                  \
      return emitOpError("operand shapes are not broadcast-compatible");                                               \
    return success();                                                                                                  \
  }
V4F_BINARY_IMPL(AddOp)
V4F_BINARY_IMPL(SubOp)
V4F_BINARY_IMPL(MulOp)
V4F_BINARY_IMPL(DivOp)
#undef V4F_BINARY_IMPL

LogicalResult ClipOp::verify() {
  if (getMin().convertToFloat() > getMax().convertToFloat()) return emitOpError("min must not exceed max");
  return success();
}

//===----------------------------------------------------------------------===//
// Conv / MatMul
//===----------------------------------------------------------------------===//

static LogicalResult verifyWindowAttrs(Operation *op, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                                       ArrayRef<int64_t> pads) {
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return op->emitOpError("expects 2 strides, 2 dilations and 4 pads");
  for (int64_t s : strides)
    if (s <= 0) return op->emitOpError("strides must be positive");
  for (int64_t d : dilations)
    if (d <= 0) return op->emitOpError("dilations must be positive");
  for (int64_t p : pads)
    if (p < 0) return op->emitOpError("pads must be non-negative");
  return success();
}

static bool isKnownActivation(StringRef act) {
  return act == "none" || act == "relu" || act == "leaky_relu" || act == "clip" || act == "sigmoid" || act == "tanh" ||
         act == "hard_sigmoid" || act == "hard_swish" || act == "silu" || act == "gelu" || act == "gelu_tanh";
}

/// NCHW conv result type of `input` by an OIHW `weight`.
static LogicalResult inferConvType(std::optional<Location> loc, Value input, Value weight, ArrayRef<int64_t> s,
                                   ArrayRef<int64_t> d, ArrayRef<int64_t> p, SmallVectorImpl<Type> &inferred) {
  auto in = rankedOrNull(input), w = rankedOrNull(weight);
  if (!in || !w || in.getRank() != 4 || w.getRank() != 4)
    return emitOptionalError(loc, "conv expects rank-4 input and weight");
  if (s.size() != 2 || d.size() != 2 || p.size() != 4)
    return emitOptionalError(loc, "conv expects 2 strides, 2 dilations, 4 pads");
  SmallVector<int64_t> shape = {in.getDimSize(0), w.getDimSize(0)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(windowOutputSize(in.getDimSize(2 + i), w.getDimSize(2 + i), s[i], d[i], p[i], p[2 + i], false));
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                       DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                       SmallVectorImpl<Type> &inferred) {
  ConvOp::Adaptor adaptor(operands, attrs, props, regions);
  return inferConvType(loc, adaptor.getInput(), adaptor.getWeight(), adaptor.getStrides(), adaptor.getDilations(),
                       adaptor.getPads(), inferred);
}

LogicalResult ConvOp::verify() {
  if (failed(verifyWindowAttrs(*this, getStrides(), getDilations(), getPads()))) return failure();
  auto in = getInput().getType(), w = getWeight().getType();
  int64_t groups = getGroups();
  if (groups <= 0) return emitOpError("groups must be positive");
  if (!w.hasStaticShape()) return emitOpError("weight must have a static shape");
  if (w.getDimSize(0) % groups != 0)
    return emitOpError("output channels (") << w.getDimSize(0) << ") not divisible by groups (" << groups << ")";
  if (!in.isDynamicDim(1) && in.getDimSize(1) != w.getDimSize(1) * groups)
    return emitOpError("input channels (")
           << in.getDimSize(1) << ") != weight channels * groups (" << w.getDimSize(1) * groups << ")";
  if (getBias()) {
    auto b = llvm::cast<RankedTensorType>(getBias().getType());
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must have shape [") << w.getDimSize(0) << "]";
  }
  if (getResidual() && getResidual().getType() != getResult().getType())
    return emitOpError("residual must have the result type");
  if (!isKnownActivation(getActivation())) return emitOpError("unknown activation '") << getActivation() << "'";
  auto r = getResult().getType();
  for (int i = 2; i < 4; ++i)
    if (r.getDimSize(i) == 0) return emitOpError("pads, kernel and strides give an empty output");
  return success();
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                         DictionaryAttr, OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  auto a = rankedOrNull(operands[0]), b = rankedOrNull(operands[1]);
  if (!a || !b || a.getRank() < 2 || b.getRank() < 2)
    return emitOptionalError(loc, "matmul expects operands of rank >= 2");
  SmallVector<int64_t> batch;
  if (failed(broadcastShapes(a.getShape().drop_back(2), b.getShape().drop_back(2), batch)))
    return emitOptionalError(loc, "matmul batch dims are not broadcast-compatible");
  batch.push_back(a.getDimSize(a.getRank() - 2));
  batch.push_back(b.getDimSize(b.getRank() - 1));
  inferred.push_back(RankedTensorType::get(batch, a.getElementType()));
  return success();
}

LogicalResult MatMulOp::verify() {
  auto a = getLhs().getType(), b = getRhs().getType();
  int64_t ka = a.getDimSize(a.getRank() - 1), kb = b.getDimSize(b.getRank() - 2);
  if (ka != kDyn && kb != kDyn && ka != kb) return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  if (getBias()) {
    auto bias = llvm::cast<RankedTensorType>(getBias().getType());
    if (bias.getRank() != 1 || bias.getDimSize(0) != b.getDimSize(b.getRank() - 1))
      return emitOpError("bias must have shape [N]");
  }
  if (!isKnownActivation(getActivation())) return emitOpError("unknown activation '") << getActivation() << "'";
  return success();
}

/// [..., K] x [K, N] -> [..., N] with the lhs element type (the matmuls by a
/// quantized constant weight).
static LogicalResult inferByWeightMatMul(StringRef opName, std::optional<Location> loc, ValueRange operands,
                                         SmallVectorImpl<Type> &inferred) {
  auto a = rankedOrNull(operands[0]), b = rankedOrNull(operands[1]);
  if (!a || !b || a.getRank() < 2 || b.getRank() != 2)
    return emitOptionalError(loc, opName, " expects lhs of rank >= 2 and a rank-2 rhs");
  SmallVector<int64_t> shape(a.getShape());
  shape.back() = b.getDimSize(1);
  inferred.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

/// What the matmuls by a quantized weight share: a static rank-2 rhs [K, N]
/// whose K is the lhs's last dim, a [N] bias, a known activation.
template <typename OpT>
static LogicalResult verifyByWeightMatMul(OpT op, int64_t &K, int64_t &N) {
  auto a = op.getLhs().getType();
  auto b = llvm::cast<RankedTensorType>(op.getRhs().getType());
  if (!b.hasStaticShape()) return op.emitOpError("rhs must have a static shape");
  int64_t ka = a.getDimSize(a.getRank() - 1);
  K = b.getDimSize(0);
  N = b.getDimSize(1);
  if (ka != kDyn && ka != K) return op.emitOpError("contraction dims differ: ") << ka << " vs " << K;
  if (op.getBias()) {
    auto bias = llvm::cast<RankedTensorType>(op.getBias().getType());
    if (bias.getRank() != 1 || bias.getDimSize(0) != N) return op.emitOpError("bias must have shape [N]");
  }
  if (!isKnownActivation(op.getActivation()))
    return op.emitOpError("unknown activation '") << op.getActivation() << "'";
  return success();
}

LogicalResult QuantizedMatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                                  DictionaryAttr, OpaqueProperties, RegionRange,
                                                  SmallVectorImpl<Type> &inferred) {
  return inferByWeightMatMul("quantized_matmul", loc, operands, inferred);
}

LogicalResult QuantizedMatMulOp::verify() {
  int64_t K, N;
  if (failed(verifyByWeightMatMul(*this, K, N))) return failure();
  auto scale = getRhsScale().getType();
  if (scale.getRank() != 1 || scale.getDimSize(0) != N) return emitOpError("rhs_scale must have shape [N]");
  if (getActQuant() != "dynamic" && getActQuant() != "static")
    return emitOpError("act_quant must be \"dynamic\" or \"static\", not '") << getActQuant() << "'";
  if (getActQuant() == "static") {
    float s = getActScale().convertToFloat();
    if (!(s > 0.f) || !std::isfinite(s)) return emitOpError("act_scale must be positive and finite");
    if (int32_t(getActZeroPoint()) < -128 || int32_t(getActZeroPoint()) > 127)
      return emitOpError("act_zero_point must be in [-128, 127]");
  }
  return success();
}

LogicalResult QuantizedConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                                DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                                SmallVectorImpl<Type> &inferred) {
  QuantizedConvOp::Adaptor adaptor(operands, attrs, props, regions);
  if (failed(inferConvType(loc, adaptor.getInput(), adaptor.getWeight(), adaptor.getStrides(), adaptor.getDilations(),
                           adaptor.getPads(), inferred)))
    return failure();
  // Float result, or int8 when requantized (out_scale).
  auto t = llvm::cast<RankedTensorType>(inferred.back());
  Builder b(t.getContext());
  inferred.back() = RankedTensorType::get(t.getShape(), adaptor.getOutScale() ? Type(b.getI8Type()) : b.getF32Type());
  return success();
}

LogicalResult QuantizedConvOp::verify() {
  if (failed(verifyWindowAttrs(*this, getStrides(), getDilations(), getPads()))) return failure();
  auto in = getInput().getType(), w = getWeight().getType();
  if (!w.hasStaticShape() || w.getRank() != 4) return emitOpError("weight must be a static rank-4 tensor");
  int64_t O = w.getDimSize(0);
  if (!in.isDynamicDim(1) && in.getDimSize(1) != w.getDimSize(1))
    return emitOpError("input channels (") << in.getDimSize(1) << ") != weight channels (" << w.getDimSize(1) << ")";
  auto scale = getWeightScale().getType();
  if (scale.getRank() != 1 || scale.getDimSize(0) != O)
    return emitOpError("weight_scale must have shape [") << O << "]";
  if (getBias()) {
    auto b = llvm::cast<RankedTensorType>(getBias().getType());
    if (b.getRank() != 1 || b.getDimSize(0) != O) return emitOpError("bias must have shape [") << O << "]";
  }
  if (getResidual() && getResidual().getType().getShape() != getResult().getType().getShape())
    return emitOpError("residual must have the result's shape");
  if (getResidual() &&
      llvm::cast<RankedTensorType>(getResidual().getType()).getElementType().isInteger(8) != bool(getResidualScale()))
    return emitOpError("the residual is int8 exactly when residual_scale is set");
  if (!getResidual() && getResidualScale()) return emitOpError("residual_scale without a residual");
  if (auto rs = getResidualScale()) {
    float v = rs->convertToFloat();
    if (!(v > 0.f) || !std::isfinite(v)) return emitOpError("residual_scale must be positive and finite");
    if (int32_t(getResidualZeroPoint()) < -128 || int32_t(getResidualZeroPoint()) > 127)
      return emitOpError("residual_zero_point must be in [-128, 127]");
  }
  if (getOutScale()) {
    float os = getOutScale()->convertToFloat();
    if (!(os > 0.f) || !std::isfinite(os)) return emitOpError("out_scale must be positive and finite");
    if (int32_t(getOutZeroPoint()) < -128 || int32_t(getOutZeroPoint()) > 127)
      return emitOpError("out_zero_point must be in [-128, 127]");
  }
  if (getResult().getType().getElementType().isInteger(8) != bool(getOutScale()))
    return emitOpError("the result is int8 exactly when out_scale is set");
  float s = getActScale().convertToFloat();
  if (!(s > 0.f) || !std::isfinite(s)) return emitOpError("act_scale must be positive and finite");
  if (int32_t(getActZeroPoint()) < -128 || int32_t(getActZeroPoint()) > 127)
    return emitOpError("act_zero_point must be in [-128, 127]");
  if (!isKnownActivation(getActivation())) return emitOpError("unknown activation '") << getActivation() << "'";
  for (int i = 2; i < 4; ++i)
    if (getResult().getType().getDimSize(i) == 0) return emitOpError("pads, kernel and strides give an empty output");
  return success();
}

LogicalResult IntegerMatMulOp::verify() {
  auto a = getLhs().getType(), b = getRhs().getType(), y = getResult().getType();
  if (a.getRank() < 2) return emitOpError("lhs must have rank >= 2");
  if (b.getRank() != 2 || !b.hasStaticShape()) return emitOpError("rhs must be a static [K, N]");
  int64_t K = b.getDimSize(0), N = b.getDimSize(1);
  if (!a.isDynamicDim(a.getRank() - 1) && a.getDimSize(a.getRank() - 1) != K)
    return emitOpError("contraction dims differ: ") << a.getDimSize(a.getRank() - 1) << " vs " << K;
  if (y.getRank() != a.getRank() || y.getDimSize(y.getRank() - 1) != N)
    return emitOpError("result must be lhs's shape with the last dim N = ") << N;
  for (int64_t i = 0; i + 1 < a.getRank(); ++i)
    if (!a.isDynamicDim(i) && !y.isDynamicDim(i) && a.getDimSize(i) != y.getDimSize(i))
      return emitOpError("result dim ") << i << " differs from lhs's";
  if (auto z = getLhsZeroPoint()) {
    auto t = llvm::cast<RankedTensorType>(z.getType());
    if (!t.hasStaticShape() || t.getNumElements() != 1 || t.getElementType() != a.getElementType())
      return emitOpError("lhs_zero_point must be one value of lhs's element type");
  }
  if (auto z = getRhsZeroPoint()) {
    auto t = llvm::cast<RankedTensorType>(z.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != N) return emitOpError("rhs_zero_point must have shape [N]");
  }
  return success();
}

LogicalResult Int4MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                             DictionaryAttr, OpaqueProperties, RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  return inferByWeightMatMul("int4_matmul", loc, operands, inferred);
}

LogicalResult Int4MatMulOp::verify() {
  int64_t K, N;
  if (failed(verifyByWeightMatMul(*this, K, N))) return failure();
  int64_t group = getGroupSize();
  if (group < 1) return emitOpError("group_size must be positive, not ") << group;
  auto scale = getRhsScale().getType();
  if (scale.getRank() != 2 || scale.getDimSize(0) != (K + group - 1) / group || scale.getDimSize(1) != N)
    return emitOpError("rhs_scale must have shape [ceil(K / group_size), N] = [")
           << (K + group - 1) / group << ", " << N << "]";
  if (getRhsZeroPoint() && getRhsZeroPoint().getType().getShape() != scale.getShape())
    return emitOpError("rhs_zero_point must have the shape of rhs_scale");
  if (getInt8Activations() && getRhsZeroPoint())
    return emitOpError("int8_activations (w4a8) takes symmetric groups: no rhs_zero_point");
  if (getInt8Activations() && group % 4 != 0)
    return emitOpError("int8_activations (w4a8) needs group_size a multiple of 4, not ") << group;
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto in = getInput().getType();
  if (in.getRank() < 2) return emitOpError("input must have rank >= 2");
  for (Value v : {getScale(), getBias(), getMean(), getVariance()}) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || (!in.isDynamicDim(1) && t.getDimSize(0) != in.getDimSize(1)))
      return emitOpError("scale, bias, mean and variance must have shape [C]");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling, reductions, normalization
//===----------------------------------------------------------------------===//

template <typename PoolOp>
static LogicalResult inferPool(std::optional<Location> loc, ValueRange operands, DictionaryAttr attrs,
                               OpaqueProperties props, RegionRange regions, SmallVectorImpl<Type> &inferred) {
  typename PoolOp::Adaptor adaptor(operands, attrs, props, regions);
  auto in = rankedOrNull(adaptor.getInput());
  if (!in || in.getRank() != 4) return emitOptionalError(loc, "pool expects a rank-4 input");
  auto k = adaptor.getKernelShape(), s = adaptor.getStrides(), d = adaptor.getDilations(), p = adaptor.getPads();
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4)
    return emitOptionalError(loc, "pool expects 2 kernel dims, 2 strides, 2 dilations, 4 pads");
  SmallVector<int64_t> shape = {in.getDimSize(0), in.getDimSize(1)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(windowOutputSize(in.getDimSize(2 + i), k[i], s[i], d[i], p[i], p[2 + i], adaptor.getCeilMode()));
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  if (failed(verifyWindowAttrs(op, op.getStrides(), op.getDilations(), op.getPads()))) return failure();
  for (int64_t k : op.getKernelShape())
    if (k <= 0) return op.emitOpError("kernel_shape must be positive");
  auto k = op.getKernelShape();
  auto p = op.getPads();
  for (int i = 0; i < 2; ++i)
    if (p[i] >= k[i] || p[2 + i] >= k[i]) return op.emitOpError("pads must be smaller than the kernel");
  for (int i = 2; i < 4; ++i)
    if (op.getResult().getType().getDimSize(i) == 0)
      return op.emitOpError("pads, kernel and strides give an empty output");
  Type elem = op.getInput().getType().getElementType();
  if (elem != op.getResult().getType().getElementType()) return op.emitOpError("input and result element types differ");
  if (!elem.isF32() && !isa<MaxPoolOp>(op.getOperation())) return op.emitOpError("pools float32 values only");
  return success();
}

#define V4F_POOL_IMPL(OP)                                                                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,                  \
                                     DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,                \
                                     SmallVectorImpl<Type> &inferred) {                                                \
    return inferPool<OP>(loc, operands, attrs, props, regions, inferred);                                              \
  }                                                                                                                    \
  LogicalResult OP::verify() { return verifyPool(*this); }
V4F_POOL_IMPL(MaxPoolOp)
V4F_POOL_IMPL(AvgPoolOp)
#undef V4F_POOL_IMPL

LogicalResult ReduceMeanOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                             DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                             SmallVectorImpl<Type> &inferred) {
  ReduceMeanOp::Adaptor adaptor(operands, attrs, props, regions);
  auto in = rankedOrNull(adaptor.getInput());
  if (!in) return emitOptionalError(loc, "reduce_mean expects a ranked input");
  SmallVector<int64_t> shape;
  auto axes = adaptor.getAxes();
  for (int64_t i = 0; i < in.getRank(); ++i) {
    bool reduced = llvm::is_contained(axes, i);
    if (!reduced)
      shape.push_back(in.getDimSize(i));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult ReduceMeanOp::verify() {
  int64_t rank = getInput().getType().getRank(), prev = -1;
  for (int64_t a : getAxes()) {
    if (a < 0 || a >= rank) return emitOpError("axis ") << a << " out of range for rank " << rank;
    if (a <= prev) return emitOpError("axes must be sorted and unique");
    prev = a;
  }
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (getMode() != "softmax" && getMode() != "log_softmax" && getMode() != "hardmax")
    return emitOpError("mode must be softmax, log_softmax or hardmax");
  int64_t rank = getInput().getType().getRank();
  if (getAxis() < 0 || getAxis() >= rank) return emitOpError("axis ") << getAxis() << " out of range for rank " << rank;
  bool scaled = getScale().convertToFloat() != 1.f;
  if ((getMask() || scaled || getNanToZero()) && (getMode() != "softmax" || getAxis() != rank - 1))
    return emitOpError("a scale, mask or nan_to_zero needs mode softmax along the last axis");
  if (auto m = getMask()) {
    auto mt = llvm::cast<RankedTensorType>(m.getType());
    auto in = getInput().getType();
    if (mt.getRank() > rank) return emitOpError("mask has a higher rank than the input");
    for (int64_t i = 0; i < mt.getRank(); ++i) {
      int64_t md = mt.getDimSize(mt.getRank() - 1 - i), xd = in.getDimSize(rank - 1 - i);
      if (md != 1 && md != kDyn && xd != kDyn && md != xd)
        return emitOpError("mask dim ") << md << " does not broadcast to " << xd;
    }
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto in = getInput().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in.getRank())
    return emitOpError("axis ") << axis << " out of range for rank " << in.getRank();
  auto trailing = in.getShape().drop_front(axis);
  for (Value v : {getScale(), getBias()}) {
    if (!v) continue;
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape()) return emitOpError("scale and bias must be static");
    SmallVector<int64_t> b;
    if (t.getRank() > (int64_t)trailing.size() || failed(broadcastShapes(trailing, t.getShape(), b)) ||
        ArrayRef<int64_t>(b) != trailing)
      return emitOpError("scale and bias must broadcast to the normalized dims");
  }
  if (getResult().getType() != in) return emitOpError("result type must match input");
  return success();
}

#define GET_OP_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOps.cpp.inc"
