//===- DecomposeNormalizations.cpp - moment/group/Lp norms and LRN -> reductions ===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSENORMALIZATIONS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// dev / sqrt(var + eps), then `* a[2] + a[3]` when scale and bias are given.
Value normalizedBody(OpBuilder &b, Location l, ArrayRef<Value> a, Type f, float eps) {
  Value e = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, eps));
  Value r = b.create<arith::DivFOp>(l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
  if (a.size() > 2) r = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, r, a[2]), a[3]);
  return r;
}

/// (x - mean) / sqrt(var + eps) over the op's axes (kept as 1), then the
/// optional per-channel scale and bias broadcast as [C, 1, ..., 1].
LogicalResult decomposeMomentNorm(BuildContext &c, MomentNormOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  auto stats = meanAndVariance(c, op.getInput(), op.getAxes());
  if (failed(stats)) return failure();
  SmallVector<Value> ins = {stats->deviation, stats->variance};
  if (op.getScale()) {
    SmallVector<int64_t> chan(in.getRank() - 1, 1);
    chan[0] = typeOf(op.getScale()).getDimSize(0);
    ins.push_back(reshapeTo(c, op.getScale(), chan));
    ins.push_back(reshapeTo(c, op.getBias(), chan));
  }
  float eps = op.getEpsilon().convertToFloat();
  auto y = buildElementwise(
      c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) { return normalizedBody(b, l, a, f, eps); });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

/// Statistics over each group of C / num_groups channels and all spatial
/// positions ([N, groups, C / groups * spatial]), then the per-group scale
/// and bias inside the normalization, or the per-channel ones after it.
LogicalResult decomposeGroupNorm(BuildContext &c, GroupNormOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  int64_t rank = in.getRank(), groups = op.getNumGroups();
  // [N, groups, C / groups * spatial]; dims known only at run time are
  // computed by the plan (Builders.h).
  Value x = op.getInput(), G = dimConstant(c, groups);
  auto perGroupOr = dimDiv(c, dimOf(c, x, 1), G);
  if (failed(perGroupOr)) return failure();
  Value rest = *perGroupOr;
  for (int64_t i = 2; i < rank; ++i) {
    auto m = dimMul(c, rest, dimOf(c, x, i));
    if (failed(m)) return failure();
    rest = *m;
  }
  auto groupedOr = reshapeToDims(c, x, {dimOf(c, x, 0), G, rest});
  if (failed(groupedOr)) return failure();
  Value grouped = *groupedOr;
  auto stats = meanAndVariance(c, grouped, {2});
  if (failed(stats)) return failure();
  float eps = op.getEpsilon().convertToFloat();
  bool perGroup = op.getPerGroup();
  SmallVector<Value> ins = {stats->deviation, stats->variance};
  if (perGroup) {
    ins.push_back(reshapeTo(c, op.getScale(), {groups, 1}));
    ins.push_back(reshapeTo(c, op.getBias(), {groups, 1}));
  }
  auto norm = buildElementwise(
      c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) { return normalizedBody(b, l, a, f, eps); });
  if (failed(norm)) return failure();
  SmallVector<Value> inDims;
  for (int64_t i = 0; i < rank; ++i) inDims.push_back(dimOf(c, x, i));
  auto back = reshapeToDims(c, *norm, inDims);
  if (failed(back)) return failure();
  Value y = *back;
  if (!perGroup) {
    // scale / bias as [C, 1, ..., 1].
    auto chan = [&](Value v) -> FailureOr<Value> {
      SmallVector<Value> dims(rank - 1, dimConstant(c, 1));
      dims[0] = dimOf(c, v, 0);
      return reshapeToDims(c, v, dims);
    };
    auto sc = chan(op.getScale()), bi = chan(op.getBias());
    if (failed(sc) || failed(bi)) return failure();
    auto out = buildElementwise(c, {y, *sc, *bi}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
    });
    if (failed(out)) return failure();
    y = *out;
  }
  results.push_back(y);
  return success();
}

/// x / norm(x) along the axis; a zero norm leaves the zeros as they are
/// (ONNX's reference divides by 1).
LogicalResult decomposeLpNorm(BuildContext &c, LpNormOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  int64_t axis = op.getAxis();
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] = 1;
  Value norm = c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, f), op.getInput(), Value(),
                                    c.b.getStringAttr(op.getP() == 1 ? "l1" : "l2"), c.b.getDenseI64ArrayAttr({axis}),
                                    c.b.getBoolAttr(true));
  auto y = buildElementwise(c, {op.getInput(), norm}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value zero = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, 0.0));
    Value one = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, 1.0));
    Value isZero = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[1], zero);
    return b.create<arith::DivFOp>(l, a[0], b.create<arith::SelectOp>(l, isZero, one, a[1]));
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

/// x / (bias + alpha / size * sum of x^2 over a window of channels)^beta;
/// the channel-window sum is an average pool (counting padding) over
/// [N, 1, C, rest] times the window size.
LogicalResult decomposeLRN(BuildContext &c, LRNOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  int64_t rank = in.getRank(), size = op.getSize();
  Value x = op.getInput(), rest = dimConstant(c, 1);
  for (int64_t i = 2; i < rank; ++i) {
    auto m = dimMul(c, rest, dimOf(c, x, i));
    if (failed(m)) return failure();
    rest = *m;
  }
  float alpha = op.getAlpha().convertToFloat(), beta = op.getBeta().convertToFloat(),
        bias = op.getBias().convertToFloat();
  auto sq = buildElementwise(c, {op.getInput()}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  auto s4Or = reshapeToDims(c, *sq, {dimOf(c, x, 0), dimConstant(c, 1), dimOf(c, x, 1), rest});
  if (failed(s4Or)) return failure();
  Value s4 = *s4Or;
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value avg = c.b.create<AvgPoolOp>(c.loc, s4, c.b.getDenseI64ArrayAttr({size, 1}), c.b.getDenseI64ArrayAttr({1, 1}),
                                    c.b.getDenseI64ArrayAttr({1, 1}), c.b.getDenseI64ArrayAttr({before, 0, after, 0}),
                                    c.b.getBoolAttr(false), c.b.getBoolAttr(true));
  SmallVector<Value> inDims;
  for (int64_t i = 0; i < rank; ++i) inDims.push_back(dimOf(c, x, i));
  auto sumOr = reshapeToDims(c, avg, inDims);
  if (failed(sumOr)) return failure();
  Value sum = *sumOr;
  auto y = buildElementwise(c, {op.getInput(), sum}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    // avg * size = window sum, so alpha / size * sum = alpha * avg.
    Value d = b.create<arith::AddFOp>(
        l, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(bias)),
        b.create<arith::MulFOp>(l, a[1], b.create<arith::ConstantOp>(l, b.getF32FloatAttr(alpha))));
    return b.create<arith::DivFOp>(
        l, a[0], b.create<math::PowFOp>(l, d, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(beta))));
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

struct DecomposeNormalizationsPass : v4f::impl::DecomposeNormalizationsBase<DecomposeNormalizationsPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(decomposeAll<MomentNormOp>(root, decomposeMomentNorm)) ||
        failed(decomposeAll<GroupNormOp>(root, decomposeGroupNorm)) ||
        failed(decomposeAll<LpNormOp>(root, decomposeLpNorm)) || failed(decomposeAll<LRNOp>(root, decomposeLRN)))
      signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeNormalizationsPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<MomentNormOp>>(patterns.getContext(), decomposeMomentNorm);
  patterns.add<DecomposePattern<GroupNormOp>>(patterns.getContext(), decomposeGroupNorm);
  patterns.add<DecomposePattern<LpNormOp>>(patterns.getContext(), decomposeLpNorm);
  patterns.add<DecomposePattern<LRNOp>>(patterns.getContext(), decomposeLRN);
}

std::unique_ptr<Pass> v4f::createDecomposeNormalizationsPass() {
  return std::make_unique<DecomposeNormalizationsPass>();
}
