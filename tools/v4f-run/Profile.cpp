//===- Profile.cpp - v4f-run --profile: Chrome trace + hotspot table ------===//
#include "Profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace v4frun {

std::string jsonEscape(const char *s) {
  std::string out;
  for (; s && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out;
}

namespace {

#if defined(__x86_64__)
// 12 independent accumulators hide the FMA latency (4 cycles, 2 ports).
__attribute__((target("avx2,fma"))) double fmaLoopAvx2(long iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) double fmaLoopAvx512(long iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
#endif

} // namespace

void Profile::addRun(const v4f_session_t *session) {
  size_t n = v4f_session_profile_count(session);
  last_.clear();
  uint64_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    v4f_dispatch_profile_t e;
    if (v4f_session_profile_entry(session, i, &e)) continue; // cannot fail for i < count
    last_.push_back(e);
    end = std::max(end, e.start_ns + e.duration_ns);
    if (e.dispatch_index >= byDispatch_.size()) byDispatch_.resize(e.dispatch_index + 1);
    Hotspot &h = byDispatch_[e.dispatch_index];
    h.dispatch = e.dispatch_index;
    h.name = e.name;
    h.kernel = e.kernel;
    h.totalNs += double(e.duration_ns);
    // A dispatch runs once per run outside loops; inside a loop its runs add up.
    if (h.perRunNs.size() < size_t(runs_ + 1)) h.perRunNs.resize(size_t(runs_ + 1), 0.0);
    h.perRunNs[size_t(runs_)] += double(e.duration_ns);
    if (e.flops >= 0) h.flops = std::max(0.0, h.flops) + e.flops;
    ++h.calls;
  }
  runNs_ += double(end);
  ++runs_;
}

bool Profile::writeChromeTrace(const std::string &path, std::string &error) const {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  std::fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  for (size_t i = 0; i < last_.size(); ++i) {
    const v4f_dispatch_profile_t &e = last_[i];
    std::fprintf(f,
                 "  {\"name\": \"%s\", \"cat\": \"dispatch\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
                 "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"dispatch\": %u, \"kernel\": \"%s\", "
                 "\"workgroups\": %lld%s",
                 jsonEscape(e.name).c_str(), double(e.start_ns) / 1e3, double(e.duration_ns) / 1e3, e.dispatch_index,
                 jsonEscape(e.kernel).c_str(), static_cast<long long>(e.workgroups), e.flops >= 0 ? "" : "}}");
    if (e.flops >= 0) std::fprintf(f, ", \"gflops\": %.3f}}", e.duration_ns ? e.flops / double(e.duration_ns) : 0.0);
    std::fprintf(f, "%s\n", i + 1 < last_.size() ? "," : "");
  }
  std::fprintf(f, "], \"v4fDispatchStats\": [\n");
  bool first = true;
  for (const Hotspot &h : byDispatch_) {
    if (!h.calls) continue;
    std::vector<double> t = h.perRunNs;
    t.resize(size_t(runs_), 0.0);
    std::sort(t.begin(), t.end());
    double median = t.empty() ? 0 : (t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
    std::fprintf(f, "%s  {\"dispatch\": %u, \"name\": \"%s\", \"runs\": %d, \"median_us\": %.3f, \"min_us\": %.3f}",
                 first ? "" : ",\n", h.dispatch, jsonEscape(h.name.c_str()).c_str(), runs_, median / 1e3,
                 t.empty() ? 0.0 : t.front() / 1e3);
    first = false;
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

void Profile::printHotspots(FILE *out, size_t top, double peakGflops, int threads) const {
  std::vector<const Hotspot *> hs;
  double sum = 0;
  for (const Hotspot &h : byDispatch_)
    if (h.calls) {
      hs.push_back(&h);
      sum += h.totalNs;
    }
  std::sort(hs.begin(), hs.end(), [](const Hotspot *a, const Hotspot *b) { return a->totalNs > b->totalNs; });
  double perRun = runs_ ? runNs_ / runs_ : 0;
  std::fprintf(out, "profile: %d runs, %zu dispatches, %.3f ms per run (%.3f ms in dispatches)", runs_, hs.size(),
               perRun / 1e6, runs_ ? sum / runs_ / 1e6 : 0.0);
  if (peakGflops > 0) std::fprintf(out, ", FMA peak %.1f GFLOP/s at %d threads", peakGflops, threads);
  std::fprintf(out, "\n  %4s %7s %6s %10s %9s %7s  %s\n", "#", "%time", "cum%", "ms/run", "GFLOP/s", "%peak",
               "dispatch (kernel)");
  double cum = 0;
  for (size_t i = 0; i < hs.size() && i < top; ++i) {
    const Hotspot &h = *hs[i];
    double pct = sum > 0 ? 100 * h.totalNs / sum : 0;
    cum += pct;
    char gf[32] = "-", pk[32] = "-";
    if (h.flops >= 0 && h.totalNs > 0) {
      double g = h.flops / h.totalNs;
      std::snprintf(gf, sizeof gf, "%.1f", g);
      if (peakGflops > 0) std::snprintf(pk, sizeof pk, "%.0f%%", 100 * g / peakGflops);
    }
    std::fprintf(out, "  %4u %6.1f%% %5.1f%% %10.4f %9s %7s  %s (%s)\n", h.dispatch, pct, cum, h.totalNs / runs_ / 1e6,
                 gf, pk, h.name.c_str(), h.kernel.c_str());
  }
  // Dispatch-bound runs show here: the mean time per dispatch.
  if (!hs.empty() && runs_) std::fprintf(out, "  mean per dispatch: %.2f us\n", sum / runs_ / 1e3 / double(hs.size()));
}

double measureFmaPeakGflops(int threads, std::string *isa) {
#if defined(__x86_64__)
  bool avx512 = __builtin_cpu_supports("avx512f");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return 0;
  if (isa) *isa = avx512 ? "avx512" : "avx2";
  const int lanes = avx512 ? 16 : 8, chains = avx512 ? 16 : 12;
  const long iters = 4000000;
  threads = std::max(1, threads);
  std::vector<double> sinks(size_t(threads) * 8, 0.0); // one cache line per thread
  auto body = [&](int t) { sinks[size_t(t) * 8] += avx512 ? fmaLoopAvx512(iters) : fmaLoopAvx2(iters); };
  body(0); // warm up (clock ramps)
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto &t : pool) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * lanes * chains * double(iters) * threads / s / 1e9;
#else
  (void)threads;
  (void)isa;
  return 0;
#endif
}

} // namespace v4frun
