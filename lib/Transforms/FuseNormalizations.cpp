//===- FuseNormalizations.cpp - LayerNorm as exporters write it -> v4f.layer_norm ===//
//
// Exporters (torch.onnx before opset 17, TF2ONNX, hand-written graphs) spell
// LayerNorm as ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul /
// Add. Each piece is its own dispatch over the whole tensor; v4f.layer_norm
// is one pass over each row (ReductionKernels.cpp).
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_FUSENORMALIZATIONS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// The op of type T defining `v`, when `v` has exactly one use.
template <typename T>
T singleUse(Value v) {
  if (!v || !v.hasOneUse()) return nullptr;
  return v.getDefiningOp<T>();
}

/// The only user of `v`, when it is of type T.
template <typename T>
T soleUser(Value v) {
  if (!v.hasOneUse()) return nullptr;
  return llvm::dyn_cast<T>(*v.getUsers().begin());
}

/// The float32 value of a one-element constant.
std::optional<float> scalarConstant(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32() || attr.getNumElements() != 1)
    return std::nullopt;
  return *attr.getValues<float>().begin();
}

/// The first normalized axis when `mean` averages the trailing axes of its
/// input with keepdims; nullopt otherwise.
std::optional<int64_t> trailingAxes(ReduceMeanOp mean) {
  auto type = llvm::cast<RankedTensorType>(mean.getInput().getType());
  ArrayRef<int64_t> axes = mean.getAxes();
  if (!mean.getKeepdims() || axes.empty()) return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != type.getRank() - int64_t(axes.size()) + int64_t(i)) return std::nullopt;
  return axes.front();
}

/// A constant that broadcasts to (and only over) the normalized dims
/// `trailing`, usable as v4f.layer_norm's scale or bias.
bool isAffineParameter(Value v, ArrayRef<int64_t> trailing) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32()) return false;
  auto type = llvm::cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> out;
  return type.getRank() <= int64_t(trailing.size()) && succeeded(broadcastShapes(trailing, type.getShape(), out)) &&
         ArrayRef<int64_t>(out) == trailing;
}

/// Matches from the Div: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps),
/// then an optional `* scale` and `+ bias` of constants over the normalized
/// dims. The square is a `v4f.mul d, d` (Pow by 2 canonicalizes to it).
struct FuseLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div, PatternRewriter &rewriter) const override {
    auto sub = div.getLhs().getDefiningOp<SubOp>();
    auto sqrt = singleUse<SqrtOp>(div.getRhs());
    if (!sub || !sqrt) return failure();
    auto mean = singleUse<ReduceMeanOp>(sub.getRhs());
    if (!mean || mean.getInput() != sub.getLhs()) return failure();
    Value x = sub.getLhs();
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    if (!xType.getElementType().isF32() || sub.getType() != xType || div.getType() != xType) return failure();
    std::optional<int64_t> axis = trailingAxes(mean);
    if (!axis) return failure();
    // sqrt(var + eps), the add either way round.
    auto addEps = singleUse<AddOp>(sqrt.getInput());
    if (!addEps) return failure();
    Value varValue = addEps.getLhs();
    std::optional<float> eps = scalarConstant(addEps.getRhs());
    if (!eps) {
      varValue = addEps.getRhs();
      eps = scalarConstant(addEps.getLhs());
    }
    if (!eps || *eps < 0) return failure();
    auto var = singleUse<ReduceMeanOp>(varValue);
    if (!var || var.getAxes() != mean.getAxes() || !var.getKeepdims()) return failure();
    auto square = singleUse<MulOp>(var.getInput());
    if (!square || square.getLhs() != sub.getResult() || square.getRhs() != sub.getResult()) return failure();
    // The difference feeds only the square and the division.
    for (Operation *user : sub->getUsers())
      if (user != square && user != div) return failure();
    ArrayRef<int64_t> trailing = xType.getShape().drop_front(*axis);
    if (ShapedType::isDynamicShape(trailing)) return failure();

    // Optional affine tail: * scale, then + bias.
    Operation *last = div;
    Value scale, bias;
    auto otherOperand = [](Operation *op, Value v) {
      return op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
    };
    if (auto mul = soleUser<MulOp>(div.getResult())) {
      Value s = otherOperand(mul, div.getResult());
      if (mul.getType() == xType && isAffineParameter(s, trailing)) {
        scale = s;
        last = mul;
        if (auto add = soleUser<AddOp>(mul.getResult())) {
          Value b = otherOperand(add, mul.getResult());
          if (add.getType() == xType && isAffineParameter(b, trailing)) {
            bias = b;
            last = add;
          }
        }
      }
    }
    if (!scale) {
      auto onesType = RankedTensorType::get(trailing, rewriter.getF32Type());
      scale = rewriter.create<arith::ConstantOp>(div.getLoc(), onesType,
                                                 DenseElementsAttr::get(onesType, rewriter.getF32FloatAttr(1.f)));
    }
    rewriter.setInsertionPoint(last);
    auto ln = rewriter.create<LayerNormOp>(last->getLoc(), xType, x, scale, bias, rewriter.getI64IntegerAttr(*axis),
                                           rewriter.getF32FloatAttr(*eps), rewriter.getBoolAttr(false));
    rewriter.replaceOp(last, ln.getResult());
    return success();
  }
};

/// Attention's scores: softmax(x / c + mask), softmax(x * c + mask),
/// softmax(x / c), softmax(x + mask) over the last axis (c a scalar
/// constant, mask any float tensor broadcasting to x, the intermediates
/// used only here) is one softmax with `scale` and `mask`: one pass over
/// each row instead of a dispatch writing the scaled, masked scores. When x
/// is a matmul of operands multiplied by scalar constants (torch's
/// scaled_dot_product_attention export scales Q and K^T by sqrt(scale)
/// each), the constants move into the softmax's scale and the matmul reads
/// the unscaled operands (what v4f-fuse-attention-regions then matches).
struct FuseScaledMaskedSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp softmax, PatternRewriter &rewriter) const override {
    auto xType = softmax.getInput().getType();
    if (softmax.getMode() != "softmax" || softmax.getAxis() != xType.getRank() - 1 || softmax.getMask() ||
        softmax.getScale().convertToFloat() != 1.f)
      return failure();
    Value x = softmax.getInput(), mask;
    float scale = 1.f;
    if (auto add = singleUse<AddOp>(x)) {
      // Either operand may be the mask; the other is the scores.
      for (int i = 0; i < 2; ++i) {
        Value scores = add->getOperand(i), m = add->getOperand(1 - i);
        auto mt = llvm::dyn_cast<RankedTensorType>(m.getType());
        if (scores.getType() == xType && mt && mt.getElementType().isF32() && mt.getRank() <= xType.getRank()) {
          x = scores;
          mask = m;
          break;
        }
      }
      if (!mask) return failure();
    }
    if (auto div = singleUse<DivOp>(x)) {
      if (auto c = scalarConstant(div.getRhs()); c && *c != 0.f && div.getLhs().getType() == xType) {
        scale = 1.f / *c;
        x = div.getLhs();
      }
    } else if (auto mul = singleUse<MulOp>(x)) {
      for (int i = 0; i < 2; ++i)
        if (auto c = scalarConstant(mul->getOperand(1 - i)); c && mul->getOperand(i).getType() == xType) {
          scale = *c;
          x = mul->getOperand(i);
          break;
        }
    }
    // Scalar factors of the scores' matmul operands.
    bool operandsScaled = false;
    if (auto mm = singleUse<MatMulOp>(x); mm && !mm.getBias() && mm.getActivation() == "none") {
      for (unsigned i = 0; i < 2; ++i) {
        auto mul = singleUse<MulOp>(mm->getOperand(i));
        if (!mul) continue;
        for (int j = 0; j < 2; ++j)
          if (auto c = scalarConstant(mul->getOperand(1 - j)); c && mul->getOperand(j).getType() == mul.getType()) {
            scale *= *c;
            rewriter.modifyOpInPlace(mm, [&] { mm->setOperand(i, mul->getOperand(j)); });
            operandsScaled = true;
            break;
          }
      }
    }
    if (x == softmax.getInput() && !operandsScaled) return failure();
    rewriter.replaceOpWithNewOp<SoftmaxOp>(softmax, xType, x, mask, softmax.getAxisAttr(), softmax.getModeAttr(),
                                           rewriter.getF32FloatAttr(scale), softmax.getNanToZeroAttr());
    return success();
  }
};

/// The exporters' guard of a fully masked row, Where(IsNaN(p), 0, p) of a
/// softmax p along the last axis (two v4f.elementwise ops: `cmpf uno` and
/// `select`), is the softmax's `nan_to_zero`: no pass over the
/// probabilities, and the softmax stays next to its matmuls for
/// v4f-fuse-attention-regions. Only when p has no other user (the others
/// would see the zeros).
struct FuseSoftmaxNanGuard : OpRewritePattern<ElementwiseOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The op of `e`'s body when the body is that one op and its yield.
  template <typename OpT>
  static OpT soleBodyOp(ElementwiseOp e) {
    Block &body = e.getBody().front();
    if (!llvm::hasSingleElement(body.without_terminator())) return {};
    auto op = dyn_cast<OpT>(&body.front());
    return op && body.getTerminator()->getOperand(0) == op->getResult(0) ? op : OpT();
  }

  /// The operand of `e` that body value `v` is, or null.
  static Value operandOf(ElementwiseOp e, Value v) {
    auto arg = llvm::dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &e.getBody().front() ? e->getOperand(arg.getArgNumber()) : Value();
  }

  LogicalResult matchAndRewrite(ElementwiseOp where, PatternRewriter &rewriter) const override {
    auto select = soleBodyOp<arith::SelectOp>(where);
    if (!select) return failure();
    Value cond = operandOf(where, select.getCondition()), p = operandOf(where, select.getFalseValue());
    Value zero = operandOf(where, select.getTrueValue());
    std::optional<float> z;
    if (zero)
      z = scalarConstant(zero);
    else if (auto c = select.getTrueValue().getDefiningOp<arith::ConstantOp>())
      if (auto f = llvm::dyn_cast<FloatAttr>(c.getValue())) z = float(f.getValueAsDouble());
    auto softmax = p ? p.getDefiningOp<SoftmaxOp>() : SoftmaxOp();
    auto isNan = cond ? cond.getDefiningOp<ElementwiseOp>() : ElementwiseOp();
    if (!z || *z != 0.f || std::signbit(*z) || !softmax || !isNan || softmax.getNanToZero() ||
        softmax.getMode() != "softmax" || softmax.getAxis() != softmax.getType().getRank() - 1 ||
        where.getType() != softmax.getType() || !cond.hasOneUse())
      return failure();
    auto cmp = soleBodyOp<arith::CmpFOp>(isNan);
    if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::UNO || cmp.getLhs() != cmp.getRhs() ||
        operandOf(isNan, cmp.getLhs()) != p)
      return failure();
    for (Operation *user : p.getUsers())
      if (user != where.getOperation() && user != isNan.getOperation()) return failure();
    rewriter.modifyOpInPlace(softmax, [&] { softmax.setNanToZero(true); });
    rewriter.replaceOp(where, softmax.getResult());
    rewriter.eraseOp(isNan);
    return success();
  }
};

struct FuseNormalizationsPass : v4f::impl::FuseNormalizationsBase<FuseNormalizationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseNormalizationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) return signalPassFailure();
  }
};

} // namespace

void v4f::populateFuseNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseLayerNorm, FuseScaledMaskedSoftmax, FuseSoftmaxNanGuard>(patterns.getContext());
}

std::unique_ptr<Pass> v4f::createFuseNormalizationsPass() { return std::make_unique<FuseNormalizationsPass>(); }
