// v4f-serve: a KServe v2 (Open Inference Protocol) server for .v4f artifacts
// with dynamic batching, health, Prometheus metrics, bearer-token access
// control and an audit log. Links only the v4f runtime (no LLVM, MLIR or
// protobuf).
#include "Audit.h"
#include "Auth.h"
#include "HttpFrontend.h"
#include "Log.h"
#include "Metrics.h"
#include "Repository.h"

#include "v4f/runtime.h"

#include <CLI/CLI.hpp>

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

using namespace v4f::serve;

namespace {

int addTokenCommand(const std::string& file, const std::string& id, const std::string& roles,
                    const std::string& models) {
  try {
    std::string token = addToken(file, id, roles, models);
    // The token is shown once; the file keeps only its salted hash.
    std::cout << token << "\n";
    std::cerr << "v4f-serve: added token '" << id << "' to " << file
              << " (only its salted SHA-256 is stored; keep the token above secret)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "v4f-serve: error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"v4f-serve: serves .v4f artifacts over the KServe v2 inference protocol (REST, with the binary tensor "
               "data extension), with dynamic batching, health endpoints, Prometheus metrics, bearer-token access "
               "control and an audit log.\n\nModel repository layout: DIR/<model>/<version>/model.v4f, and an optional "
               "DIR/<model>/config.json (see docs/serving.md).",
               "v4f-serve"};
  app.set_version_flag("--version", std::string("v4f-serve ") + v4f_runtime_version());
  std::string repositoryDir, tokenFile, auditPath, logFormat = "json";
  FrontendOptions fe;
  uint64_t auditMaxBytes = uint64_t(100) << 20;
  int auditKeep = 5, threads = 0, exitTimeout = 30;
  bool exitOnError = true, logVerbose = false, strictHealth = false;
  app.add_option("--model-repository", repositoryDir, "Directory of models: <model>/<version>/model.v4f")
      ->check(CLI::ExistingDirectory);
  app.add_option("--http-address", fe.address, "Address to listen on")->capture_default_str();
  app.add_option("--http-port", fe.httpPort, "Port of the inference REST API (0 = any free port, logged)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--metrics-port", fe.metricsPort, "Port of GET /metrics (Prometheus); -1 = none")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--http-thread-count", fe.httpThreads,
                 "Threads answering HTTP connections (one per open connection at a time; more connections wait)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--threads", threads,
                 "Compute threads shared by every model instance (0 = the number of cores); a model's "
                 "config.json \"threads\" gives it its own pool instead")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--max-request-bytes", fe.maxRequestBytes, "Largest request body accepted (larger: 413)")
      ->check(CLI::Range(size_t(1024), size_t(1) << 34))
      ->capture_default_str();
  app.add_option("--read-timeout-secs", fe.readTimeoutSecs, "Seconds a client may take to send a request")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--keep-alive-timeout-secs", fe.keepAliveTimeoutSecs,
                 "Seconds an idle keep-alive connection is kept (it holds an HTTP thread meanwhile)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--tls-cert", fe.tlsCert, "PEM certificate: serve HTTPS (with --tls-key)");
  app.add_option("--tls-key", fe.tlsKey, "PEM private key of --tls-cert");
  app.add_option("--token-file", tokenFile,
                 "JSON file of token hashes, roles and models (`v4f-serve token add`); without it every "
                 "endpoint is open");
  std::vector<std::string> trustedKeyFiles;
  bool requireSigned = false;
  app.add_option("--trusted-key", trustedKeyFiles,
                 "Public key (KEY.pub of v4fc keygen) whose signatures are trusted (repeatable)")
      ->check(CLI::ExistingFile);
  std::string decryptKeyFile;
  app.add_option("--decrypt-key", decryptKeyFile,
                 "Key of encrypted artifacts (v4fc keygen --type encryption; a 0600 file)")
      ->check(CLI::ExistingFile);
  app.add_flag("--require-signed", requireSigned,
               "Load only artifacts signed by a --trusted-key (checked before anything else is read)");
  app.add_flag("--strict-health", strictHealth, "Health and server metadata need a token too");
  app.add_option("--audit-log", auditPath, "Append a JSON line per request to this file");
  app.add_option("--audit-log-max-bytes", auditMaxBytes, "Rotate the audit log at this size")
      ->check(CLI::Range(uint64_t(4096), uint64_t(1) << 40))
      ->capture_default_str();
  app.add_option("--audit-log-keep", auditKeep, "Rotated audit logs kept (PATH.1 ... PATH.N)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--exit-timeout-secs", exitTimeout,
                 "On SIGTERM/SIGINT: seconds to finish requests in flight before exiting anyway")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  app.add_option("--exit-on-error", exitOnError, "Exit when a model fails to load at start")->capture_default_str();
  app.add_option("--log-format", logFormat, "Log lines as json or text")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  app.add_flag("--log-verbose", logVerbose, "Log every request");

  CLI::App* token = app.add_subcommand("token", "Manage the token file");
  CLI::App* tokenAdd = token->add_subcommand("add", "Create a token, print it once, store its salted hash");
  std::string tokenId, tokenRoles, tokenModels, tokenPath;
  tokenAdd->add_option("--token-file", tokenPath, "Token file to add to (created 0600)")->required();
  tokenAdd->add_option("--id", tokenId, "Token id ([A-Za-z0-9_-], shown in the audit log)")->required();
  tokenAdd->add_option("--roles", tokenRoles, "Comma-separated: infer, metadata, admin")->required();
  tokenAdd->add_option("--models", tokenModels, "Comma-separated model names, or '*'")->required();
  token->require_subcommand(1);

  CLI11_PARSE(app, argc, argv);
  if (tokenAdd->parsed()) return addTokenCommand(tokenPath, tokenId, tokenRoles, tokenModels);
  if (repositoryDir.empty()) {
    std::cerr << "v4f-serve: error: --model-repository is required\nRun with --help for more information.\n";
    return 2;
  }
  configureLog({logFormat == "json", logVerbose ? LogLevel::Verbose : LogLevel::Info});

  // Signals are taken by sigwait below; every thread started from here on
  // inherits the mask.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Every connection is a descriptor: allow as many as the hard limit lets.
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  std::optional<TokenStore> tokens;
  AuditLog audit;
  try {
    if (!tokenFile.empty()) tokens = TokenStore::load(tokenFile);
    if (!auditPath.empty()) audit.open(auditPath, auditMaxBytes, auditKeep);
  } catch (const std::exception& e) {
    logError(e.what());
    return 1;
  }
  if (!tokens) logWarning("no --token-file: every endpoint, repository control included, is open");

  SignaturePolicy signatures;
  if (requireSigned && trustedKeyFiles.empty()) {
    logError("--require-signed needs at least one --trusted-key");
    return 1;
  }
  signatures.policy = requireSigned             ? V4F_SIGNATURE_REQUIRE
                      : trustedKeyFiles.empty() ? V4F_SIGNATURE_OFF
                                                : V4F_SIGNATURE_WARN;
  signatures.trustedKeys.resize(32 * trustedKeyFiles.size());
  for (size_t k = 0; k < trustedKeyFiles.size(); ++k)
    if (v4f_status_t st =
            v4f_read_public_key_file(trustedKeyFiles[k].c_str(), signatures.trustedKeys.data() + 32 * k)) {
      logError(v4f_status_message(st));
      v4f_status_free(st);
      return 1;
    }

  if (!decryptKeyFile.empty()) {
    signatures.decryptionKey.resize(32);
    if (v4f_status_t st = v4f_read_encryption_key_file(decryptKeyFile.c_str(), signatures.decryptionKey.data())) {
      logError(v4f_status_message(st));
      v4f_status_free(st);
      return 1;
    }
  }

  v4f_thread_pool_t* pool = nullptr;
  if (v4f_status_t st = v4f_thread_pool_create(threads, nullptr, &pool)) {
    logError(std::string("cannot start the compute threads: ") + v4f_status_message(st));
    v4f_status_free(st);
    return 1;
  }
  int rc = 0;
  {
    Metrics metrics;
    Repository repository(repositoryDir, pool, &metrics, signatures);
    std::vector<std::string> failures = repository.loadAll();
    for (const auto& f : failures) logError("model failed to load", {{"error", f}});
    if (!failures.empty() && exitOnError) {
      logError("exiting: a model failed to load (--exit-on-error=false serves the others)");
      repository.unloadAll();
      v4f_thread_pool_release(pool);
      return 1;
    }
    HttpFrontend frontend(fe, &repository, &metrics, tokens ? &*tokens : nullptr, &audit);
    try {
      frontend.start();
    } catch (const std::exception& e) {
      logError(e.what());
      repository.unloadAll();
      v4f_thread_pool_release(pool);
      return 1;
    }
    frontend.setReady(true);
    logInfo("v4f-serve ready", {{"http_port", frontend.httpPort()},
                                {"metrics_port", frontend.metricsPort()},
                                {"tls", !fe.tlsCert.empty()},
                                {"access_control", tokens.has_value()},
                                {"require_signed", requireSigned},
                                {"compute_threads", v4f_thread_pool_thread_count(pool)},
                                {"models", repository.index()}});

    int sig = 0;
    sigwait(&stopSignals, &sig);
    logInfo("shutting down: draining requests in flight", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    // A second signal, or the drain running past --exit-timeout-secs, ends
    // the process at once.
    std::thread watchdog([exitTimeout, stopSignals] {
      timespec ts{exitTimeout, 0};
      int s = sigtimedwait(&stopSignals, nullptr, &ts);
      logError(s > 0 ? "second signal: exiting without draining" : "drain timed out: exiting");
      _exit(1);
    });
    watchdog.detach();
    frontend.stop();
    repository.unloadAll();
    audit.close();
    logInfo("v4f-serve stopped");
  }
  v4f_thread_pool_release(pool);
  return rc;
}
