//===- KernelRegistry.h - which CUDA kernels compute which op or fused region -*- C++ -*-===//
//
// Each CUDA kernel family registers, in a function of its own file
// (`register<Family>Kernels`, listed once in KernelFamilies.def), what it
// supports and how it generates: per op (TypeID), or per `v4f.fused_kernel`
// kind recorded by a fusion pass. Placement asks `supports`, plan building
// asks `generate`; neither matches ops itself.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CUDA_KERNELREGISTRY_H
#define V4F_LIB_CODEGEN_CUDA_KERNELREGISTRY_H

#include "v4f/Codegen/CUDACodegen.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace v4f {
namespace cudagen {

/// What a generator gets: the region's ops (one op, a chain of elementwise
/// ops, or a fused region), the values it reads from outside with their
/// static tensors, its result, the kernel's name and the compile options.
struct KernelRequest {
  llvm::ArrayRef<mlir::Operation *> ops;
  llvm::ArrayRef<mlir::Value> externals;
  llvm::ArrayRef<CudaTensor> ext;
  const CudaTensor &result;
  const std::string &name;
  const CudaOptions &options;
};

/// Whether the family has a kernel for `op` (static shapes already
/// checked); `why` says why not.
using OpSupportsFn = bool (*)(mlir::Operation *op, std::string &why);
/// The same for the ops of a fused region.
using RegionSupportsFn = bool (*)(llvm::ArrayRef<mlir::Operation *> ops, std::string &why);
using GenerateFn = mlir::FailureOr<CudaKernel> (*)(const KernelRequest &request);

class CudaKernelRegistry {
public:
  struct OpKernel {
    OpSupportsFn supports = nullptr;
    GenerateFn generate = nullptr;
  };
  struct RegionKernel {
    RegionSupportsFn supports = nullptr;
    GenerateFn generate = nullptr;
  };

  template <typename... Ops>
  void addOpKernel(OpSupportsFn supports, GenerateFn generate) {
    (add(mlir::TypeID::get<Ops>(), supports, generate), ...);
  }
  void addRegionKernel(llvm::StringRef kind, RegionSupportsFn supports, GenerateFn generate);

  /// The op's kernel; a default-constructed one (null functions) if none.
  OpKernel opKernel(mlir::Operation *op) const { return opKernels.lookup(op->getName().getTypeID()); }
  RegionKernel regionKernel(llvm::StringRef kind) const { return regionKernels.lookup(kind); }

private:
  void add(mlir::TypeID id, OpSupportsFn supports, GenerateFn generate);
  llvm::DenseMap<mlir::TypeID, OpKernel> opKernels;
  llvm::StringMap<RegionKernel> regionKernels;
};

#define V4F_CUDA_KERNEL_FAMILY(Family) void register##Family##Kernels(CudaKernelRegistry &registry);
#include "KernelFamilies.def"

/// Every family's kernels, registered once.
const CudaKernelRegistry &cudaKernels();

} // namespace cudagen
} // namespace v4f

#endif // V4F_LIB_CODEGEN_CUDA_KERNELREGISTRY_H
