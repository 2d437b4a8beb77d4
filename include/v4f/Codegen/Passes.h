//===- Passes.h - v4f code generation passes --------------------*- C++ -*-===//
#ifndef V4F_CODEGEN_PASSES_H
#define V4F_CODEGEN_PASSES_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Plan/ExecutablePlan.h"

#include <memory>

namespace v4f {

/// Where v4f-build-plan leaves the plan and the constants.
struct GeneratedKernels {
  ExecutablePlan plan;
  std::vector<uint8_t> constants;
  /// Set `cuda.options` and `withCuda` to generate the regions placed on the
  /// GPU as CUDA kernels (their source and interfaces land in `cuda`).
  bool withCuda = false;
  CudaKernels cuda;
};
std::unique_ptr<mlir::Pass> createBuildPlanPass(GeneratedKernels *sink = nullptr);

/// v4f-assign-placement for the targets the compile asks for (--target=cpu |
/// cuda | cpu,cuda).
struct PlacementOptions {
  bool cpu = true, cuda = false;
};
std::unique_ptr<mlir::Pass> createAssignPlacementPass(const PlacementOptions &options);

#define GEN_PASS_DECL
#include "v4f/Codegen/Passes.h.inc"

/// The lowering of generated CPU kernels to the LLVM dialect
/// (LowerToLLVM.cpp); registered as the `v4f-cpu-lower-to-llvm` pipeline.
void buildCPULowerToLLVMPipeline(mlir::OpPassManager &pm);
void registerCPULowerToLLVMPipeline();

#define GEN_PASS_REGISTRATION
#include "v4f/Codegen/Passes.h.inc"

} // namespace v4f

#endif // V4F_CODEGEN_PASSES_H
