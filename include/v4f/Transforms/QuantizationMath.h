//===- QuantizationMath.h - int8 scale, zero point and rounding -*- C++ -*-===//
//
// The arithmetic of v4f's int8 quantization in one place, free of MLIR: the
// v4f-quantize pass uses it to rewrite the graph, the calibration step to
// choose ranges and to measure each layer's error for --quant-report and
// --accuracy-budget. docs/quantization.md explains each choice.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_TRANSFORMS_QUANTIZATIONMATH_H
#define V4F_TRANSFORMS_QUANTIZATIONMATH_H

#include <cstdint>
#include <string>
#include <vector>

namespace v4f {

/// Asymmetric int8 activation quantization: q = clamp(round(x / scale) + zp,
/// -128, 127), x ~ (q - zp) * scale.
struct ActivationQuant {
  float scale = 1.f;
  int32_t zeroPoint = 0;
};

/// The quantization of the range [lo, hi] (widened to contain 0, so 0 is
/// exact): scale = (hi - lo) / 255, zp = round(-128 - lo / scale).
ActivationQuant activationQuantFromRange(float lo, float hi);

/// Symmetric int8 weights ([-127, 127]) of a row-major K x N matrix: one
/// scale per output column (`perChannel`) or one for the whole matrix
/// (repeated N times), scale = max |w| / 127.
void quantizeWeightColumns(const float *w, int64_t K, int64_t N, bool perChannel, std::vector<int8_t> &q,
                           std::vector<float> &scales);

/// Block-wise int4 weights of a row-major K x N matrix: per column, groups of
/// `group` consecutive rows share a scale (`scales` is [ceil(K / group), N]);
/// the group's value of largest magnitude m gets scale m / -8 (it maps to -8
/// exactly, so the scale carries m's sign) and q = clamp(round(w / scale),
/// -8, 7). An all-zero group gets scale 1.
/// With `zeroPoints` (asymmetric groups, the same shape as `scales`): the
/// group's range [lo, hi] (widened to contain 0) maps to
/// the 16 levels, scale = (hi - lo) / 15, unsigned zero point z =
/// clamp(round(-lo / scale), 0, 15), q_u = clamp(round(w / scale) + z, 0,
/// 15); stored in the signed domain q = q_u - 8 and zero point z - 8, so w ~
/// (q - zero point) * scale either way.
void quantizeWeightGroupsInt4(const float *w, int64_t K, int64_t N, int64_t group, std::vector<int8_t> &q,
                              std::vector<float> &scales, std::vector<int8_t> *zeroPoints = nullptr);

/// How much quantizing the weight alone loses: 10 log10(sum w^2 / sum (w -
/// dequantized w)^2) for the scheme of `mode` ("int4-weight" with `group`
/// and optional zero points, else int8 per channel or per tensor); infinity
/// when exact.
double weightQuantizationSqnrDb(const float *w, int64_t K, int64_t N, const std::string &mode, bool perChannel,
                                int64_t group, bool int4ZeroPoints = false);

/// How calibration turns the observed values of a tensor into its range.
struct CalibrationMethod {
  enum Kind { MinMax, Entropy, Percentile } kind = MinMax;
  double percentile = 99.99;
  /// "minmax", "entropy", "percentile" or "percentile:P" (0 < P <= 100);
  /// false with `error` otherwise.
  static bool parse(const std::string &text, CalibrationMethod &out, std::string &error);
  std::string str() const;
};

/// Bins of the calibration histograms.
constexpr int kCalibrationBins = 2048;

/// What calibration observed of one activation ("tap"): its range and, for
/// the percentile and entropy methods, the histograms of its values over
/// [min, max] and of |x| over [0, max(|min|, |max|)].
struct ActivationStatistics {
  double min = 1.0 / 0.0, max = -1.0 / 0.0;
  std::vector<uint64_t> valueHist, absHist;
};

/// The range chosen for a tensor whose values lie in [min, max]:
///  - MinMax: [min, max];
///  - Percentile: the P-th and (100-P)-th percentiles of `valueHist`, the
///    histogram of the values over [min, max];
///  - Entropy: the threshold T minimizing the KL divergence between the
///    histogram of |x| over [0, max(|min|, |max|)] (`absHist`) and its
///    quantization to 128 levels (255 when min >= 0), TensorRT's method;
///    the range is [max(min, -T), min(max, T)].
void chooseCalibrationRange(const CalibrationMethod &method, double min, double max,
                            const std::vector<uint64_t> &valueHist, const std::vector<uint64_t> &absHist, float &lo,
                            float &hi);

} // namespace v4f

#endif // V4F_TRANSFORMS_QUANTIZATIONMATH_H
