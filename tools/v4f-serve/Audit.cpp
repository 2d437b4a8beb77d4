// Audit.cpp - JSON-lines audit log with size rotation.
#include "Audit.h"

#include "Log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

namespace v4f::serve {

AuditLog::~AuditLog() { close(); }

void AuditLog::open(const std::string& path, uint64_t maxBytes, int keep) {
  std::lock_guard<std::mutex> lock(mutex_);
  path_ = path;
  maxBytes_ = maxBytes;
  keep_ = keep;
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("audit log '" + path + "': cannot be opened: " + strerror(errno));
  struct stat st;
  size_ = fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void AuditLog::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) {
    fsync(fd_);
    ::close(fd_);
  }
  fd_ = -1;
}

void AuditLog::rotateLocked() {
  ::close(fd_);
  fd_ = -1;
  if (keep_ > 0) {
    std::string oldest = path_ + "." + std::to_string(keep_);
    unlink(oldest.c_str());
    for (int i = keep_ - 1; i >= 1; --i)
      rename((path_ + "." + std::to_string(i)).c_str(), (path_ + "." + std::to_string(i + 1)).c_str());
    rename(path_.c_str(), (path_ + ".1").c_str());
  } else {
    unlink(path_.c_str());
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  size_ = 0;
}

void AuditLog::write(nlohmann::json record) {
  nlohmann::json line = {{"time", isoTimeNow()}};
  for (auto it = record.begin(); it != record.end(); ++it) line[it.key()] = it.value();
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0 && path_.empty()) return;
  if (fd_ >= 0 && maxBytes_ && size_ > 0 && size_ + text.size() > maxBytes_) rotateLocked();
  ssize_t n = fd_ >= 0 ? ::write(fd_, text.data(), text.size()) : -1;
  if (n != static_cast<ssize_t>(text.size())) {
    if (!failing_) logError("audit log: write failed", {{"path", path_}, {"error", strerror(errno)}});
    failing_ = true;
    return;
  }
  failing_ = false;
  size_ += text.size();
}

} // namespace v4f::serve
