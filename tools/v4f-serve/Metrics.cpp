// Metrics.cpp - Prometheus text exposition.
#include "Metrics.h"

#include <cmath>
#include <cstdio>

namespace v4f::serve {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0);
}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sumMicros_.fetch_add(static_cast<uint64_t>(std::llround(value * 1e6)), std::memory_order_relaxed);
}

namespace {
std::string number(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
void help(std::string* out, const char* name, const char* type, const char* text) {
  *out += std::string("# HELP ") + name + " " + text + "\n# TYPE " + name + " " + type + "\n";
}
} // namespace

void Histogram::render(const std::string& name, const std::string& labels, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    *out += name + "_bucket{" + labels + ",le=\"" + (i < bounds_.size() ? number(bounds_[i]) : "+Inf") + "\"} " +
            std::to_string(cumulative) + "\n";
  }
  *out += name + "_sum{" + labels + "} " + number(static_cast<double>(sumMicros_.load()) / 1e6) + "\n";
  *out += name + "_count{" + labels + "} " + std::to_string(count_.load()) + "\n";
}

std::shared_ptr<ModelStats> Metrics::model(const std::string& name, const std::string& version) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = models_[{name, version}];
  if (!slot) slot = std::make_shared<ModelStats>();
  return slot;
}

void Metrics::countHttp(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++http_[status];
}

void Metrics::countAuthFailure(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++authFailures_[status];
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  struct Counter {
    const char* name;
    const char* help;
    std::atomic<uint64_t> ModelStats::*field;
  };
  const Counter counters[] = {
      {"nv_inference_request_success", "Number of successful inference requests, all batch sizes",
       &ModelStats::requestSuccess},
      {"nv_inference_request_failure", "Number of failed inference requests, all batch sizes",
       &ModelStats::requestFailure},
      {"nv_inference_count", "Number of inferences performed (a batch of n counts n)", &ModelStats::inferenceCount},
      {"nv_inference_exec_count", "Number of model executions performed (a batch counts one)", &ModelStats::execCount},
      {"nv_inference_request_duration_us", "Cumulative inference request duration in microseconds",
       &ModelStats::requestDurationUs},
      {"nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds",
       &ModelStats::queueDurationUs},
      {"nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds",
       &ModelStats::computeInputUs},
      {"nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds",
       &ModelStats::computeInferUs},
      {"nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds",
       &ModelStats::computeOutputUs},
  };
  auto labels = [](const std::pair<std::string, std::string>& k) {
    return "model=\"" + escape(k.first) + "\",version=\"" + escape(k.second) + "\"";
  };
  for (const Counter& c : counters) {
    help(&out, c.name, "counter", c.help);
    for (const auto& [key, stats] : models_)
      out += std::string(c.name) + "{" + labels(key) + "} " + std::to_string(((*stats).*c.field).load()) + "\n";
  }
  help(&out, "nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests");
  for (const auto& [key, stats] : models_)
    out += "nv_inference_pending_request_count{" + labels(key) + "} " + std::to_string(stats->pending.load()) + "\n";
  help(&out, "v4f_inference_request_latency_seconds", "histogram",
       "Inference request latency (receipt to response) in seconds");
  for (const auto& [key, stats] : models_)
    stats->latency.render("v4f_inference_request_latency_seconds", labels(key), &out);
  help(&out, "v4f_inference_batch_size", "histogram", "Batch size of each model execution");
  for (const auto& [key, stats] : models_) stats->batchSize.render("v4f_inference_batch_size", labels(key), &out);
  help(&out, "v4f_http_requests_total", "counter", "HTTP requests answered, by status code");
  for (const auto& [code, n] : http_)
    out += "v4f_http_requests_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
  help(&out, "v4f_auth_failures_total", "counter", "Requests refused by access control, by status code");
  for (const auto& [code, n] : authFailures_)
    out += "v4f_auth_failures_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
  return out;
}

} // namespace v4f::serve
