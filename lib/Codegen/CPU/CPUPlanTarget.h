//===- CPUPlanTarget.h - the CPU as a plan target -----------------*- C++ -*-===//
//
// The host target of plan building (PlanTarget.h): the regions placed on the
// CPU become kernels of the kernel module (CPUKernelContext) through the
// registered kernel families (KernelRegistry.h), and the plan's own work
// (copies, checks, control-flow values) runs as CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_CPUPLANTARGET_H
#define V4F_LIB_CODEGEN_CPU_CPUPLANTARGET_H

#include "CPUKernelContext.h"
#include "KernelRegistry.h"

#include "v4f/Plan/PlanBuilder.h"

namespace v4f {

class CPUPlanTarget : public HostPlanTarget {
public:
  /// Appends the CPU executable to the plan; kernels go to `kernels`.
  CPUPlanTarget(PlanContext &pc, mlir::ModuleOp kernels);

  CPUKernelContext ctx;

  llvm::StringRef placement() const override { return "cpu"; }
  mlir::LogicalResult emitRegion(PlanBuilder &builder, DispatchOp region,
                                 llvm::ArrayRef<mlir::Operation *> ops) override;
  mlir::LogicalResult emitOp(PlanBuilder &builder, mlir::Operation *op) override;
  bool storesOnlyPacked(mlir::arith::ConstantOp op) override;
  void emitCopy(const TensorInfo &src, const TensorInfo &dst, const std::string &name) override;
  void emitCopyAt(const TensorInfo &src, uint32_t dstBuffer, Reg dstBase, const std::string &name) override;
  void emitWriteRegister(Reg value, uint32_t buffer, const std::string &name) override;
  bool emitDimsCheck(const std::vector<Reg> &a, const std::vector<Reg> &b, const std::string &name) override;
  void emitScalarToI64(const TensorInfo &src, uint32_t buffer, const std::string &name,
                       std::optional<int64_t> clampAbove) override;
  bool hasFailed() const override { return ctx.interfaceFailed; }

private:
  /// Elementwise chain: every intermediate gets dims and followed values
  /// (shape computations read them) but no buffer; only the last op's value
  /// is stored, by one kernel reading the chain's external inputs.
  mlir::LogicalResult emitChain(PlanBuilder &builder, DispatchOp region, llvm::ArrayRef<mlir::Operation *> ops);
  /// A region a fusion pass merged (its `v4f.fused_kernel` kind): one fused
  /// kernel; its intermediates have no buffers.
  mlir::LogicalResult emitFusedRegion(PlanBuilder &builder, DispatchOp region, llvm::ArrayRef<mlir::Operation *> ops,
                                      RegionKernelFn emit);
};

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_CPUPLANTARGET_H
