//===- KernelRegistry.h - which CPU kernels compute which op or fused region -*- C++ -*-===//
//
// Each kernel family registers its emitters in a function of its own file,
// `register<Family>Kernels(CPUKernelRegistry &)`, listed once in
// KernelFamilies.def. The CPU plan target looks emitters up by op (TypeID)
// or by the `v4f.fused_kernel` kind a fusion pass recorded on a region; it
// never matches ops itself.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_KERNELREGISTRY_H
#define V4F_LIB_CODEGEN_CPU_KERNELREGISTRY_H

#include "CPUKernelContext.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace v4f {

class PlanBuilder;

/// The kernels of one op whose single result already has a buffer.
using OpKernelFn = mlir::LogicalResult (*)(CPUKernelContext &ctx, mlir::Operation *op,
                                           llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// The kernels of an op that describes its results itself (several results,
/// or sizes only its kernels know): it records them in `builder.infos`.
using ResultsKernelFn = mlir::LogicalResult (*)(CPUKernelContext &ctx, PlanBuilder &builder, mlir::Operation *op,
                                                llvm::ArrayRef<TensorInfo> operands);
/// The one fused kernel of a region of a recorded kind: `infoOf` gives the
/// infos of the values it reads from outside, `result` is the region's.
using RegionKernelFn = mlir::LogicalResult (*)(CPUKernelContext &ctx, DispatchOp region,
                                               llvm::ArrayRef<mlir::Operation *> ops,
                                               llvm::function_ref<const TensorInfo &(mlir::Value)> infoOf,
                                               const TensorInfo &result);

class CPUKernelRegistry {
public:
  template <typename... Ops>
  void addOpKernel(OpKernelFn fn) {
    (add(opKernels, mlir::TypeID::get<Ops>(), fn), ...);
  }
  template <typename... Ops>
  void addResultsKernel(ResultsKernelFn fn) {
    (add(resultsKernels, mlir::TypeID::get<Ops>(), fn), ...);
  }
  void addRegionKernel(llvm::StringRef kind, RegionKernelFn fn);

  OpKernelFn opKernel(mlir::Operation *op) const { return opKernels.lookup(op->getName().getTypeID()); }
  ResultsKernelFn resultsKernel(mlir::Operation *op) const { return resultsKernels.lookup(op->getName().getTypeID()); }
  RegionKernelFn regionKernel(llvm::StringRef kind) const { return regionKernels.lookup(kind); }

private:
  template <typename Fn>
  static void add(llvm::DenseMap<mlir::TypeID, Fn> &map, mlir::TypeID id, Fn fn) {
    bool inserted = map.try_emplace(id, fn).second;
    (void)inserted;
    assert(inserted && "two CPU kernels registered for one op");
  }
  llvm::DenseMap<mlir::TypeID, OpKernelFn> opKernels;
  llvm::DenseMap<mlir::TypeID, ResultsKernelFn> resultsKernels;
  llvm::StringMap<RegionKernelFn> regionKernels;
};

#define V4F_CPU_KERNEL_FAMILY(Family) void register##Family##Kernels(CPUKernelRegistry &registry);
#include "KernelFamilies.def"

/// Every family's kernels, registered once.
const CPUKernelRegistry &cpuKernels();

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_KERNELREGISTRY_H
