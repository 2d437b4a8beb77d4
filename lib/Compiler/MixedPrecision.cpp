//===- MixedPrecision.cpp - --accuracy-budget -------------------------===//
//
// See MixedPrecision.h. docs/quantization.md describes the search and the
// metric.
//
//===----------------------------------------------------------------------===//
#include "MixedPrecision.h"

#include "v4f/Support/Npy.h"
#include "v4f/artifact_format.h"

#include <algorithm>
#include <map>

namespace v4f {

bool loadLabels(const std::string &path, int64_t samples, std::vector<int64_t> &labels, std::string &error) {
  v4frun::NpyArray array;
  if (!v4frun::readNpy(path, array, error)) {
    error = "--labels " + path + ": " + error;
    return false;
  }
  int64_t count = 1;
  for (int64_t d : array.shape) count *= d;
  bool column = array.shape.size() == 2 && array.shape[1] == 1;
  if (!(array.shape.size() == 1 || column) || count != samples) {
    std::string shape;
    for (int64_t d : array.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    error = "--labels " + path + ": shape [" + shape + "]; want [" + std::to_string(samples) +
            "], one class index per validation sample";
    return false;
  }
  labels.clear();
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    if (array.dtype == V4F_DTYPE_INT64)
      v = reinterpret_cast<const int64_t *>(array.data.data())[i];
    else if (array.dtype == V4F_DTYPE_INT32)
      v = reinterpret_cast<const int32_t *>(array.data.data())[i];
    else {
      error =
          "--labels " + path + ": dtype " + v4f_dtype_format_name(array.dtype) + "; want int64 or int32 class indices";
      return false;
    }
    if (v < 0) {
      error = "--labels " + path + ": label " + std::to_string(v) + " of sample " + std::to_string(i) + " is negative";
      return false;
    }
    labels.push_back(v);
  }
  return true;
}

namespace {

/// The class of every row of output 0 (argmax over its last axis), for all
/// samples in order.
bool predict(const std::vector<uint8_t> &artifact, const SampleSet &set, std::vector<int64_t> &classes,
             int64_t &rowsPerSample, std::string &error) {
  InProcessModel model;
  if (!model.load(artifact, error)) return false;
  classes.clear();
  std::vector<InProcessModel::Output> outputs;
  for (int64_t s = 0; s < set.samples; ++s) {
    if (!model.run(set, s, outputs, error)) return false;
    const InProcessModel::Output &out = outputs.front();
    if (out.dtype != V4F_DTYPE_FLOAT32 || out.dims.empty() || out.dims.back() < 1) {
      error = std::string("--accuracy-budget: output 0 of the model must be float32 scores with a class axis last "
                          "(it is ") +
              v4f_dtype_format_name(out.dtype) + " of rank " + std::to_string(out.dims.size()) + ")";
      return false;
    }
    int64_t C = out.dims.back(), rows = int64_t(out.elements()) / C;
    rowsPerSample = rows;
    const float *x = out.f32();
    for (int64_t r = 0; r < rows; ++r) classes.push_back(std::max_element(x + r * C, x + (r + 1) * C) - (x + r * C));
  }
  return true;
}

double percentEqual(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  size_t same = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) same += a[i] == b[i];
  return a.empty() ? 100.0 : 100.0 * double(same) / double(a.size());
}

} // namespace

bool selectMixedPrecision(const std::vector<uint8_t> &floatArtifact, const SampleSet &validation,
                          const std::vector<int64_t> *labels, double budget, const std::vector<QuantCandidate> &ranked,
                          const QuantizedArtifactCompiler &compileQuantized, MixedPrecisionResult &result,
                          std::string &error) {
  result = MixedPrecisionResult();
  result.budget = budget;
  std::vector<int64_t> floatClasses;
  int64_t rows = 0;
  if (!predict(floatArtifact, validation, floatClasses, rows, error)) return false;
  if (labels && rows != 1) {
    error = "--labels gives one class per sample, but output 0 of a validation sample has " + std::to_string(rows) +
            " rows of scores";
    return false;
  }
  result.metric = labels ? "top-1 accuracy" : "top-1 agreement with float32";
  result.floatMetric = labels ? percentEqual(floatClasses, *labels) : 100.0;

  std::map<size_t, AccuracyTrial> byCount;
  auto trial = [&](size_t floatLayers, AccuracyTrial &out) -> bool {
    if (auto it = byCount.find(floatLayers); it != byCount.end()) {
      out = it->second;
      return true;
    }
    std::vector<std::string> exclude;
    for (size_t i = 0; i < floatLayers; ++i) exclude.push_back(ranked[i].node);
    std::vector<uint8_t> artifact;
    if (!compileQuantized(exclude, artifact, error)) return false;
    std::vector<int64_t> classes;
    int64_t r = 0;
    if (!predict(artifact, validation, classes, r, error)) return false;
    out.floatLayers = floatLayers;
    out.metric = percentEqual(classes, labels ? *labels : floatClasses);
    out.loss = result.floatMetric - out.metric;
    byCount[floatLayers] = out;
    result.trials.push_back(out);
    return true;
  };
  auto within = [&](const AccuracyTrial &t) { return t.loss <= budget + 1e-9; };

  AccuracyTrial t;
  if (!trial(0, t)) return false;
  if (within(t) || ranked.empty()) {
    result.chosen = t;
  } else {
    // Grow the float set 1, 2, 4, ... until within budget (all float is the
    // float model: loss 0), then bisect (lo fails, hi passes).
    size_t lo = 0, hi = 1;
    AccuracyTrial atHi;
    bool found = false;
    while (hi <= ranked.size()) {
      if (!trial(hi, atHi)) return false;
      if (within(atHi)) {
        found = true;
        break;
      }
      lo = hi;
      if (hi == ranked.size()) break;
      hi = std::min(ranked.size(), hi * 2);
    }
    if (!found) {
      // Unreachable when the float model is deterministic; say so rather
      // than ship something outside the budget.
      error = "--accuracy-budget " + std::to_string(budget) + ": even with every layer in float32 the " +
              result.metric + " loss is " + std::to_string(atHi.loss) + " points";
      return false;
    }
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      AccuracyTrial atMid;
      if (!trial(mid, atMid)) return false;
      if (within(atMid)) {
        hi = mid;
        atHi = atMid;
      } else {
        lo = mid;
      }
    }
    result.chosen = atHi;
  }
  result.keptFloat.assign(ranked.begin(), ranked.begin() + long(result.chosen.floatLayers));
  return true;
}

} // namespace v4f
