//===- TargetCodegen.cpp - codegen of the optimized graph for one CPU target -===//
//
// The codegen pipeline (v4f/Codegen/Pipelines.h) for one --target-cpu, the
// GPU kernels through NVRTC, the CPU kernels through LLVM to an object and
// the embedded LLD to a shared object; and the merge of a multi-ISA
// artifact's variant constants.
//
//===----------------------------------------------------------------------===//
#include "CompilerInternal.h"

#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Codegen/Pipelines.h"
#include "v4f/artifact_format.h"
#include "v4f/kernel_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <map>
#include <optional>

namespace v4f {

void enableIRPrinting(mlir::PassManager &pm) {
  pm.getContext()->disableMultithreading();
  pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                      [](mlir::Pass *, mlir::Operation *) { return true; }, /*printModuleScope=*/true,
                      /*printAfterOnlyOnChange=*/false, /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                      mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
}

bool generateForTarget(mlir::ModuleOp module, const CPUTarget &target, const CompilerOptions &options,
                       const Phases &phases, std::string &diagnostics, const std::string &path, CompiledModel &out,
                       ExecutablePlan &plan, std::vector<uint8_t> &constants, std::string &error) {
  mlir::MLIRContext &context = *module.getContext();
  module->setAttr("v4f.target", getCPUTargetAttr(&context, target));
  GeneratedKernels generated;
  mlir::PassManager codegen(&context);
  if (options.printIRAfterAll) enableIRPrinting(codegen);
  CodegenPipelineOptions pipeline;
  pipeline.sink = &generated;
  if (options.targetCuda) {
    pipeline.placement.cuda = true;
    pipeline.placement.cpu = options.targetCpuAllowed;
    generated.withCuda = true;
    generated.cuda.options.archs = options.cudaArchs;
    generated.cuda.options.precision = options.cudaPrecision;
  }
  if (!options.tuningDb.empty() || options.tuneCandidate >= 0) {
    TuningOptions tuning;
    tuning.dbPath = options.tuningDb;
    tuning.candidate = options.tuneCandidate;
    tuning.assigned = options.tuneAssignments;
    tuning.notes = &out.notes;
    pipeline.tuning = tuning;
  }
  pipeline.channelsLast = options.cpuChannelsLast;
  if (!options.cpuChannelsLast)
    out.notes.push_back("layouts (" + target.cpu + "): every tensor channels-first (--cpu-layouts=channels-first)");
  buildCodegenPipeline(codegen, pipeline);
  if (mlir::failed(codegen.run(module))) {
    error = path + ": code generation failed (target " + target.cpu + "):\n" + diagnostics;
    return false;
  }
  if (auto layouts = module->getAttrOfType<mlir::StringAttr>("v4f.layouts"))
    out.notes.push_back("layouts (" + target.cpu + "): " + layouts.str());
  plan = std::move(generated.plan);
  constants = std::move(generated.constants);
  phases.done("dispatch formation, strategy, kernels, LLVM dialect");
  if (options.targetCuda) {
    for (const std::string &note : generated.cuda.cpuRegions) out.notes.push_back(note);
    size_t gpu = 0, transfers = 0;
    for (const PlanDispatch &d : plan.dispatches) {
      if (plan.executables[d.executable].target != ExecutableTarget::Cuda) continue;
      if (d.transfer == PlanDispatch::Transfer::None)
        ++gpu;
      else
        ++transfers;
    }
    out.notes.push_back("placement: " + std::to_string(gpu) + " of " +
                        std::to_string(plan.dispatches.size() - transfers) + " dispatches on the GPU, " +
                        std::to_string(transfers) + " host<->device transfers");
    for (PlanExecutable &exe : plan.executables) {
      if (exe.target != ExecutableTarget::Cuda) continue;
      if (!buildCudaModule(generated.cuda.source, generated.cuda.interfaces, generated.cuda.options, exe.image,
                           error)) {
        error = path + ": " + error;
        return false;
      }
      out.cudaSource = generated.cuda.source;
    }
    phases.done("CUDA kernels (NVRTC)");
  }

  std::vector<uint8_t> object;
  if (!compileKernelsToObject(module, target, object, options.wantLLVMIR ? &out.llvmIR : nullptr, error)) {
    error = path + ": " + error;
    return false;
  }
  phases.done("LLVM O3 + object emission");
  if (options.stopAfter == CompilerOptions::Stage::Object) {
    out.object = std::move(object);
    return true;
  }
  PlanExecutable &exe = plan.executables.front();
  if (!linkSharedObject(object, exe.image, error)) {
    error = path + ": " + error;
    return false;
  }
  phases.done("link (embedded LLD)");
  exe.target = ExecutableTarget::Cpu;
  exe.format = ExecutableFormat::ElfSharedObject;
  exe.abiVersion = V4F_KERNEL_ABI_VERSION;
  exe.triple = target.triple;
  exe.cpu = target.cpu;
  exe.features = target.requiredFeatures;
  return true;
}

void mergeVariantConstants(ExecutablePlan &variant, const std::vector<uint8_t> &constants,
                           const ExecutablePlan &baseline, std::vector<uint8_t> &merged) {
  // A constant's bytes run from its offset to the next constant's offset
  // (alignment padding included, which is zero) or the end of its blob.
  auto runsOf = [](const ExecutablePlan &plan, size_t blobSize) {
    std::vector<uint64_t> offsets;
    for (const PlanBuffer &b : plan.buffers)
      if (b.kind == BufferKind::Constant) offsets.push_back(b.constantOffset);
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    std::vector<std::pair<uint64_t, uint64_t>> runs; // [begin, end)
    for (size_t i = 0; i < offsets.size(); ++i)
      runs.push_back({offsets[i], i + 1 < offsets.size() ? offsets[i + 1] : uint64_t(blobSize)});
    return runs;
  };
  auto key = [](const uint8_t *p, uint64_t n) {
    return std::make_pair(llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(p, n)), n);
  };
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> stored; // key -> offsets in merged
  for (auto [begin, end] : runsOf(baseline, merged.size()))
    stored[key(merged.data() + begin, end - begin)].push_back(begin);
  std::map<uint64_t, uint64_t> moved; // variant offset -> merged offset
  for (auto [begin, end] : runsOf(variant, constants.size())) {
    const uint8_t *bytes = constants.data() + begin;
    uint64_t n = end - begin;
    auto &candidates = stored[key(bytes, n)];
    std::optional<uint64_t> found;
    for (uint64_t off : candidates)
      if (std::equal(bytes, bytes + n, merged.begin() + off)) found = off;
    if (!found) {
      merged.resize((merged.size() + V4F_ARTIFACT_SECTION_ALIGNMENT - 1) / V4F_ARTIFACT_SECTION_ALIGNMENT *
                    V4F_ARTIFACT_SECTION_ALIGNMENT);
      found = merged.size();
      merged.insert(merged.end(), bytes, bytes + n);
      candidates.push_back(*found);
    }
    moved[begin] = *found;
  }
  for (PlanBuffer &b : variant.buffers)
    if (b.kind == BufferKind::Constant) b.constantOffset = moved.at(b.constantOffset);
}

} // namespace v4f
