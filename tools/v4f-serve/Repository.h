// Repository.h - the model repository (Triton's layout):
//   DIR/<model>/config.json            optional, see ModelConfig
//   DIR/<model>/<version>/model.v4f    version = a positive integer
// Loads every model at start; load/unload replace a model's versions
// atomically: requests already holding a version finish on it, and the old
// version is released (its queue drained) when the last of them is done.
#ifndef V4F_SERVE_REPOSITORY_H_
#define V4F_SERVE_REPOSITORY_H_

#include "Metrics.h"
#include "ModelVersion.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace v4f::serve {

class Repository {
public:
  Repository(std::string root, v4f_thread_pool_t* sharedPool, Metrics* metrics, SignaturePolicy signatures = {})
      : root_(std::move(root)), sharedPool_(sharedPool), metrics_(metrics), signatures_(std::move(signatures)) {}

  // Loads every model directory; returns "model: reason" for each failure.
  std::vector<std::string> loadAll();
  // (Re)loads one model's versions from disk; throws HttpError (404 no such
  // model directory, 400 a bad config or artifact).
  void load(const std::string& model);
  // Throws HttpError 404 when the model is not loaded.
  void unload(const std::string& model);
  // Unloads everything (shutdown): waits for in-flight requests.
  void unloadAll();

  // The version to serve: `version` "" = the highest loaded. Throws
  // HttpError 404 naming what is missing.
  std::shared_ptr<ModelVersion> find(const std::string& model, const std::string& version) const;
  // Metadata over every loaded version of a model.
  nlohmann::json metadata(const std::string& model, const std::string& version) const;
  // POST /v2/repository/index: every model directory and its state.
  nlohmann::json index() const;
  const std::string& root() const { return root_; }

  // Model names must be a safe directory name: [A-Za-z0-9_.-], not "." or "..".
  static bool validName(const std::string& name);

private:
  using Versions = std::map<int64_t, std::shared_ptr<ModelVersion>>;
  std::shared_ptr<const Versions> loadVersions(const std::string& model);

  std::string root_;
  v4f_thread_pool_t* sharedPool_;
  Metrics* metrics_;
  SignaturePolicy signatures_;
  std::mutex loadMutex_; // one load/unload at a time
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Versions>> models_;
  std::map<std::string, std::string> failures_; // model -> why its last load failed
};

} // namespace v4f::serve

#endif // V4F_SERVE_REPOSITORY_H_
