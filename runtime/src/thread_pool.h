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
  int64_t workgroupCount = 0;  // x * y * z
  uint8_t* scratch = nullptr;
  uint64_t scratchStride = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int32_t> error{0};   // first non-zero kernel return code
  std::atomic<int64_t> failedWorkgroup{-1};
};

// Workers sleep on a condition variable between dispatches (no idle spinning).
// With threadCount == 1 no thread is created and run() calls the kernel inline.
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
  DispatchJob* job_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0;
  bool stopping_ = false;
};

}  // namespace rt
}  // namespace v4f

#endif  // V4F_RUNTIME_SRC_THREAD_POOL_H_
