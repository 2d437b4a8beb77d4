//===- KernelRegistry.cpp - the table of CPU kernel families --------------===//
#include "KernelRegistry.h"

namespace v4f {

void CPUKernelRegistry::addRegionKernel(llvm::StringRef kind, RegionKernelFn fn) {
  bool inserted = regionKernels.try_emplace(kind, fn).second;
  (void)inserted;
  assert(inserted && "two CPU kernels registered for one fused region kind");
}

const CPUKernelRegistry &cpuKernels() {
  static const CPUKernelRegistry registry = [] {
    CPUKernelRegistry r;
#define V4F_CPU_KERNEL_FAMILY(Family) register##Family##Kernels(r);
#include "KernelFamilies.def"
    return r;
  }();
  return registry;
}

} // namespace v4f
