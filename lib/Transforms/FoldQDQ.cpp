//===- FoldQDQ.cpp - v4f-fold-qdq ------------------------------------------===//
//
// Exporters and ONNX Runtime's quantizer write an int8 matmul as float ops
// between QuantizeLinear / DequantizeLinear pairs ("QDQ"):
//
//   x -> QuantizeLinear(s, zp) -> DequantizeLinear(s, zp) --.
//                                                            MatMul -> ...
//   W_q (int8) -> DequantizeLinear(s_w, 0) -----------------'
//
// Run as written (v4f-decompose-quantization) that is float arithmetic on
// rounded values. This pass rewrites the pattern into the integer kernel
// that computes the same thing: v4f.quantized_matmul with act_quant =
// "static", act_scale = s, the zero point (a uint8 zero point zp becomes
// zp - 128: the kernel's int8 value is the uint8 one minus 128, and q - zp
// is unchanged), the int8 weight and its per-tensor or per-column scales.
// What follows the matmul (its own QuantizeLinear, a bias Add) stays as
// written. A convolution written the same way (groups 1, static input
// height and width, an int8 OIHW weight quantized per tensor or per output
// channel) becomes v4f.quantized_conv likewise, its bias (a float value,
// often the DequantizeLinear of an int32 constant) kept as the bias operand.
// The contract is in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_FOLDQDQ
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// All values of a float32 constant, or nothing.
std::optional<std::vector<float>> floatConstant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32()) return std::nullopt;
  return floatValues(attr);
}

/// All values of an integer constant (0 for an absent zero point), or nothing.
std::optional<std::vector<int64_t>> intConstant(Value v, int64_t absentCount = 1) {
  if (!v) return std::vector<int64_t>(size_t(absentCount), 0);
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isInteger()) return std::nullopt;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  std::vector<int64_t> out;
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(isUnsigned ? int64_t(x.getZExtValue()) : x.getSExtValue());
  return out;
}

/// The activation side of the pattern: `v` is DequantizeLinear(
/// QuantizeLinear(x)) with one scale and zero point, the same in both, to an
/// 8-bit integer; returns x with the scale and the int8 zero point.
std::optional<std::tuple<Value, float, int32_t>> matchActivationQDQ(Value v) {
  auto dq = v.getDefiningOp<DequantizeOp>();
  if (!dq || dq.getBlockSize()) return std::nullopt;
  auto q = dq.getInput().getDefiningOp<QuantizeOp>();
  if (!q || q.getBlockSize() || q.getPrecision()) return std::nullopt;
  auto xType = llvm::dyn_cast<RankedTensorType>(q.getInput().getType());
  auto qType = llvm::cast<ShapedType>(q.getType()).getElementType();
  if (!xType || !xType.getElementType().isF32() || !qType.isInteger(8)) return std::nullopt;
  auto s = floatConstant(q.getScale()), s2 = floatConstant(dq.getScale());
  auto z = intConstant(q.getZeroPoint()), z2 = intConstant(dq.getZeroPoint());
  if (!s || !s2 || !z || !z2 || s->size() != 1 || *s != *s2 || z->size() != 1 || *z != *z2) return std::nullopt;
  float scale = s->front();
  if (!(scale > 0.f) || !std::isfinite(scale)) return std::nullopt;
  int64_t zp = z->front() - (qType.isUnsignedInteger() ? 128 : 0);
  if (zp < -128 || zp > 127) return std::nullopt;
  return std::make_tuple(q.getInput(), scale, int32_t(zp));
}

/// A constant signed int8 weight of rank `rank` with zero point 0 and one
/// scale or one per output channel (dim `channelDim`; for a DequantizeLinear
/// its `axis` must name that dim): the scale of every output channel.
std::optional<std::vector<float>> int8WeightScales(Value w, Value scaleV, Value zpV, int64_t rank, int64_t channelDim,
                                                   std::optional<int64_t> axis = std::nullopt) {
  auto wType = llvm::dyn_cast<RankedTensorType>(w.getType());
  if (!wType || wType.getRank() != rank || !wType.hasStaticShape() || !wType.getElementType().isSignlessInteger(8) ||
      !matchPattern(w, m_Constant()))
    return std::nullopt;
  int64_t channels = wType.getDimSize(channelDim);
  auto ws = floatConstant(scaleV);
  auto wz = intConstant(zpV);
  if (!ws || !wz || llvm::any_of(*wz, [](int64_t v) { return v != 0; })) return std::nullopt;
  if (ws->size() != 1 && !(int64_t(ws->size()) == channels && (!axis || *axis == channelDim))) return std::nullopt;
  std::vector<float> scales(size_t(channels), ws->front());
  if (ws->size() != 1) scales = *ws;
  for (float v : scales)
    if (!std::isfinite(v)) return std::nullopt;
  return scales;
}

/// A float32 [N] constant holding `values`.
Value f32Constant(PatternRewriter &rewriter, Location loc, ArrayRef<float> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, rewriter.getF32Type());
  return rewriter.create<arith::ConstantOp>(loc, type, DenseElementsAttr::get(type, values));
}

struct FoldQDQConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv, PatternRewriter &rewriter) const override {
    if (conv.getGroups() != 1 || conv.getResidual()) return failure();
    auto act = matchActivationQDQ(conv.getInput());
    auto dqW = conv.getWeight().getDefiningOp<DequantizeOp>();
    if (!act || !dqW || dqW.getBlockSize()) return failure();
    auto [x, scale, zp] = *act;
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    if (xType.getRank() != 4 || xType.isDynamicDim(1) || xType.isDynamicDim(2) || xType.isDynamicDim(3))
      return failure();
    auto channelScale = int8WeightScales(dqW.getInput(), dqW.getScale(), dqW.getZeroPoint(), 4, 0, dqW.getAxis());
    if (!channelScale) return failure();
    Value scales = f32Constant(rewriter, conv.getLoc(), *channelScale);
    rewriter.replaceOpWithNewOp<QuantizedConvOp>(
        conv, conv.getType(), x, dqW.getInput(), scales, conv.getBias(), Value(), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr(), rewriter.getF32FloatAttr(scale), rewriter.getI32IntegerAttr(zp),
        FloatAttr(), rewriter.getI32IntegerAttr(0), FloatAttr(), rewriter.getI32IntegerAttr(0),
        conv.getActivationAttr(), conv.getActAlphaAttr(), conv.getActBetaAttr());
    return success();
  }
};

struct FoldQDQMatMul : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp mm, PatternRewriter &rewriter) const override {
    if (mm.getBias() || mm.getActivation() != "none") return failure();
    auto dqW = mm.getRhs().getDefiningOp<DequantizeOp>();
    // Gemm with transB decomposes to a transpose of the dequantized weight.
    bool transposed = false;
    if (auto t = mm.getRhs().getDefiningOp<TransposeOp>()) {
      if (t.getPerm().size() == 2 && t.getPerm()[0] == 1 && t.getPerm()[1] == 0) {
        dqW = t.getInput().getDefiningOp<DequantizeOp>();
        transposed = true;
      }
    }
    auto act = matchActivationQDQ(mm.getLhs());
    if (!act || !dqW || dqW.getBlockSize()) return failure();
    auto [x, scale, zp] = *act;
    if (llvm::cast<RankedTensorType>(x.getType()).getRank() < 2 ||
        !llvm::cast<ShapedType>(mm.getType()).getElementType().isF32())
      return failure();
    // The weight: a signed int8 [K, N] constant (stored [N, K] under the
    // transpose) with zero point 0 and one scale, or one per column.
    auto colScale =
        int8WeightScales(dqW.getInput(), dqW.getScale(), dqW.getZeroPoint(), 2, transposed ? 0 : 1, dqW.getAxis());
    if (!colScale) return failure();
    DenseElementsAttr weight;
    matchPattern(dqW.getInput(), m_Constant(&weight));
    auto wType = llvm::cast<RankedTensorType>(dqW.getInput().getType());
    int64_t N = wType.getDimSize(transposed ? 0 : 1), K = wType.getDimSize(transposed ? 1 : 0);
    Value w = dqW.getInput();
    if (transposed) {
      std::vector<int8_t> values = int8Values(weight);
      std::vector<int8_t> kn(values.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) kn[size_t(k * N + n)] = values[size_t(n * K + k)];
      auto knType = RankedTensorType::get({K, N}, wType.getElementType());
      w = rewriter.create<arith::ConstantOp>(mm.getLoc(), knType, DenseElementsAttr::get(knType, llvm::ArrayRef(kn)));
    }
    Value scales = f32Constant(rewriter, mm.getLoc(), *colScale);
    rewriter.replaceOpWithNewOp<QuantizedMatMulOp>(
        mm, mm.getType(), x, w, scales, Value(), rewriter.getStringAttr("static"), rewriter.getF32FloatAttr(scale),
        rewriter.getI32IntegerAttr(int32_t(zp)), mm.getActivationAttr(), mm.getActAlphaAttr(), mm.getActBetaAttr());
    return success();
  }
};

/// The activation of a QLinear op: an 8-bit integer tensor with one constant
/// scale and zero point. Returns its float value (a v4f.dequantize, exact:
/// (a - zp) * s), the scale and the kernel's int8 zero point.
std::optional<std::tuple<Value, float, int32_t>> qlinearActivation(PatternRewriter &rewriter, Location loc, Value a,
                                                                   Value scaleV, Value zpV) {
  auto aType = llvm::dyn_cast<RankedTensorType>(a.getType());
  if (!aType || !aType.getElementType().isInteger(8)) return std::nullopt;
  auto s = floatConstant(scaleV);
  auto z = intConstant(zpV);
  if (!s || !z || s->size() != 1 || z->size() != 1) return std::nullopt;
  float scale = s->front();
  if (!(scale > 0.f) || !std::isfinite(scale)) return std::nullopt;
  int64_t zp = z->front() - (aType.getElementType().isUnsignedInteger() ? 128 : 0);
  auto fType = RankedTensorType::get(aType.getShape(), rewriter.getF32Type());
  Value x = rewriter.create<DequantizeOp>(loc, fType, a, scaleV, zpV, rewriter.getI64IntegerAttr(0),
                                          rewriter.getI64IntegerAttr(0));
  return std::make_tuple(x, scale, int32_t(zp));
}

/// Requantizes the float result `y` like the QLinear op `op` (y_scale,
/// y_zero_point, the result's 8-bit type).
Value requantize(PatternRewriter &rewriter, Operation *op, Value y, Value yScale, Value yZeroPoint) {
  return rewriter.create<QuantizeOp>(op->getLoc(), op->getResult(0).getType(), y, yScale, yZeroPoint,
                                     rewriter.getI64IntegerAttr(0), rewriter.getI64IntegerAttr(0),
                                     rewriter.getBoolAttr(true), TypeAttr());
}

/// QLinearMatMul with a constant int8 [K, N] weight (zero point 0): the int8
/// GEMM on the dequantized activation, then QuantizeLinear to the output's
/// scale and zero point. The integer sum is exact; the requantization is
/// float32 (`acc * (s_a s_b)`, then `/ s_y`) instead of the float64 of the
/// reference, which can move a value at a rounding tie by one step.
struct FoldQLinearMatMul : OpRewritePattern<QLinearMatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QLinearMatMulOp op, PatternRewriter &rewriter) const override {
    auto bType = llvm::dyn_cast<RankedTensorType>(op.getB().getType());
    auto aType = llvm::dyn_cast<RankedTensorType>(op.getA().getType());
    auto yType = llvm::dyn_cast<RankedTensorType>(op.getType());
    if (!bType || bType.getRank() != 2 || !aType || aType.getRank() < 2 || !yType ||
        !yType.getElementType().isInteger(8) || !floatConstant(op.getYScale()) ||
        (op.getYZeroPoint() && !intConstant(op.getYZeroPoint())))
      return failure();
    auto scales = int8WeightScales(op.getB(), op.getBScale(), op.getBZeroPoint(), 2, 1);
    if (!scales) return failure();
    auto act = qlinearActivation(rewriter, op.getLoc(), op.getA(), op.getAScale(), op.getAZeroPoint());
    if (!act) return failure();
    auto [x, scale, zp] = *act;
    Value s = f32Constant(rewriter, op.getLoc(), *scales);
    auto fType = RankedTensorType::get(yType.getShape(), rewriter.getF32Type());
    Value y = rewriter.create<QuantizedMatMulOp>(op.getLoc(), fType, x, op.getB(), s, Value(),
                                                 rewriter.getStringAttr("static"), rewriter.getF32FloatAttr(scale),
                                                 rewriter.getI32IntegerAttr(zp), rewriter.getStringAttr("none"),
                                                 rewriter.getF32FloatAttr(0.f), rewriter.getF32FloatAttr(0.f));
    rewriter.replaceOp(op, requantize(rewriter, op, y, op.getYScale(), op.getYZeroPoint()));
    return success();
  }
};

/// QLinearConv (group 1, static input H/W) with a constant int8 OIHW weight
/// (zero point 0): v4f.quantized_conv on the dequantized input, its int32
/// bias as the float bias `bias * s_x * s_w[o]`, then QuantizeLinear.
struct FoldQLinearConv : OpRewritePattern<QLinearConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QLinearConvOp op, PatternRewriter &rewriter) const override {
    auto xType = llvm::dyn_cast<RankedTensorType>(op.getX().getType());
    auto wType = llvm::dyn_cast<RankedTensorType>(op.getW().getType());
    auto yType = llvm::dyn_cast<RankedTensorType>(op.getType());
    if (op.getGroup() != 1 || !xType || xType.getRank() != 4 || xType.isDynamicDim(1) || xType.isDynamicDim(2) ||
        xType.isDynamicDim(3) || !wType || wType.getRank() != 4 || !yType || !yType.getElementType().isInteger(8) ||
        !floatConstant(op.getYScale()) || (op.getYZeroPoint() && !intConstant(op.getYZeroPoint())))
      return failure();
    int64_t O = wType.getDimSize(0);
    auto scales = int8WeightScales(op.getW(), op.getWScale(), op.getWZeroPoint(), 4, 0);
    if (!scales) return failure();
    // The bias: an int32 [O] constant, or none.
    std::optional<std::vector<int64_t>> bias;
    if (op.getBias()) {
      bias = intConstant(op.getBias());
      if (!bias || int64_t(bias->size()) != O) return failure();
    }
    auto act = qlinearActivation(rewriter, op.getLoc(), op.getX(), op.getXScale(), op.getXZeroPoint());
    if (!act) return failure();
    auto [x, scale, zp] = *act;
    Location loc = op.getLoc();
    Value s = f32Constant(rewriter, loc, *scales);
    Value biasF;
    if (bias) {
      std::vector<float> b(static_cast<size_t>(O));
      for (int64_t o = 0; o < O; ++o) b[o] = float(double((*bias)[o]) * double(scale) * double((*scales)[o]));
      biasF = f32Constant(rewriter, loc, b);
    }
    auto fType = RankedTensorType::get(yType.getShape(), rewriter.getF32Type());
    Value y = rewriter.create<QuantizedConvOp>(
        loc, fType, x, op.getW(), s, biasF, Value(), op.getStridesAttr(), op.getDilationsAttr(), op.getPadsAttr(),
        rewriter.getF32FloatAttr(scale), rewriter.getI32IntegerAttr(zp), FloatAttr(), rewriter.getI32IntegerAttr(0),
        FloatAttr(), rewriter.getI32IntegerAttr(0), rewriter.getStringAttr("none"), rewriter.getF32FloatAttr(0.f),
        rewriter.getF32FloatAttr(0.f));
    rewriter.replaceOp(op, requantize(rewriter, op, y, op.getYScale(), op.getYZeroPoint()));
    return success();
  }
};

/// MatMulInteger (what ORT's quantize_dynamic writes: DynamicQuantizeLinear
/// -> MatMulInteger -> Cast -> Mul by the scales) with a constant 8-bit
/// [K, N] weight, one lhs zero point (or none) and one weight zero point or
/// one per column: the exact integer GEMM. A uint8 weight becomes w - 128
/// with zero points zp - 128 (the differences are unchanged).
struct FoldMatMulInteger : OpRewritePattern<MatMulIntegerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulIntegerOp op, PatternRewriter &rewriter) const override {
    auto aType = llvm::dyn_cast<RankedTensorType>(op.getA().getType());
    auto bType = llvm::dyn_cast<RankedTensorType>(op.getB().getType());
    auto yType = llvm::dyn_cast<RankedTensorType>(op.getType());
    if (!aType || !bType || !yType || aType.getRank() < 2 || bType.getRank() != 2 || !bType.hasStaticShape() ||
        !aType.getElementType().isInteger(8) || !bType.getElementType().isInteger(8) ||
        yType.getRank() != aType.getRank())
      return failure();
    DenseElementsAttr wAttr;
    if (!matchPattern(op.getB(), m_Constant(&wAttr))) return failure();
    int64_t K = bType.getDimSize(0), N = bType.getDimSize(1);
    Value za = op.getAZeroPoint();
    if (za) {
      auto t = llvm::dyn_cast<RankedTensorType>(za.getType());
      if (!t || !t.hasStaticShape() || t.getNumElements() != 1 || t.getElementType() != aType.getElementType())
        return failure();
    }
    auto zb = intConstant(op.getBZeroPoint());
    if (!zb || (zb->size() != 1 && int64_t(zb->size()) != N)) return failure();
    bool unsignedW = bType.getElementType().isUnsignedInteger();
    std::vector<int8_t> w;
    w.reserve(size_t(K * N));
    for (const APInt &x : wAttr.getValues<APInt>())
      w.push_back(int8_t(unsignedW ? int64_t(x.getZExtValue()) - 128 : x.getSExtValue()));
    std::vector<int32_t> zpw(static_cast<size_t>(N), 0);
    bool anyZp = false;
    for (int64_t n = 0; n < N; ++n) {
      zpw[n] = int32_t((*zb)[zb->size() == 1 ? 0 : n] - (unsignedW ? 128 : 0));
      anyZp |= zpw[n] != 0;
    }
    Location loc = op.getLoc();
    auto wType = RankedTensorType::get({K, N}, rewriter.getI8Type());
    Value wq = rewriter.create<arith::ConstantOp>(loc, wType, DenseElementsAttr::get(wType, ArrayRef<int8_t>(w)));
    Value zq;
    if (anyZp) {
      auto zType = RankedTensorType::get({N}, rewriter.getI32Type());
      zq = rewriter.create<arith::ConstantOp>(loc, zType, DenseElementsAttr::get(zType, ArrayRef<int32_t>(zpw)));
    }
    rewriter.replaceOpWithNewOp<IntegerMatMulOp>(op, yType, op.getA(), wq, za, zq);
    return success();
  }
};

/// DequantizeLinear of a constant (what ORT's quantizer writes for biases
/// and the scales of elementwise ops: an int32 or int8 constant with its
/// scale) is a float32 constant, not a dispatch every run: `(x - zp) * s`
/// computed as the kernel would (the integer difference exact, converted to
/// float32, times the float32 scale). Per tensor or per axis; blocked ones
/// and tensors over kMaxFoldedElements (a weight left to dequantize stays
/// 8-bit in the artifact) are left as written.
struct FoldConstantDequantize : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kMaxFoldedElements = 65536;

  LogicalResult matchAndRewrite(DequantizeOp op, PatternRewriter &rewriter) const override {
    auto yType = llvm::dyn_cast<RankedTensorType>(op.getType());
    auto xType = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!yType || !xType || !yType.getElementType().isF32() || !xType.hasStaticShape() || op.getBlockSize() ||
        xType.getNumElements() > kMaxFoldedElements)
      return failure();
    Type xe = xType.getElementType();
    if (!xe.isInteger(8) && !xe.isInteger(16) && !xe.isInteger(32)) return failure();
    auto x = intConstant(op.getInput(), 0);
    auto scale = floatConstant(op.getScale());
    auto zp = intConstant(op.getZeroPoint(), scale ? int64_t(scale->size()) : 1);
    if (!x || x->size() != size_t(xType.getNumElements()) || !scale || !zp || zp->size() != scale->size())
      return failure();
    int64_t rank = xType.getRank();
    int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
    int64_t inner = 1, dim = 1;
    if (scale->size() != 1) {
      if (axis < 0 || axis >= rank || int64_t(scale->size()) != xType.getDimSize(axis)) return failure();
      dim = xType.getDimSize(axis);
      for (int64_t d = axis + 1; d < rank; ++d) inner *= xType.getDimSize(d);
    }
    std::vector<float> y(x->size());
    for (size_t i = 0; i < y.size(); ++i) {
      size_t c = scale->size() == 1 ? 0 : size_t((int64_t(i) / inner) % dim);
      y[i] = float((*x)[i] - (*zp)[c]) * (*scale)[c];
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, yType, DenseElementsAttr::get(yType, ArrayRef<float>(y)));
    return success();
  }
};

struct FoldQDQPass : impl::FoldQDQBase<FoldQDQPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldQDQMatMul, FoldQDQConv, FoldQLinearMatMul, FoldQLinearConv, FoldMatMulInteger>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) return signalPassFailure();
    // Then the dequantized constants the integer kernels did not take.
    RewritePatternSet constants(&getContext());
    constants.add<FoldConstantDequantize>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(constants)))) return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFoldQDQPass() { return std::make_unique<FoldQDQPass>(); }

} // namespace v4f
