//===- RowVectorOps.h - small vector helpers of the row kernels -*- C++ -*-===//
//
// Shared by ReductionKernels.cpp and PoolKernels.cpp. Internal to
// lib/Codegen/CPU.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_ROWVECTOROPS_H
#define V4F_LIB_CODEGEN_CPU_ROWVECTOROPS_H

#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace v4f {

/// Lanes of the vector paths over contiguous rows (a multiple of every
/// target's f32 vector but AVX-512's, where LLVM uses half registers).
inline constexpr int64_t kRowLanes = 8;

inline mlir::Value addf(KernelBuilder &kb, mlir::Value a, mlir::Value b) {
  return kb.b.create<mlir::arith::AddFOp>(kb.loc, a, b);
}
inline mlir::Value subf(KernelBuilder &kb, mlir::Value a, mlir::Value b) {
  return kb.b.create<mlir::arith::SubFOp>(kb.loc, a, b);
}
inline mlir::Value mulf(KernelBuilder &kb, mlir::Value a, mlir::Value b) {
  return kb.b.create<mlir::arith::MulFOp>(kb.loc, a, b);
}
inline mlir::Value divf(KernelBuilder &kb, mlir::Value a, mlir::Value b) {
  return kb.b.create<mlir::arith::DivFOp>(kb.loc, a, b);
}
inline mlir::Value andi(KernelBuilder &kb, mlir::Value a, mlir::Value b) {
  return kb.b.create<mlir::arith::AndIOp>(kb.loc, a, b);
}
/// lo <= v < hi (i64 scalars or vectors).
inline mlir::Value inRange(KernelBuilder &kb, mlir::Value v, mlir::Value lo, mlir::Value hi) {
  return andi(kb, kb.cmp(mlir::arith::CmpIPredicate::sge, v, lo), kb.cmp(mlir::arith::CmpIPredicate::slt, v, hi));
}

} // namespace v4f

#endif
