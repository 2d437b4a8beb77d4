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

bool staticF32(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() && t.getRank() == 4;
}

bool constantWeight(ConvOp conv) {
  auto cst = conv.getWeight().getDefiningOp<arith::ConstantOp>();
  return cst && llvm::isa<DenseElementsAttr>(cst.getValue());
}

/// A 1x1, stride-1, unpadded, ungrouped conv with a constant weight and no
/// residual (bias and activation fused are fine).
bool isPointwise(ConvOp c) {
  auto w = c.getWeight().getType().getShape();
  return staticF32(c.getInput()) && staticF32(c.getResult()) && constantWeight(c) && !c.getResidual() &&
         c.getGroups() == 1 && w[2] == 1 && w[3] == 1 && llvm::all_of(c.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(c.getPads(), [](int64_t p) { return p == 0; });
}

/// A depthwise conv (one input channel per group, multiplier 1) with a
/// constant weight, kernel at most 7 x 7, strides 1 or 2 no wider than the
/// (dilated) window, left padding at most 4 (the fused kernel's rows keep
/// it within the first vector, and SSE's vectors are 4 wide), rows of at
/// most 4096 (the kernel's scratch holds several rows of 8 channels).
bool isDepthwise(ConvOp c) {
  auto w = c.getWeight().getType().getShape();
  auto x = c.getInput().getType().getShape();
  auto strides = c.getStrides(), dil = c.getDilations();
  return staticF32(c.getInput()) && staticF32(c.getResult()) && constantWeight(c) && c.getGroups() == x[1] &&
         w[0] == x[1] && w[1] == 1 && w[2] <= 7 && w[3] <= 7 && c.getPads()[1] <= 4 && x[3] <= 4096 &&
         llvm::all_of(strides, [](int64_t s) { return s == 1 || s == 2; }) &&
         (w[2] - 1) * dil[0] + 1 >= strides[0];
}

/// The pointwise and depthwise regions to merge around `depthwise`.
std::optional<std::pair<DispatchOp, DispatchOp>> matchPointwiseDepthwise(ConvOp depthwise) {
  DispatchOp dwRegion = soleCpuRegion(depthwise);
  if (!dwRegion || !isDepthwise(depthwise)) return std::nullopt;
  auto pointwise = dyn_cast_or_null<ConvOp>(soleProducer(depthwise.getInput(), dwRegion));
  if (!pointwise || !isPointwise(pointwise)) return std::nullopt;
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
    }
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFusePointwiseDepthwisePass() {
  return std::make_unique<FusePointwiseDepthwisePass>();
}
