//===- RegionFusion.h - helpers of the passes that merge dispatch regions -===//
#ifndef V4F_LIB_TRANSFORMS_REGIONFUSION_H
#define V4F_LIB_TRANSFORMS_REGIONFUSION_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace v4f {

/// Where `region` runs: its `v4f.placement` ("cuda" or "cpu"; "cpu" when
/// v4f-assign-placement did not run).
inline llvm::StringRef placementOf(DispatchOp region) {
  auto placement = region->getAttrOfType<mlir::StringAttr>("v4f.placement");
  return placement ? placement.getValue() : llvm::StringRef("cpu");
}

/// The dispatch region holding `op` when the region holds only `op` and has
/// one result, wherever it is placed; else null.
inline DispatchOp soleRegion(mlir::Operation *op) {
  auto region = llvm::dyn_cast_or_null<DispatchOp>(op ? op->getParentOp() : nullptr);
  if (!region || region.getNumResults() != 1) return {};
  if (std::distance(region.getBodyOps().begin(), region.getBodyOps().end()) != 1) return {};
  return region;
}

/// soleRegion(op) when that region is not placed on the GPU (the CUDA
/// generator has no fused kernels for what the CPU-only fusion passes
/// merge); else null.
inline DispatchOp soleCpuRegion(mlir::Operation *op) {
  DispatchOp region = soleRegion(op);
  return region && placementOf(region) != "cuda" ? region : DispatchOp();
}

/// The op of the one-op CPU region (soleCpuRegion) that produces `v`, when
/// `v` has no other use and that region sits in `consumer`'s block; else
/// null.
inline mlir::Operation *soleProducer(mlir::Value v, DispatchOp consumer) {
  auto region = v.getDefiningOp<DispatchOp>();
  if (!region || !v.hasOneUse() || region->getBlock() != consumer->getBlock()) return nullptr;
  mlir::Operation *op = &*region.getBodyOps().begin();
  return soleCpuRegion(op) == region ? op : nullptr;
}

/// A static float32 4-D tensor.
inline bool isStaticF32x4(mlir::Value v) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() && t.getRank() == 4;
}

/// Whether `conv`'s weight is a dense constant.
inline bool hasConstantWeight(ConvOp conv) {
  auto cst = conv.getWeight().getDefiningOp<mlir::arith::ConstantOp>();
  return cst && llvm::isa<mlir::DenseElementsAttr>(cst.getValue());
}

/// A 1x1, stride-1, unpadded, ungrouped static float32 conv with a constant
/// weight (bias and activation fused are fine; a residual when
/// `allowResidual`).
inline bool isPointwise(ConvOp c, bool allowResidual) {
  auto w = c.getWeight().getType().getShape();
  return isStaticF32x4(c.getInput()) && isStaticF32x4(c.getResult()) && hasConstantWeight(c) &&
         (allowResidual || !c.getResidual()) && c.getGroups() == 1 && w[2] == 1 && w[3] == 1 &&
         llvm::all_of(c.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(c.getPads(), [](int64_t p) { return p == 0; });
}

/// A depthwise conv (one input channel per group, multiplier 1) the fused
/// kernels handle: a constant weight, kernel at most 7 x 7, strides 1 or 2
/// no wider than the (dilated) window, left padding at most 4 (the fused
/// kernels' rows keep it within the first vector, and SSE's vectors are 4
/// wide), rows of at most 4096 (their scratch holds several rows), static
/// float32.
inline bool isDepthwise(ConvOp c) {
  auto w = c.getWeight().getType().getShape();
  auto x = c.getInput().getType().getShape();
  auto strides = c.getStrides(), dil = c.getDilations();
  return isStaticF32x4(c.getInput()) && isStaticF32x4(c.getResult()) && hasConstantWeight(c) && c.getGroups() == x[1] &&
         w[0] == x[1] && w[1] == 1 && w[2] <= 7 && w[3] <= 7 && c.getPads()[1] <= 4 && x[3] <= 4096 &&
         llvm::all_of(strides, [](int64_t s) { return s == 1 || s == 2; }) && (w[2] - 1) * dil[0] + 1 >= strides[0];
}

/// Moves the ops of `regions` (program order, one block; each one's result
/// used only by the next ones, the last one's anywhere; each one's other
/// operands defined before the last one) into one region placed where the
/// last one was, with the last one's attributes (placement), and records
/// the fused kernel the merge was for (`kind`, kFusedKernelAttr).
inline void mergeRegions(llvm::ArrayRef<DispatchOp> regions, llvm::StringRef kind) {
  DispatchOp last = regions.back();
  mlir::OpBuilder b(last);
  auto fused = b.create<DispatchOp>(last.getLoc(), last.getResultTypes());
  for (mlir::NamedAttribute attr : last->getDiscardableAttrs()) fused->setAttr(attr.getName(), attr.getValue());
  fused->setAttr(kFusedKernelAttr, b.getStringAttr(kind));
  mlir::Block *body = b.createBlock(&fused.getBody());
  b.setInsertionPointToEnd(body);
  mlir::Value lastValue;
  for (DispatchOp r : regions) {
    auto ret = llvm::cast<DispatchReturnOp>(r.getBody().front().getTerminator());
    mlir::Value inner = ret.getValues()[0];
    for (mlir::Operation &op : llvm::make_early_inc_range(r.getBodyOps())) op.moveBefore(body, body->end());
    r.getResult(0).replaceAllUsesWith(inner);
    lastValue = inner;
  }
  b.create<DispatchReturnOp>(last.getLoc(), mlir::ValueRange{lastValue});
  // Uses outside the fused region now name the inner value: point them at
  // the region's result.
  lastValue.replaceUsesWithIf(fused.getResult(0),
                              [&](mlir::OpOperand &use) { return use.getOwner()->getParentOp() != fused; });
  for (DispatchOp r : llvm::reverse(regions)) r->erase();
}

} // namespace v4f

#endif // V4F_LIB_TRANSFORMS_REGIONFUSION_H
