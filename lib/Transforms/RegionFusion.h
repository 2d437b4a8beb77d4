//===- RegionFusion.h - helpers of the passes that merge dispatch regions -===//
#ifndef V4F_LIB_TRANSFORMS_REGIONFUSION_H
#define V4F_LIB_TRANSFORMS_REGIONFUSION_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Builders.h"

namespace v4f {

/// The dispatch region holding `op` when the region holds only `op`, has
/// one result and is not placed on the GPU (`v4f.placement` = "cuda": the
/// CUDA generator has no fused kernels for what these passes merge); else
/// null.
inline DispatchOp soleCpuRegion(mlir::Operation *op) {
  auto region = llvm::dyn_cast_or_null<DispatchOp>(op ? op->getParentOp() : nullptr);
  if (!region || region.getNumResults() != 1) return {};
  if (std::distance(region.getBodyOps().begin(), region.getBodyOps().end()) != 1) return {};
  if (auto placement = region->getAttrOfType<mlir::StringAttr>("v4f.placement"); placement && placement == "cuda")
    return {};
  return region;
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

/// Moves the ops of `regions` (program order, one block; each one's result
/// used only by the next ones, the last one's anywhere; each one's other
/// operands defined before the last one) into one region placed where the
/// last one was, with the last one's attributes (placement).
inline void mergeRegions(llvm::ArrayRef<DispatchOp> regions) {
  DispatchOp last = regions.back();
  mlir::OpBuilder b(last);
  auto fused = b.create<DispatchOp>(last.getLoc(), last.getResultTypes());
  for (mlir::NamedAttribute attr : last->getDiscardableAttrs()) fused->setAttr(attr.getName(), attr.getValue());
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
