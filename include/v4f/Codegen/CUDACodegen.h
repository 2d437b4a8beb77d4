//===- CUDACodegen.h - the CUDA target: kernels as CUDA C++, NVRTC -*- C++ -*-===//
//
// The GPU half of codegen (lib/Codegen/CUDA). It shares the dispatch regions
// (v4f-form-dispatch-regions, the fusion passes) and the plan builder
// (lib/Plan) with the CPU target: `v4f-assign-placement` marks each region
// "cuda" or "cpu", the plan builder hands every region placed on the GPU to
// the CUDA plan target (createCudaPlanTarget), which asks
// generateCudaKernel for its CUDA C++, and buildCudaModule compiles the
// translation unit with NVRTC into a cubin per arch plus PTX (the v4f CUDA
// module, kernel_abi.h).
// Why CUDA C++ through NVRTC rather than MLIR's GPU/NVVM dialects:
// docs/gpu.md ("Design").
//
//===----------------------------------------------------------------------===//
#ifndef V4F_CODEGEN_CUDACODEGEN_H
#define V4F_CODEGEN_CUDACODEGEN_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace v4f {

struct CudaOptions {
  /// --cuda-arch: compute capabilities (90 = sm_90); cubins for each, PTX for the lowest.
  std::vector<int> archs = {90};
  /// --precision: "fp32" (FP32 FMA), "fp16", "bf16" or "tf32" (tensor cores
  /// on operands rounded to that format, FP32 accumulation, FP32 tensors in
  /// memory) for the GPU's matrix products.
  std::string precision = "fp32";
};

/// Whether the CUDA backend has a kernel for the ops of dispatch region
/// `region` (a v4f.dispatch); if not, `reason` says why (for --verbose,
/// inspect and the region's v4f.placement_reason).
bool cudaSupportsRegion(mlir::Operation *region, std::string &reason);

/// A tensor of a region placed on the GPU: static dims and element type.
struct CudaTensor {
  std::vector<int64_t> dims;
  mlir::Type elementType;
};

/// One generated kernel: its __global__ function, binding order and access,
/// and launch geometry.
struct CudaKernel {
  std::string source; // defines `extern "C" __global__ void <name>(v4f_cuda_args_t)`
  /// Binding j is the region's result (-1) or external operand `operands[j]`.
  std::vector<int> operands;
  std::vector<uint32_t> access; // V4F_BINDING_* per binding
  int64_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  double flops = 0;
  std::string precision; // "fp16"/"bf16" for tensor-core kernels, else ""
};

/// The kernel named `name` computing `ops` (one op, or a chain of fusible
/// elementwise ops whose last result is the region's) from `externals`
/// (values defined outside the region, with `externalTensors`) into
/// `result`. Fails (with a diagnostic) on what cudaSupportsRegion refuses.
mlir::FailureOr<CudaKernel> generateCudaKernel(llvm::ArrayRef<mlir::Operation *> ops,
                                               llvm::ArrayRef<mlir::Value> externals,
                                               llvm::ArrayRef<CudaTensor> externalTensors, const CudaTensor &result,
                                               const std::string &name, const CudaOptions &options);

/// The code every translation unit starts with (headers, the args struct, helpers).
std::string cudaPrelude(const CudaOptions &options);

/// Compiles `source` with NVRTC (found at run time: $V4F_NVRTC, then
/// libnvrtc.so.13/.12/.so on the library path and under /usr/local/cuda) to a
/// cubin per arch of `options` and PTX for the lowest, and packs them with
/// the entry points' interface tables (kernel_abi.h) into `image`.
bool buildCudaModule(const std::string &source, const std::vector<std::vector<uint32_t>> &interfaces,
                     const CudaOptions &options, std::vector<uint8_t> &image, std::string &error);

/// The CUDA half of kernel generation: options in; the translation unit of
/// the regions placed on the GPU and each entry point's interface table out
/// (empty source: none was placed there).
struct CudaKernels {
  CudaOptions options;
  std::string source;
  std::vector<std::vector<uint32_t>> interfaces;
  /// "<dispatch>: <reason>" for every region kept on the CPU (v4f.placement_reason).
  std::vector<std::string> cpuRegions;
};

class PlanTarget;
/// The plan target of the regions placed on the GPU (CudaPlanTarget.cpp):
/// one CUDA kernel and dispatch each, transfers at the placement borders;
/// the translation unit and interfaces land in `out` when the plan is done.
std::unique_ptr<PlanTarget> createCudaPlanTarget(CudaKernels &out);

} // namespace v4f

#endif // V4F_CODEGEN_CUDACODEGEN_H
