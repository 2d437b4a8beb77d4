// profile.cpp - per-dispatch timing of a session's runs (v4f_session_set_profiling).
#include "session.h"

#include <time.h>

using v4f::rt::Array;
using v4f::rt::makeStatus;

namespace v4f {
namespace rt {

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Appends one profile entry, growing the table by doubling; an entry that
// cannot be stored (out of memory) is dropped rather than failing the run.
void recordProfile(v4f_session_s* s, const v4f_dispatch_profile_t& e) {
  if (s->profileCount == s->profile.size()) {
    size_t n = s->profile.size() ? 2 * s->profile.size() : 256;
    Array<v4f_dispatch_profile_t> grown;
    if (!grown.allocate(s->allocator, n)) return;
    for (size_t i = 0; i < s->profileCount; ++i) grown[i] = s->profile[i];
    s->profile.swap(grown);
  }
  s->profile[s->profileCount++] = e;
}

} // namespace rt
} // namespace v4f

V4F_API v4f_status_t v4f_session_set_profiling(v4f_session_t* session, int32_t enable) {
  if (!session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "v4f_session_set_profiling: session is NULL");
  v4f::rt::BusyGuard guard(session->busy);
  if (!guard.acquired) return v4f::rt::sessionBusy();
  session->profiling = enable != 0;
  session->profileCount = 0;
  return nullptr;
}

V4F_API size_t v4f_session_profile_count(const v4f_session_t* session) { return session ? session->profileCount : 0; }

V4F_API v4f_status_t v4f_session_profile_entry(const v4f_session_t* session, size_t index,
                                               v4f_dispatch_profile_t* entry) {
  if (!session || !entry)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "v4f_session_profile_entry: %s is NULL",
                      session ? "entry" : "session");
  if (index >= session->profileCount)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                      "v4f_session_profile_entry: index %zu out of range (the last run recorded %zu entries)", index,
                      session->profileCount);
  *entry = session->profile[index];
  return nullptr;
}
