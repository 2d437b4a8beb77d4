//===- ShapeValues.h - reading shape values in kernels' shape rules -*- C++ -*-===//
//
// Helpers shared by ShapeValueOps.cpp (result dims that depend on operand
// values) and ShapeValueKernels.cpp (the kernels of those ops).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_SHAPEVALUES_H
#define V4F_LIB_CODEGEN_CPU_SHAPEVALUES_H

#include "DispatchContext.h"

namespace v4f {

/// Registers of an index operand's values, or failure with a clear message.
mlir::FailureOr<std::vector<Reg>> valuesOf(mlir::Operation *op, const TensorInfo &t, llvm::StringRef what);
/// d-th entry of `dims` where d is itself a register: sum of selects.
Reg pick(ShapeProgramBuilder &sp, const std::vector<Reg> &dims, Reg index);
/// Per-dim (begin, end) pads of a v4f.pad as registers.
mlir::FailureOr<std::pair<std::vector<Reg>, std::vector<Reg>>> padAmounts(DispatchContext &ctx, PadOp op,
                                                                        llvm::ArrayRef<TensorInfo> operands);
struct SliceParams {
  std::vector<Reg> start, step, count; // per input dim
};
mlir::FailureOr<SliceParams> sliceParams(DispatchContext &ctx, SliceOp op, llvm::ArrayRef<TensorInfo> operands);

} // namespace v4f

#endif
