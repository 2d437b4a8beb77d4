//===- RegionFusion.h - helpers of the passes that merge dispatch regions -===//
#ifndef V4F_LIB_TRANSFORMS_REGIONFUSION_H
#define V4F_LIB_TRANSFORMS_REGIONFUSION_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

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

} // namespace v4f

#endif // V4F_LIB_TRANSFORMS_REGIONFUSION_H
