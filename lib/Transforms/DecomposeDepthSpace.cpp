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

/// One dim of a reshape target: input dim `dim` times `mul` divided by
/// `div`, or (dim < 0) the constant `mul`.
struct TargetDim {
  int64_t dim, mul = 1, div = 1;
};

/// The dims of `target` over `x`'s dims (run-time values where x's are,
/// Builders.h).
FailureOr<SmallVector<Value>> targetDims(BuildContext &c, Value x, ArrayRef<TargetDim> target) {
  SmallVector<Value> dims;
  for (const TargetDim &d : target) {
    if (d.dim < 0) {
      dims.push_back(dimConstant(c, d.mul));
      continue;
    }
    auto m = dimMul(c, dimOf(c, x, d.dim), dimConstant(c, d.mul));
    if (failed(m)) return failure();
    auto q = dimDiv(c, *m, dimConstant(c, d.div));
    if (failed(q)) return failure();
    dims.push_back(*q);
  }
  return dims;
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
  // (The plan checks the element counts, so a channel count that
  // blocksize^2 does not divide is a run-time error.)
  auto sixDims = targetDims(c, x, six), fourDims = targetDims(c, x, four);
  if (failed(sixDims) || failed(fourDims)) return failure();
  auto viewed = reshapeToDims(c, x, *sixDims);
  if (failed(viewed)) return failure();
  Value t = c.b.create<TransposeOp>(c.loc, *viewed, c.b.getDenseI64ArrayAttr(perm));
  // The result dims come from the input's (the transposed view has them
  // split into blocks).
  auto yOr = reshapeToDims(c, t, *fourDims);
  if (failed(yOr)) return failure();
  auto y = reshapeToType(c, *yOr, typeOf(op.getResult()), /*exact=*/false);
  if (failed(y)) return failure();
  results.push_back(*y);
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
