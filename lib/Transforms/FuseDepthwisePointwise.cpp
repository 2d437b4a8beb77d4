//===- FuseDepthwisePointwise.cpp - v4f-fuse-depthwise-pointwise ----------===//
//
// A depthwise conv followed by a 1x1 conv — every MobileNetV1 layer, the
// first block of MobileNetV2 and EfficientNet (no expansion), a projection
// after a depthwise conv — writes the depthwise result (MobileNetV2's first:
// 32 x 112 x 112 floats, 1.6 MB) only for the 1x1 conv to read it back: two
// memory-bound dispatches that scale poorly across cores. This pass merges
// the two one-op regions into one, which the CPU kernel generator lowers as
// one kernel (DepthwisePointwiseKernels.cpp) computing, per output row, the
// depthwise row of every channel into the worker's scratch and the 1x1 conv
// from there: the depthwise result never exists.
//
// Runs after v4f-fuse-pointwise-depthwise (a depthwise conv already merged
// with its expansion is no longer a one-op region and stays as it is) and
// v4f-assign-placement; regions placed on the GPU are left alone.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"
#include "RegionFusion.h"
#include "v4f/Codegen/KernelLimits.h"

namespace v4f {
#define GEN_PASS_DEF_FUSEDEPTHWISEPOINTWISE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// Smallest depthwise result worth fusing (smaller ones make their round
/// trip through L2 at little cost).
constexpr int64_t kMinIntermediateBytes = 1 << 20;
/// The fused kernel's scratch for `dw` with one output row per block at the
/// widest vectors (KernelLimits.h).
int64_t scratchBytes(ConvOp dw) {
  auto x = dw.getInput().getType().getShape(), y = dw.getType().getShape();
  auto w = dw.getWeight().getType().getShape();
  DepthwisePointwiseScratch scratch =
      depthwisePointwiseScratch(x[3], dw.getPads()[3], y[3], w[2], dw.getDilations()[0], kCpuMaxVectorLanes);
  return scratch.floats(/*rows=*/1, x[1], dw.getStrides()[0]) * int64_t(sizeof(float));
}

/// The depthwise and pointwise regions to merge around `pointwise`.
std::optional<std::pair<DispatchOp, DispatchOp>> matchDepthwisePointwise(ConvOp pointwise) {
  DispatchOp pwRegion = soleCpuRegion(pointwise);
  if (!pwRegion || !isPointwise(pointwise, /*allowResidual=*/true)) return std::nullopt;
  auto depthwise = dyn_cast_or_null<ConvOp>(soleProducer(pointwise.getInput(), pwRegion));
  if (!depthwise || !isDepthwise(depthwise) || depthwise.getResidual()) return std::nullopt;
  if (depthwise.getType().getNumElements() * int64_t(sizeof(float)) < kMinIntermediateBytes) return std::nullopt;
  if (scratchBytes(depthwise) > kCpuMaxDepthwisePointwiseScratchBytes) return std::nullopt;
  // The residual operand of the 1x1 conv is defined before its region, so
  // the merged region (placed where the 1x1 conv's is) still sees it.
  return std::make_pair(cast<DispatchOp>(depthwise->getParentOp()), pwRegion);
}

struct FuseDepthwisePointwisePass : impl::FuseDepthwisePointwiseBase<FuseDepthwisePointwisePass> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp c) { convs.push_back(c); });
    for (ConvOp pw : convs)
      if (auto match = matchDepthwisePointwise(pw))
        mergeRegions({match->first, match->second}, kFusedDepthwisePointwise);
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFuseDepthwisePointwisePass() { return std::make_unique<FuseDepthwisePointwisePass>(); }
