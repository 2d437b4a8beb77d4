//===- CompilerInternal.h - what the compile pipeline's files share -*- C++ -*-===//
#ifndef V4F_LIB_COMPILER_COMPILERINTERNAL_H
#define V4F_LIB_COMPILER_COMPILERINTERNAL_H

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Compiler/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace v4f {

/// --print-ir-after-all: every pass prints the whole module after it runs.
void enableIRPrinting(mlir::PassManager &pm);

/// Reports finished compile phases (--verbose).
struct Phases {
  const CompilerOptions &options;
  void done(const char *phase) const {
    if (options.phaseDone) options.phaseDone(phase);
  }
};

/// Codegen of the optimized graph `module` for `target` (TargetCodegen.cpp):
/// the codegen pipeline (dispatch regions, placement, fusion, strategy, the
/// plan and every target's kernels), NVRTC for the GPU's, LLVM, object,
/// shared object. Consumes `module` (the passes rewrite it).
bool generateForTarget(mlir::ModuleOp module, const CPUTarget &target, const CompilerOptions &options,
                       const Phases &phases, std::string &diagnostics, const std::string &path, CompiledModel &out,
                       ExecutablePlan &plan, std::vector<uint8_t> &constants, std::string &error);

/// Appends the constants of a variant plan to the artifact's constants
/// section, storing each distinct run of bytes once: a constant both plans
/// keep plainly (or pack the same way) is shared, a weight packed for the
/// variant's register tile is added. Rewrites the variant's constant
/// offsets to point into `merged`.
void mergeVariantConstants(ExecutablePlan &variant, const std::vector<uint8_t> &constants,
                           const ExecutablePlan &baseline, std::vector<uint8_t> &merged);

} // namespace v4f

#endif // V4F_LIB_COMPILER_COMPILERINTERNAL_H
