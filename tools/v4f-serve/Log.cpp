// Log.cpp - structured logging to stderr.
#include "Log.h"

#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include <chrono>
#include <mutex>

namespace v4f::serve {

namespace {
LogOptions gOptions;
std::mutex gMutex;
const char* levelName(LogLevel l) {
  switch (l) {
  case LogLevel::Error: return "error";
  case LogLevel::Warning: return "warning";
  case LogLevel::Info: return "info";
  case LogLevel::Verbose: return "verbose";
  }
  return "info";
}
} // namespace

void configureLog(const LogOptions& options) { gOptions = options; }

bool logEnabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(gOptions.level); }

std::string isoTimeNow() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  char buf[40];
  snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(tv.tv_usec / 1000));
  return buf;
}

uint64_t nowUs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void log(LogLevel level, const std::string& message, const nlohmann::json& fields) {
  if (!logEnabled(level)) return;
  std::string line;
  if (gOptions.json) {
    nlohmann::json j = {{"ts", isoTimeNow()}, {"level", levelName(level)}, {"msg", message}};
    if (fields.is_object())
      for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
    line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    line = isoTimeNow() + " " + levelName(level) + ": " + message;
    if (fields.is_object())
      for (auto it = fields.begin(); it != fields.end(); ++it)
        line += " " + it.key() + "=" +
                (it.value().is_string() ? it.value().get<std::string>()
                                        : it.value().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  line += '\n';
  std::lock_guard<std::mutex> lock(gMutex);
  fwrite(line.data(), 1, line.size(), stderr);
  fflush(stderr);
}

} // namespace v4f::serve
