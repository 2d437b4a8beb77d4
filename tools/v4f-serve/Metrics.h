// Metrics.h - counters and histograms per model version, rendered in the
// Prometheus text format with Triton's metric names where Triton has one.
#ifndef V4F_SERVE_METRICS_H_
#define V4F_SERVE_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace v4f::serve {

// Cumulative histogram with fixed upper bounds.
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Appends name_bucket/_sum/_count lines with `labels` ("model=\"m\",...").
  void render(const std::string& name, const std::string& labels, std::string* out) const;

private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_; // bounds_.size() + 1 (+Inf)
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sumMicros_{0}; // sum scaled by 1e6 (values are seconds or sizes)
};

// One model version's statistics. They survive unload/reload of the version
// (Prometheus counters must not go backwards).
struct ModelStats {
  std::atomic<uint64_t> requestSuccess{0}, requestFailure{0};
  std::atomic<uint64_t> inferenceCount{0}; // inferences (batch rows) run
  std::atomic<uint64_t> execCount{0};      // model executions (batches)
  std::atomic<uint64_t> requestDurationUs{0}, queueDurationUs{0};
  std::atomic<uint64_t> computeInputUs{0}, computeInferUs{0}, computeOutputUs{0};
  Histogram latency{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
  Histogram batchSize{{1, 2, 4, 8, 16, 32, 64, 128}};
  // Requests queued and not yet taken into a batch.
  std::atomic<int64_t> pending{0};
};

class Metrics {
public:
  std::shared_ptr<ModelStats> model(const std::string& name, const std::string& version);
  void countHttp(int status);
  void countAuthFailure(int status);
  std::string render() const;

private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelStats>> models_;
  std::map<int, uint64_t> http_;
  std::map<int, uint64_t> authFailures_;
};

} // namespace v4f::serve

#endif // V4F_SERVE_METRICS_H_
