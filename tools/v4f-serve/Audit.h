// Audit.h - the append-only audit log: one JSON object per request (time,
// token id -- never the token --, client, model, version, action, status,
// bytes in/out, request id), rotated by size (PATH -> PATH.1 -> ... ->
// PATH.<keep>, the oldest dropped).
#ifndef V4F_SERVE_AUDIT_H_
#define V4F_SERVE_AUDIT_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <mutex>
#include <string>

namespace v4f::serve {

class AuditLog {
public:
  AuditLog() = default;
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Opens (appending to) `path`; throws std::runtime_error naming it.
  void open(const std::string& path, uint64_t maxBytes, int keep);
  bool enabled() const { return fd_ >= 0; }
  // Writes one line (the object plus "time"); a write failure is logged
  // once per failure streak, never thrown at the request.
  void write(nlohmann::json record);
  void close();

private:
  void rotateLocked();
  std::mutex mutex_;
  std::string path_;
  uint64_t maxBytes_ = 0;
  int keep_ = 0;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool failing_ = false;
};

} // namespace v4f::serve

#endif // V4F_SERVE_AUDIT_H_
