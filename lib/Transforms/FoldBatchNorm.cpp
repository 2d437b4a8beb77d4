//===- FoldBatchNorm.cpp - fold batch norm into conv weights --------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace v4f {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {
std::optional<SmallVector<float>> constantValues(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32()) return std::nullopt;
  auto type = llvm::cast<ShapedType>(attr.getType());
  SmallVector<float> values;
  if (attr.isSplat())
    values.assign(type.getNumElements(), attr.getSplatValue<float>());
  else
    values = llvm::to_vector(attr.getValues<float>());
  return values;
}

Value makeConstant(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  return rewriter.create<arith::ConstantOp>(loc, type, DenseElementsAttr::get(type, values));
}

struct FoldBatchNormPattern : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn, PatternRewriter &rewriter) const override {
    auto scale = constantValues(bn.getScale()), bias = constantValues(bn.getBias()),
         mean = constantValues(bn.getMean()), var = constantValues(bn.getVariance());
    if (!scale || !bias || !mean || !var)
      return rewriter.notifyMatchFailure(bn, "batch norm parameters are not constant");
    size_t channels = scale->size();
    float eps = bn.getEpsilon().convertToFloat();
    SmallVector<float> mul(channels), add(channels);
    for (size_t c = 0; c < channels; ++c) {
      mul[c] = (*scale)[c] / std::sqrt((*var)[c] + eps);
      add[c] = (*bias)[c] - (*mean)[c] * mul[c];
    }
    Location loc = bn.getLoc();
    if (auto conv = bn.getInput().getDefiningOp<ConvOp>()) {
      auto weight = constantValues(conv.getWeight());
      std::optional<SmallVector<float>> convBias;
      if (conv.getBias()) convBias = constantValues(conv.getBias());
      bool foldable = weight && conv->hasOneUse() && !conv.getResidual() && conv.getActivation() == "none" &&
                      (!conv.getBias() || convBias);
      if (foldable) {
        auto wType = conv.getWeight().getType();
        size_t perChannel = weight->size() / channels;
        for (size_t c = 0; c < channels; ++c)
          for (size_t i = 0; i < perChannel; ++i) (*weight)[c * perChannel + i] *= mul[c];
        SmallVector<float> newBias(add);
        if (convBias)
          for (size_t c = 0; c < channels; ++c) newBias[c] += mul[c] * (*convBias)[c];
        Value w = makeConstant(rewriter, loc, wType.getShape(), *weight);
        Value b = makeConstant(rewriter, loc, {(int64_t)channels}, newBias);
        auto newConv = rewriter.create<ConvOp>(conv.getLoc(), conv.getType(), conv.getInput(), w, b, Value(),
                                               conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
                                               conv.getGroupsAttr(), conv.getActivationAttr(), conv.getActAlphaAttr(),
                                               conv.getActBetaAttr());
        rewriter.replaceOp(bn, newConv.getResult());
        rewriter.eraseOp(conv);
        return success();
      }
    }
    // Standalone: x * mul[c] + add[c] with constants shaped [C, 1, ..., 1].
    SmallVector<int64_t> shape = {(int64_t)channels};
    shape.append(bn.getInput().getType().getRank() - 2, 1);
    Value m = makeConstant(rewriter, loc, shape, mul);
    Value a = makeConstant(rewriter, loc, shape, add);
    Value scaled = rewriter.create<MulOp>(loc, bn.getInput(), m);
    rewriter.replaceOpWithNewOp<AddOp>(bn, scaled, a);
    return success();
  }
};

struct FoldBatchNormPass : v4f::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldBatchNormPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) return signalPassFailure();
    WalkResult left = getOperation().walk([](BatchNormOp bn) {
      bn.emitOpError("could not be folded: its parameters must be constants");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted()) signalPassFailure();
  }
};
} // namespace

void v4f::populateFoldBatchNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldBatchNormPattern>(patterns.getContext());
}

std::unique_ptr<Pass> v4f::createFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }
