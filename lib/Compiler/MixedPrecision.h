//===- MixedPrecision.h - --accuracy-budget ---------------------*- C++ -*-===//
//
// Automatic mixed precision: quantizing every matmul may cost more accuracy
// than the user accepts. Given a validation set (and optionally its labels),
// v4fc ranks the quantizable layers by sensitivity (lowest per-layer SQNR
// first) and keeps the most sensitive ones in float32 — as few as it can —
// until the measured loss is within the budget. Each trial quantizes a copy
// of the graph, compiles it for this host and runs it in-process
// (InProcessModel), so what is measured is what ships.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_COMPILER_MIXEDPRECISION_H
#define V4F_COMPILER_MIXEDPRECISION_H

#include "Calibration.h"

#include <functional>
#include <string>
#include <vector>

namespace v4f {

/// A layer v4f-quantize would quantize: its ONNX node name (what --exclude
/// takes) and how much quantization hurts it alone (dB; lower = more
/// sensitive).
struct QuantCandidate {
  std::string node;
  double sqnrDb = 0;
};

/// The metric of one trial: top-1 accuracy against the labels, or without
/// labels top-1 agreement with the float model (both in percent).
struct AccuracyTrial {
  size_t floatLayers = 0;
  double metric = 0, loss = 0;
};

struct MixedPrecisionResult {
  std::string metric; // "top-1 accuracy" / "top-1 agreement with float32"
  double budget = 0, floatMetric = 0;
  std::vector<AccuracyTrial> trials; // in the order they ran
  AccuracyTrial chosen;
  std::vector<QuantCandidate> keptFloat; // the most sensitive layers, kept float32
};

/// Quantizes a clone of the float graph with these node names excluded
/// (in addition to the user's --exclude) and compiles it for this host.
using QuantizedArtifactCompiler =
    std::function<bool(const std::vector<std::string> &exclude, std::vector<uint8_t> &artifact, std::string &error)>;

/// Reads --labels (.npy of integer class indices, one per validation sample).
bool loadLabels(const std::string &path, int64_t samples, std::vector<int64_t> &labels, std::string &error);

/// Finds the fewest of `ranked` (most sensitive first) to keep in float so
/// the loss of the metric on `validation` is at most `budget` points:
/// first all quantized, then 1, 2, 4, ... float layers, then a binary
/// search between the last failing and the first passing count (the loss
/// is taken as monotone in the count). `floatArtifact` is the unquantized
/// model; output 0 of the model gives the class (argmax over its last axis).
bool selectMixedPrecision(const std::vector<uint8_t> &floatArtifact, const SampleSet &validation,
                          const std::vector<int64_t> *labels, double budget, const std::vector<QuantCandidate> &ranked,
                          const QuantizedArtifactCompiler &compileQuantized, MixedPrecisionResult &result,
                          std::string &error);

} // namespace v4f

#endif // V4F_COMPILER_MIXEDPRECISION_H
