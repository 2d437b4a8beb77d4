// session.h - the session's state, shared by session.cpp and profile.cpp.
#ifndef V4F_RUNTIME_SRC_SESSION_H_
#define V4F_RUNTIME_SRC_SESSION_H_

#include "cuda.h"
#include "memory_planner.h"
#include "model.h"
#include "thread_pool.h"

#include <atomic>

struct v4f_session_s {
  v4f_model_s* model = nullptr;
  v4f::rt::Allocator allocator;
  v4f::rt::ThreadPool ownPool;
  // The pool dispatches run on: ownPool, or sharedPool's (taking its turn).
  v4f::rt::ThreadPool* pool = &ownPool;
  v4f_thread_pool_s* sharedPool = nullptr;

  v4f::rt::Array<int64_t> regs;
  v4f::rt::Array<void*> bufferPtrs;       // per manifest buffer, for the current run
  v4f::rt::Array<void*> bindingScratch;   // the largest dispatch's bindings
  v4f::rt::Array<uint64_t> lengthScratch; // and their lengths in bytes
  v4f::rt::Array<int64_t> pushScratch;    // the largest dispatch's push constants

  // Arena placement, cached for the input dims it was computed for.
  v4f::rt::Array<v4f::rt::TransientBuffer> transients;
  v4f::rt::Array<uint32_t> planScratch;
  v4f::rt::Array<uint64_t> transientOffset; // per manifest buffer (transients only)
  v4f::rt::Array<int64_t> plannedDims;      // inputs x V4F_MAX_RANK
  v4f::rt::Array<uint64_t> capacity;        // per manifest buffer: bytes available this run
  v4f::rt::Array<int64_t> dataCache;        // per register: DataValue read this run
  v4f::rt::Array<bool> dataCached;
  v4f::rt::Array<bool> skipped;      // per dispatch: its guard was zero this run
  v4f::rt::Array<bool> refreshAfter; // per dispatch: it binds a buffer a DataValue reads
  v4f::rt::Array<int64_t> loopIndex; // per manifest loop: the iteration running
  v4f::rt::Array<int64_t> loopCount; // per manifest loop: iterations run once it ended, else -1
  v4f::rt::Array<bool> provisional;  // per register: still a bound (DataValues::provisional)
  bool hasDataValues = false;        // the shape program reads sizes from buffers
  bool planned = false;
  uint64_t arenaSize = 0;
  uint64_t maxArenaBytes = 0; // 0 = no limit (v4f_session_options_t.max_arena_bytes)
  void* arena = nullptr;
  uint64_t arenaCapacity = 0;
  // Per-worker kernel scratch: threadCount slices of scratchStride bytes.
  void* scratch = nullptr;
  uint64_t scratchStride = 0;
  // Feedback bindings (v4f_session_bind_feedback): per binding two
  // session-owned buffers; the last run's output lives in buf[cur].
  struct Feedback {
    uint32_t output = 0, input = 0;
    void* buf[2] = {nullptr, nullptr};
    uint64_t cap[2] = {0, 0};
    int cur = 0;
    bool hasState = false;
    int32_t rank = 0;
    int64_t dims[V4F_MAX_RANK] = {};
  };
  v4f::rt::Array<Feedback> feedback; // capacity: one per model output
  size_t feedbackCount = 0;
  v4f::rt::Array<v4f_tensor_t> feedInputs; // the run's inputs with fed-back ones substituted
  // Set while a run (or output-shape resolution) uses the session: a second
  // thread entering at the same time is refused instead of corrupting the
  // registers, arena and scratch the first one is using.
  std::atomic<bool> busy{false};
  // Per-dispatch timing (v4f_session_set_profiling): entries of the last run.
  bool profiling = false;
  v4f::rt::Array<v4f_dispatch_profile_t> profile;
  size_t profileCount = 0;
  uint64_t runStartNs = 0;
  // The CUDA device state when the artifact has GPU dispatches (cuda.cpp).
  v4f::rt::CudaSession* cuda = nullptr;
};

namespace v4f {
namespace rt {

// Runs one dispatch on the session's pool (waiting for a shared pool's turn).
inline int32_t runOnPool(v4f_session_s* s, DispatchJob* job) {
  if (!s->sharedPool) return s->pool->run(job);
  pthread_mutex_lock(&s->sharedPool->turn);
  int32_t rc = s->pool->run(job);
  pthread_mutex_unlock(&s->sharedPool->turn);
  return rc;
}

// Holds the session's busy flag for one call; `acquired` is false when
// another thread holds it.
struct BusyGuard {
  explicit BusyGuard(std::atomic<bool>& flag) : flag(flag), acquired(!flag.exchange(true, std::memory_order_acquire)) {}
  ~BusyGuard() {
    if (acquired) flag.store(false, std::memory_order_release);
  }
  std::atomic<bool>& flag;
  bool acquired;
};

inline v4f_status_t sessionBusy() {
  return v4f::rt::makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                             "the session is in use by another thread (a session must be used by one thread at a "
                             "time; create one session per thread)");
}

// Appends one profile entry of the running dispatch (profile.cpp).
V4F_INTERNAL void recordProfile(v4f_session_s* s, const v4f_dispatch_profile_t& e);
// Monotonic clock in nanoseconds.
V4F_INTERNAL uint64_t nowNs();

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_SESSION_H_
