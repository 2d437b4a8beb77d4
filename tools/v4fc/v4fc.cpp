//===- v4fc.cpp - the v4f model compiler driver ---------------------------===//
//
//   v4fc compile model.onnx -o model.v4f [--target-cpu=host] [--emit=...]
//   v4fc check model.onnx
//   v4fc inspect model.v4f
//   v4fc tune model.onnx --db tuning.json
//
//===----------------------------------------------------------------------===//
#include "Inspect.h"
#include "Sign.h"
#include "Tune.h"
#include "v4f/Support/Npy.h"

#include "v4f/Artifact/ArtifactWriter.h"
#include "v4f/Compiler/Compiler.h"
#include "v4f/Import/ONNXImporter.h"

#include <CLI/CLI.hpp>

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#define V4F_VERSION "0.1.0"

namespace {

struct PhaseTimer {
  bool verbose;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last = start;
  void done(const char *phase) {
    auto now = std::chrono::steady_clock::now();
    if (verbose)
      std::fprintf(stderr, "[v4fc] %-28s %8.1f ms\n", phase,
                   std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  }
  void total() {
    if (verbose)
      std::fprintf(stderr, "[v4fc] %-28s %8.1f ms\n", "total",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
};

int fail(const std::string &message) {
  std::fprintf(stderr, "v4fc: error: %s\n", message.c_str());
  return 1;
}

bool writeText(const std::string &path, const std::string &text, std::string &error) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), text.size());
    if (!out) {
      error = "cannot write " + path;
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

struct CompileOptions {
  std::string input, output, targetCpu = "host", emit = "artifact";
  std::vector<std::string> inputShapes, dims, inputValues;
  std::string quantize, calibrationData, calibrationMethod = "minmax", quantReport;
  double accuracyBudget = -1;
  std::string validationData, labels;
  std::vector<std::string> exclude;
  bool perChannel = false, int4ZeroPoints = false;
  int64_t maxLoopIterations = 4096;
  std::string signKey, encryptKey;
  bool printIRAfterAll = false, verbose = false;
  std::string target = "cpu", cudaArch = "sm_90", precision = "fp32";
  std::string tuningDb;
  std::string cpuLayouts = "auto";
};

/// --target and --cuda-arch into the compiler's options.
bool parseTargetOptions(const CompileOptions &opts, v4f::CompilerOptions &copts, std::string &error) {
  if (opts.target != "cpu" && opts.target != "cuda" && opts.target != "cpu,cuda" && opts.target != "cuda,cpu") {
    error = "--target: '" + opts.target + "' is not cpu, cuda or cpu,cuda";
    return false;
  }
  copts.targetCuda = opts.target != "cpu";
  copts.targetCpuAllowed = opts.target != "cuda";
  copts.cudaPrecision = opts.precision;
  copts.cudaArchs.clear();
  size_t pos = 0;
  while (true) {
    size_t comma = opts.cudaArch.find(',', pos);
    std::string item = opts.cudaArch.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    bool digits = item.size() >= 5 && item.size() <= 7 && item.compare(0, 3, "sm_") == 0 &&
                  item.find_first_not_of("0123456789", 3) == std::string::npos;
    int arch = digits ? std::stoi(item.substr(3)) : 0;
    if (arch < 70 || arch > 200) {
      error = "--cuda-arch: '" + item + "' is not an arch like sm_80 or sm_90 (sm_70 and newer)";
      return false;
    }
    if (std::find(copts.cudaArchs.begin(), copts.cudaArchs.end(), arch) == copts.cudaArchs.end())
      copts.cudaArchs.push_back(arch);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(copts.cudaArchs.begin(), copts.cudaArchs.end());
  if ((copts.cudaPrecision == "bf16" || copts.cudaPrecision == "tf32") && copts.cudaArchs.front() < 80) {
    error = "--precision=" + copts.cudaPrecision + " needs sm_80 or newer (--cuda-arch " + opts.cudaArch + ")";
    return false;
  }
  return true;
}

/// Parses a positive decimal dim (at most 2^40); false if it is not one.
bool parseDim(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 13 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(text);
  return out > 0 && out <= (int64_t(1) << 40);
}

/// --input-shape NAME=D0,D1,... and --dim NAME=VALUE into the compiler's maps.
bool parseShapeOptions(const CompileOptions &opts, v4f::CompilerOptions &copts, std::string &error) {
  for (const std::string &spec : opts.inputShapes) {
    size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--input-shape '" + spec + "': expected NAME=D0,D1,... (e.g. x=1,3,224,224)";
      return false;
    }
    std::vector<int64_t> dims;
    std::string rest = spec.substr(eq + 1);
    size_t start = 0;
    while (start <= rest.size()) {
      size_t comma = rest.find(',', start);
      std::string part = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      int64_t d;
      if (!parseDim(part, d)) {
        error = "--input-shape '" + spec + "': '" + part + "' is not a positive dim (1 to 2^40)";
        return false;
      }
      dims.push_back(d);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!copts.inputShapes.emplace(spec.substr(0, eq), dims).second) {
      error = "--input-shape names input '" + spec.substr(0, eq) + "' twice";
      return false;
    }
  }
  for (const std::string &spec : opts.inputValues) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      error = "--input-value '" + spec + "': expected NAME=FILE.npy";
      return false;
    }
    v4frun::NpyArray array;
    std::string npyError;
    if (!v4frun::readNpy(spec.substr(eq + 1), array, npyError)) {
      error = "--input-value '" + spec + "': " + npyError;
      return false;
    }
    v4f::InputValue value;
    value.dtype = array.dtype;
    value.shape = array.shape;
    value.data.assign(array.data.begin(), array.data.end());
    if (!copts.inputValues.emplace(spec.substr(0, eq), std::move(value)).second) {
      error = "--input-value names input '" + spec.substr(0, eq) + "' twice";
      return false;
    }
  }
  for (const std::string &spec : opts.dims) {
    size_t eq = spec.rfind('=');
    size_t dots = spec.find("..", eq == std::string::npos ? 0 : eq);
    if (eq != std::string::npos && eq != 0 && dots != std::string::npos) {
      // NAME=MIN..MAX or NAME=..MAX (MIN 1).
      std::string lo = spec.substr(eq + 1, dots - eq - 1), hi = spec.substr(dots + 2);
      int64_t min = 1, max;
      if ((!lo.empty() && !parseDim(lo, min)) || !parseDim(hi, max) || min > max) {
        error = "--dim '" + spec + "': expected NAME=MIN..MAX with 1 <= MIN <= MAX <= 2^40";
        return false;
      }
      if (copts.dimValues.count(spec.substr(0, eq)) ||
          !copts.dimBounds.emplace(spec.substr(0, eq), std::make_pair(min, max)).second) {
        error = "--dim names '" + spec.substr(0, eq) + "' twice";
        return false;
      }
      continue;
    }
    int64_t value;
    if (eq == std::string::npos || eq == 0 || !parseDim(spec.substr(eq + 1), value)) {
      error = "--dim '" + spec + "': expected NAME=VALUE with VALUE a positive dim (1 to 2^40)";
      return false;
    }
    if (copts.dimBounds.count(spec.substr(0, eq)) || !copts.dimValues.emplace(spec.substr(0, eq), value).second) {
      error = "--dim names '" + spec.substr(0, eq) + "' twice";
      return false;
    }
  }
  return true;
}

int runCompile(const CompileOptions &opts) {
  PhaseTimer timer{opts.verbose};
  v4f::CompilerOptions copts;
  std::string shapeError;
  if (!parseShapeOptions(opts, copts, shapeError)) return fail(shapeError);
  if (!parseTargetOptions(opts, copts, shapeError)) return fail(shapeError);
  if (opts.emit == "cuda" && !copts.targetCuda) return fail("--emit=cuda needs --target=cuda or --target=cpu,cuda");
  copts.maxLoopIterations = opts.maxLoopIterations;
  copts.targetCpu = opts.targetCpu;
  copts.quantize = opts.quantize;
  copts.quantizeExclude = opts.exclude;
  copts.calibrationData = opts.calibrationData;
  copts.calibrationMethod = opts.calibrationMethod;
  copts.accuracyBudget = opts.accuracyBudget;
  copts.validationData = opts.validationData;
  copts.labels = opts.labels;
  copts.perChannel = opts.perChannel;
  copts.int4ZeroPoints = opts.int4ZeroPoints;
  copts.wantQuantReport = !opts.quantReport.empty();
  if (copts.wantQuantReport && opts.emit != "artifact")
    return fail("--quant-report is written with --emit=artifact only");
  copts.printIRAfterAll = opts.printIRAfterAll;
  copts.tuningDb = opts.tuningDb;
  copts.cpuChannelsLast = opts.cpuLayouts == "auto";
  if (!copts.tuningDb.empty()) {
    // Refuse a bad database before compiling (the pass would too, later).
    std::vector<v4f::TuningEntry> entries;
    std::string dbError;
    if (!v4f::readTuningDatabase(copts.tuningDb, entries, dbError)) return fail(dbError);
  }
  copts.producer = "v4fc " V4F_VERSION;
  copts.wantLLVMIR = opts.emit == "llvm";
  copts.stopAfter = opts.emit == "imported-mlir"                ? v4f::CompilerOptions::Stage::ImportedIR
                    : opts.emit == "mlir"                       ? v4f::CompilerOptions::Stage::GraphIR
                    : opts.emit == "llvm" || opts.emit == "obj" ? v4f::CompilerOptions::Stage::Object
                                                                : v4f::CompilerOptions::Stage::Artifact;
  copts.phaseDone = [&](const char *phase) { timer.done(phase); };
  v4f::CompiledModel model;
  std::string error;
  bool compiled = v4f::compileONNXModel(opts.input, copts, model, error);
  if (opts.verbose)
    for (const std::string &note : model.notes) std::fprintf(stderr, "[v4fc] note: %s\n", note.c_str());
  if (!compiled) return fail(error);
  if (opts.emit == "mlir" || opts.emit == "imported-mlir")
    return writeText(opts.output, model.graphIR, error) ? 0 : fail(error);
  if (opts.emit == "llvm") return writeText(opts.output, model.llvmIR, error) ? 0 : fail(error);
  if (opts.emit == "cuda") return writeText(opts.output, model.cudaSource, error) ? 0 : fail(error);
  if (opts.emit == "obj")
    return writeText(opts.output, std::string(model.object.begin(), model.object.end()), error) ? 0 : fail(error);
  if (!opts.quantReport.empty() && !writeText(opts.quantReport, model.quantReport, error)) return fail(error);
  v4f::SigningKey key;
  if (!opts.signKey.empty() && !v4f::loadSigningKey(opts.signKey, key, error)) return fail(error);
  v4f::EncryptionKey encryption;
  if (!opts.encryptKey.empty() && !v4f::loadEncryptionKey(opts.encryptKey, encryption, error)) return fail(error);
  if (!v4f::writeArtifactFile(opts.output, model.plan, model.constants, error, opts.signKey.empty() ? nullptr : &key,
                              opts.encryptKey.empty() ? nullptr : &encryption))
    return fail(opts.output + ": " + error);
  timer.done("write artifact");
  timer.total();
  if (opts.verbose) {
    const v4f::PlanExecutable &exe = model.plan.executables.front();
    std::fprintf(stderr, "[v4fc] wrote %s: %zu dispatches, %zu kernels, %zu bytes of code, %zu bytes of constants\n",
                 opts.output.c_str(), model.plan.dispatches.size(), exe.entryPoints.size(), exe.image.size(),
                 model.constants.size());
  }
  return 0;
}

/// `v4fc check`: operator coverage, then (when every node is supported) the
/// import and graph passes as `compile` runs them. With `asJson` the report
/// is one JSON object on stdout (the Python package's v4f.check reads it):
/// ir_version, opset, operators [{op_type, nodes, supported}], unsupported
/// [{node, op_type, opset, reason}], nodes, supported_nodes, graph_passes
/// ("ok", "failed" or "not run") and error (the message, or null). The exit
/// status is the same in both forms: non-zero unless everything passed.
int runCheck(const std::string &path, const CompileOptions &shapeOpts, bool asJson) {
  v4f::CoverageReport report;
  std::string error;
  if (!v4f::checkONNXModel(path, report, error)) return fail(error);
  std::map<std::string, int64_t> failing;
  for (const auto &u : report.unsupported) failing[u.opType]++;
  int64_t total = 0, bad = 0;
  llvm::json::Array operators, unsupported;
  if (!asJson) {
    std::printf("model: %s (ir_version %lld, opset %lld)\n", path.c_str(), (long long)report.irVersion,
                (long long)report.opset);
    std::printf("%-28s %6s  %s\n", "operator", "nodes", "status");
  }
  for (const auto &[op, count] : report.opCounts) {
    total += count;
    bad += failing.count(op) ? failing[op] : 0;
    if (asJson)
      operators.push_back(llvm::json::Object{{"op_type", op}, {"nodes", count}, {"supported", !failing.count(op)}});
    else
      std::printf("%-28s %6lld  %s\n", op.c_str(), (long long)count, failing.count(op) ? "UNSUPPORTED" : "supported");
  }
  for (const auto &u : report.unsupported)
    unsupported.push_back(
        llvm::json::Object{{"node", u.nodeName}, {"op_type", u.opType}, {"opset", u.opset}, {"reason", u.reason}});
  auto finish = [&](const char *graphPasses, const std::string &message) {
    if (!asJson) {
      if (*graphPasses != 'n') {
        std::printf("import and graph passes: %s\n", graphPasses[0] == 'o' ? "ok" : "FAILED");
        std::fflush(stdout); // the report, then the error, also when both go to one file
      }
      return message.empty() ? 0 : fail(message);
    }
    llvm::json::Object o{{"model", path},
                         {"ir_version", report.irVersion},
                         {"opset", report.opset},
                         {"operators", std::move(operators)},
                         {"unsupported", std::move(unsupported)},
                         {"nodes", total},
                         {"supported_nodes", total - bad},
                         {"graph_passes", graphPasses},
                         {"error", message.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(message)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
    llvm::outs().flush();
    return message.empty() ? 0 : 1;
  };
  if (!asJson) std::printf("coverage: %lld of %lld nodes supported\n", (long long)(total - bad), (long long)total);
  if (!report.unsupported.empty()) return finish("not run", report.formatError());
  // Supported ops can still fail on their shapes and attributes: run the
  // import and the graph passes as `compile` would (with the same shape
  // options), stopping before code generation.
  v4f::CompilerOptions copts;
  if (!parseShapeOptions(shapeOpts, copts, error)) return fail(error);
  copts.stopAfter = v4f::CompilerOptions::Stage::GraphIR;
  v4f::CompiledModel model;
  if (!v4f::compileONNXModel(path, copts, model, error)) return finish("failed", error);
  return finish("ok", "");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"v4fc " V4F_VERSION " - ahead-of-time compiler from ONNX to .v4f artifacts"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "v4fc " V4F_VERSION);

  CompileOptions copts;
  auto *compile = app.add_subcommand("compile", "Compile an ONNX model into a .v4f artifact");
  compile->add_option("model", copts.input, "ONNX model file")->required()->check(CLI::ExistingFile);
  compile->add_option("-o,--output", copts.output, "Output path ('-' for stdout with --emit=mlir|imported-mlir|llvm)")
      ->required();
  compile
      ->add_option("--target-cpu", copts.targetCpu,
                   "CPU to compile for: host, x86-64-v2|v3|v4, or an LLVM CPU name (e.g. sapphirerapids)")
      ->capture_default_str();
  compile
      ->add_option("--target", copts.target,
                   "Where dispatches run: cpu, cuda (every op with a GPU kernel on the GPU, the rest on the CPU) or "
                   "cpu,cuda (a cost model places each dispatch); docs/gpu.md")
      ->capture_default_str();
  compile
      ->add_option("--cuda-arch", copts.cudaArch,
                   "GPU archs to compile cubins for, e.g. sm_80,sm_90 (PTX for the lowest is added for newer GPUs)")
      ->capture_default_str();
  compile
      ->add_option("--precision", copts.precision,
                   "Matrix products on the GPU: fp32, or fp16 / bf16 / tf32 tensor cores with FP32 accumulation "
                   "(tensors stay float32 in memory; tf32 rounds the operands to a 10-bit mantissa)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "tf32"}))
      ->capture_default_str();
  compile
      ->add_option("--emit", copts.emit,
                   "What to write: artifact, mlir (optimized v4f IR), imported-mlir (v4f IR before any pass: "
                   "composite ops still whole), llvm (optimized LLVM IR), obj, cuda (the generated CUDA C++; needs "
                   "--target with cuda)")
      ->check(CLI::IsMember({"artifact", "mlir", "imported-mlir", "llvm", "obj", "cuda"}))
      ->capture_default_str();
  compile->add_option("--input-shape", copts.inputShapes,
                      "Fix an input's shape at compile time: NAME=D0,D1,... (repeatable)");
  compile->add_option("--input-value", copts.inputValues,
                      "Fold an input to a constant at compile time: NAME=FILE.npy (repeatable; e.g. a sample rate "
                      "or a mode flag)");
  compile->add_option("--dim", copts.dims,
                      "Fix a symbolic input dim at compile time: NAME=VALUE, or bound it: NAME=MIN..MAX / "
                      "NAME=..MAX (repeatable; an unnamed dim is <input>_dim<i>)");
  compile
      ->add_option("--max-loop-iterations", copts.maxLoopIterations,
                   "Iteration bound of a Loop whose trip count is known only at run time (checked at run time; "
                   "scan outputs of a count computed by kernels are sized for it) and of unrolling")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24))
      ->capture_default_str();
  compile->add_option("--quantize", copts.quantize,
                      "Quantize matmuls with constant weights: int8 (static: activation scales from "
                      "--calibration-data; also convolutions), dynamic-int8 (activation scales per row at run "
                      "time), int4-weight[:GROUP] (block-wise int4 weights, GROUP rows per scale, default 128; "
                      "float activations) or w4a8[:GROUP] (the same int4 weights, int8 activations per row at run "
                      "time); docs/quantization.md");
  compile->add_option("--calibration-data", copts.calibrationData,
                      "With --quantize=int8: an .npz (np.savez) with one array per model input, named as the input, "
                      "first axis = samples");
  compile
      ->add_option("--calibration-method", copts.calibrationMethod,
                   "How calibration turns observed activations into ranges: minmax, entropy (KL, as TensorRT) "
                   "or percentile[:P] (default P 99.99)")
      ->capture_default_str();
  compile->add_flag("--per-channel", copts.perChannel,
                    "With --quantize: one weight scale per output channel (default: one per weight tensor)");
  compile->add_flag("--int4-zero-points", copts.int4ZeroPoints,
                    "With --quantize=int4-weight: asymmetric groups, each with an int4 zero point (default: "
                    "symmetric groups)");
  compile
      ->add_option("--accuracy-budget", copts.accuracyBudget,
                   "With --quantize: keep the most sensitive layers in float until the top-1 loss on "
                   "--validation-data is at most PCT percentage points (e.g. 0.5)")
      ->check(CLI::Range(0.0, 100.0));
  compile->add_option("--validation-data", copts.validationData,
                      "With --accuracy-budget: an .npz like --calibration-data (one array per input, first axis = "
                      "samples)");
  compile->add_option("--labels", copts.labels,
                      "With --accuracy-budget: .npy of int class indices, one per validation sample (without it, "
                      "the loss is the share of samples whose top-1 class differs from the float model's)");
  compile->add_option("--quant-report", copts.quantReport,
                      "With --quantize: write a JSON report (per layer: precision or why it stayed float, "
                      "activation range, scale and zero point, weight scales, SQNR and max error vs float on "
                      "the calibration samples)");
  compile
      ->add_option("--exclude", copts.exclude,
                   "With --quantize: ONNX node names that stay float (comma-separated, "
                   "repeatable)")
      ->delimiter(',');
  compile
      ->add_option("--tuning-db", copts.tuningDb,
                   "Apply the measured GEMM/conv choices of this database (written by v4fc tune on this machine "
                   "kind); ops it does not cover keep the cost model's; docs/tuning.md")
      ->check(CLI::ExistingFile);
  compile
      ->add_option("--cpu-layouts", copts.cpuLayouts,
                   "auto (default): tensors between convs computing channels in vector lanes are stored "
                   "channels-last where every reader handles it (v4f-assign-cpu-layouts; --verbose counts them); "
                   "channels-first: every tensor as the model has it")
      ->check(CLI::IsMember({"auto", "channels-first"}));
  compile->add_flag("--print-ir-after-all", copts.printIRAfterAll, "Print the IR after every pass to stderr");
  compile->add_flag("-v,--verbose", copts.verbose, "Print the time of each compile phase");
  compile->add_option("--sign", copts.signKey, "Sign the artifact with this secret key (v4fc keygen)")
      ->check(CLI::ExistingFile);
  compile
      ->add_option("--encrypt-key", copts.encryptKey,
                   "Encrypt the code and constants with this key (v4fc keygen --type encryption); the runtime "
                   "needs it to load the artifact")
      ->check(CLI::ExistingFile);

  v4f::TuneRequest tuneReq;
  CompileOptions tuneShapes;
  auto *tune = app.add_subcommand("tune", "Measure alternatives to the cost model's GEMM/conv choices for a model on "
                                          "this machine and record the fastest in a tuning database (compile "
                                          "--tuning-db applies them)");
  tune->add_option("model", tuneReq.model, "ONNX model file")->required()->check(CLI::ExistingFile);
  tune->add_option("--db", tuneReq.db, "Tuning database to create or update (JSON)")->required();
  tune->add_option("--target-cpu", tuneShapes.targetCpu,
                   "The CPU to tune for: the machine this runs on (host) or a CPU it can run")
      ->capture_default_str();
  tune->add_option("--threads", tuneReq.threads, "Threads of the measuring runs (tune at the thread count you deploy)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  tune->add_option("--rounds", tuneReq.rounds, "Alternating rounds over the candidate artifacts")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  tune->add_option("--runs", tuneReq.runs, "Profiled runs per artifact and round (the median counts)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  tune->add_option("--min-gain", tuneReq.minGain,
                   "A candidate replaces the cost model's choice only if faster by this fraction")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  tune->add_option("--input-shape", tuneShapes.inputShapes, "As for compile: NAME=D0,D1,...");
  tune->add_option("--dim", tuneShapes.dims, "As for compile: NAME=VALUE (also the dims of the measuring runs)");
  tune->add_option("--v4f-run", tuneReq.v4fRun, "The v4f-run to measure with (default: the one beside v4fc)");
  tune->add_option("--work-dir", tuneReq.workDir, "Keep the candidate artifacts and profiles in this directory");
  tune->add_flag("-v,--verbose", tuneReq.verbose, "Report progress");

  std::string checkPath;
  bool listOps = false;
  auto *check = app.add_subcommand("check", "Report operator coverage of an ONNX model and run the import and graph "
                                            "passes, without generating code");
  check->add_option("model", checkPath, "ONNX model file")->check(CLI::ExistingFile);
  check->add_flag("--supported-ops", listOps, "List every supported ONNX operator with its opset range");
  CompileOptions checkShapes;
  check->add_option("--input-shape", checkShapes.inputShapes, "As for compile: NAME=D0,D1,...");
  check->add_option("--dim", checkShapes.dims, "As for compile: NAME=VALUE");
  check->add_option("--input-value", checkShapes.inputValues, "As for compile: NAME=FILE.npy");
  bool checkJson = false;
  check->add_flag("--json", checkJson, "Print the report as one JSON object (exit status as without it)");

  std::string inspectPath;
  bool showPlan = false;
  auto *inspect = app.add_subcommand("inspect", "Print the manifest, I/O signature and sections of a .v4f file");
  inspect->add_option("artifact", inspectPath, ".v4f file")->required()->check(CLI::ExistingFile);
  inspect->add_flag("--plan", showPlan, "Also list every dispatch");
  bool inspectJson = false;
  inspect->add_flag("--json", inspectJson, "Print the description as one JSON object");
  std::string extractCuda;
  inspect
      ->add_option("--extract-cuda", extractCuda,
                   "Write the CUDA cubins and PTX (and the entry point names) into this existing directory")
      ->check(CLI::ExistingDirectory);

  std::string keyOut, signPath, signKey, signOut, verifyPath, verifyKey;
  auto *keygen = app.add_subcommand("keygen", "Make an Ed25519 signing key pair: KEY (secret, 0600) and KEY.pub; "
                                              "prints the public key");
  keygen->add_option("--out", keyOut, "Secret key file to create (KEY.pub is written beside it)")->required();
  std::string keyType = "ed25519";
  keygen->add_option("--type", keyType, "ed25519 (signing key pair) or encryption (a 32-byte XChaCha20-Poly1305 key)")
      ->check(CLI::IsMember({"ed25519", "encryption"}))
      ->capture_default_str();
  auto *sign = app.add_subcommand("sign", "Sign a .v4f artifact (in place, atomically, unless -o)");
  sign->add_option("artifact", signPath, ".v4f file")->required()->check(CLI::ExistingFile);
  sign->add_option("--key", signKey, "Secret key file (v4fc keygen)")->required()->check(CLI::ExistingFile);
  sign->add_option("-o,--output", signOut, "Write the signed artifact here instead");
  auto *verify = app.add_subcommand("verify", "Check a .v4f artifact's signature (exit 0 when valid)");
  verify->add_option("artifact", verifyPath, ".v4f file")->required()->check(CLI::ExistingFile);
  verify->add_option("--pubkey", verifyKey, "Public key the artifact must be signed by (KEY.pub)")
      ->check(CLI::ExistingFile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0) return app.exit(e); // --help, --version
    std::fprintf(stderr, "v4fc: error: %s\n(run 'v4fc --help' for usage)\n", e.what());
    return 1;
  }
  if (compile->parsed()) return runCompile(copts);
  if (tune->parsed()) {
    v4f::CompilerOptions options;
    std::string error;
    if (!parseShapeOptions(tuneShapes, options, error)) return fail(error);
    options.targetCpu = tuneShapes.targetCpu;
    options.producer = "v4fc " V4F_VERSION " (tune)";
    tuneReq.runDims = tuneShapes.dims;
    return v4f::runTune(tuneReq, options);
  }
  if (keygen->parsed()) return keyType == "encryption" ? v4f::runKeygenEncryption(keyOut) : v4f::runKeygen(keyOut);
  if (sign->parsed()) return v4f::runSign(signPath, signKey, signOut);
  if (verify->parsed()) return v4f::runVerify(verifyPath, verifyKey);
  if (check->parsed()) {
    if (listOps) {
      std::printf("| operator | opsets |\n|---|---|\n");
      for (const auto &op : v4f::supportedONNXOps())
        std::printf("| %s | %lld-%lld |\n", op.opType, (long long)op.minOpset, (long long)op.maxOpset);
      return 0;
    }
    if (checkPath.empty()) return fail("check needs a model file (or --supported-ops)");
    return runCheck(checkPath, checkShapes, checkJson);
  }
  if (inspect->parsed()) {
    std::string error;
    if (!extractCuda.empty()) return v4f::extractCudaImages(inspectPath, extractCuda, error) ? 0 : fail(error);
    if (!v4f::inspectArtifact(inspectPath, showPlan, inspectJson, error)) return fail(error);
    return 0;
  }
  return 0;
}
