//===- Compiler.h - the v4f compile pipeline as a library -------*- C++ -*-===//
//
// ONNX file -> import -> graph passes (decomposition, folding, fusion) ->
// target strategy -> kernel generation and the execution plan -> LLVM ->
// shared object, as one call. The v4fc driver (and later the Python package)
// only parses options, calls compileONNXModel and writes what it returns.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_COMPILER_COMPILER_H
#define V4F_COMPILER_COMPILER_H

#include "v4f/Codegen/Tuning.h"
#include "v4f/Import/InputValue.h"
#include "v4f/Plan/ExecutablePlan.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace v4f {

struct CompilerOptions {
  /// --target-cpu: host, x86-64-v2|v3|v4 or an LLVM CPU name.
  std::string targetCpu = "host";
  /// --target: where dispatches may run: the CPU (always available for
  /// what the GPU has no kernel for) and/or a CUDA GPU. cuda alone puts every
  /// region with a GPU kernel on the GPU; cpu,cuda lets the cost model of
  /// v4f-assign-placement choose.
  bool targetCuda = false, targetCpuAllowed = true;
  /// --cuda-arch (sm_XX list) and --precision (fp32|fp16|bf16) for GPU dispatches.
  std::vector<int> cudaArchs = {90};
  std::string cudaPrecision = "fp32";
  /// Print the IR after every pass (graph and kernel pipelines) to stderr.
  bool printIRAfterAll = false;
  /// Where to stop: right after import (the v4f IR with composite ops whole),
  /// after the graph passes (the optimized v4f IR), after LLVM O3 (the
  /// object, and LLVM IR text when `wantLLVMIR`), or with a complete plan.
  enum class Stage { ImportedIR, GraphIR, Object, Artifact } stopAfter = Stage::Artifact;
  bool wantLLVMIR = false;
  /// --input-shape NAME=D0,D1,... and --dim NAME=VALUE: input dims fixed at
  /// compile time (see v4f::ImportOptions).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  std::map<std::string, int64_t> dimValues;
  std::map<std::string, std::pair<int64_t, int64_t>> dimBounds;
  /// --input-value NAME=FILE.npy: inputs folded to constants.
  std::map<std::string, InputValue> inputValues;
  /// --max-loop-iterations: the bound of a Loop run in the plan (a trip count
  /// known only at run time) and of unrolling.
  int64_t maxLoopIterations = 4096;
  /// --quantize: "" (float), "dynamic-int8" (int8 weights, activations per
  /// row at run time) or "int8" (static: activation ranges from
  /// `calibrationData`, an .npz with one array per input, first axis =
  /// samples, reduced by `calibrationMethod`: minmax, entropy,
  /// percentile[:P]); --exclude: ONNX node names that stay float;
  /// --per-channel: one weight scale per output channel (else per tensor).
  std::string quantize;
  std::vector<std::string> quantizeExclude;
  std::string calibrationData;
  std::string calibrationMethod = "minmax";
  bool perChannel = false;
  /// --int4-zero-points: asymmetric int4-weight groups (a zero point each).
  bool int4ZeroPoints = false;
  /// --accuracy-budget PCT (< 0: off) with --validation-data VAL.npz and
  /// optionally --labels L.npy: keep the most sensitive quantized layers in
  /// float until the top-1 loss on the validation set is at most PCT points
  /// (MixedPrecision.h).
  double accuracyBudget = -1;
  std::string validationData;
  std::string labels;
  /// --quant-report: fill CompiledModel::quantReport (JSON).
  bool wantQuantReport = false;
  /// --tuning-db: apply the measured choices of this database (v4fc tune,
  /// docs/tuning.md). `tuneCandidate` >= 0 instead gives every tunable
  /// matmul/conv its candidate N (v4fc tune's measuring runs) and
  /// `tuneAssignments`, when set, receives what each op got.
  std::string tuningDb;
  /// --cpu-layouts=channels-first: skip v4f-assign-cpu-layouts (every
  /// tensor stays channels-first; for isolating a suspected layout issue).
  bool cpuChannelsLast = true;
  int tuneCandidate = -1;
  std::vector<TuningAssignment> *tuneAssignments = nullptr;
  /// "producer" recorded in the artifact.
  std::string producer = "v4fc";
  /// Called after each phase with its name (for --verbose timing).
  std::function<void(const char *phase)> phaseDone;
};

struct CompiledModel {
  std::vector<std::string> notes; // import notes for --verbose (e.g. dims declared as -1)
  std::string graphIR;            // Stage::ImportedIR / GraphIR: the v4f IR at that point
  std::string llvmIR;             // wantLLVMIR: the optimized LLVM IR
  std::vector<uint8_t> object;    // Stage::Object and later: the kernels' ELF object
  ExecutablePlan plan;            // Stage::Artifact: complete, executables included
  std::vector<uint8_t> constants; // Stage::Artifact: the packed constants
  std::string cudaSource;         // --target with cuda: the CUDA C++ compiled by NVRTC
  std::string quantReport;        // wantQuantReport: per-layer precision, scales, error (JSON)
};

/// Compiles the ONNX model at `path`. On failure returns false with `error`
/// holding the file, the failing phase and every diagnostic (op, ONNX node).
bool compileONNXModel(const std::string &path, const CompilerOptions &options, CompiledModel &out, std::string &error);

} // namespace v4f

#endif // V4F_COMPILER_COMPILER_H
