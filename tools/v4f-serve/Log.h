// Log.h - v4f-serve's structured log: one JSON object (or one text line) per
// event on stderr, written whole under a lock so lines never interleave.
#ifndef V4F_SERVE_LOG_H_
#define V4F_SERVE_LOG_H_

#include <nlohmann/json.hpp>

#include <string>

namespace v4f::serve {

enum class LogLevel { Error = 0, Warning = 1, Info = 2, Verbose = 3 };

struct LogOptions {
  bool json = true;                // --log-format json|text
  LogLevel level = LogLevel::Info; // --log-verbose raises it to Verbose
};

void configureLog(const LogOptions& options);
bool logEnabled(LogLevel level);
// `fields` is an object whose members are added to the line.
void log(LogLevel level, const std::string& message, const nlohmann::json& fields = nullptr);
inline void logInfo(const std::string& m, const nlohmann::json& f = nullptr) { log(LogLevel::Info, m, f); }
inline void logWarning(const std::string& m, const nlohmann::json& f = nullptr) { log(LogLevel::Warning, m, f); }
inline void logError(const std::string& m, const nlohmann::json& f = nullptr) { log(LogLevel::Error, m, f); }

// UTC time as 2026-12-03T15:40:18.123Z.
std::string isoTimeNow();
// Monotonic microseconds.
uint64_t nowUs();

} // namespace v4f::serve

#endif // V4F_SERVE_LOG_H_
