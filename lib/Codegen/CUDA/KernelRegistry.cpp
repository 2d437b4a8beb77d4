//===- KernelRegistry.cpp - the table of CUDA kernel families -------------===//
#include "KernelRegistry.h"

namespace v4f {
namespace cudagen {

void CudaKernelRegistry::add(mlir::TypeID id, OpSupportsFn supports, GenerateFn generate) {
  bool inserted = opKernels.try_emplace(id, OpKernel{supports, generate}).second;
  (void)inserted;
  assert(inserted && "two CUDA kernels registered for one op");
}

void CudaKernelRegistry::addRegionKernel(llvm::StringRef kind, RegionSupportsFn supports, GenerateFn generate) {
  bool inserted = regionKernels.try_emplace(kind, RegionKernel{supports, generate}).second;
  (void)inserted;
  assert(inserted && "two CUDA kernels registered for one fused region kind");
}

const CudaKernelRegistry &cudaKernels() {
  static const CudaKernelRegistry registry = [] {
    CudaKernelRegistry r;
#define V4F_CUDA_KERNEL_FAMILY(Family) register##Family##Kernels(r);
#include "KernelFamilies.def"
    return r;
  }();
  return registry;
}

} // namespace cudagen
} // namespace v4f
