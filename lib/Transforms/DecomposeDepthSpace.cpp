//===- DecomposeDepthSpace.cpp - v4f.depth_space -> reshape / transpose ----===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEDEPTHSPACE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// One dim of a reshape target: input dim `dim` times `mul` divided by
/// `div`, or (dim < 0) the constant `mul`.
struct TargetDim {
  int64_t dim, mul = 1, div = 1;
};

/// `x` reshaped to `target`: a static reshape when every dim is known, else
/// one whose shape operand the plan computes from x's dims at run time (the
/// plan checks the element count, so a channel count that blocksize^2 does
/// not divide is a run-time error).
FailureOr<Value> reshapeTo(BuildContext &c, Value x, ArrayRef<TargetDim> target) {
  auto t = typeOf(x);
  SmallVector<int64_t> shape;
  bool dynamic = false;
  for (const TargetDim &d : target) {
    int64_t v = d.dim < 0 ? d.mul : t.getDimSize(d.dim);
    if (v != kDyn && d.dim >= 0) v = v * d.mul / d.div;
    dynamic |= v == kDyn;
    shape.push_back(v);
  }
  if (!dynamic) return reshapeTo(c, x, shape);
  auto i64 = c.b.getI64Type();
  auto one = RankedTensorType::get({1}, i64);
  SmallVector<Value> parts;
  for (const TargetDim &d : target) {
    if (d.dim < 0) {
      parts.push_back(c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(one, ArrayRef<int64_t>{d.mul})));
      continue;
    }
    Value v = c.b.create<ShapeOp>(c.loc, one, x, c.b.getI64IntegerAttr(d.dim), c.b.getI64IntegerAttr(d.dim + 1));
    if (d.mul != 1 || d.div != 1) {
      auto scaled = buildElementwise(c, {v}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value r = b.create<arith::MulIOp>(l, a[0], b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(d.mul)));
        return b.create<arith::DivSIOp>(l, r, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(d.div)));
      });
      if (failed(scaled)) return failure();
      v = *scaled;
    }
    parts.push_back(v);
  }
  Value shapeV =
      c.b.create<ConcatOp>(c.loc, RankedTensorType::get({int64_t(parts.size())}, i64), parts, c.b.getI64IntegerAttr(0));
  SmallVector<int64_t> sources(shape.size(), -1);
  return (Value)c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(shape, t.getElementType()), x, shapeV,
                                      c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
}

/// DepthToSpace: [N, C, H, W] viewed as [N, bs, bs, C', H, W] (DCR) or
/// [N, C', bs, bs, H, W] (CRD), the block dims moved next to H and W.
/// SpaceToDepth: [N, C, H / bs, bs, W / bs, bs] with the block dims moved in
/// front of (DCR: channel = (bh * bs + bw) * C + c) or after (CRD) the
/// channels. Dims known only at run time give run-time reshapes.
LogicalResult decomposeDepthSpace(BuildContext &c, DepthSpaceOp op, SmallVectorImpl<Value> &results) {
  int64_t bs = op.getBlocksize(), bb = bs * bs;
  bool crd = op.getMode() == "CRD";
  Value x = op.getInput();
  TargetDim N{0}, block{-1, bs};
  SmallVector<TargetDim> six, four;
  SmallVector<int64_t> perm;
  if (op.getToSpace()) {
    TargetDim Co{1, 1, bb}, H{2}, W{3};
    six = crd ? SmallVector<TargetDim>{N, Co, block, block, H, W} : SmallVector<TargetDim>{N, block, block, Co, H, W};
    perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3} : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    four = {N, Co, TargetDim{2, bs}, TargetDim{3, bs}};
  } else {
    TargetDim C{1}, Hb{2, 1, bs}, Wb{3, 1, bs};
    six = {N, C, Hb, block, Wb, block};
    perm = crd ? SmallVector<int64_t>{0, 1, 3, 5, 2, 4} : SmallVector<int64_t>{0, 3, 5, 1, 2, 4};
    four = {N, TargetDim{1, bb}, Hb, Wb};
  }
  auto viewed = reshapeTo(c, x, six);
  if (failed(viewed)) return failure();
  Value t = c.b.create<TransposeOp>(c.loc, *viewed, c.b.getDenseI64ArrayAttr(perm));
  // The result dims come from the input's (the transposed view has them
  // split into blocks).
  SmallVector<int64_t> outShape(typeOf(op.getResult()).getShape());
  Value y;
  if (llvm::is_contained(outShape, kDyn)) {
    auto r = reshapeTo(c, x, four); // only for its shape operand
    if (failed(r)) return failure();
    auto rs = r->getDefiningOp<ReshapeOp>();
    y = c.b.create<ReshapeOp>(c.loc, typeOf(op.getResult()), t, rs.getShape(), rs.getDimSourcesAttr(),
                              c.b.getBoolAttr(false));
    rs.erase();
  } else {
    y = reshapeTo(c, t, outShape);
  }
  results.push_back(y);
  return success();
}

struct DecomposeDepthSpacePass : v4f::impl::DecomposeDepthSpaceBase<DecomposeDepthSpacePass> {
  void runOnOperation() override {
    if (failed(decomposeAll<DepthSpaceOp>(getOperation(), decomposeDepthSpace))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeDepthSpacePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<DepthSpaceOp>>(patterns.getContext(), decomposeDepthSpace);
}

std::unique_ptr<Pass> v4f::createDecomposeDepthSpacePass() { return std::make_unique<DecomposeDepthSpacePass>(); }
