// ModelVersion.h - one loaded version of a model: its artifact, its
// instances (a runtime session and a thread each) and the queue in front of
// them that forms dynamic batches.
#ifndef V4F_SERVE_MODELVERSION_H_
#define V4F_SERVE_MODELVERSION_H_

#include "Metrics.h"
#include "Tensor.h"

#include "v4f/runtime.h"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace v4f::serve {

// DIR/<model>/config.json (every field optional):
//   {"max_batch_size": 8,                  0 = requests are not batched
//    "dynamic_batching": {"max_queue_delay_microseconds": 2000,
//                         "preferred_batch_size": [4, 8]},
//    "max_queue_size": 128,                queued requests; more get 503
//    "default_timeout_microseconds": 0,    0 = no queue deadline
//    "instance_count": 1,                  sessions (and threads) per version
//    "threads": 0,                         0 = the server's shared pool
//    "version_policy": {"latest": {"num_versions": 1}} | {"all": {}} |
//                      {"specific": {"versions": [1, 3]}}}
struct ModelConfig {
  int64_t maxBatchSize = 0;
  bool dynamicBatching = false;
  uint64_t maxQueueDelayUs = 0;
  std::vector<int64_t> preferredBatchSizes;
  size_t maxQueueSize = 128;
  uint64_t defaultTimeoutUs = 0;
  int instanceCount = 1;
  int threads = 0;
  enum class Policy { Latest, All, Specific } policy = Policy::Latest;
  int64_t latestCount = 1;
  std::vector<int64_t> specificVersions;
  nlohmann::json raw = nlohmann::json::object();

  // Throws std::runtime_error naming `where` and the field.
  static ModelConfig parse(const nlohmann::json& j, const std::string& where);
};

// Which artifacts may be loaded and how: --require-signed / --trusted-key,
// and --decrypt-key for encrypted artifacts.
struct SignaturePolicy {
  int32_t policy = V4F_SIGNATURE_OFF;
  std::vector<uint8_t> trustedKeys;   // 32 bytes each
  std::vector<uint8_t> decryptionKey; // empty or 32 bytes
};

// One request in the queue. The submitting thread waits on `done`.
struct InferRequest {
  std::vector<HostTensor> inputs; // in the model's input order
  int64_t rows = 0;               // batch rows (batched models), else 0
  uint64_t enqueueUs = 0, deadlineUs = 0;
  // Results, filled by the instance that ran it.
  std::vector<HostTensor> outputs; // every model output
  int errorStatus = 0;
  std::string error;
  uint64_t queueUs = 0;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};

class ModelVersion {
public:
  // Loads `path` and starts the instances; throws std::runtime_error.
  ModelVersion(std::string name, int64_t version, const std::string& path, const ModelConfig& config,
               v4f_thread_pool_t* sharedPool, std::shared_ptr<ModelStats> stats, const SignaturePolicy& signatures);
  // Stops taking requests, runs those queued, joins the instances.
  ~ModelVersion();
  ModelVersion(const ModelVersion&) = delete;
  ModelVersion& operator=(const ModelVersion&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const ModelConfig& config() const { return config_; }
  ModelStats& stats() { return *stats_; }
  // KServe model metadata.
  nlohmann::json metadata() const;
  // Output names in model order.
  std::vector<std::string> outputNames() const;

  // Checks `inputs` against the signature (throws HttpError 400), queues
  // the request and waits for its result. Throws HttpError 503 when the
  // queue is full (the caller adds Retry-After), 504 when the deadline
  // passed before it ran, 500 when the run failed.
  void infer(std::vector<HostTensor> inputs, uint64_t timeoutUs, std::vector<HostTensor>* outputs);

private:
  struct Signature {
    std::string name;
    int32_t dtype;
    std::vector<int64_t> dims;         // -1 where symbolic
    std::vector<std::string> dimNames; // "" where static
  };
  void instanceLoop(size_t instance);
  bool sameShapes(const InferRequest& a, const InferRequest& b) const;
  void execute(size_t instance, std::vector<InferRequest*>& batch);
  static void finish(InferRequest* r, int status, const std::string& error);

  std::string name_;
  int64_t version_;
  ModelConfig config_;
  std::shared_ptr<ModelStats> stats_;
  v4f_model_t* model_ = nullptr;
  v4f_thread_pool_t* ownPool_ = nullptr;
  std::vector<Signature> inputs_, outputs_;
  std::vector<v4f_session_t*> sessions_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<InferRequest*> queue_;
  bool stopping_ = false;
};

} // namespace v4f::serve

#endif // V4F_SERVE_MODELVERSION_H_
