//===- PlanTarget.h - what a code generation target gives the plan builder -*- C++ -*-===//
//
// The plan builder (lib/Plan) walks the graph and owns what every target
// shares: buffers, the shape program, run-time control flow, graph inputs
// and outputs. It hands each v4f.dispatch region to the target the region is
// placed on (`v4f.placement`), which appends the region's dispatches:
//
//   - PlanTarget: a target that runs dispatch regions (the CUDA target).
//   - HostPlanTarget: the target that also runs the plan's own work
//     (copies into graph outputs and between an If's sides and a Loop's
//     iterations, condition and shape checks) and decides how constants are
//     stored (the CPU target).
//
// A target keeps its own kernels and executables; `finish` closes them once
// the walk is over.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_PLANTARGET_H
#define V4F_PLAN_PLANTARGET_H

#include "v4f/Plan/PlanContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Support/LogicalResult.h"

namespace v4f {

class PlanBuilder;

class PlanTarget {
public:
  virtual ~PlanTarget();
  /// The `v4f.placement` value of the regions this target runs ("cpu", "cuda").
  virtual llvm::StringRef placement() const = 0;
  /// Appends the dispatches of `region` (whose body ops are `ops`, in
  /// order) and records the infos of the values its body yields.
  virtual mlir::LogicalResult emitRegion(PlanBuilder &builder, DispatchOp region,
                                         llvm::ArrayRef<mlir::Operation *> ops) = 0;
  /// Called once after the whole graph was walked and guarded, before the
  /// plan's buffers get their lifetimes.
  virtual mlir::LogicalResult finish(PlanBuilder &builder) { return mlir::success(); }
};

class HostPlanTarget : public PlanTarget {
public:
  /// An op outside any region that the plan still has to place (a buffer
  /// view: reshape, unsqueeze).
  virtual mlir::LogicalResult emitOp(PlanBuilder &builder, mlir::Operation *op) = 0;
  /// Whether every user of constant `op` keeps its own packed copy, so the
  /// constant itself needs no buffer.
  virtual bool storesOnlyPacked(mlir::arith::ConstantOp op) = 0;

  /// Copies `src` into `dst` (same element count).
  virtual void emitCopy(const TensorInfo &src, const TensorInfo &dst, const std::string &name) = 0;
  /// Copies `src` (row-major) into `dstBuffer` from element `dstBase` on.
  virtual void emitCopyAt(const TensorInfo &src, uint32_t dstBuffer, Reg dstBase, const std::string &name) = 0;
  /// Writes register `value` as an int64 into `buffer`.
  virtual void emitWriteRegister(Reg value, uint32_t buffer, const std::string &name) = 0;
  /// Fails the run with V4F_KERNEL_ERROR_SHAPE_MISMATCH when any pair of
  /// dims differs (returns false when no check is needed).
  virtual bool emitDimsCheck(const std::vector<Reg> &a, const std::vector<Reg> &b, const std::string &name) = 0;
  /// Copies element 0 of `src` as an int64 into `buffer`, at most
  /// `clampAbove` when given.
  virtual void emitScalarToI64(const TensorInfo &src, uint32_t buffer, const std::string &name,
                               std::optional<int64_t> clampAbove = std::nullopt) = 0;
  /// Whether an error was already reported while emitting (the plan is then
  /// refused once the walk ends).
  virtual bool hasFailed() const = 0;
};

} // namespace v4f

#endif // V4F_PLAN_PLANTARGET_H
