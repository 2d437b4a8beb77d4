//===- FuseEpilogues.cpp - fuse bias/residual/activation into producers ---===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace v4f {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {
/// Returns the values of `v` as a length-`n` vector if it is a constant that
/// varies only along dim `axis` of a result of rank `rank` (or is a splat).
std::optional<SmallVector<float>> vectorAlongAxis(Value v, int64_t axis, int64_t rank, int64_t n) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32())
    return std::nullopt;
  auto shape = llvm::cast<ShapedType>(attr.getType()).getShape();
  if ((int64_t)shape.size() > rank) return std::nullopt;
  if (attr.isSplat()) return SmallVector<float>(n, attr.getSplatValue<float>());
  int64_t offset = rank - shape.size();
  for (int64_t i = 0; i < (int64_t)shape.size(); ++i) {
    int64_t dim = i + offset;
    if (dim == axis ? shape[i] != n : shape[i] != 1) return std::nullopt;
  }
  return llvm::to_vector(attr.getValues<float>());
}

Value addToBias(PatternRewriter &rewriter, Location loc, Value oldBias, ArrayRef<float> extra) {
  SmallVector<float> values(extra);
  if (oldBias) {
    DenseElementsAttr attr;
    if (!matchPattern(oldBias, m_Constant(&attr))) return {};
    auto old = llvm::to_vector(attr.getValues<float>());
    for (size_t i = 0; i < values.size(); ++i) values[i] += old[i];
  }
  auto type = RankedTensorType::get({(int64_t)values.size()}, rewriter.getF32Type());
  return rewriter.create<arith::ConstantOp>(loc, type,
                                            DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

bool hasPlainEpilogue(ConvOp conv) {
  return conv->hasOneUse() && conv.getActivation() == "none" && !conv.getResidual();
}

ConvOp rebuildConv(PatternRewriter &rewriter, ConvOp conv, Value bias, Value residual,
                   StringRef act, float alpha, float beta) {
  return rewriter.create<ConvOp>(
      conv.getLoc(), conv.getType(), conv.getInput(), conv.getWeight(), bias, residual,
      conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(), conv.getGroupsAttr(),
      rewriter.getStringAttr(act), rewriter.getF32FloatAttr(alpha), rewriter.getF32FloatAttr(beta));
}

/// add(conv, per-channel constant) -> conv bias; add(conv, tensor) -> residual.
struct FuseConvAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value mine = side == 0 ? add.getLhs() : add.getRhs();
      Value other = side == 0 ? add.getRhs() : add.getLhs();
      auto conv = mine.getDefiningOp<ConvOp>();
      if (!conv || !hasPlainEpilogue(conv) || conv.getType() != add.getType()) continue;
      int64_t channels = conv.getType().getDimSize(1);
      if (auto values = vectorAlongAxis(other, 1, 4, channels)) {
        Value bias = addToBias(rewriter, add.getLoc(), conv.getBias(), *values);
        if (!bias) continue;
        rewriter.replaceOp(add, rebuildConv(rewriter, conv, bias, Value(), "none", 0, 0));
        rewriter.eraseOp(conv);
        return success();
      }
      if (other.getType() == conv.getType() && !other.getDefiningOp<arith::ConstantOp>()) {
        rewriter.replaceOp(add, rebuildConv(rewriter, conv, conv.getBias(), other, "none", 0, 0));
        rewriter.eraseOp(conv);
        return success();
      }
    }
    return failure();
  }
};

/// add(matmul, [N] constant) -> matmul bias.
struct FuseMatMulBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value mine = side == 0 ? add.getLhs() : add.getRhs();
      Value other = side == 0 ? add.getRhs() : add.getLhs();
      auto mm = mine.getDefiningOp<MatMulOp>();
      if (!mm || !mm->hasOneUse() || mm.getActivation() != "none" || mm.getType() != add.getType())
        continue;
      int64_t rank = mm.getType().getRank(), n = mm.getType().getDimSize(rank - 1);
      if (n == ShapedType::kDynamic) continue;
      auto values = vectorAlongAxis(other, rank - 1, rank, n);
      if (!values) continue;
      Value bias = addToBias(rewriter, add.getLoc(), mm.getBias(), *values);
      if (!bias) continue;
      rewriter.replaceOpWithNewOp<MatMulOp>(add, mm.getType(), mm.getLhs(), mm.getRhs(), bias,
                                            mm.getActivationAttr(), mm.getActAlphaAttr(),
                                            mm.getActBetaAttr());
      rewriter.eraseOp(mm);
      return success();
    }
    return failure();
  }
};

/// act(conv | matmul) -> fused activation.
template <typename ActOp>
struct FuseActivation : OpRewritePattern<ActOp> {
  FuseActivation(MLIRContext *ctx, StringRef name) : OpRewritePattern<ActOp>(ctx), name(name) {}
  std::string name;

  std::pair<float, float> params(ActOp op) const {
    if constexpr (std::is_same_v<ActOp, LeakyReluOp>)
      return {op.getAlpha().convertToFloat(), 0.f};
    if constexpr (std::is_same_v<ActOp, ClipOp>)
      return {op.getMin().convertToFloat(), op.getMax().convertToFloat()};
    if constexpr (std::is_same_v<ActOp, HardSigmoidOp>)
      return {op.getAlpha().convertToFloat(), op.getBeta().convertToFloat()};
    return {0.f, 0.f};
  }

  LogicalResult matchAndRewrite(ActOp act, PatternRewriter &rewriter) const override {
    auto [alpha, beta] = params(act);
    Value input = act.getInput();
    if (auto conv = input.getDefiningOp<ConvOp>()) {
      if (!conv->hasOneUse() || conv.getActivation() != "none") return failure();
      rewriter.replaceOp(act, rebuildConv(rewriter, conv, conv.getBias(), conv.getResidual(),
                                          name, alpha, beta));
      rewriter.eraseOp(conv);
      return success();
    }
    if (auto mm = input.getDefiningOp<MatMulOp>()) {
      if (!mm->hasOneUse() || mm.getActivation() != "none") return failure();
      rewriter.replaceOpWithNewOp<MatMulOp>(act, mm.getType(), mm.getLhs(), mm.getRhs(),
                                            mm.getBias(), rewriter.getStringAttr(name),
                                            rewriter.getF32FloatAttr(alpha),
                                            rewriter.getF32FloatAttr(beta));
      rewriter.eraseOp(mm);
      return success();
    }
    return failure();
  }
};

struct FuseEpiloguesPass : v4f::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseEpiloguePatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void v4f::populateFuseEpiloguePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FuseConvAdd, FuseMatMulBias>(ctx);
  patterns.add<FuseActivation<ReluOp>>(ctx, "relu");
  patterns.add<FuseActivation<LeakyReluOp>>(ctx, "leaky_relu");
  patterns.add<FuseActivation<ClipOp>>(ctx, "clip");
  patterns.add<FuseActivation<SigmoidOp>>(ctx, "sigmoid");
  patterns.add<FuseActivation<TanhOp>>(ctx, "tanh");
  patterns.add<FuseActivation<HardSigmoidOp>>(ctx, "hard_sigmoid");
  patterns.add<FuseActivation<HardSwishOp>>(ctx, "hard_swish");
}

std::unique_ptr<Pass> v4f::createFuseEpiloguesPass() {
  return std::make_unique<FuseEpiloguesPass>();
}
