//===- FuseChannelScale.cpp - v4f-fuse-channel-scale ----------------------===//
//
// Squeeze-and-excite blocks (MobileNetV3, EfficientNet) end by scaling every
// channel of a tensor by a per-image factor, x * s with s [N, C, 1, 1], and
// a 1x1 conv (the block's projection) reads the product: one dispatch that
// reads and writes the whole tensor only for the conv to read it again.
// Since W (x * s) = (W diag(s)) x, this pass merges the one-op region of the
// multiplication into the conv's region; the CPU kernel generator lowers the
// pair as the conv of x with its packed weight scaled per image and input
// channel by a small prologue dispatch (OC x C floats per image instead of
// C x H x W: ConvKernels.cpp, emitChannelScaledConv).
//
// Runs after v4f-form-dispatch-regions and v4f-assign-placement; regions
// placed on the GPU are left alone.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"
#include "RegionFusion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace v4f {
#define GEN_PASS_DEF_FUSECHANNELSCALE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// A 1x1 conv of one group with a constant float32 weight, float32 NCHW.
bool isPointwiseConv(ConvOp c) {
  auto w = c.getWeight().getType();
  auto x = llvm::dyn_cast<RankedTensorType>(c.getInput().getType());
  auto cst = c.getWeight().getDefiningOp<arith::ConstantOp>();
  return cst && llvm::isa<DenseElementsAttr>(cst.getValue()) && w.hasStaticShape() && w.getRank() == 4 &&
         w.getDimSize(2) == 1 && w.getDimSize(3) == 1 && c.getGroups() == 1 && x && x.getRank() == 4 &&
         !x.isDynamicDim(1) && x.getElementType().isF32() && c.getType().getElementType().isF32();
}

/// Whether `s` is a per-image channel scale for [N, C, H, W] `x`: [N or 1,
/// C, 1, 1], float32.
bool isChannelScaleOf(Value s, Value x) {
  auto st = llvm::dyn_cast<RankedTensorType>(s.getType());
  auto xt = llvm::dyn_cast<RankedTensorType>(x.getType());
  if (!st || !xt || st.getRank() != 4 || xt.getRank() != 4 || !st.getElementType().isF32()) return false;
  if (st.isDynamicDim(1) || xt.isDynamicDim(1) || st.getDimSize(1) != xt.getDimSize(1)) return false;
  if (st.getDimSize(2) != 1 || st.getDimSize(3) != 1) return false;
  // The batch: 1, x's, or both run-time (the kernel broadcasts a run-time 1).
  return st.getDimSize(0) == 1 || st.getDimSize(0) == xt.getDimSize(0);
}

/// The multiplication's and the conv's regions to merge around `conv`.
std::optional<std::pair<DispatchOp, DispatchOp>> matchChannelScaledConv(ConvOp conv) {
  DispatchOp convRegion = soleCpuRegion(conv);
  if (!convRegion || !isPointwiseConv(conv)) return std::nullopt;
  auto mul = dyn_cast_or_null<MulOp>(soleProducer(conv.getInput(), convRegion));
  if (!mul || mul.getType() != conv.getInput().getType()) return std::nullopt;
  auto mulRegion = cast<DispatchOp>(mul->getParentOp());
  Value a = mul.getLhs(), b = mul.getRhs();
  bool scaleFirst = isChannelScaleOf(a, b) && b.getType() == mul.getType();
  bool scaleSecond = isChannelScaleOf(b, a) && a.getType() == mul.getType();
  if (!scaleFirst && !scaleSecond) return std::nullopt;
  return std::make_pair(mulRegion, convRegion);
}

struct FuseChannelScalePass : impl::FuseChannelScaleBase<FuseChannelScalePass> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp c) { convs.push_back(c); });
    for (ConvOp conv : convs)
      if (auto match = matchChannelScaledConv(conv))
        mergeRegions({match->first, match->second}, kFusedChannelScaledConv);
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFuseChannelScalePass() { return std::make_unique<FuseChannelScalePass>(); }
