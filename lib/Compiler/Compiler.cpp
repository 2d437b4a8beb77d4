//===- Compiler.cpp - the v4f compile pipeline ----------------------------===//
#include "v4f/Compiler/Compiler.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"

#include "Calibration.h"
#include "MixedPrecision.h"
#include "v4f/Artifact/ArtifactWriter.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"
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

void enableIRPrinting(mlir::PassManager &pm) {
  pm.getContext()->disableMultithreading();
  pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                      [](mlir::Pass *, mlir::Operation *) { return true; }, /*printModuleScope=*/true,
                      /*printAfterOnlyOnChange=*/false, /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                      mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
}

struct Phases {
  const CompilerOptions &options;
  void done(const char *phase) const {
    if (options.phaseDone) options.phaseDone(phase);
  }
};

/// Codegen of the optimized graph `module` for `target`: dispatch regions,
/// strategy, kernels and the plan, LLVM, object, shared object. Consumes
/// `module` (the passes rewrite it).
bool generateForTarget(mlir::ModuleOp module, const CPUTarget &target, const CompilerOptions &options,
                       const Phases &phases, std::string &diagnostics, const std::string &path,
                       CompiledModel &out, ExecutablePlan &plan, std::vector<uint8_t> &constants,
                       std::string &error) {
  mlir::MLIRContext &context = *module.getContext();
  module->setAttr("v4f.target", getCPUTargetAttr(&context, target));
  GeneratedKernels generated;
  mlir::PassManager codegen(&context);
  if (options.printIRAfterAll) enableIRPrinting(codegen);
  codegen.addNestedPass<mlir::func::FuncOp>(createFormDispatchRegionsPass());
  if (options.targetCuda) {
    PlacementOptions placement;
    placement.cuda = true;
    placement.cpu = options.targetCpuAllowed;
    codegen.addPass(createAssignPlacementPass(placement));
    generated.withCuda = true;
    generated.cuda.options.archs = options.cudaArchs;
    generated.cuda.options.precision = options.cudaPrecision;
  }
  codegen.addNestedPass<mlir::func::FuncOp>(createFuseAttentionRegionsPass());
  codegen.addNestedPass<mlir::func::FuncOp>(createFusePointwiseDepthwisePass());
  codegen.addNestedPass<mlir::func::FuncOp>(createFuseDepthwisePointwisePass());
  codegen.addNestedPass<mlir::func::FuncOp>(createFuseChannelScalePass());
  codegen.addPass(createSelectCPUStrategy());
  if (!options.tuningDb.empty() || options.tuneCandidate >= 0) {
    TuningOptions tuning;
    tuning.dbPath = options.tuningDb;
    tuning.candidate = options.tuneCandidate;
    tuning.assigned = options.tuneAssignments;
    tuning.notes = &out.notes;
    codegen.addPass(createApplyTuningPass(tuning));
  }
  if (options.cpuChannelsLast)
    codegen.addPass(createAssignCPULayouts());
  else
    out.notes.push_back("layouts (" + target.cpu + "): every tensor channels-first (--cpu-layouts=channels-first)");
  codegen.addPass(createPackWeights());
  codegen.addPass(createGenerateCPUKernelsPass(&generated));
  buildCPULowerToLLVMPipeline(codegen);
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
      if (d.transfer == PlanDispatch::Transfer::None) ++gpu;
      else ++transfers;
    }
    out.notes.push_back("placement: " + std::to_string(gpu) + " of " + std::to_string(plan.dispatches.size() - transfers) +
                        " dispatches on the GPU, " + std::to_string(transfers) + " host<->device transfers");
    for (PlanExecutable &exe : plan.executables) {
      if (exe.target != ExecutableTarget::Cuda) continue;
      if (!buildCudaModule(generated.cuda.source, generated.cuda.interfaces, generated.cuda.options, exe.image, error)) {
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

/// Appends the constants of a variant plan to the artifact's constants
/// section, storing each distinct run of bytes once: a constant both plans
/// keep plainly (or pack the same way) is shared, a weight packed for the
/// variant's register tile is added. Rewrites the variant's constant
/// offsets to point into `merged`.
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


std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += char(c);
  }
  return out + "\"";
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// A float32 that reads back to the same float (9 significant digits).
std::string jsonFloat32(float v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
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

/// The matmuls and convs v4f-quantize would quantize (constant float32
/// weight, float32 activation, not --exclude'd, calibrated for int8), most
/// sensitive first: by the layer's measured SQNR (static int8) or its
/// weight's quantization SQNR.
std::vector<QuantCandidate> rankQuantCandidates(mlir::ModuleOp module, const std::string &mode,
                                                const CompilerOptions &options, int64_t groupSize,
                                                const std::vector<CalibratedLayer> &layers) {
  std::map<const void *, double> measured;
  for (const CalibratedLayer &l : layers)
    if (std::isfinite(l.sqnrDb) || std::isinf(l.sqnrDb)) measured[l.loc.getAsOpaquePointer()] = l.sqnrDb;
  std::vector<QuantCandidate> out;
  module.walk([&](mlir::Operation *op) {
    auto mm = llvm::dyn_cast<MatMulOp>(op);
    auto conv = llvm::dyn_cast<ConvOp>(op);
    if (!mm && !conv) return;
    std::string node = firstNodeName(op->getLoc());
    if (node.empty()) return;
    bool excluded = false;
    op->getLoc()->walk([&](mlir::Location l) {
      if (auto named = llvm::dyn_cast<mlir::NameLoc>(l))
        excluded |= llvm::is_contained(options.quantizeExclude, named.getName().str());
      return mlir::WalkResult::advance();
    });
    mlir::DenseElementsAttr weight;
    mlir::Value w = mm ? mm.getRhs() : conv.getWeight();
    mlir::Value a = mm ? mm.getLhs() : conv.getInput();
    auto wType = llvm::dyn_cast<mlir::RankedTensorType>(w.getType());
    if (excluded || !mlir::matchPattern(w, mlir::m_Constant(&weight)) || !wType || !wType.hasStaticShape() ||
        !wType.getElementType().isF32() || !llvm::cast<mlir::RankedTensorType>(a.getType()).getElementType().isF32())
      return;
    if (mm && wType.getRank() != 2) return;
    // Convs: what v4f-quantize takes (static int8, groups 1).
    if (conv && (mode != "int8" || conv.getGroups() != 1)) return;
    if (mode == "int8" && !op->hasAttr("v4f.calibration")) return;
    QuantCandidate c{node};
    if (auto it = measured.find(op->getLoc().getAsOpaquePointer()); it != measured.end()) {
      c.sqnrDb = it->second;
    } else {
      std::vector<float> values = floatValues(weight);
      int64_t K = mm ? wType.getDimSize(0) : wType.getNumElements() / wType.getDimSize(0);
      int64_t N = mm ? wType.getDimSize(1) : wType.getDimSize(0);
      if (conv) { // OIHW = [N, K]: the [K, N] matrix is its transpose
        std::vector<float> t(values.size());
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < K; ++k) t[k * N + n] = values[n * K + k];
        values.swap(t);
      }
      c.sqnrDb = weightQuantizationSqnrDb(values.data(), K, N, mode, options.perChannel, groupSize,
                                          options.int4ZeroPoints);
    }
    out.push_back(c);
  });
  // Most sensitive first; graph order among equals.
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return out[a].sqnrDb != out[b].sqnrDb ? out[a].sqnrDb < out[b].sqnrDb : a < b;
  });
  std::vector<QuantCandidate> ranked;
  for (size_t i : order) ranked.push_back(out[i]);
  return ranked;
}

/// --quant-report: one entry per matmul and conv after v4f-quantize, in
/// graph order.
std::string quantReport(mlir::ModuleOp module, const CompilerOptions &options, const SampleSet *calibration,
                        const std::vector<CalibratedLayer> &layers, const MixedPrecisionResult *mixed) {
  std::map<std::string, double> budgetKept;
  if (mixed)
    for (const QuantCandidate &c : mixed->keptFloat) budgetKept[c.node] = c.sqnrDb;
  std::map<const void *, std::vector<const CalibratedLayer *>> byLoc;
  for (const CalibratedLayer &l : layers) byLoc[l.loc.getAsOpaquePointer()].push_back(&l);
  auto takeLayer = [&](mlir::Location loc) -> const CalibratedLayer * {
    auto it = byLoc.find(loc.getAsOpaquePointer());
    if (it == byLoc.end() || it->second.empty()) return nullptr;
    const CalibratedLayer *l = it->second.front();
    it->second.erase(it->second.begin());
    return l;
  };
  auto nodesOf = [](mlir::Location loc) {
    std::string names;
    loc->walk([&](mlir::Location l) {
      if (auto named = llvm::dyn_cast<mlir::NameLoc>(l))
        names += (names.empty() ? "" : ", ") + jsonString(named.getName().str());
      return mlir::WalkResult::advance();
    });
    return "[" + names + "]";
  };
  bool int4 = options.quantize.rfind("int4-weight", 0) == 0 || options.quantize.rfind("w4a8", 0) == 0;
  std::string out = "{\n  \"mode\": " + jsonString(options.quantize) + ",\n  \"weights\": " +
                    jsonString(int4 ? "per-group" : options.perChannel ? "per-channel" : "per-tensor");
  if (calibration)
    out += ",\n  \"calibration\": {\"data\": " + jsonString(calibration->path) + ", \"method\": " +
           jsonString(options.calibrationMethod) + ", \"samples\": " + std::to_string(calibration->samples) + "}";
  if (mixed) {
    out += ",\n  \"accuracy_budget\": {\"budget_points\": " + jsonNumber(mixed->budget) +
           ", \"metric\": " + jsonString(mixed->metric) + ", \"validation\": " + jsonString(options.validationData) +
           ", \"float32\": " + jsonNumber(mixed->floatMetric) + ", \"quantized\": " +
           jsonNumber(mixed->chosen.metric) + ", \"loss_points\": " + jsonNumber(mixed->chosen.loss) +
           ", \"float32_layers\": " + std::to_string(mixed->chosen.floatLayers) + ", \"trials\": [";
    for (size_t i = 0; i < mixed->trials.size(); ++i)
      out += std::string(i ? ", " : "") + "{\"float32_layers\": " + std::to_string(mixed->trials[i].floatLayers) +
             ", \"metric\": " + jsonNumber(mixed->trials[i].metric) + ", \"loss_points\": " +
             jsonNumber(mixed->trials[i].loss) + "}";
    out += "]}";
  }
  out += ",\n  \"layers\": [";
  int quantized = 0, kept = 0;
  bool firstLayer = true;
  module.walk([&](mlir::Operation *op) {
    auto qmm = llvm::dyn_cast<QuantizedMatMulOp>(op);
    auto qconv = llvm::dyn_cast<QuantizedConvOp>(op);
    auto i4mm = llvm::dyn_cast<Int4MatMulOp>(op);
    if (!qmm && !qconv && !i4mm && !llvm::isa<MatMulOp, ConvOp>(op)) return;
    const CalibratedLayer *layer = takeLayer(op->getLoc());
    std::string e = std::string(firstLayer ? "" : ",") + "\n    {\"nodes\": " + nodesOf(op->getLoc());
    firstLayer = false;
    auto scaleRange = [&](mlir::Value v) {
      mlir::DenseElementsAttr scales;
      if (!mlir::matchPattern(v, mlir::m_Constant(&scales))) return std::string();
      float lo = INFINITY, hi = 0;
      for (float s : scales.getValues<float>()) lo = std::min(lo, std::fabs(s)), hi = std::max(hi, std::fabs(s));
      return ", \"weight_scale\": [" + jsonNumber(lo) + ", " + jsonNumber(hi) + "]";
    };
    if (i4mm) {
      ++quantized;
      e += ", \"precision\": \"int4\", \"activation\": {\"quantization\": " +
           std::string(i4mm.getInt8Activations() ? "\"dynamic\"" : "\"none\"") + "}, \"group_size\": " +
           std::to_string(i4mm.getGroupSize()) + ", \"zero_points\": " +
           (i4mm.getRhsZeroPoint() ? "true" : "false") + scaleRange(i4mm.getRhsScale());
    } else if (qmm) {
      ++quantized;
      e += ", \"precision\": \"int8\", \"activation\": {\"quantization\": " + jsonString(qmm.getActQuant().str());
      if (qmm.getActQuant() == "static")
        e += ", \"scale\": " + jsonFloat32(qmm.getActScale().convertToFloat()) +
             ", \"zero_point\": " + std::to_string(int32_t(qmm.getActZeroPoint()));
      if (layer)
        e += ", \"observed\": [" + jsonNumber(layer->min) + ", " + jsonNumber(layer->max) + "], \"range\": [" +
             jsonNumber(layer->lo) + ", " + jsonNumber(layer->hi) + "]";
      e += "}";
      e += scaleRange(qmm.getRhsScale());
      if (layer) e += ", \"sqnr_db\": " + jsonNumber(layer->sqnrDb) + ", \"max_abs_error\": " + jsonNumber(layer->maxAbsError);
    } else if (qconv) {
      ++quantized;
      e += ", \"op\": \"conv\", \"precision\": \"int8\", \"activation\": {\"quantization\": \"static\", \"scale\": " +
           jsonFloat32(qconv.getActScale().convertToFloat()) +
           ", \"zero_point\": " + std::to_string(int32_t(qconv.getActZeroPoint())) +
           ", \"input\": " + (qconv.getInput().getType().getElementType().isInteger(8) ? "\"int8\"" : "\"float32\"");
      if (layer)
        e += ", \"observed\": [" + jsonNumber(layer->min) + ", " + jsonNumber(layer->max) + "], \"range\": [" +
             jsonNumber(layer->lo) + ", " + jsonNumber(layer->hi) + "]";
      e += "}" + scaleRange(qconv.getWeightScale());
      // int8 carried to the next layers (v4f-carry-int8).
      if (auto os = qconv.getOutScale())
        e += ", \"output\": {\"precision\": \"int8\", \"scale\": " + jsonFloat32(os->convertToFloat()) +
             ", \"zero_point\": " + std::to_string(int32_t(qconv.getOutZeroPoint())) + "}";
      else
        e += ", \"output\": {\"precision\": \"float32\"}";
      if (qconv.getResidual())
        e += std::string(", \"residual\": ") + (qconv.getResidualScale() ? "\"int8\"" : "\"float32\"");
    } else {
      ++kept;
      auto note = op->getAttrOfType<mlir::StringAttr>("v4f.precision_note");
      std::string reason = note ? note.str() : "not a candidate of v4f-quantize";
      if (auto it = budgetKept.find(firstNodeName(op->getLoc())); it != budgetKept.end())
        reason = "kept float32 by --accuracy-budget (layer SQNR " + jsonNumber(it->second) + " dB)";
      e += ", \"precision\": \"float32\", \"reason\": " + jsonString(reason);
      if (layer)
        e += ", \"observed\": [" + jsonNumber(layer->min) + ", " + jsonNumber(layer->max) + "]";
    }
    out += e + "}";
  });
  out += "\n  ],\n  \"summary\": {" + jsonString(int4 ? "int4" : "int8") + ": " + std::to_string(quantized) + ", \"float32\": " + std::to_string(kept) +
         "}\n}\n";
  return out;
}

} // namespace

bool compileONNXModel(const std::string &path, const CompilerOptions &options, CompiledModel &out,
                      std::string &error) {
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
    error = "--quantize: unknown mode '" + options.quantize +
            "' (int8, dynamic-int8, int4-weight[:GROUP] or w4a8[:GROUP])";
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
      if (!selectMixedPrecision(floatArtifact, validation, labels.empty() ? nullptr : &labels,
                                options.accuracyBudget, ranked, compileQuantized, mixed, error)) {
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
