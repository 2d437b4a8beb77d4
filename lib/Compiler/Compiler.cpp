//===- Compiler.cpp - the v4f compile pipeline ----------------------------===//
#include "v4f/Compiler/Compiler.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"

#include "Calibration.h"
#include "CompilerInternal.h"
#include "MixedPrecision.h"
#include "QuantReport.h"
#include "v4f/Artifact/ArtifactWriter.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Codegen/Pipelines.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Import/ONNXImporter.h"
#include "v4f/Transforms/Passes.h"
#include "v4f/Transforms/QuantizationMath.h"
#include "v4f/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <optional>

namespace v4f {

namespace {

std::string baseName(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(0, dot);
  return name;
}

/// Every ONNX node name the imported module still carries (NameLocs).
std::set<std::string> nodeNames(mlir::ModuleOp module) {
  std::set<std::string> names;
  module.walk([&](mlir::Operation *op) {
    op->getLoc()->walk([&](mlir::Location loc) {
      if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc)) names.insert(named.getName().str());
      return mlir::WalkResult::advance();
    });
  });
  return names;
}

} // namespace

bool compileONNXModel(const std::string &path, const CompilerOptions &options, CompiledModel &out, std::string &error) {
  Phases phases{options};
  mlir::MLIRContext context;
  context.loadDialect<V4FDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::scf::SCFDialect,
                      mlir::math::MathDialect, mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect,
                      mlir::cf::ControlFlowDialect>();
  // Diagnostics are collected with the op's location (ONNX node, file).
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });

  std::vector<CPUTarget> targets;
  if (!resolveCPUTargetList(options.targetCpu, targets, error)) return false;
  if (targets.size() > 1 && options.stopAfter == CompilerOptions::Stage::Object) {
    error = "--emit=llvm and --emit=obj take one --target-cpu, not a list ('" + options.targetCpu + "')";
    return false;
  }

  ImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  importOptions.dimValues = options.dimValues;
  importOptions.dimBounds = options.dimBounds;
  importOptions.inputValues = options.inputValues;
  importOptions.maxLoopIterations = options.maxLoopIterations;
  importOptions.notes = &out.notes;
  std::string quantMode = options.quantize;
  int64_t groupSize = 128;
  for (std::string int4Mode : {"int4-weight", "w4a8"}) {
    if (quantMode.rfind(int4Mode, 0) != 0) continue;
    std::string rest = quantMode.substr(int4Mode.size());
    quantMode = int4Mode;
    if (!rest.empty()) {
      char *end = nullptr;
      long long g = rest[0] == ':' && rest.size() > 1 ? std::strtoll(rest.c_str() + 1, &end, 10) : -1;
      if (g < 8 || g > 4096 || g % 8 || !end || *end) {
        error = "--quantize: bad " + int4Mode + " group '" + rest + "' (" + int4Mode +
                ":GROUP, GROUP a multiple of 8 in [8, 4096]; 32, 64 or 128 are usual)";
        return false;
      }
      groupSize = g;
    }
    break;
  }
  if (!quantMode.empty() && quantMode != "dynamic-int8" && quantMode != "int8" && quantMode != "int4-weight" &&
      quantMode != "w4a8") {
    error =
        "--quantize: unknown mode '" + options.quantize + "' (int8, dynamic-int8, int4-weight[:GROUP] or w4a8[:GROUP])";
    return false;
  }
  if (options.int4ZeroPoints && quantMode != "int4-weight") {
    error = "--int4-zero-points applies to --quantize=int4-weight only";
    return false;
  }
  if ((quantMode == "int4-weight" || quantMode == "w4a8") && options.perChannel) {
    error = "--per-channel applies to the int8 modes (" + quantMode + " has a scale per group of each column)";
    return false;
  }
  if (options.quantize == "int8" && options.calibrationData.empty()) {
    error = "--quantize=int8 needs --calibration-data CAL.npz (one array per model input, first axis = samples)";
    return false;
  }
  if (!options.calibrationData.empty() && options.quantize != "int8") {
    error = "--calibration-data is used by --quantize=int8 only";
    return false;
  }
  if (options.quantize.empty() && (!options.quantizeExclude.empty() || options.perChannel || options.wantQuantReport)) {
    error = "--exclude, --per-channel and --quant-report need --quantize";
    return false;
  }
  bool budget = options.accuracyBudget >= 0;
  if (budget && (options.quantize.empty() || options.validationData.empty())) {
    error = "--accuracy-budget needs --quantize and --validation-data VAL.npz";
    return false;
  }
  if (!budget && (!options.validationData.empty() || !options.labels.empty())) {
    error = "--validation-data and --labels are used by --accuracy-budget only";
    return false;
  }
  if (budget && !(options.accuracyBudget <= 100)) {
    error = "--accuracy-budget is a loss in percentage points, in [0, 100]";
    return false;
  }
  CalibrationMethod method;
  if (!CalibrationMethod::parse(options.calibrationMethod, method, error)) return false;

  auto module = importONNXModel(context, path, error, importOptions);
  if (!module) return false;
  phases.done("import");
  if (!options.quantizeExclude.empty()) {
    std::set<std::string> names = nodeNames(*module);
    for (const std::string &name : options.quantizeExclude)
      if (!names.count(name)) {
        error = path + ": --exclude '" + name + "' names no node of the model";
        return false;
      }
  }
  SampleSet calibration, validation;
  std::vector<int64_t> labels;
  if (options.quantize == "int8") {
    if (!loadSampleSet(options.calibrationData, *module, "calibration", calibration, error)) return false;
    phases.done("calibration data");
  }
  if (budget) {
    if (!loadSampleSet(options.validationData, *module, "validation", validation, error)) return false;
    if (!options.labels.empty() && !loadLabels(options.labels, validation.samples, labels, error)) return false;
  }
  if (options.printIRAfterAll) {
    // The import is not a pass; print its result the way the pass manager
    // prints the others, so the whole pipeline reads in order.
    llvm::errs() << "// -----// IR Dump After ImportONNX (" << path << ") //----- //\n";
    module->print(llvm::errs(), mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    llvm::errs() << "\n\n";
  }
  if (options.stopAfter == CompilerOptions::Stage::ImportedIR) {
    llvm::raw_string_ostream os(out.graphIR);
    module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    return true;
  }

  // Graph level (target-independent): decomposition, folding, fusion.
  mlir::PassManager graph(&context);
  if (options.printIRAfterAll) enableIRPrinting(graph);
  buildGraphOptimizationPipeline(graph);
  if (mlir::failed(graph.run(*module))) {
    error = path + ": graph optimization failed:\n" + diagnostics;
    return false;
  }
  phases.done("graph optimization");

  // Quantization: calibration (static int8) runs the optimized float graph
  // in this process; v4f-quantize then rewrites the matmuls.
  if (!options.quantize.empty()) {
    std::vector<CalibratedLayer> layers;
    std::vector<CPUTarget> host;
    CompilerOptions floatOptions = options;
    floatOptions.stopAfter = CompilerOptions::Stage::Artifact;
    floatOptions.printIRAfterAll = false;
    floatOptions.wantLLVMIR = false;
    floatOptions.phaseDone = nullptr;
    Phases quiet{floatOptions};
    // Compiles a graph module for this host into artifact bytes, for the
    // in-process runs of calibration and --accuracy-budget.
    auto compileHost = [&](mlir::ModuleOp graphModule, std::vector<uint8_t> &bytes, std::string &err) {
      if (host.empty() && !resolveCPUTargetList("host", host, err)) return false;
      CompiledModel scratch;
      ExecutablePlan plan;
      std::vector<uint8_t> constants;
      if (!generateForTarget(graphModule, host.front(), floatOptions, quiet, diagnostics, path, scratch, plan,
                             constants, err))
        return false;
      plan.producer = options.producer;
      plan.modelName = baseName(path);
      return serializeArtifact(plan, constants, bytes, err);
    };
    auto quantizeModule = [&](mlir::ModuleOp target, const std::vector<std::string> &exclude, bool printIR,
                              std::string &err) {
      mlir::PassManager quantize(&context);
      if (printIR) enableIRPrinting(quantize);
      quantize.addNestedPass<mlir::func::FuncOp>(
          createQuantizePass(quantMode, exclude, options.perChannel, groupSize, options.int4ZeroPoints));
      quantize.addNestedPass<mlir::func::FuncOp>(createCarryInt8Pass());
      if (mlir::failed(quantize.run(target))) {
        err = path + ": quantization failed:\n" + diagnostics;
        return false;
      }
      return true;
    };
    if (options.quantize == "int8") {
      if (!calibrateActivations(*module, calibration, method, options.perChannel, compileHost, layers, error)) {
        error = path + ": " + error;
        return false;
      }
      phases.done("calibration");
    }
    std::vector<std::string> exclude = options.quantizeExclude;
    MixedPrecisionResult mixed;
    if (budget) {
      std::vector<QuantCandidate> ranked = rankQuantCandidates(*module, quantMode, options, groupSize, layers);
      std::vector<uint8_t> floatArtifact;
      mlir::OwningOpRef<mlir::ModuleOp> floatCopy = module->clone();
      if (!compileHost(*floatCopy, floatArtifact, error)) return false;
      auto compileQuantized = [&](const std::vector<std::string> &more, std::vector<uint8_t> &bytes, std::string &err) {
        mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
        std::vector<std::string> all = options.quantizeExclude;
        all.insert(all.end(), more.begin(), more.end());
        return quantizeModule(*copy, all, false, err) && compileHost(*copy, bytes, err);
      };
      if (!selectMixedPrecision(floatArtifact, validation, labels.empty() ? nullptr : &labels, options.accuracyBudget,
                                ranked, compileQuantized, mixed, error)) {
        error = path + ": " + error;
        return false;
      }
      for (const QuantCandidate &c : mixed.keptFloat) exclude.push_back(c.node);
      phases.done("accuracy budget");
    }
    if (!quantizeModule(*module, exclude, options.printIRAfterAll, error)) return false;
    if (options.wantQuantReport)
      out.quantReport = quantReport(*module, options, options.quantize == "int8" ? &calibration : nullptr, layers,
                                    budget ? &mixed : nullptr);
    phases.done("quantization");
  }
  if (options.stopAfter == CompilerOptions::Stage::GraphIR) {
    llvm::raw_string_ostream os(out.graphIR);
    module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    return true;
  }

  // Codegen, once per target of --target-cpu (a list makes a multi-ISA
  // artifact): each target gets its own dispatch regions, strategy, kernels
  // and plan from a copy of the optimized graph. The first (fewest features)
  // is the artifact's baseline plan; the others become its variants, their
  // constants merged into one section (CompiledModel::plan.variants).
  for (size_t i = 0; i < targets.size(); ++i) {
    mlir::OwningOpRef<mlir::ModuleOp> copy;
    mlir::ModuleOp graphModule = *module;
    if (i + 1 < targets.size()) {
      copy = module->clone();
      graphModule = *copy;
    }
    ExecutablePlan plan;
    std::vector<uint8_t> constants;
    if (!generateForTarget(graphModule, targets[i], options, phases, diagnostics, path, out, plan, constants, error))
      return false;
    if (options.stopAfter == CompilerOptions::Stage::Object) return true;
    if (i == 0) {
      out.plan = std::move(plan);
      out.constants = std::move(constants);
    } else {
      mergeVariantConstants(plan, constants, out.plan, out.constants);
      out.plan.variants.push_back(std::move(plan));
    }
  }
  out.plan.producer = options.producer;
  out.plan.modelName = baseName(path);
  return true;
}

} // namespace v4f
