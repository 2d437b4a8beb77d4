// HttpFrontend.h - the KServe v2 REST endpoints (with the binary tensor data
// extension), access control, audit and metrics around every request, and
// the Prometheus endpoint on its own port.
#ifndef V4F_SERVE_HTTPFRONTEND_H_
#define V4F_SERVE_HTTPFRONTEND_H_

#include "Audit.h"
#include "Auth.h"
#include "Metrics.h"
#include "Repository.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace v4f::serve {

struct FrontendOptions {
  std::string address = "0.0.0.0";
  int httpPort = 8000;    // 0 = any free port (logged)
  int metricsPort = 8002; // -1 = no metrics endpoint
  std::string tlsCert, tlsKey;
  int httpThreads = 64;
  size_t maxRequestBytes = size_t(64) << 20;
  int readTimeoutSecs = 10;
  int keepAliveTimeoutSecs = 5;
  bool publicHealth = true; // health and server metadata without a token
};

class HttpFrontend {
public:
  HttpFrontend(const FrontendOptions& options, Repository* repository, Metrics* metrics, const TokenStore* tokens,
               AuditLog* audit);
  ~HttpFrontend();
  // Binds both ports; throws std::runtime_error naming the address.
  void start();
  int httpPort() const { return boundHttpPort_; }
  int metricsPort() const { return boundMetricsPort_; }
  // Readiness: true once the models are loaded, false while draining.
  void setReady(bool ready) { ready_.store(ready); }
  // Stops accepting, finishes the requests in flight, returns.
  void stop();

private:
  void routes();
  FrontendOptions options_;
  Repository* repository_;
  Metrics* metrics_;
  const TokenStore* tokens_;
  AuditLog* audit_;
  std::unique_ptr<httplib::Server> http_, metricsServer_;
  std::thread httpThread_, metricsThread_;
  int boundHttpPort_ = -1, boundMetricsPort_ = -1;
  std::atomic<bool> ready_{false};
};

} // namespace v4f::serve

#endif // V4F_SERVE_HTTPFRONTEND_H_
