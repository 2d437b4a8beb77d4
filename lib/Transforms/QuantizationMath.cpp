//===- QuantizationMath.cpp - int8 scale, zero point and rounding ---------===//
#include "v4f/Transforms/QuantizationMath.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace v4f {

ActivationQuant activationQuantFromRange(float lo, float hi) {
  ActivationQuant q;
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return q;
  q.scale = (hi - lo) / 255.f;
  q.zeroPoint = int32_t(std::clamp(std::nearbyint(-128.f - lo / q.scale), -128.f, 127.f));
  return q;
}

void quantizeWeightColumns(const float *w, int64_t K, int64_t N, bool perChannel, std::vector<int8_t> &q,
                           std::vector<float> &scales) {
  scales.assign(size_t(N), 0.f);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) scales[n] = std::max(scales[n], std::fabs(w[k * N + n]));
  if (!perChannel) {
    float all = 0.f;
    for (float s : scales) all = std::max(all, s);
    std::fill(scales.begin(), scales.end(), all);
  }
  for (float &s : scales) s = (s > 0.f && std::isfinite(s)) ? s / 127.f : 1.f;
  q.resize(size_t(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      float v = std::nearbyint(w[k * N + n] / scales[n]);
      q[k * N + n] = int8_t(std::clamp(std::isfinite(v) ? v : 0.f, -127.f, 127.f));
    }
}

void quantizeWeightGroupsInt4(const float *w, int64_t K, int64_t N, int64_t group, std::vector<int8_t> &q,
                              std::vector<float> &scales, std::vector<int8_t> *zeroPoints) {
  int64_t groups = (K + group - 1) / group;
  scales.assign(size_t(groups * N), 1.f);
  q.assign(size_t(K * N), 0);
  if (zeroPoints) zeroPoints->assign(size_t(groups * N), 0);
  for (int64_t g = 0; g < groups; ++g) {
    int64_t k0 = g * group, k1 = std::min(K, k0 + group);
    for (int64_t n = 0; n < N; ++n) {
      if (zeroPoints) {
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t k = k0; k < k1; ++k)
          if (float v = w[k * N + n]; std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
        if (!(lo <= hi)) lo = hi = 0.f;
        // Widened to contain 0, so the zero point is a level ([0, 15]).
        lo = std::min(lo, 0.f), hi = std::max(hi, 0.f);
        float scale = (hi - lo) / 15.f;
        if (!std::isfinite(scale) || !(scale > 0.f)) scale = 1.f;
        float z = std::clamp(std::nearbyint(-lo / scale), 0.f, 15.f);
        scales[g * N + n] = scale;
        (*zeroPoints)[g * N + n] = int8_t(int(z) - 8);
        for (int64_t k = k0; k < k1; ++k) {
          float v = std::nearbyint(w[k * N + n] / scale);
          q[k * N + n] = int8_t(int(std::clamp(std::isfinite(v) ? v + z : z, 0.f, 15.f)) - 8);
        }
        continue;
      }
      // The value of largest magnitude maps to -8 exactly (its scale takes
      // its sign), so all 16 levels are used.
      float extreme = 0.f;
      for (int64_t k = k0; k < k1; ++k) {
        float v = w[k * N + n];
        if (std::isfinite(v) && std::fabs(v) > std::fabs(extreme)) extreme = v;
      }
      float scale = extreme != 0.f ? extreme / -8.f : 1.f;
      if (!std::isfinite(scale) || scale == 0.f) scale = 1.f;
      scales[g * N + n] = scale;
      for (int64_t k = k0; k < k1; ++k) {
        float v = std::nearbyint(w[k * N + n] / scale);
        q[k * N + n] = int8_t(std::clamp(std::isfinite(v) ? v : 0.f, -8.f, 7.f));
      }
    }
  }
}

double weightQuantizationSqnrDb(const float *w, int64_t K, int64_t N, const std::string &mode, bool perChannel,
                                int64_t group, bool int4ZeroPoints) {
  std::vector<int8_t> q, zp;
  std::vector<float> scales;
  bool int4 = mode == "int4-weight" || mode == "w4a8";
  if (int4)
    quantizeWeightGroupsInt4(w, K, N, group, q, scales, int4ZeroPoints ? &zp : nullptr);
  else
    quantizeWeightColumns(w, K, N, perChannel, q, scales);
  double signal = 0, noise = 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      double v = w[k * N + n];
      if (!std::isfinite(v)) continue;
      double s = int4 ? scales[(k / group) * N + n] : scales[n];
      double z = zp.empty() ? 0 : zp[(k / group) * N + n];
      double e = v - (double(q[k * N + n]) - z) * s;
      signal += v * v;
      noise += e * e;
    }
  return noise > 0 ? 10 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
}

bool CalibrationMethod::parse(const std::string &text, CalibrationMethod &out, std::string &error) {
  out = CalibrationMethod();
  if (text == "minmax") return true;
  if (text == "entropy") {
    out.kind = Entropy;
    return true;
  }
  if (text == "percentile") {
    out.kind = Percentile;
    return true;
  }
  if (text.rfind("percentile:", 0) == 0) {
    std::string p = text.substr(11);
    char *end = nullptr;
    double v = std::strtod(p.c_str(), &end);
    if (!p.empty() && *end == 0 && v > 0 && v <= 100) {
      out.kind = Percentile;
      out.percentile = v;
      return true;
    }
    error = "--calibration-method: the percentile must be a number in (0, 100], got '" + p + "'";
    return false;
  }
  error = "--calibration-method: '" + text + "' is not minmax, entropy, percentile or percentile:P";
  return false;
}

std::string CalibrationMethod::str() const {
  switch (kind) {
  case MinMax: return "minmax";
  case Entropy: return "entropy";
  case Percentile: {
    char buf[64];
    std::snprintf(buf, sizeof buf, "percentile:%g", percentile);
    return buf;
  }
  }
  return "?";
}

namespace {

/// TensorRT's entropy calibration on a histogram of |x|: the number of bins
/// (from `levels` to all) whose clipped distribution loses the least
/// information (KL divergence) when quantized to `levels` levels.
int entropyThresholdBin(const std::vector<uint64_t> &hist, int levels) {
  int bins = int(hist.size());
  if (bins <= levels) return bins;
  std::vector<double> p(hist.size()), q(hist.size());
  int best = bins;
  double bestKL = std::numeric_limits<double>::infinity();
  std::vector<uint64_t> tail(hist.size() + 1, 0); // tail[i] = sum hist[i..]
  for (int i = bins - 1; i >= 0; --i) tail[i] = tail[i + 1] + hist[i];
  if (tail[0] == 0) return bins;
  for (int i = levels; i <= bins; ++i) {
    // Reference: the first i bins, everything beyond clipped into the last.
    double pSum = 0;
    for (int j = 0; j < i; ++j) pSum += (p[j] = double(hist[j]));
    p[i - 1] += double(tail[i]);
    pSum += double(tail[i]);
    // Candidate: the first i bins merged into `levels` groups, each group's
    // count spread evenly over its non-empty bins.
    double qSum = 0;
    for (int g = 0; g < levels; ++g) {
      int b = int(int64_t(g) * i / levels), e = int(int64_t(g + 1) * i / levels);
      double total = 0;
      int nonzero = 0;
      for (int j = b; j < e; ++j) {
        total += double(hist[j]);
        nonzero += hist[j] != 0;
      }
      for (int j = b; j < e; ++j) {
        q[j] = hist[j] != 0 ? total / nonzero : 0.0;
        qSum += q[j];
      }
    }
    if (pSum <= 0 || qSum <= 0) continue;
    double kl = 0;
    for (int j = 0; j < i; ++j) {
      if (p[j] <= 0) continue;
      double pj = p[j] / pSum, qj = q[j] / qSum;
      // A reference bin the candidate leaves empty (the clipped last bin
      // when bin i-1 was empty): a small floor instead of infinity.
      kl += pj * std::log(pj / std::max(qj, 1e-12));
    }
    if (kl < bestKL) {
      bestKL = kl;
      best = i;
    }
  }
  return best;
}

} // namespace

void chooseCalibrationRange(const CalibrationMethod &method, double min, double max,
                            const std::vector<uint64_t> &valueHist, const std::vector<uint64_t> &absHist, float &lo,
                            float &hi) {
  lo = float(min);
  hi = float(max);
  if (!(max > min)) return;
  if (method.kind == CalibrationMethod::Percentile && !valueHist.empty()) {
    uint64_t total = 0;
    for (uint64_t c : valueHist) total += c;
    if (total == 0) return;
    double width = (max - min) / double(valueHist.size());
    double lowCount = double(total) * (1.0 - method.percentile / 100.0);
    double highCount = double(total) * (method.percentile / 100.0);
    uint64_t cum = 0;
    size_t loBin = 0;
    for (size_t k = 0; k < valueHist.size(); ++k) {
      cum += valueHist[k];
      if (double(cum) > lowCount) {
        loBin = k;
        break;
      }
    }
    cum = 0;
    size_t hiBin = valueHist.size() - 1;
    for (size_t k = 0; k < valueHist.size(); ++k) {
      cum += valueHist[k];
      if (double(cum) >= highCount) {
        hiBin = k;
        break;
      }
    }
    lo = float(std::max(min, min + double(loBin) * width));
    hi = float(std::min(max, min + double(hiBin + 1) * width));
  } else if (method.kind == CalibrationMethod::Entropy && !absHist.empty()) {
    double amax = std::max(std::fabs(min), std::fabs(max));
    int levels = min >= 0 ? 255 : 127;
    int bin = entropyThresholdBin(absHist, levels);
    double threshold = (double(bin) + 0.5) * amax / double(absHist.size());
    lo = float(std::max(min, -threshold));
    hi = float(std::min(max, threshold));
  }
}

} // namespace v4f
