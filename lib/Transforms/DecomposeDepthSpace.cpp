//===- DecomposeDepthSpace.cpp - v4f.depth_space -> reshape / transpose ----===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEDEPTHSPACE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// DepthToSpace: [N, C, H, W] viewed as [N, bs, bs, C', H, W] (DCR) or
/// [N, C', bs, bs, H, W] (CRD), the block dims moved next to H and W.
/// SpaceToDepth: [N, C, H / bs, bs, W / bs, bs] with the block dims moved in
/// front of (DCR: channel = (bh * bs + bw) * C + c) or after (CRD) the
/// channels.
LogicalResult decomposeDepthSpace(BuildContext &c, DepthSpaceOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  if (!in.hasStaticShape()) return c.fail("input must be a static 4-D tensor");
  int64_t bs = op.getBlocksize();
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  bool crd = op.getMode() == "CRD";
  Value x = op.getInput(), t;
  if (op.getToSpace()) {
    int64_t Co = C / (bs * bs);
    if (crd) {
      x = reshapeTo(c, x, {N, Co, bs, bs, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 4, 2, 5, 3}));
    } else {
      x = reshapeTo(c, x, {N, bs, bs, Co, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 4, 1, 5, 2}));
    }
    results.push_back(reshapeTo(c, t, {N, Co, H * bs, W * bs}));
    return success();
  }
  x = reshapeTo(c, x, {N, C, H / bs, bs, W / bs, bs});
  if (crd)
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 3, 5, 2, 4}));
  else
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 5, 1, 2, 4}));
  results.push_back(reshapeTo(c, t, {N, C * bs * bs, H / bs, W / bs}));
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
