//===- Pipelines.h - the registered pass pipelines of v4fc ---------*- C++ -*-===//
//
// `v4fc compile` runs two pass pipelines over the imported module: the
// graph pipeline (target-independent: decomposition, folding, fusion;
// buildGraphOptimizationPipeline in v4f/Transforms/Passes.h) and, per CPU
// target, the codegen pipeline below. Both are registered with v4f-opt
// (`v4f-graph-pipeline`, `v4f-codegen-pipeline{targets=... target-cpu=...}`)
// so that any step of a compile can be reproduced on textual IR.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_CODEGEN_PIPELINES_H
#define V4F_CODEGEN_PIPELINES_H

#include "v4f/Codegen/Passes.h"
#include "v4f/Codegen/Tuning.h"

#include <optional>

namespace v4f {

struct CodegenPipelineOptions {
  /// The targets regions may be placed on (--target); without the GPU no
  /// placement pass runs and every region is the CPU's.
  PlacementOptions placement;
  /// Sets `v4f.target` when the module has none (v4f-select-cpu-strategy's
  /// target-cpu option); v4fc sets the module attribute itself.
  std::string targetCpu;
  /// Channels-last layouts where they pay (v4f-assign-cpu-layouts).
  bool channelsLast = true;
  /// A tuning database or candidate to apply (v4f-apply-tuning).
  std::optional<TuningOptions> tuning;
  /// Where v4f-build-plan leaves the plan (null: dropped, as in v4f-opt).
  GeneratedKernels *sink = nullptr;
};

/// Dispatch regions, placement, region fusion, CPU strategy (tuning,
/// layouts, packed weights), the plan with every target's kernels, and the
/// CPU kernels' lowering to the LLVM dialect.
void buildCodegenPipeline(mlir::OpPassManager &pm, const CodegenPipelineOptions &options);

/// Registers `v4f-graph-pipeline` and `v4f-codegen-pipeline` (and the CPU
/// kernels' `v4f-cpu-lower-to-llvm`).
void registerV4FPipelines();

} // namespace v4f

#endif // V4F_CODEGEN_PIPELINES_H
