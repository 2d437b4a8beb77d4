//===- FusePointwiseDepthwise.cpp - v4f-fuse-pointwise-depthwise ----------===//
//
// The expansion of an inverted residual block (MobileNetV2/V3, EfficientNet)
// — a 1x1 conv to several times the channels, then a depthwise conv — writes
// the block's largest tensor (MobileNetV2's first: 96 x 112 x 112 floats,
// 4.8 MB) only for the depthwise conv to read it back: two memory-bound
// dispatches that scale poorly across cores. This pass merges the two
// one-op regions into one, which the CPU kernel generator lowers as one
// kernel (PointwiseDepthwiseKernels.cpp) computing, per block of output rows
// and 8 channels at a time, the expanded rows into the worker's scratch and
// the depthwise conv from there: the expanded tensor never exists.
//
// Runs after v4f-form-dispatch-regions and v4f-assign-placement; regions
// placed on the GPU are left alone.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"
#include "RegionFusion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace v4f {
#define GEN_PASS_DEF_FUSEPOINTWISEDEPTHWISE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// Smallest expanded tensor worth fusing.
constexpr int64_t kMinExpandedBytes = 1 << 20;

/// The pointwise and depthwise regions to merge around `depthwise`.
std::optional<std::pair<DispatchOp, DispatchOp>> matchPointwiseDepthwise(ConvOp depthwise) {
  DispatchOp dwRegion = soleCpuRegion(depthwise);
  if (!dwRegion || !isDepthwise(depthwise)) return std::nullopt;
  auto pointwise = dyn_cast_or_null<ConvOp>(soleProducer(depthwise.getInput(), dwRegion));
  if (!pointwise || !isPointwise(pointwise, /*allowResidual=*/false)) return std::nullopt;
  auto pwRegion = cast<DispatchOp>(pointwise->getParentOp());
  // Only expansions too large for the caches: smaller ones make their round
  // trip through L2 at little cost, and the fused kernel's narrow rows use
  // its vectors poorly.
  if (pointwise.getType().getNumElements() * int64_t(sizeof(float)) < kMinExpandedBytes) return std::nullopt;
  // Every other operand of the depthwise region (bias, residual, weight) is
  // available before the pointwise region, or the merged region (placed
  // where the depthwise one is) still sees it: it is.
  return std::make_pair(pwRegion, dwRegion);
}

struct FusePointwiseDepthwisePass : impl::FusePointwiseDepthwiseBase<FusePointwiseDepthwisePass> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp c) { convs.push_back(c); });
    for (ConvOp dw : convs) {
      auto match = matchPointwiseDepthwise(dw);
      if (!match) continue;
      auto [pw, dwRegion] = *match;
      // The pointwise conv moves in front of the depthwise one inside its
      // region; the depthwise region (and its placement) stays.
      Operation *pwOp = &*pw.getBodyOps().begin();
      Value inner = pwOp->getResult(0);
      pwOp->moveBefore(dw);
      pw.getResult(0).replaceAllUsesWith(inner);
      pw->erase();
      dwRegion->setAttr(kFusedKernelAttr, StringAttr::get(dwRegion->getContext(), kFusedPointwiseDepthwise));
    }
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFusePointwiseDepthwisePass() { return std::make_unique<FusePointwiseDepthwisePass>(); }
