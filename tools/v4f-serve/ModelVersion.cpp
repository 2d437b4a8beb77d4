// ModelVersion.cpp - loading a version, validating requests, dynamic
// batching and running batches on the runtime.
#include "ModelVersion.h"

#include "Log.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>

namespace v4f::serve {

using nlohmann::json;

namespace {
// Takes the message of a runtime status and frees it.
std::string takeMessage(v4f_status_t st) {
  std::string m = v4f_status_message(st);
  v4f_status_free(st);
  return m;
}

int64_t getInt(const json& j, const char* key, int64_t lo, int64_t hi, int64_t dflt, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return dflt;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
    throw std::runtime_error(where + ": \"" + key + "\" must be an integer in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
  return it->get<int64_t>();
}

std::string shapeString(const std::vector<int64_t>& s) { return json(s).dump(); }
} // namespace

ModelConfig ModelConfig::parse(const json& j, const std::string& where) {
  ModelConfig c;
  if (!j.is_object()) throw std::runtime_error(where + ": the config must be a JSON object");
  static const char* known[] = {"max_batch_size", "dynamic_batching", "max_queue_size", "default_timeout_microseconds",
                                "instance_count", "threads",          "version_policy"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }) ==
        std::end(known))
      throw std::runtime_error(where + ": unknown field \"" + it.key() + "\"");
  c.raw = j;
  c.maxBatchSize = getInt(j, "max_batch_size", 0, 1 << 16, 0, where);
  c.maxQueueSize = static_cast<size_t>(getInt(j, "max_queue_size", 1, 1 << 20, 128, where));
  c.defaultTimeoutUs = static_cast<uint64_t>(getInt(j, "default_timeout_microseconds", 0, int64_t(1) << 40, 0, where));
  c.instanceCount = static_cast<int>(getInt(j, "instance_count", 1, 64, 1, where));
  c.threads = static_cast<int>(getInt(j, "threads", 0, 1024, 0, where));
  if (auto db = j.find("dynamic_batching"); db != j.end()) {
    if (!db->is_object()) throw std::runtime_error(where + ": \"dynamic_batching\" must be an object");
    if (c.maxBatchSize == 0) throw std::runtime_error(where + ": \"dynamic_batching\" needs \"max_batch_size\" > 0");
    c.dynamicBatching = true;
    c.maxQueueDelayUs = static_cast<uint64_t>(
        getInt(*db, "max_queue_delay_microseconds", 0, int64_t(60) * 1000 * 1000, 0, where + " dynamic_batching"));
    if (auto p = db->find("preferred_batch_size"); p != db->end()) {
      if (!p->is_array()) throw std::runtime_error(where + ": \"preferred_batch_size\" must be an array");
      for (const json& v : *p) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > c.maxBatchSize)
          throw std::runtime_error(where + ": preferred_batch_size " + v.dump() + " is not in [1, max_batch_size]");
        c.preferredBatchSizes.push_back(v.get<int64_t>());
      }
    }
  }
  if (auto vp = j.find("version_policy"); vp != j.end()) {
    if (!vp->is_object() || vp->size() != 1)
      throw std::runtime_error(where + ": \"version_policy\" must hold one of latest, all, specific");
    if (vp->contains("latest")) {
      c.policy = Policy::Latest;
      c.latestCount = getInt((*vp)["latest"], "num_versions", 1, 1 << 20, 1, where + " version_policy.latest");
    } else if (vp->contains("all")) {
      c.policy = Policy::All;
    } else if (vp->contains("specific")) {
      c.policy = Policy::Specific;
      const json& s = (*vp)["specific"];
      if (!s.is_object() || !s.contains("versions") || !s["versions"].is_array())
        throw std::runtime_error(where + ": version_policy.specific needs a \"versions\" array");
      for (const json& v : s["versions"]) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1)
          throw std::runtime_error(where + ": version_policy.specific holds " + v.dump() + ", not a version >= 1");
        c.specificVersions.push_back(v.get<int64_t>());
      }
    } else {
      throw std::runtime_error(where + ": unknown version_policy " + vp->begin().key());
    }
  }
  return c;
}

ModelVersion::ModelVersion(std::string name, int64_t version, const std::string& path, const ModelConfig& config,
                           v4f_thread_pool_t* sharedPool, std::shared_ptr<ModelStats> stats,
                           const SignaturePolicy& signatures)
    : name_(std::move(name)), version_(version), config_(config), stats_(std::move(stats)) {
  const std::string where = "model '" + name_ + "' version " + std::to_string(version_) + " (" + path + ")";
  auto fail = [&](const std::string& m) {
    for (auto* s : sessions_) v4f_session_release(s);
    sessions_.clear();
    v4f_thread_pool_release(ownPool_);
    v4f_model_release(model_);
    throw std::runtime_error(m);
  };
  v4f_model_options_t loadOptions;
  v4f_model_options_init(&loadOptions);
  loadOptions.signature_policy = signatures.policy;
  loadOptions.trusted_keys = signatures.trustedKeys.data();
  loadOptions.trusted_key_count = signatures.trustedKeys.size() / 32;
  if (signatures.decryptionKey.size() == 32) loadOptions.decryption_key = signatures.decryptionKey.data();
  if (v4f_status_t st = v4f_model_load_file(path.c_str(), &loadOptions, nullptr, &model_)) fail(takeMessage(st));
  auto readSig = [&](bool input, size_t i) {
    v4f_tensor_info_t info;
    v4f_status_t st = input ? v4f_model_input_info(model_, i, &info) : v4f_model_output_info(model_, i, &info);
    if (st) fail(where + ": " + takeMessage(st));
    Signature s{info.name, info.dtype, {}, {}};
    for (int32_t d = 0; d < info.rank; ++d) {
      s.dims.push_back(info.dims[d]);
      s.dimNames.push_back(info.dim_names[d] ? info.dim_names[d] : "");
    }
    if (kserveDatatype(info.dtype).empty())
      fail(where + ": " + (input ? "input" : "output") + " '" + s.name + "' has dtype " + v4f_dtype_name(info.dtype) +
           ", which the KServe protocol cannot carry");
    return s;
  };
  for (size_t i = 0; i < v4f_model_input_count(model_); ++i) inputs_.push_back(readSig(true, i));
  for (size_t i = 0; i < v4f_model_output_count(model_); ++i) outputs_.push_back(readSig(false, i));
  if (config_.maxBatchSize > 0) {
    // Batched: every input and output's first dim is one symbolic dim.
    std::string batchDim;
    for (const auto* list : {&inputs_, &outputs_})
      for (const Signature& s : *list) {
        if (s.dims.empty() || s.dims[0] >= 0 || s.dimNames[0].empty())
          fail(where + ": max_batch_size is " + std::to_string(config_.maxBatchSize) + " but '" + s.name +
               "' has no symbolic first (batch) dim (shape " + shapeString(s.dims) + ")");
        if (batchDim.empty()) batchDim = s.dimNames[0];
        if (s.dimNames[0] != batchDim)
          fail(where + ": '" + s.name + "' has first dim '" + s.dimNames[0] + "', not the batch dim '" + batchDim +
               "' of the first input");
      }
  }
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  if (config_.threads > 0) {
    if (v4f_status_t st = v4f_thread_pool_create(config_.threads, nullptr, &ownPool_))
      fail(where + ": " + takeMessage(st));
    options.thread_pool = ownPool_;
  } else {
    options.thread_pool = sharedPool;
  }
  for (int i = 0; i < config_.instanceCount; ++i) {
    v4f_session_t* s = nullptr;
    if (v4f_status_t st = v4f_session_create(model_, &options, nullptr, &s)) fail(where + ": " + takeMessage(st));
    sessions_.push_back(s);
  }
  for (size_t i = 0; i < sessions_.size(); ++i) threads_.emplace_back([this, i] { instanceLoop(i); });
}

ModelVersion::~ModelVersion() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto* s : sessions_) v4f_session_release(s);
  v4f_thread_pool_release(ownPool_);
  v4f_model_release(model_);
}

json ModelVersion::metadata() const {
  auto tensors = [](const std::vector<Signature>& sigs) {
    json out = json::array();
    for (const Signature& s : sigs)
      out.push_back({{"name", s.name}, {"datatype", kserveDatatype(s.dtype)}, {"shape", s.dims}});
    return out;
  };
  return {{"name", name_},
          {"versions", {std::to_string(version_)}},
          {"platform", "v4f"},
          {"inputs", tensors(inputs_)},
          {"outputs", tensors(outputs_)}};
}

std::vector<std::string> ModelVersion::outputNames() const {
  std::vector<std::string> names;
  for (const auto& s : outputs_) names.push_back(s.name);
  return names;
}

void ModelVersion::finish(InferRequest* r, int status, const std::string& error) {
  std::lock_guard<std::mutex> lock(r->mutex);
  r->errorStatus = status;
  r->error = error;
  r->done = true;
  r->cv.notify_all();
}

void ModelVersion::infer(std::vector<HostTensor> given, uint64_t timeoutUs, std::vector<HostTensor>* outputs) {
  InferRequest r;
  // Match inputs by name, check dtype, rank and static dims, and give each
  // symbolic dim one value.
  r.inputs.resize(inputs_.size());
  std::vector<bool> seen(inputs_.size(), false);
  std::map<std::string, int64_t> symbols;
  for (HostTensor& t : given) {
    size_t i = 0;
    while (i < inputs_.size() && inputs_[i].name != t.name) ++i;
    if (i == inputs_.size()) throw HttpError(400, "model '" + name_ + "' has no input '" + t.name + "'");
    if (seen[i]) throw HttpError(400, "input '" + t.name + "' is given twice");
    seen[i] = true;
    const Signature& s = inputs_[i];
    if (t.dtype != s.dtype)
      throw HttpError(400, "input '" + t.name + "': datatype " + kserveDatatype(t.dtype) + ", the model takes " +
                               kserveDatatype(s.dtype));
    if (t.shape.size() != s.dims.size())
      throw HttpError(400, "input '" + t.name + "': shape " + shapeString(t.shape) + " has rank " +
                               std::to_string(t.shape.size()) + ", the model takes " + shapeString(s.dims));
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (s.dims[d] >= 0 && t.shape[d] != s.dims[d])
        throw HttpError(400, "input '" + t.name + "': shape " + shapeString(t.shape) + ", the model takes " +
                                 shapeString(s.dims));
      if (s.dims[d] < 0) {
        auto [it, inserted] = symbols.emplace(s.dimNames[d], t.shape[d]);
        if (!inserted && it->second != t.shape[d])
          throw HttpError(400, "input '" + t.name + "': dim '" + s.dimNames[d] + "' is " + std::to_string(t.shape[d]) +
                                   " here and " + std::to_string(it->second) + " in another input");
      }
    }
    r.inputs[i] = std::move(t);
  }
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!seen[i]) throw HttpError(400, "model '" + name_ + "' needs input '" + inputs_[i].name + "'");
  if (config_.maxBatchSize > 0) {
    r.rows = r.inputs[0].shape[0];
    if (r.rows < 1 || r.rows > config_.maxBatchSize)
      throw HttpError(400, "batch size " + std::to_string(r.rows) + " is not in [1, max_batch_size " +
                               std::to_string(config_.maxBatchSize) + "]");
  }
  r.enqueueUs = nowUs();
  uint64_t timeout = timeoutUs ? timeoutUs : config_.defaultTimeoutUs;
  r.deadlineUs = timeout ? r.enqueueUs + timeout : 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw HttpError(503, "model '" + name_ + "' is being unloaded");
    if (queue_.size() >= config_.maxQueueSize)
      throw HttpError(503, "model '" + name_ + "': the queue is full (" + std::to_string(config_.maxQueueSize) +
                               " requests); retry later");
    queue_.push_back(&r);
    stats_->pending.fetch_add(1);
  }
  cv_.notify_all();
  std::unique_lock<std::mutex> lock(r.mutex);
  r.cv.wait(lock, [&] { return r.done; });
  if (r.errorStatus) throw HttpError(r.errorStatus, r.error);
  *outputs = std::move(r.outputs);
}

bool ModelVersion::sameShapes(const InferRequest& a, const InferRequest& b) const {
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (!std::equal(a.inputs[i].shape.begin() + 1, a.inputs[i].shape.end(), b.inputs[i].shape.begin() + 1,
                    b.inputs[i].shape.end()))
      return false;
  return true;
}

void ModelVersion::instanceLoop(size_t instance) {
  std::vector<InferRequest*> batch;
  for (;;) {
    batch.clear();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return; // stopping, and nothing left to drain
      batch.push_back(queue_.front());
      queue_.pop_front();
      int64_t rows = batch[0]->rows;
      if (config_.dynamicBatching) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(config_.maxQueueDelayUs);
        for (;;) {
          for (auto it = queue_.begin(); it != queue_.end() && rows < config_.maxBatchSize;) {
            if (rows + (*it)->rows <= config_.maxBatchSize && sameShapes(*batch[0], **it)) {
              rows += (*it)->rows;
              batch.push_back(*it);
              it = queue_.erase(it);
            } else {
              ++it;
            }
          }
          bool preferred = std::find(config_.preferredBatchSizes.begin(), config_.preferredBatchSizes.end(), rows) !=
                           config_.preferredBatchSizes.end();
          if (rows >= config_.maxBatchSize || preferred || stopping_ || std::chrono::steady_clock::now() >= deadline)
            break;
          cv_.wait_until(lock, deadline);
        }
      }
    }
    stats_->pending.fetch_sub(static_cast<int64_t>(batch.size()));
    execute(instance, batch);
  }
}

void ModelVersion::execute(size_t instance, std::vector<InferRequest*>& all) {
  uint64_t start = nowUs();
  std::vector<InferRequest*> batch;
  for (InferRequest* r : all) {
    r->queueUs = start - r->enqueueUs;
    stats_->queueDurationUs.fetch_add(r->queueUs);
    if (r->deadlineUs && start > r->deadlineUs)
      finish(r, 504,
             "model '" + name_ + "': the request's timeout expired after " + std::to_string(r->queueUs) +
                 " us in the queue");
    else
      batch.push_back(r);
  }
  if (batch.empty()) return;
  const bool batched = config_.maxBatchSize > 0;
  int64_t rows = 0;
  for (InferRequest* r : batch) rows += r->rows;

  // Inputs: one request's buffers as they are, or the batch concatenated.
  std::vector<HostTensor> joined;
  joined.reserve(inputs_.size()); // the pointers taken below must stay valid
  std::vector<v4f_tensor_t> in(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const HostTensor* src = &batch[0]->inputs[i];
    if (batch.size() > 1) {
      HostTensor t;
      t.dtype = src->dtype;
      t.shape = src->shape;
      t.shape[0] = rows;
      for (InferRequest* r : batch) t.data.insert(t.data.end(), r->inputs[i].data.begin(), r->inputs[i].data.end());
      joined.push_back(std::move(t));
      src = &joined.back();
    }
    v4f_tensor_t& v = in[i];
    memset(&v, 0, sizeof v);
    v.data = const_cast<uint8_t*>(src->data.data());
    v.byte_size = src->data.size();
    v.dtype = src->dtype;
    v.rank = static_cast<int32_t>(src->shape.size());
    for (size_t d = 0; d < src->shape.size(); ++d) v.dims[d] = src->shape[d];
  }
  uint64_t t1 = nowUs();
  std::vector<v4f_tensor_t> out(outputs_.size());
  std::vector<std::vector<uint8_t>> buffers(outputs_.size());
  memset(out.data(), 0, out.size() * sizeof(v4f_tensor_t));
  v4f_session_t* session = sessions_[instance];
  auto failAll = [&](int status, const std::string& message) {
    for (InferRequest* r : batch) finish(r, status, message);
  };
  v4f_status_t st = v4f_session_resolve_output_shapes(session, in.data(), in.size(), out.data(), out.size());
  if (!st) {
    for (size_t o = 0; o < out.size(); ++o) {
      buffers[o].resize(out[o].byte_size);
      out[o].data = buffers[o].data();
    }
    st = v4f_session_run(session, in.data(), in.size(), out.data(), out.size());
  }
  uint64_t t2 = nowUs();
  if (st) {
    std::string m = takeMessage(st);
    logError("inference failed", {{"model", name_}, {"version", version_}, {"error", m}});
    return failAll(500, "model '" + name_ + "': " + m);
  }
  // Outputs: split the batch's rows back to the requests.
  for (size_t o = 0; o < out.size() && batched; ++o)
    if (out[o].rank < 1 || out[o].dims[0] != rows)
      return failAll(500,
                     "model '" + name_ + "': output '" + outputs_[o].name + "' has " +
                         (out[o].rank < 1 ? std::string("rank 0") : "first dim " + std::to_string(out[o].dims[0])) +
                         ", not the batch size " + std::to_string(rows));
  int64_t offset = 0;
  for (InferRequest* r : batch) {
    r->outputs.resize(out.size());
    for (size_t o = 0; o < out.size(); ++o) {
      HostTensor& t = r->outputs[o];
      t.name = outputs_[o].name;
      t.dtype = out[o].dtype;
      t.shape.assign(out[o].dims, out[o].dims + out[o].rank);
      size_t total = v4f_dtype_size(t.dtype);
      for (int64_t d : t.shape) total *= static_cast<size_t>(d);
      if (batch.size() == 1) {
        buffers[o].resize(total);
        t.data = std::move(buffers[o]);
        continue;
      }
      size_t rowBytes = total / static_cast<size_t>(rows);
      t.shape[0] = r->rows;
      const uint8_t* base = static_cast<const uint8_t*>(out[o].data) + static_cast<size_t>(offset) * rowBytes;
      t.data.assign(base, base + static_cast<size_t>(r->rows) * rowBytes);
    }
    offset += r->rows;
  }
  uint64_t t3 = nowUs();
  stats_->execCount.fetch_add(1);
  stats_->inferenceCount.fetch_add(batched ? static_cast<uint64_t>(rows) : batch.size());
  stats_->batchSize.observe(static_cast<double>(batched ? rows : 1));
  stats_->computeInputUs.fetch_add((t1 - start) * batch.size());
  stats_->computeInferUs.fetch_add((t2 - t1) * batch.size());
  stats_->computeOutputUs.fetch_add((t3 - t2) * batch.size());
  for (InferRequest* r : batch) finish(r, 0, "");
}

} // namespace v4f::serve
