// Repository.cpp - scanning the model repository and swapping versions.
#include "Repository.h"

#include "Log.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace v4f::serve {

using nlohmann::json;

namespace {
bool isDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}
std::vector<std::string> listDir(const std::string& p) {
  std::vector<std::string> names;
  if (DIR* d = opendir(p.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}
bool parseVersion(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
  *v = std::stoll(s);
  return *v >= 1;
}
} // namespace

bool Repository::validName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; });
}

std::shared_ptr<const Repository::Versions> Repository::loadVersions(const std::string& model) {
  const std::string dir = root_ + "/" + model;
  ModelConfig config;
  const std::string configPath = dir + "/config.json";
  if (exists(configPath)) {
    std::ifstream in(configPath);
    json j;
    try {
      j = json::parse(in);
    } catch (const std::exception& e) {
      throw std::runtime_error(configPath + ": not valid JSON: " + e.what());
    }
    config = ModelConfig::parse(j, configPath);
  }
  std::vector<int64_t> available;
  for (const std::string& n : listDir(dir)) {
    int64_t v;
    if (parseVersion(n, &v) && exists(dir + "/" + n + "/model.v4f")) available.push_back(v);
  }
  std::sort(available.begin(), available.end());
  std::vector<int64_t> chosen;
  switch (config.policy) {
  case ModelConfig::Policy::Latest:
    for (size_t i = available.size() > static_cast<size_t>(config.latestCount)
                        ? available.size() - static_cast<size_t>(config.latestCount)
                        : 0;
         i < available.size(); ++i)
      chosen.push_back(available[i]);
    break;
  case ModelConfig::Policy::All: chosen = available; break;
  case ModelConfig::Policy::Specific:
    for (int64_t v : config.specificVersions) {
      if (!std::count(available.begin(), available.end(), v))
        throw std::runtime_error(dir + ": version_policy names version " + std::to_string(v) + ", which has no " +
                                 std::to_string(v) + "/model.v4f");
      chosen.push_back(v);
    }
    break;
  }
  if (chosen.empty()) throw std::runtime_error(dir + ": no version directory <n>/model.v4f to serve");
  auto versions = std::make_shared<Versions>();
  for (int64_t v : chosen) {
    std::string path = dir + "/" + std::to_string(v) + "/model.v4f";
    (*versions)[v] = std::make_shared<ModelVersion>(model, v, path, config, sharedPool_,
                                                    metrics_->model(model, std::to_string(v)), signatures_);
  }
  return versions;
}

std::vector<std::string> Repository::loadAll() {
  std::vector<std::string> failures;
  for (const std::string& model : listDir(root_)) {
    if (!isDir(root_ + "/" + model)) continue;
    try {
      load(model);
      logInfo("model loaded", {{"model", model}});
    } catch (const std::exception& e) {
      failures.push_back(model + ": " + e.what());
    }
  }
  return failures;
}

void Repository::load(const std::string& model) {
  if (!validName(model)) throw HttpError(400, "'" + model.substr(0, 64) + "' is not a valid model name");
  std::lock_guard<std::mutex> serial(loadMutex_);
  if (!isDir(root_ + "/" + model))
    throw HttpError(404, "model '" + model + "' has no directory in the repository " + root_);
  std::shared_ptr<const Versions> versions;
  try {
    versions = loadVersions(model);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    failures_[model] = e.what();
    throw HttpError(400, "failed to load '" + model + "': " + e.what());
  }
  std::shared_ptr<const Versions> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failures_.erase(model);
    old = std::move(models_[model]);
    models_[model] = versions;
  }
  // `old` is released here or by the last request still holding a version.
}

void Repository::unload(const std::string& model) {
  std::lock_guard<std::mutex> serial(loadMutex_);
  std::shared_ptr<const Versions> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = models_.find(model);
    if (it == models_.end()) throw HttpError(404, "model '" + model.substr(0, 128) + "' is not loaded");
    old = std::move(it->second);
    models_.erase(it);
  }
}

void Repository::unloadAll() {
  std::lock_guard<std::mutex> serial(loadMutex_);
  std::map<std::string, std::shared_ptr<const Versions>> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    old.swap(models_);
  }
}

std::shared_ptr<ModelVersion> Repository::find(const std::string& model, const std::string& version) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = models_.find(model);
  if (it == models_.end()) throw HttpError(404, "unknown model '" + model.substr(0, 128) + "'");
  if (version.empty()) return it->second->rbegin()->second;
  int64_t v;
  if (!parseVersion(version, &v))
    throw HttpError(400, "version '" + version.substr(0, 32) + "' is not a positive integer");
  auto vit = it->second->find(v);
  if (vit == it->second->end()) throw HttpError(404, "model '" + model + "' has no loaded version " + version);
  return vit->second;
}

json Repository::metadata(const std::string& model, const std::string& version) const {
  json m = find(model, version)->metadata();
  if (version.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    json versions = json::array();
    auto it = models_.find(model);
    if (it != models_.end())
      for (const auto& [v, _] : *it->second) versions.push_back(std::to_string(v));
    m["versions"] = versions;
  }
  return m;
}

json Repository::index() const {
  json out = json::array();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string& model : listDir(root_)) {
    if (!isDir(root_ + "/" + model)) continue;
    auto it = models_.find(model);
    if (it != models_.end()) {
      for (const auto& [v, _] : *it->second)
        out.push_back({{"name", model}, {"version", std::to_string(v)}, {"state", "READY"}});
    } else {
      json e = {{"name", model}, {"state", "UNAVAILABLE"}};
      auto f = failures_.find(model);
      e["reason"] = f != failures_.end() ? f->second : "unloaded";
      out.push_back(e);
    }
  }
  return out;
}

} // namespace v4f::serve
