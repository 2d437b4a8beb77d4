// thread_pool.cpp - a pool that splits workgroups by atomic counter; threads spin briefly, then sleep.
//
// The sleep protocol (both directions): the side that may sleep first
// announces itself (sleepers_ / callerWaiting_, sequentially consistent),
// then re-checks the condition under the mutex before waiting; the other
// side changes the condition (sequentially consistent), then takes the mutex
// to signal only when someone announced. Either the sleeper sees the change,
// or the signaller sees the announcement.
#include "thread_pool.h"

#include <errno.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define V4F_CPU_RELAX() _mm_pause()
#else
#define V4F_CPU_RELAX() ((void)0)
#endif

namespace v4f {
namespace rt {

namespace {
// Pause instructions: ~100 us on Zen 4 (~25 ns each); the time depends on the CPU's pause latency.
constexpr int kSpinIterations = 4000;

// Spins until `done()` or the budget is spent; true when done.
template <typename F>
bool spinUntil(F done) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (done()) return true;
    V4F_CPU_RELAX();
  }
  return done();
}
} // namespace

v4f_status_t ThreadPool::start(const Allocator& allocator, int threadCount) {
  allocator_ = &allocator;
  if (threadCount <= 1) return nullptr;
  pthread_mutex_init(&mutex_, nullptr);
  pthread_cond_init(&wake_, nullptr);
  pthread_cond_init(&done_, nullptr);
  initialized_ = true;
  if (!threads_.allocate(allocator, static_cast<size_t>(threadCount - 1)) ||
      !workerArgs_.allocate(allocator, static_cast<size_t>(threadCount - 1)))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory creating %d threads", threadCount);
  for (int i = 0; i < threadCount - 1; ++i) {
    workerArgs_[static_cast<size_t>(i)] = WorkerArg{this, static_cast<uint32_t>(i + 1)};
    int rc = pthread_create(&threads_[static_cast<size_t>(i)], nullptr, &ThreadPool::workerMain,
                            &workerArgs_[static_cast<size_t>(i)]);
    if (rc != 0) {
      stop();
      return makeStatus(V4F_STATUS_INTERNAL, "cannot create worker thread %d of %d: %s", i + 1, threadCount - 1,
                        strerror(rc));
    }
    ++workerCount_;
  }
  return nullptr;
}

void ThreadPool::stop() {
  if (!initialized_) return;
  pthread_mutex_lock(&mutex_);
  stopping_.store(true);
  pthread_cond_broadcast(&wake_);
  pthread_mutex_unlock(&mutex_);
  for (int i = 0; i < workerCount_; ++i) pthread_join(threads_[static_cast<size_t>(i)], nullptr);
  workerCount_ = 0;
  threads_.reset();
  workerArgs_.reset();
  pthread_cond_destroy(&wake_);
  pthread_cond_destroy(&done_);
  pthread_mutex_destroy(&mutex_);
  initialized_ = false;
}

void ThreadPool::work(DispatchJob* job, uint32_t workerId) {
  v4f_dispatch_state_t state = job->state;
  state.worker_id = workerId;
  state.worker_count = static_cast<uint32_t>(workerCount_ + 1);
  state.scratch = job->scratchStride ? job->scratch + workerId * job->scratchStride : nullptr;
  const int64_t cx = state.workgroup_count[0], cy = state.workgroup_count[1];
  for (;;) {
    if (job->error.load(std::memory_order_relaxed) != 0) return;
    int64_t id = job->next.fetch_add(1, std::memory_order_relaxed);
    if (id >= job->workgroupCount) return;
    state.workgroup_id[0] = id % cx;
    state.workgroup_id[1] = (id / cx) % cy;
    state.workgroup_id[2] = id / (cx * cy);
    int32_t rc = job->fn(&state);
    if (rc != 0) {
      int32_t expected = 0;
      if (job->error.compare_exchange_strong(expected, rc)) job->failedWorkgroup.store(id);
      return;
    }
  }
}

void* ThreadPool::workerMain(void* arg) {
  auto* worker = static_cast<WorkerArg*>(arg);
  ThreadPool* pool = worker->pool;
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] { return pool->generation_.load() != seen || pool->stopping_.load(); };
    if (!spinUntil(ready)) {
      pthread_mutex_lock(&pool->mutex_);
      pool->sleepers_.fetch_add(1);
      while (!ready()) pthread_cond_wait(&pool->wake_, &pool->mutex_);
      pool->sleepers_.fetch_sub(1);
      pthread_mutex_unlock(&pool->mutex_);
    }
    if (pool->stopping_.load()) break;
    seen = pool->generation_.load();
    pool->work(pool->job_.load(), worker->id);
    if (pool->active_.fetch_sub(1) == 1 && pool->callerWaiting_.load()) {
      pthread_mutex_lock(&pool->mutex_);
      pthread_cond_signal(&pool->done_);
      pthread_mutex_unlock(&pool->mutex_);
    }
  }
  return nullptr;
}

int32_t ThreadPool::run(DispatchJob* job) {
  job->next.store(0, std::memory_order_relaxed);
  job->error.store(0, std::memory_order_relaxed);
  job->failedWorkgroup.store(-1, std::memory_order_relaxed);
  // A single workgroup (or no workers) is not worth waking anyone for.
  if (workerCount_ == 0 || job->workgroupCount <= 1) {
    work(job, 0);
    return job->error.load();
  }
  // Every worker observes the generation change; those that find the
  // counter exhausted go back to waiting at once.
  job_.store(job);
  active_.store(workerCount_);
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    pthread_mutex_lock(&mutex_);
    pthread_cond_broadcast(&wake_);
    pthread_mutex_unlock(&mutex_);
  }
  work(job, 0);
  auto finished = [&] { return active_.load() == 0; };
  if (!spinUntil(finished)) {
    pthread_mutex_lock(&mutex_);
    callerWaiting_.store(true);
    while (!finished()) pthread_cond_wait(&done_, &mutex_);
    callerWaiting_.store(false);
    pthread_mutex_unlock(&mutex_);
  }
  job_.store(nullptr);
  return job->error.load();
}

} // namespace rt
} // namespace v4f

namespace v4f {
namespace rt {

void releaseSharedPool(v4f_thread_pool_s* pool) {
  if (!pool || pool->refs.fetch_sub(1) != 1) return;
  pool->pool.stop();
  pthread_mutex_destroy(&pool->turn);
  Allocator a = pool->allocator;
  a.destroy(pool);
}

} // namespace rt
} // namespace v4f

extern "C" {

V4F_API v4f_status_t v4f_thread_pool_create(int32_t thread_count, const v4f_allocator_t* allocator,
                                            v4f_thread_pool_t** out_pool) {
  if (!out_pool) return v4f::rt::makeStatus(V4F_STATUS_INVALID_ARGUMENT, "out_pool is NULL");
  *out_pool = nullptr;
  if (thread_count < 0 || thread_count > 1024)
    return v4f::rt::makeStatus(V4F_STATUS_INVALID_ARGUMENT, "thread_count %d is out of range [0, 1024]", thread_count);
  if (thread_count == 0) thread_count = v4f::rt::onlineCoreCount();
  v4f::rt::Allocator alloc(allocator);
  v4f_thread_pool_s* p = alloc.create<v4f_thread_pool_s>();
  if (!p) return v4f::rt::makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  p->allocator = alloc;
  if (v4f_status_t st = p->pool.start(p->allocator, thread_count)) {
    v4f::rt::releaseSharedPool(p);
    return st;
  }
  *out_pool = p;
  return nullptr;
}

V4F_API void v4f_thread_pool_release(v4f_thread_pool_t* pool) { v4f::rt::releaseSharedPool(pool); }

V4F_API int32_t v4f_thread_pool_thread_count(const v4f_thread_pool_t* pool) {
  return pool ? pool->pool.threadCount() : 0;
}

} // extern "C"
