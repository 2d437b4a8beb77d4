//===- LowerToLLVM.cpp - kernel module -> LLVM dialect ---------------------===//
//
// The CPU lowering pipeline after kernel generation: canonicalize, CSE,
// v4f-cpu-approximate-math, then MLIR's conversions of scf/vector/math/arith/
// cf/func to the LLVM dialect. Reachable from v4f-opt as
// --v4f-cpu-lower-to-llvm (a pass pipeline).
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace v4f {

void buildCPULowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCPUApproximateMath());
  // math.ipowi (integer Pow) becomes a loop in a helper function.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (acos, sinh, ...) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void registerCPULowerToLLVMPipeline() {
  PassPipelineRegistration<>("v4f-cpu-lower-to-llvm",
                             "Lower generated CPU kernels (scf/vector/math/arith) to the LLVM dialect",
                             buildCPULowerToLLVMPipeline);
}

} // namespace v4f
