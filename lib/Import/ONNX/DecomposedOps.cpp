//===- DecomposedOps.cpp - ONNX ops imported as compositions of v4f ops ---===//
//
// DepthToSpace / SpaceToDepth (reshape, transpose, reshape), GlobalMaxPool
// (max reduction), InstanceNormalization and MeanVarianceNormalization
// (mean/variance reductions and elementwise ops).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace v4f {

FailureOr<MomentValues> meanAndVariance(NodeContext &c, ArrayRef<int64_t> axes) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  SmallVector<int64_t> reduced(in.getShape());
  for (int64_t a : axes) reduced[a] = 1;
  auto rtype = RankedTensorType::get(reduced, f);
  auto mean = [&](Value v) -> Value {
    return c.b.create<ReduceOp>(c.loc, rtype, v, Value(), c.b.getStringAttr("mean"), c.b.getDenseI64ArrayAttr(axes),
                                c.b.getBoolAttr(true));
  };
  Value mu = mean(c.input(0));
  auto dev = buildElementwise(c, {c.input(0), mu}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::SubFOp>(l, a[0], a[1]);
  });
  if (failed(dev)) return failure();
  auto sq = buildElementwise(c, {*dev}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  return MomentValues{mu, *dev, mean(*sq)};
}

namespace {

constexpr int64_t kMaxOpset = 28;

std::string noCheck(const NodeAttrs &, int64_t) { return ""; }

Value reshapeTo(NodeContext &c, Value in, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> sources(shape.size(), -1);
  auto type = RankedTensorType::get(shape, llvm::cast<RankedTensorType>(in.getType()).getElementType());
  return c.b.create<ReshapeOp>(c.loc, type, in, Value(), c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
}

LogicalResult importDepthSpace(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() != 4 || !in.hasStaticShape()) return c.fail("input must be a static 4-D tensor");
  int64_t bs = c.attrs.getInt("blocksize", 0);
  if (bs <= 0) return c.fail("blocksize must be positive");
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  Value x = c.input(0), t;
  if (c.node.op_type() == "DepthToSpace") {
    if (C % (bs * bs)) return c.fail("channels must be divisible by blocksize^2");
    bool crd = c.attrs.getString("mode", "DCR") == "CRD";
    int64_t Co = C / (bs * bs);
    if (crd) {
      x = reshapeTo(c, x, {N, Co, bs, bs, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 4, 2, 5, 3}));
    } else {
      x = reshapeTo(c, x, {N, bs, bs, Co, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 4, 1, 5, 2}));
    }
    c.setOutput(0, reshapeTo(c, t, {N, Co, H * bs, W * bs}));
    return success();
  }
  if (H % bs || W % bs) return c.fail("height and width must be divisible by blocksize");
  x = reshapeTo(c, x, {N, C, H / bs, bs, W / bs, bs});
  // DCR (default): channel = (bh * bs + bw) * C + c; CRD: c * bs * bs + bh * bs + bw.
  if (c.attrs.getString("mode", "DCR") == "CRD")
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 3, 5, 2, 4}));
  else
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 5, 1, 2, 4}));
  c.setOutput(0, reshapeTo(c, t, {N, C * bs * bs, H / bs, W / bs}));
  return success();
}

LogicalResult importGlobalMaxPool(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes, shape = {in.getDimSize(0), in.getDimSize(1)};
  for (int64_t i = 2; i < in.getRank(); ++i) {
    axes.push_back(i);
    shape.push_back(1);
  }
  c.setOutput(0, c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), Value(),
                                      c.b.getStringAttr("max"), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(true)));
  return success();
}

/// (x - mean) / sqrt(var + eps) over `axes` (kept as 1), then optional
/// per-channel scale and bias (shaped [C]).
LogicalResult normalizeOver(NodeContext &c, ArrayRef<int64_t> axes, float eps, Value scale, Value bias) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f)) return c.fail("input must be a float type");
  auto stats = meanAndVariance(c, axes);
  if (failed(stats)) return failure();
  Value dev = stats->deviation, var = stats->variance;
  // Per-channel parameters broadcast as [C, 1, ..., 1].
  SmallVector<Value> ins = {dev, var};
  SmallVector<int64_t> chan(in.getRank() - 1, 1);
  if (scale) {
    chan[0] = llvm::cast<RankedTensorType>(scale.getType()).getDimSize(0);
    ins.push_back(reshapeTo(c, scale, chan));
    ins.push_back(reshapeTo(c, bias, chan));
  }
  auto y = buildElementwise(c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value e = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, eps));
    Value r = b.create<arith::DivFOp>(l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
    if (a.size() > 2) r = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, r, a[2]), a[3]);
    return r;
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

LogicalResult importInstanceNorm(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < in.getRank(); ++i) axes.push_back(i);
  return normalizeOver(c, axes, c.attrs.getFloat("epsilon", 1e-5f), c.input(1), c.input(2));
}

LogicalResult importMVN(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : c.attrs.getInts("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank) return c.fail("axis out of range");
    axes.push_back(a < 0 ? a + rank : a);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return normalizeOver(c, axes, 1e-9f, Value(), Value());
}

} // namespace

void addDecomposedImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["DepthToSpace"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["SpaceToDepth"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["GlobalMaxPool"] = {1, kMaxOpset, noCheck, importGlobalMaxPool};
  t["InstanceNormalization"] = {6, kMaxOpset, noCheck, importInstanceNorm};
  t["MeanVarianceNormalization"] = {9, kMaxOpset, noCheck, importMVN};
}

} // namespace v4f
