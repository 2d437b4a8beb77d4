// thread_pool.h - runs one dispatch's workgroups on N threads (caller included).
#ifndef V4F_RUNTIME_SRC_THREAD_POOL_H_
#define V4F_RUNTIME_SRC_THREAD_POOL_H_

#include <pthread.h>

#include <atomic>

#include "internal.h"
#include "v4f/kernel_abi.h"

namespace v4f {
namespace rt {

// One dispatch: workgroups (linearized, x fastest) are claimed through
// `next` by every thread. `state` is the template of the kernel's
// v4f_dispatch_state_t; each worker copies it and fills its workgroup id,
// worker id and scratch slice (scratch + worker * scratchStride).
struct DispatchJob {
  v4f_kernel_fn_t fn = nullptr;
  v4f_dispatch_state_t state{};
  int64_t workgroupCount = 0; // x * y * z
  uint8_t* scratch = nullptr;
  uint64_t scratchStride = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int32_t> error{0}; // first non-zero kernel return code
  std::atomic<int64_t> failedWorkgroup{-1};
};

// Between dispatches a worker spins for a bounded time (kSpinIterations
// pause instructions: ~100 us on Zen 4, where one takes ~25 ns) watching
// for the next one, so a plan's back-to-back dispatches do not pay a futex
// wake each (31-36 us on a Firecracker VM); then it sleeps
// on a condition variable (an idle session spins at most that long). The
// caller waits for the workers the same way. With threadCount == 1 no
// thread is created and run() calls the kernel inline.
class ThreadPool {
public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() { stop(); }

  V4F_INTERNAL v4f_status_t start(const Allocator& allocator, int threadCount);
  V4F_INTERNAL void stop();
  // Runs every workgroup of `job` and returns when all are done (the barrier
  // between dispatches). Returns job->error.
  V4F_INTERNAL int32_t run(DispatchJob* job);
  int threadCount() const { return workerCount_ + 1; }

private:
  struct WorkerArg {
    ThreadPool* pool;
    uint32_t id;
  };
  static void* workerMain(void* arg);
  void work(DispatchJob* job, uint32_t workerId);

  const Allocator* allocator_ = nullptr;
  Array<pthread_t> threads_;
  Array<WorkerArg> workerArgs_;
  int workerCount_ = 0;
  bool initialized_ = false;
  pthread_mutex_t mutex_;
  pthread_cond_t wake_;
  pthread_cond_t done_;
  // Published by run() before generation_ is bumped; read after it is seen.
  std::atomic<DispatchJob*> job_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};   // workers still in the current dispatch
  std::atomic<int> sleepers_{0}; // workers inside (or entering) wake_'s wait
  std::atomic<bool> callerWaiting_{false};
  std::atomic<bool> stopping_{false};
};

// Drops one reference to a shared pool; the last one stops its threads.
V4F_INTERNAL void releaseSharedPool(v4f_thread_pool_s* pool);

} // namespace rt
} // namespace v4f

// A pool shared by sessions (v4f_thread_pool_create): `turn` lets one
// dispatch at a time use it.
struct v4f_thread_pool_s {
  v4f::rt::Allocator allocator;
  v4f::rt::ThreadPool pool;
  pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<int32_t> refs{1};
};

#endif // V4F_RUNTIME_SRC_THREAD_POOL_H_
