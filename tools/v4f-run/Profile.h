//===- Profile.h - v4f-run --profile: Chrome trace + hotspot table --------===//
#ifndef V4F_TOOLS_V4F_RUN_PROFILE_H
#define V4F_TOOLS_V4F_RUN_PROFILE_H

#include "v4f/runtime.h"

#include <string>
#include <vector>

namespace v4frun {

/// `s` escaped for a JSON string (quotes, backslashes, control characters).
std::string jsonEscape(const char *s);

/// Per-dispatch totals over the profiled runs.
struct Hotspot {
  uint32_t dispatch = 0;
  std::string name, kernel;
  double totalNs = 0, flops = -1;
  long calls = 0;
  std::vector<double> perRunNs; // the dispatch's time in each profiled run
};

class Profile {
public:
  /// Adds the entries `session` recorded in its last run.
  void addRun(const v4f_session_t *session);
  /// Chrome trace (chrome://tracing, Perfetto) of the last run added, plus
  /// "v4fDispatchStats": per dispatch over all runs added, its median and
  /// minimum time per run (µs; v4fc tune reads these).
  bool writeChromeTrace(const std::string &path, std::string &error) const;
  /// The top `top` dispatches by time: % of the run, mean time per run,
  /// GFLOP/s and % of `peakGflops` (the FMA peak at the session's threads).
  void printHotspots(FILE *out, size_t top, double peakGflops, int threads) const;
  int runs() const { return runs_; }

private:
  std::vector<v4f_dispatch_profile_t> last_;
  std::vector<Hotspot> byDispatch_;
  double runNs_ = 0; // sum over runs of the run's span
  int runs_ = 0;
};

/// Measured single-precision FMA peak (GFLOP/s) of this host on `threads`
/// threads: independent FMA chains in the widest vector unit the CPU has.
double measureFmaPeakGflops(int threads, std::string *isa);

} // namespace v4frun

#endif
