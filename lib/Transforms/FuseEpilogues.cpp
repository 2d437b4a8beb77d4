//===- FuseEpilogues.cpp - fuse bias/residual/activation into producers ---===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

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
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32()) return std::nullopt;
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
  return rewriter.create<arith::ConstantOp>(loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

bool hasPlainEpilogue(ConvOp conv) {
  return conv->hasOneUse() && conv.getActivation() == "none" && !conv.getResidual();
}

ConvOp rebuildConv(PatternRewriter &rewriter, ConvOp conv, Value bias, Value residual, StringRef act, float alpha,
                   float beta) {
  return rewriter.create<ConvOp>(conv.getLoc(), conv.getType(), conv.getInput(), conv.getWeight(), bias, residual,
                                 conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
                                 conv.getGroupsAttr(), rewriter.getStringAttr(act), rewriter.getF32FloatAttr(alpha),
                                 rewriter.getF32FloatAttr(beta));
}

/// The producer of `x` — a conv or matmul with no activation yet — rebuilt
/// with activation `act` (alpha, beta); a matmul takes location `mmLoc`, a
/// conv keeps its own. Null when x has no such producer (the callers check
/// x's other users).
Operation *withActivation(PatternRewriter &rewriter, Value x, StringRef act, float alpha, float beta, Location mmLoc) {
  if (auto conv = x.getDefiningOp<ConvOp>(); conv && conv.getActivation() == "none")
    return rebuildConv(rewriter, conv, conv.getBias(), conv.getResidual(), act, alpha, beta);
  if (auto mm = x.getDefiningOp<MatMulOp>(); mm && mm.getActivation() == "none")
    return rewriter.create<MatMulOp>(mmLoc, mm.getType(), mm.getLhs(), mm.getRhs(), mm.getBias(),
                                     rewriter.getStringAttr(act), rewriter.getF32FloatAttr(alpha),
                                     rewriter.getF32FloatAttr(beta));
  return nullptr;
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
      if (!mm || !mm->hasOneUse() || mm.getActivation() != "none" || mm.getType() != add.getType()) continue;
      int64_t rank = mm.getType().getRank(), n = mm.getType().getDimSize(rank - 1);
      if (n == ShapedType::kDynamic) continue;
      auto values = vectorAlongAxis(other, rank - 1, rank, n);
      if (!values) continue;
      Value bias = addToBias(rewriter, add.getLoc(), mm.getBias(), *values);
      if (!bias) continue;
      // The fused op keeps both nodes' names, the matmul's first (what
      // --exclude and diagnostics name).
      auto fused = rewriter.create<MatMulOp>(rewriter.getFusedLoc({mm.getLoc(), add.getLoc()}), mm.getType(),
                                             mm.getLhs(), mm.getRhs(), bias, mm.getActivationAttr(),
                                             mm.getActAlphaAttr(), mm.getActBetaAttr());
      rewriter.replaceOp(add, fused.getResult());
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
    if constexpr (std::is_same_v<ActOp, LeakyReluOp>) return {op.getAlpha().convertToFloat(), 0.f};
    if constexpr (std::is_same_v<ActOp, ClipOp>) return {op.getMin().convertToFloat(), op.getMax().convertToFloat()};
    if constexpr (std::is_same_v<ActOp, HardSigmoidOp>)
      return {op.getAlpha().convertToFloat(), op.getBeta().convertToFloat()};
    return {0.f, 0.f};
  }

  LogicalResult matchAndRewrite(ActOp act, PatternRewriter &rewriter) const override {
    auto [alpha, beta] = params(act);
    Value input = act.getInput();
    Operation *producer = input.getDefiningOp();
    if (!producer || !input.hasOneUse()) return failure();
    Operation *fused =
        withActivation(rewriter, input, name, alpha, beta, rewriter.getFusedLoc({producer->getLoc(), act.getLoc()}));
    if (!fused) return failure();
    rewriter.replaceOp(act, fused->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// SiLU (swish) as exporters write it, mul(x, sigmoid(x)) (either operand
/// order), where x is a conv or matmul result with no activation used by
/// just those two ops: the producer's "silu" epilogue, x / (1 + exp(-x)) —
/// YOLOv5/v8's and EfficientNet's activation, one pass over the tensor
/// instead of two dispatches after the producer.
struct FuseSiLU : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value x = side == 0 ? mul.getLhs() : mul.getRhs();
      auto sig = (side == 0 ? mul.getRhs() : mul.getLhs()).getDefiningOp<SigmoidOp>();
      if (!sig || sig.getInput() != x || !sig->hasOneUse() || x.getType() != mul.getType()) continue;
      if (!llvm::all_of(x.getUsers(), [&](Operation *u) { return u == mul || u == sig; })) continue;
      Operation *producer = x.getDefiningOp();
      if (!producer) continue;
      Operation *replacement =
          withActivation(rewriter, x, "silu", 0, 0, rewriter.getFusedLoc({producer->getLoc(), mul.getLoc()}));
      if (!replacement) continue;
      rewriter.replaceOp(mul, replacement->getResults());
      rewriter.eraseOp(sig);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// The float32 value of a one-element constant.
std::optional<float> scalarValue(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32() || attr.getNumElements() != 1)
    return std::nullopt;
  return *attr.getValues<float>().begin();
}

/// GELU as exporters write it, in its two forms:
///  - exact (torch.onnx before opset 20, HF BERT/ViT): x * 0.5 * (1 +
///    erf(x / sqrt(2))), erf's argument x / c or x * c with c = sqrt(2) or
///    1 / sqrt(2) as written in float32;
///  - tanh (HF GPT-2's gelu_new, TF BERT): x * 0.5 * (1 + tanh(sqrt(2/pi) *
///    (x + 0.044715 * x^3))), the cube as x * x * x (Pow by 3 canonicalizes
///    to it);
/// the three factors x, 0.5 and (1 + ...) multiplied in any grouping, the
/// constants on either side. When x is a conv or matmul with a plain
/// epilogue used only by the GELU, the whole expression becomes its "gelu"
/// or "gelu_tanh" epilogue: one kernel writes GELU(x @ w + b) instead of the
/// GEMM writing x and a second dispatch reading it back. (Elsewhere the chain
/// stays: dispatch-region formation already fuses it into one pass.)
struct FuseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The leaves of the product rooted at `v`: inner multiplies used only by
  /// the product are opened up.
  static void factors(Value v, SmallVectorImpl<Value> &out, SmallVectorImpl<Operation *> &inner) {
    if (auto mul = v.getDefiningOp<MulOp>(); mul && v.hasOneUse() && out.size() < 4) {
      inner.push_back(mul);
      factors(mul.getLhs(), out, inner);
      factors(mul.getRhs(), out, inner);
      return;
    }
    out.push_back(v);
  }

  static bool near(std::optional<float> v, double want) { return v && std::abs(*v - want) <= 1e-5 * want; }

  /// The operand of `bin` that is not the constant `c`, or null.
  template <typename Op>
  static Value otherThan(Op bin, double c) {
    if (near(scalarValue(bin.getRhs()), c)) return bin.getLhs();
    if (near(scalarValue(bin.getLhs()), c)) return bin.getRhs();
    return {};
  }

  /// x when `v` (one use) is x / sqrt(2) or x * (1/sqrt(2)).
  static Value erfArgument(Value v, SmallVectorImpl<Operation *> &ops) {
    if (!v.hasOneUse()) return {};
    if (auto div = v.getDefiningOp<DivOp>(); div && near(scalarValue(div.getRhs()), M_SQRT2)) {
      ops.push_back(div);
      return div.getLhs();
    }
    if (auto mul = v.getDefiningOp<MulOp>(); mul && otherThan(mul, M_SQRT1_2)) {
      ops.push_back(mul);
      return otherThan(mul, M_SQRT1_2);
    }
    return {};
  }

  /// x when `v` (one use) is x * x * x in either grouping.
  static Value cubeOf(Value v, SmallVectorImpl<Operation *> &ops) {
    auto outer = v.hasOneUse() ? v.getDefiningOp<MulOp>() : nullptr;
    if (!outer) return {};
    for (auto [sq, x] : {std::pair(outer.getLhs(), outer.getRhs()), std::pair(outer.getRhs(), outer.getLhs())}) {
      auto square = sq.hasOneUse() ? sq.getDefiningOp<MulOp>() : nullptr;
      if (square && square.getLhs() == x && square.getRhs() == x) {
        ops.append({outer, square});
        return x;
      }
    }
    return {};
  }

  /// x when `v` (one use) is sqrt(2/pi) * (x + 0.044715 * x^3).
  static Value tanhArgument(Value v, SmallVectorImpl<Operation *> &ops) {
    auto scale = v.hasOneUse() ? v.getDefiningOp<MulOp>() : nullptr;
    Value inner = scale ? otherThan(scale, 0.7978845608028654) : Value();
    auto add = inner && inner.hasOneUse() ? inner.getDefiningOp<AddOp>() : nullptr;
    if (!add) return {};
    for (auto [x, term] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
      auto coef = term.hasOneUse() ? term.getDefiningOp<MulOp>() : nullptr;
      Value cube = coef ? otherThan(coef, 0.044715) : Value();
      SmallVector<Operation *> cubeOps;
      if (cube && cubeOf(cube, cubeOps) == x) {
        ops.append({scale, add, coef});
        ops.append(cubeOps.begin(), cubeOps.end());
        return x;
      }
    }
    return {};
  }

  /// x when `v` (one use) is 1 + erf(...) or 1 + tanh(...) of x, with the
  /// form in `act` and the ops it consists of appended to `ops`.
  static Value geluInputOf(Value v, SmallVectorImpl<Operation *> &ops, StringRef &act) {
    auto add = v.hasOneUse() ? v.getDefiningOp<AddOp>() : nullptr;
    Value term = add ? otherThan(add, 1.0) : Value();
    if (!term || !term.hasOneUse()) return {};
    ops.push_back(add);
    if (auto erf = term.getDefiningOp<ErfOp>()) {
      ops.push_back(erf);
      act = "gelu";
      return erfArgument(erf.getInput(), ops);
    }
    if (auto tanh = term.getDefiningOp<TanhOp>()) {
      ops.push_back(tanh);
      act = "gelu_tanh";
      return tanhArgument(tanh.getInput(), ops);
    }
    return {};
  }

  LogicalResult matchAndRewrite(MulOp root, PatternRewriter &rewriter) const override {
    SmallVector<Value> leaves;
    SmallVector<Operation *> dead;
    factors(root.getLhs(), leaves, dead);
    factors(root.getRhs(), leaves, dead);
    if (leaves.size() != 3) return failure();
    // One leaf is 0.5, one is 1 + erf(...) / 1 + tanh(...), one is x itself.
    Value x, half, term;
    for (Value leaf : leaves) {
      if (!half && near(scalarValue(leaf), 0.5))
        half = leaf;
      else if (!term && leaf.getDefiningOp<AddOp>())
        term = leaf;
      else
        x = x ? Value() : leaf;
    }
    if (!x || !half || !term || x.getType() != root.getType()) return failure();
    SmallVector<Operation *> geluOps;
    StringRef act;
    if (geluInputOf(term, geluOps, act) != x) return failure();
    // x is used by the GELU only.
    llvm::SmallPtrSet<Operation *, 16> inside(geluOps.begin(), geluOps.end());
    inside.insert(dead.begin(), dead.end());
    inside.insert(root);
    if (!llvm::all_of(x.getUsers(), [&](Operation *user) { return inside.contains(user); })) return failure();
    Operation *producer = x.getDefiningOp();
    Operation *replacement = producer ? withActivation(rewriter, x, act, 0, 0, producer->getLoc()) : nullptr;
    if (!replacement) return failure();
    rewriter.replaceOp(root, replacement->getResults());
    // Users before producers: the factors' multiply (three leaves: one), then
    // the term's ops in the order they were matched (each consumes the next).
    for (Operation *op : dead) rewriter.eraseOp(op);
    for (Operation *op : geluOps) rewriter.eraseOp(op);
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FuseEpiloguesPass : v4f::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseEpiloguePatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
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
  patterns.add<FuseGelu, FuseSiLU>(ctx);
}

std::unique_ptr<Pass> v4f::createFuseEpiloguesPass() { return std::make_unique<FuseEpiloguesPass>(); }
