// HttpFrontend.cpp - routes, request classification, access control, audit.
#include "HttpFrontend.h"

#include "Log.h"

#include <httplib.h>

#include <strings.h>

#include <functional>
#include <regex>
#include <stdexcept>

namespace v4f::serve {

using nlohmann::json;

namespace {

// What a request is, decided from its method and path before anything else
// (access control runs on it before the body is even read).
struct Route {
  std::string action = "unknown";
  std::string model, version;
  unsigned role = 0;         // Role needed; 0 = public
  bool authenticated = true; // needs a valid token even when role == 0
};

Route classify(const std::string& method, const std::string& path, bool publicHealth) {
  static const std::regex modelRe(R"(^/v2/models/([^/]+)(?:/versions/([^/]+))?(/ready|/config|/stats|/infer)?$)");
  static const std::regex repoRe(R"(^/v2/repository/models/([^/]+)/(load|unload)$)");
  Route r;
  std::smatch m;
  if (path == "/v2" || path == "/v2/health/live" || path == "/v2/health/ready") {
    r.action = path == "/v2" ? "server_metadata" : path == "/v2/health/live" ? "health_live" : "health_ready";
    r.authenticated = !publicHealth;
    r.role = publicHealth ? 0 : kRoleMetadata;
  } else if (std::regex_match(path, m, modelRe)) {
    r.model = m[1];
    r.version = m[2];
    std::string tail = m[3];
    r.action = tail.empty()                ? "model_metadata"
               : tail.substr(1) == "ready" ? "model_ready"
               : tail == "/infer"          ? "infer"
                                           : "model_" + tail.substr(1);
    r.role = r.action == "infer" ? kRoleInfer : kRoleMetadata;
  } else if (path == "/v2/repository/index") {
    r.action = "repository_index";
    r.role = kRoleAdmin;
  } else if (std::regex_match(path, m, repoRe)) {
    r.model = m[1];
    r.action = m[2];
    r.role = kRoleAdmin;
  }
  (void)method;
  return r;
}

// Per-request state from pre-routing to the logger; httplib runs both on
// the connection's thread.
struct RequestContext {
  bool active = false;
  uint64_t startUs = 0;
  Route route;
  std::string tokenId;
  std::string requestId;
};
thread_local RequestContext tContext;

void jsonError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json({{"error", message}}).dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void jsonReply(httplib::Response& res, const json& body) {
  res.status = 200;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Strict unsigned decimal.
bool parseSize(const std::string& s, size_t* out) {
  if (s.empty() || s.size() > 19) return false;
  size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  *out = v;
  return true;
}

// cpp-httplib listens with a backlog of 5 (fixed when the library was
// built): a burst of connections then overflows the accept queue and clients
// wait for SYN retransmits. Linux lets listen() be called again on a
// listening socket to raise the backlog; this gives access to the socket.
template <typename Base>
class ListeningServer : public Base {
public:
  using Base::Base;
  void raiseBacklog() {
    socket_t fd = this->svr_sock_;
    if (fd != INVALID_SOCKET && listen(fd, SOMAXCONN) != 0)
      logWarning("cannot raise the listen backlog", {{"error", strerror(errno)}});
  }
};

} // namespace

HttpFrontend::HttpFrontend(const FrontendOptions& options, Repository* repository, Metrics* metrics,
                           const TokenStore* tokens, AuditLog* audit)
    : options_(options), repository_(repository), metrics_(metrics), tokens_(tokens), audit_(audit) {}

HttpFrontend::~HttpFrontend() { stop(); }

void HttpFrontend::routes() {
  httplib::Server& svr = *http_;
  const int threads = options_.httpThreads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr.set_payload_max_length(options_.maxRequestBytes);
  svr.set_read_timeout(options_.readTimeoutSecs, 0);
  svr.set_write_timeout(options_.readTimeoutSecs, 0);
  svr.set_keep_alive_timeout(options_.keepAliveTimeoutSecs);
  svr.set_keep_alive_max_count(1000);

  // Access control before routing (and before the body is read).
  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Inference bodies are never HTML forms, but curl and Python's urllib
    // label any POST body application/x-www-form-urlencoded, and cpp-httplib
    // parses such bodies as a form with an 8 KiB cap (413). The body has not
    // been read yet: relabel it as opaque bytes so the size limit that
    // applies is --max-request-bytes.
    auto& headers = const_cast<httplib::Request&>(req).headers;
    for (auto it = headers.begin(); it != headers.end(); ++it)
      if (strcasecmp(it->first.c_str(), "Content-Type") == 0 &&
          it->second.rfind("application/x-www-form-urlencoded", 0) == 0)
        it->second = "application/octet-stream";
    RequestContext& c = tContext;
    c = RequestContext();
    c.active = true;
    c.startUs = nowUs();
    c.route = classify(req.method, req.path, options_.publicHealth);
    c.requestId = req.get_header_value("X-Request-ID").substr(0, 128);
    if (!tokens_) return httplib::Server::HandlerResponse::Unhandled;
    if (c.route.role == 0 && !c.route.authenticated) return httplib::Server::HandlerResponse::Unhandled;
    auto refuse = [&](int status, const std::string& why) {
      metrics_->countAuthFailure(status);
      if (status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"v4f-serve\"");
      res.set_header("Connection", "close");
      jsonError(res, status, why);
      return httplib::Server::HandlerResponse::Handled;
    };
    std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) != 0)
      return refuse(401, "this endpoint needs an \"Authorization: Bearer <token>\" header");
    const Principal* p = tokens_->authenticate(auth.substr(7));
    if (!p) return refuse(401, "the bearer token is not valid");
    c.tokenId = p->id;
    if (c.route.role && !p->hasRole(static_cast<Role>(c.route.role)))
      return refuse(403, "token '" + p->id + "' lacks the '" + roleName(static_cast<Role>(c.route.role)) +
                             "' role needed for " + c.route.action);
    if (!c.route.model.empty() && !p->allowsModel(c.route.model))
      return refuse(403, "token '" + p->id + "' may not use model '" + c.route.model.substr(0, 128) + "'");
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Audit and HTTP metrics for every response (also those httplib itself
  // answers: 400 bad request line, 413 payload too large), written when the
  // response is final but before it is sent: a client that sends its next
  // request after reading a response finds the audit log in request order
  // (httplib's logger runs after the send, so two requests could be logged
  // in the wrong order).
  svr.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    RequestContext& c = tContext;
    if (!c.active) c.route = classify(req.method, req.path, options_.publicHealth);
    metrics_->countHttp(res.status);
    if (audit_->enabled()) {
      json rec = {{"token_id", c.tokenId.empty() ? json(nullptr) : json(c.tokenId)},
                  {"client", req.remote_addr + ":" + std::to_string(req.remote_port)},
                  {"method", req.method},
                  {"path", req.path.substr(0, 256)},
                  {"model", c.route.model.empty() ? json(nullptr) : json(c.route.model.substr(0, 128))},
                  {"version", c.route.version.empty() ? json(nullptr) : json(c.route.version.substr(0, 32))},
                  {"action", c.route.action},
                  {"status", res.status},
                  {"bytes_in", req.body.size()},
                  {"bytes_out", res.body.size()},
                  {"request_id", c.requestId.empty() ? json(nullptr) : json(c.requestId)},
                  {"duration_us", c.active ? nowUs() - c.startUs : 0}};
      audit_->write(std::move(rec));
    }
    if (logEnabled(LogLevel::Verbose))
      log(LogLevel::Verbose, "request",
          {{"method", req.method}, {"path", req.path.substr(0, 256)}, {"status", res.status}});
    c.active = false;
  });

  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404)
      jsonError(res, 404, "no endpoint " + req.method + " " + req.path.substr(0, 256));
    else if (res.status == 413)
      jsonError(res, 413, "the request body exceeds the server's limit");
    else
      jsonError(res, res.status, "HTTP " + std::to_string(res.status));
  });
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const HttpError& e) {
      if (e.status == 503) res.set_header("Retry-After", "1");
      jsonError(res, e.status, e.what());
    } catch (const std::exception& e) {
      logError("request failed", {{"error", e.what()}});
      jsonError(res, 500, std::string("internal error: ") + e.what());
    } catch (...) {
      jsonError(res, 500, "internal error");
    }
  });

  svr.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    jsonReply(res, {{"name", "v4f-serve"},
                    {"version", v4f_runtime_version()},
                    {"extensions", {"binary_tensor_data", "model_repository", "statistics"}}});
  });
  svr.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  svr.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    if (ready_.load())
      res.status = 200;
    else
      jsonError(res, 503, "not ready");
  });

  const char* modelPath = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  auto model = [](const httplib::Request& req) { return std::string(req.matches[1]); };
  auto version = [](const httplib::Request& req) { return std::string(req.matches[2]); };
  svr.Get(modelPath, [=](const httplib::Request& req, httplib::Response& res) {
    jsonReply(res, repository_->metadata(model(req), version(req)));
  });
  svr.Get(std::string(modelPath) + "/ready", [=](const httplib::Request& req, httplib::Response& res) {
    repository_->find(model(req), version(req)); // 404 when absent
    res.status = 200;
  });
  svr.Get(std::string(modelPath) + "/config", [=](const httplib::Request& req, httplib::Response& res) {
    auto mv = repository_->find(model(req), version(req));
    const ModelConfig& c = mv->config();
    json j = c.raw;
    j["name"] = mv->name();
    j["platform"] = "v4f";
    j["max_batch_size"] = c.maxBatchSize;
    j["instance_count"] = c.instanceCount;
    jsonReply(res, j);
  });
  svr.Get(std::string(modelPath) + "/stats", [=](const httplib::Request& req, httplib::Response& res) {
    auto mv = repository_->find(model(req), version(req));
    ModelStats& s = mv->stats();
    jsonReply(res, {{"model_stats",
                     {{{"name", mv->name()},
                       {"version", std::to_string(mv->version())},
                       {"inference_count", s.inferenceCount.load()},
                       {"execution_count", s.execCount.load()},
                       {"inference_stats",
                        {{"success", {{"count", s.requestSuccess.load()}, {"ns", s.requestDurationUs.load() * 1000}}},
                         {"fail", {{"count", s.requestFailure.load()}}},
                         {"queue", {{"ns", s.queueDurationUs.load() * 1000}}},
                         {"compute_infer", {{"ns", s.computeInferUs.load() * 1000}}}}}}}}});
  });

  svr.Post(std::string(modelPath) + "/infer", [=](const httplib::Request& req, httplib::Response& res) {
    const uint64_t t0 = nowUs();
    std::shared_ptr<ModelVersion> mv = repository_->find(model(req), version(req));
    ModelStats& stats = mv->stats();
    tContext.route.version = std::to_string(mv->version());
    try {
      if (req.has_header("Content-Encoding") && req.get_header_value("Content-Encoding") != "identity")
        throw HttpError(415, "Content-Encoding '" + req.get_header_value("Content-Encoding").substr(0, 32) +
                                 "' is not supported; send the body uncompressed");
      size_t headerLength = req.body.size();
      if (req.has_header("Inference-Header-Content-Length")) {
        std::string v = req.get_header_value("Inference-Header-Content-Length");
        if (!parseSize(v, &headerLength) || headerLength > req.body.size())
          throw HttpError(400, "Inference-Header-Content-Length '" + v.substr(0, 32) + "' is not a length within the " +
                                   std::to_string(req.body.size()) + "-byte body");
      }
      json request;
      try {
        request = json::parse(req.body.begin(), req.body.begin() + static_cast<std::ptrdiff_t>(headerLength));
      } catch (const json::exception& e) {
        throw HttpError(400, std::string("the request is not valid JSON: ") + e.what());
      }
      if (!request.is_object()) throw HttpError(400, "the request body is not a JSON object");
      if (auto id = request.find("id"); id != request.end()) {
        if (!id->is_string()) throw HttpError(400, "\"id\" must be a string");
        tContext.requestId = id->get<std::string>().substr(0, 128);
      }
      const auto* binary = reinterpret_cast<const uint8_t*>(req.body.data()) + headerLength;
      std::vector<HostTensor> inputs = decodeInputs(request, binary, req.body.size() - headerLength);

      bool binaryDefault = false;
      uint64_t timeoutUs = 0;
      if (auto p = request.find("parameters"); p != request.end()) {
        if (!p->is_object()) throw HttpError(400, "\"parameters\" must be an object");
        if (auto b = p->find("binary_data_output"); b != p->end()) {
          if (!b->is_boolean()) throw HttpError(400, "binary_data_output must be true or false");
          binaryDefault = b->get<bool>();
        }
        if (auto t = p->find("timeout"); t != p->end()) {
          if (!t->is_number_unsigned()) throw HttpError(400, "\"timeout\" must be microseconds (an unsigned integer)");
          timeoutUs = t->get<uint64_t>();
        }
      }
      std::vector<std::string> names = mv->outputNames();
      std::vector<std::pair<size_t, bool>> wanted; // output index, binary
      if (auto outs = request.find("outputs"); outs != request.end()) {
        if (!outs->is_array()) throw HttpError(400, "\"outputs\" must be an array");
        for (const json& o : *outs) {
          if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
            throw HttpError(400, "an entry of \"outputs\" has no \"name\" string");
          std::string n = o["name"].get<std::string>();
          size_t i = std::find(names.begin(), names.end(), n) - names.begin();
          if (i == names.size())
            throw HttpError(400, "model '" + mv->name() + "' has no output '" + n.substr(0, 128) + "'");
          bool bin = binaryDefault;
          if (o.contains("parameters") && o["parameters"].is_object() && o["parameters"].contains("binary_data")) {
            if (!o["parameters"]["binary_data"].is_boolean()) throw HttpError(400, "binary_data must be true or false");
            bin = o["parameters"]["binary_data"].get<bool>();
          }
          wanted.emplace_back(i, bin);
        }
      } else {
        for (size_t i = 0; i < names.size(); ++i) wanted.emplace_back(i, binaryDefault);
      }

      std::vector<HostTensor> outputs;
      mv->infer(std::move(inputs), timeoutUs, &outputs);

      json response = {
          {"model_name", mv->name()}, {"model_version", std::to_string(mv->version())}, {"outputs", json::array()}};
      if (!tContext.requestId.empty()) response["id"] = tContext.requestId;
      std::string blob;
      bool anyBinary = false;
      for (auto [i, bin] : wanted) {
        response["outputs"].push_back(encodeOutput(outputs[i], bin, &blob));
        anyBinary |= bin;
      }
      std::string header = response.dump(-1, ' ', false, json::error_handler_t::replace);
      if (anyBinary) {
        res.set_header("Inference-Header-Content-Length", std::to_string(header.size()));
        res.set_content(header + blob, "application/octet-stream");
      } else {
        res.set_content(header, "application/json");
      }
      res.status = 200;
      uint64_t dt = nowUs() - t0;
      stats.requestSuccess.fetch_add(1);
      stats.requestDurationUs.fetch_add(dt);
      stats.latency.observe(static_cast<double>(dt) / 1e6);
    } catch (...) {
      stats.requestFailure.fetch_add(1);
      throw;
    }
  });

  auto requireTokensForAdmin = [this]() {
    if (!tokens_) logWarning("repository control without access control (no --token-file)");
  };
  svr.Post("/v2/repository/index", [=](const httplib::Request&, httplib::Response& res) {
    requireTokensForAdmin();
    jsonReply(res, repository_->index());
  });
  svr.Post(R"(/v2/repository/models/([^/]+)/load)", [=](const httplib::Request& req, httplib::Response& res) {
    requireTokensForAdmin();
    repository_->load(req.matches[1]);
    logInfo("model loaded", {{"model", std::string(req.matches[1])}, {"by", tContext.tokenId}});
    res.status = 200;
  });
  svr.Post(R"(/v2/repository/models/([^/]+)/unload)", [=](const httplib::Request& req, httplib::Response& res) {
    requireTokensForAdmin();
    repository_->unload(req.matches[1]);
    logInfo("model unloaded", {{"model", std::string(req.matches[1])}, {"by", tContext.tokenId}});
    res.status = 200;
  });
}

void HttpFrontend::start() {
  std::function<void()> raiseBacklog;
  if (!options_.tlsCert.empty() || !options_.tlsKey.empty()) {
    if (options_.tlsCert.empty() || options_.tlsKey.empty())
      throw std::runtime_error("--tls-cert and --tls-key go together");
    auto ssl = std::make_unique<ListeningServer<httplib::SSLServer>>(options_.tlsCert.c_str(), options_.tlsKey.c_str());
    raiseBacklog = [s = ssl.get()] { s->raiseBacklog(); };
    if (!ssl->is_valid())
      throw std::runtime_error("cannot use the TLS certificate '" + options_.tlsCert + "' with key '" +
                               options_.tlsKey + "' (unreadable, not PEM, or not a matching pair)");
    http_ = std::move(ssl);
  } else {
    auto plain = std::make_unique<ListeningServer<httplib::Server>>();
    raiseBacklog = [s = plain.get()] { s->raiseBacklog(); };
    http_ = std::move(plain);
  }
  routes();
  auto bind = [&](httplib::Server& s, int port, const char* what) {
    int bound = port == 0 ? s.bind_to_any_port(options_.address) : (s.bind_to_port(options_.address, port) ? port : -1);
    if (bound <= 0)
      throw std::runtime_error(std::string("cannot listen for ") + what + " on " + options_.address + ":" +
                               std::to_string(port) + " (in use, or not an address of this host)");
    return bound;
  };
  boundHttpPort_ = bind(*http_, options_.httpPort, "HTTP");
  raiseBacklog();
  if (options_.metricsPort >= 0) {
    metricsServer_ = std::make_unique<httplib::Server>();
    metricsServer_->new_task_queue = [] { return new httplib::ThreadPool(2); };
    metricsServer_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_->render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    boundMetricsPort_ = bind(*metricsServer_, options_.metricsPort, "metrics");
    metricsThread_ = std::thread([this] { metricsServer_->listen_after_bind(); });
  }
  httpThread_ = std::thread([this] { http_->listen_after_bind(); });
}

void HttpFrontend::stop() {
  ready_.store(false);
  if (http_) http_->stop();
  if (httpThread_.joinable()) httpThread_.join();
  if (metricsServer_) metricsServer_->stop();
  if (metricsThread_.joinable()) metricsThread_.join();
}

} // namespace v4f::serve
