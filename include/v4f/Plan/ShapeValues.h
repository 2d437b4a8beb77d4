//===- ShapeValues.h - tensor values the plan follows as registers -*- C++ -*-===//
//
// Small integer tensors that hold shapes carry their element values as
// shape-program registers (TensorInfo::values). The plan builder follows
// them (ShapeValueOps.cpp: result dims that depend on operand values); the
// kernels of those ops read the same registers (the CPU's
// ShapeValueKernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_SHAPEVALUES_H
#define V4F_PLAN_SHAPEVALUES_H

#include "v4f/Plan/PlanContext.h"

#include "mlir/Support/LogicalResult.h"

namespace v4f {

/// Registers of an index operand's values, or failure with a clear message.
mlir::FailureOr<std::vector<Reg>> valuesOf(mlir::Operation *op, const TensorInfo &t, llvm::StringRef what);
/// d-th entry of `dims` where d is itself a register: sum of selects.
Reg pick(ShapeProgramBuilder &sp, const std::vector<Reg> &dims, Reg index);
/// Per-dim (begin, end) pads of a v4f.pad as registers.
mlir::FailureOr<std::pair<std::vector<Reg>, std::vector<Reg>>> padAmounts(PlanContext &ctx, PadOp op,
                                                                          llvm::ArrayRef<TensorInfo> operands);
struct SliceParams {
  std::vector<Reg> start, step, count; // per input dim
};
mlir::FailureOr<SliceParams> sliceParams(PlanContext &ctx, SliceOp op, llvm::ArrayRef<TensorInfo> operands);

/// Element values of `op`'s result as registers, when the plan can follow them.
std::optional<std::vector<Reg>> propagateValues(PlanContext &ctx, mlir::Operation *op,
                                                llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// Result dims of the ops whose shape depends on operand values (reshape
/// with a shape operand, expand, unsqueeze, slice, range, fill, pad).
mlir::FailureOr<std::vector<Reg>> valueDependentDims(PlanContext &ctx, mlir::Operation *op,
                                                     llvm::ArrayRef<TensorInfo> operands);
/// Per-dim "reduced" flags (0/1 registers) of a v4f.reduce.
mlir::FailureOr<std::vector<Reg>> reducedFlags(PlanContext &ctx, ReduceOp op, llvm::ArrayRef<TensorInfo> operands);
/// Result dims of a v4f.reduce (its axes constant or followed values).
mlir::FailureOr<std::vector<Reg>> reduceResultDims(PlanContext &ctx, mlir::Operation *op,
                                                   llvm::ArrayRef<TensorInfo> operands);

} // namespace v4f

#endif
