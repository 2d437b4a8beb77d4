// session.cpp - v4f_session_* : input checks, shape evaluation, arena planning, dispatch.
#include "session.h"
#include "shape_program.h"

#include <atomic>
#include <cstdio>

using v4f::rt::Array;
using v4f::rt::makeStatus;
namespace fb = v4f::fb;
using v4f::rt::BusyGuard;
using v4f::rt::sessionBusy;

namespace {

const fb::Manifest* manifestOf(const v4f_session_s* s) { return s->model->manifest; }

// Bytes of a tensor of `rank` dims of `elemSize`, or false on overflow.
bool tensorBytes(const int64_t* dims, int32_t rank, size_t elemSize, uint64_t* out) {
  uint64_t n = elemSize;
  for (int32_t d = 0; d < rank; ++d)
    if (!v4f::rt::checkedMul(n, static_cast<uint64_t>(dims[d]), &n)) return false;
  *out = n;
  return true;
}

v4f_status_t checkInputs(const v4f_session_s* s, const v4f_tensor_t* inputs, size_t count, bool needData) {
  const v4f_model_s* m = s->model;
  if (count != m->inputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "expected %zu inputs, got %zu", m->inputs.size(), count);
  if (count && !inputs) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "inputs is NULL");
  for (size_t i = 0; i < count; ++i) {
    const v4f_tensor_info_t& sig = m->inputs[i];
    const v4f_tensor_t& t = inputs[i];
    if (t.dtype != sig.dtype)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': dtype is %s, expected %s", i, sig.name,
                        v4f_dtype_name(t.dtype), v4f_dtype_name(sig.dtype));
    if (t.rank != sig.rank)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': rank is %d, expected %d", i, sig.name, t.rank,
                        sig.rank);
    for (int32_t d = 0; d < sig.rank; ++d) {
      int64_t v = t.dims[d];
      if (v < 0)
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': dim %d is negative (%lld)", i, sig.name, d,
                          static_cast<long long>(v));
      if (sig.dims[d] >= 0 && v != sig.dims[d])
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': dim %d is %lld, expected %lld", i, sig.name, d,
                          static_cast<long long>(v), static_cast<long long>(sig.dims[d]));
      // Bounds set at compile time (v4fc --dim NAME=MIN..MAX; verified at load).
      const auto* fsig = m->manifest->inputs()->Get(static_cast<uint32_t>(i));
      if (fsig->dim_min() && fsig->dim_max()) {
        int64_t lo = fsig->dim_min()->Get(d), hi = fsig->dim_max()->Get(d);
        if (lo >= 0 && (v < lo || v > hi))
          return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                            "input %zu '%s': dim %d ('%s') is %lld, outside the bounds [%lld, %lld] "
                            "it was compiled for",
                            i, sig.name, d, sig.dim_names[d], static_cast<long long>(v), static_cast<long long>(lo),
                            static_cast<long long>(hi));
      }
      if (sig.dims[d] >= 0 || !sig.dim_names[d][0]) continue;
      // The same symbol must have one value across all inputs.
      for (size_t j = 0; j <= i; ++j) {
        const v4f_tensor_info_t& other = m->inputs[j];
        for (int32_t e = 0; e < other.rank && (j < i || e < d); ++e) {
          if (other.dims[e] >= 0 || strcmp(other.dim_names[e], sig.dim_names[d]) != 0) continue;
          if (inputs[j].dims[e] != v)
            return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                              "input %zu '%s': dim %d ('%s') is %lld but input %zu '%s' dim %d "
                              "gives '%s' = %lld",
                              i, sig.name, d, sig.dim_names[d], static_cast<long long>(v), j, other.name, e,
                              sig.dim_names[d], static_cast<long long>(inputs[j].dims[e]));
        }
      }
    }
    if (needData) {
      uint64_t bytes;
      if (!tensorBytes(t.dims, t.rank, v4f_dtype_size(t.dtype), &bytes))
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': size overflows", i, sig.name);
      if (t.byte_size < bytes)
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': byte_size is %zu, the shape needs %llu bytes",
                          i, sig.name, t.byte_size, static_cast<unsigned long long>(bytes));
      if (!t.data && bytes) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': data is NULL", i, sig.name);
    }
  }
  return nullptr;
}

int64_t reg(const v4f_session_s* s, uint32_t r) { return s->regs[r]; }

// Fills outputs' dtype/rank/dims and the needed byte_size into `needed`.
v4f_status_t resolveOutputs(v4f_session_s* s, const v4f_tensor_t* inputs, v4f_tensor_t* outputs, size_t count,
                            uint64_t* needed) {
  const v4f_model_s* m = s->model;
  const fb::Manifest* mf = manifestOf(s);
  if (count != m->outputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "expected %zu outputs, got %zu", m->outputs.size(), count);
  if (count && !outputs) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "outputs is NULL");
  if (s->regs.size())
    if (v4f_status_t st = v4f::rt::evalShapeProgram(mf, inputs, s->regs.data(), nullptr)) return st;
  // Inputs: the shape program may tie dims together (dim_regs pointing at
  // another input's dim); a mismatch is the caller's error.
  for (size_t i = 0; i < m->inputs.size(); ++i) {
    const fb::TensorSig* sig = mf->inputs()->Get(static_cast<uint32_t>(i));
    for (int32_t d = 0; d < m->inputs[i].rank; ++d) {
      int64_t want = reg(s, sig->dim_regs()->Get(static_cast<uint32_t>(d)));
      if (want != inputs[i].dims[d])
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': dim %d is %lld, the model requires %lld here",
                          i, m->inputs[i].name, d, static_cast<long long>(inputs[i].dims[d]),
                          static_cast<long long>(want));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const v4f_tensor_info_t& info = m->outputs[i];
    const fb::TensorSig* sig = mf->outputs()->Get(static_cast<uint32_t>(i));
    v4f_tensor_t& t = outputs[i];
    t.dtype = info.dtype;
    t.rank = info.rank;
    for (int32_t d = 0; d < V4F_MAX_RANK; ++d) t.dims[d] = 0;
    for (int32_t d = 0; d < info.rank; ++d) {
      int64_t v = reg(s, sig->dim_regs()->Get(static_cast<uint32_t>(d)));
      if (v < 0 || (info.dims[d] >= 0 && v != info.dims[d]))
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                          "output %zu '%s': the shape program gives dim %d = %lld for these "
                          "input shapes",
                          i, info.name, d, static_cast<long long>(v));
      t.dims[d] = v;
    }
    uint64_t bytes;
    if (!tensorBytes(t.dims, t.rank, v4f_dtype_size(t.dtype), &bytes))
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "output %zu '%s': size overflows", i, info.name);
    int64_t bufSize = reg(s, mf->buffers()->Get(sig->buffer())->size_reg());
    if (bufSize > 0 && static_cast<uint64_t>(bufSize) > bytes) bytes = static_cast<uint64_t>(bufSize);
    needed[i] = bytes;
  }
  return nullptr;
}

// Sizes every buffer and places transients, reusing the cached placement when
// the input dims are unchanged.
v4f_status_t planBuffers(v4f_session_s* s, const v4f_tensor_t* inputs) {
  const v4f_model_s* m = s->model;
  const fb::Manifest* mf = manifestOf(s);
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  for (uint32_t b = 0; b < nbuf; ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    int64_t size = reg(s, buf->size_reg());
    if (size < 0)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                        "buffer %u: the shape program gives a negative size (%lld) for these "
                        "input shapes",
                        b, static_cast<long long>(size));
    if (buf->kind() == fb::BufferKind::Constant &&
        static_cast<uint64_t>(size) > m->constantsSize - buf->constant_offset())
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "buffer %u: constant range exceeds the constants section", b);
  }

  bool same = s->planned;
  for (size_t i = 0; same && i < m->inputs.size(); ++i)
    for (int32_t d = 0; d < m->inputs[i].rank; ++d)
      if (s->plannedDims[i * V4F_MAX_RANK + d] != inputs[i].dims[d]) same = false;
  if (same) return nullptr;

  size_t n = 0;
  for (uint32_t b = 0; b < nbuf; ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    if (buf->kind() != fb::BufferKind::Transient) continue;
    v4f::rt::TransientBuffer& t = s->transients[n++];
    t.buffer = b;
    t.size = static_cast<uint64_t>(reg(s, buf->size_reg()));
    t.firstUse = buf->first_use();
    t.lastUse = buf->last_use();
    t.offset = 0;
  }
  s->planned = false;
  uint64_t arenaSize = 0;
  if (v4f_status_t st = v4f::rt::planArena(s->transients.data(), n, s->planScratch.data(), &arenaSize)) return st;
  if (s->maxArenaBytes && arenaSize > s->maxArenaBytes)
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED,
                      "these input shapes need a %llu-byte arena, over the session's max_arena_bytes %llu",
                      static_cast<unsigned long long>(arenaSize), static_cast<unsigned long long>(s->maxArenaBytes));
  if (arenaSize > s->arenaCapacity) {
    s->allocator.free(s->arena);
    s->arena = nullptr;
    s->arenaCapacity = 0;
    if (arenaSize > SIZE_MAX || !(s->arena = s->allocator.allocLarge(static_cast<size_t>(arenaSize))))
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "cannot allocate the %llu-byte arena for these input shapes",
                        static_cast<unsigned long long>(arenaSize));
    s->arenaCapacity = arenaSize;
  }
  s->arenaSize = arenaSize;
  for (size_t k = 0; k < n; ++k) s->transientOffset[s->transients[k].buffer] = s->transients[k].offset;
  for (size_t i = 0; i < m->inputs.size(); ++i)
    for (int32_t d = 0; d < m->inputs[i].rank; ++d) s->plannedDims[i * V4F_MAX_RANK + d] = inputs[i].dims[d];
  s->planned = true;
  return nullptr;
}

// Fills `job` for dispatch `d`: the workgroup grid, bindings with their
// lengths, push constants and per-worker scratch (grown when this dispatch
// needs more than any before it). A zero-sized grid leaves workgroupCount 0.
v4f_status_t prepareJob(v4f_session_s* s, uint32_t d, const fb::Dispatch* dis, v4f::rt::DispatchJob* job) {
  const auto* grid = dis->workgroup_count();
  int64_t total = 1;
  for (uint32_t j = 0; j < 3; ++j) {
    int64_t c = j < grid->size() ? reg(s, grid->Get(j)) : 1;
    if (c < 0)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                        "dispatch %u '%s': negative workgroup count %lld for these input shapes", d,
                        v4f::rt::str(dis->name()), static_cast<long long>(c));
    job->state.workgroup_count[j] = c;
    if (__builtin_mul_overflow(total, c, &total))
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "dispatch %u '%s': the workgroup grid overflows", d,
                        v4f::rt::str(dis->name()));
  }
  job->workgroupCount = total;
  if (total == 0) return nullptr;
  uint32_t nb = dis->bindings() ? dis->bindings()->size() : 0;
  for (uint32_t j = 0; j < nb; ++j) {
    uint32_t b = dis->bindings()->Get(j);
    s->bindingScratch[j] = s->bufferPtrs[b];
    s->lengthScratch[j] = s->capacity[b];
  }
  uint32_t np = dis->push_constants() ? dis->push_constants()->size() : 0;
  for (uint32_t j = 0; j < np; ++j) s->pushScratch[j] = reg(s, dis->push_constants()->Get(j));
  job->state.bindings = s->bindingScratch.data();
  job->state.binding_lengths = s->lengthScratch.data();
  job->state.binding_count = nb;
  job->state.push_constants = s->pushScratch.data();
  job->state.push_constant_count = np;
  int64_t scratch = reg(s, dis->scratch_size());
  if (scratch < 0)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "dispatch %u '%s': negative scratch size %lld", d,
                      v4f::rt::str(dis->name()), static_cast<long long>(scratch));
  uint64_t stride = v4f::rt::alignUp64(static_cast<uint64_t>(scratch));
  if (stride > s->scratchStride) {
    uint64_t bytes;
    s->allocator.free(s->scratch);
    s->scratch = nullptr;
    s->scratchStride = 0;
    if (!v4f::rt::checkedMul(stride, static_cast<uint64_t>(s->pool->threadCount()), &bytes) || bytes > SIZE_MAX ||
        !(s->scratch = s->allocator.allocLarge(static_cast<size_t>(bytes))))
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED,
                        "dispatch %u '%s': cannot allocate %llu bytes of scratch per worker", d,
                        v4f::rt::str(dis->name()), static_cast<unsigned long long>(stride));
    s->scratchStride = stride;
  }
  job->state.scratch_size = static_cast<uint64_t>(scratch);
  job->scratch = static_cast<uint8_t*>(s->scratch);
  job->scratchStride = scratch ? s->scratchStride : 0;
  return nullptr;
}

v4f_status_t runDispatches(v4f_session_s* s, const v4f_tensor_t* inputs, v4f_tensor_t* outputs) {
  const v4f_model_s* m = s->model;
  const fb::Manifest* mf = manifestOf(s);
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  for (uint32_t b = 0; b < nbuf; ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    void* p = nullptr;
    switch (buf->kind()) {
    case fb::BufferKind::Input: p = inputs[buf->index()].data; break;
    case fb::BufferKind::Output: p = outputs[buf->index()].data; break;
    case fb::BufferKind::Constant: p = const_cast<uint8_t*>(m->constants + buf->constant_offset()); break;
    case fb::BufferKind::Transient: p = static_cast<uint8_t*>(s->arena) + s->transientOffset[b]; break;
    default: break;
    }
    s->bufferPtrs[b] = p;
    uint64_t cap;
    if (buf->kind() == fb::BufferKind::Output)
      cap = outputs[buf->index()].byte_size;
    else if (buf->kind() == fb::BufferKind::Input)
      cap = inputs[buf->index()].byte_size;
    else
      cap = static_cast<uint64_t>(reg(s, buf->size_reg()));
    s->capacity[b] = cap;
    // Kernels address a buffer up to its planned size: a caller tensor must
    // hold at least that much (a plan that sizes an input or output buffer
    // beyond its signature's shape is refused here, not overrun).
    if (buf->kind() == fb::BufferKind::Input || buf->kind() == fb::BufferKind::Output) {
      int64_t planned = reg(s, buf->size_reg());
      if (planned < 0 || static_cast<uint64_t>(planned) > cap)
        return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                          "buffer %u (%s %u) is planned for %lld bytes but the tensor holds %llu", b,
                          buf->kind() == fb::BufferKind::Input ? "input" : "output", buf->index(),
                          static_cast<long long>(planned), static_cast<unsigned long long>(cap));
    }
  }
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
  s->profileCount = 0;
  if (s->profiling) s->runStartNs = v4f::rt::nowNs();
  uint32_t nloops = mf->loops() ? mf->loops()->size() : 0;
  if (s->hasDataValues)
    for (size_t r = 0; r < s->dataCached.size(); ++r) s->dataCached[r] = false;
  for (uint32_t l = 0; l < nloops; ++l) {
    s->loopIndex[l] = 0;
    s->loopCount[l] = -1;
  }
  // Re-evaluates the shape program once `dispatchesRun` dispatches (of this
  // iteration) have run; every buffer must still fit its planned capacity.
  auto refresh = [&](uint32_t dispatchesRun, const char* after) -> v4f_status_t {
    v4f::rt::DataValues dv{s->bufferPtrs.data(), dispatchesRun,       s->dataCache.data(), s->dataCached.data(),
                           s->skipped.data(),    s->loopIndex.data(), s->loopCount.data(), s->provisional.data()};
    if (v4f_status_t st = v4f::rt::evalShapeProgram(mf, inputs, s->regs.data(), nullptr, &dv)) return st;
    for (uint32_t b = 0; b < nbuf; ++b) {
      int64_t size = reg(s, mf->buffers()->Get(b)->size_reg());
      if (size < 0 || static_cast<uint64_t>(size) > s->capacity[b])
        return makeStatus(V4F_STATUS_KERNEL_ERROR,
                          "%s, buffer %u needs %lld bytes but %llu were planned "
                          "from the bounds of data-dependent sizes",
                          after, b, static_cast<long long>(size), static_cast<unsigned long long>(s->capacity[b]));
    }
    return nullptr;
  };
  if (s->cuda)
    if (v4f_status_t st = v4f::rt::cudaBeginRun(s)) return st;
  char where[160];
  v4f::rt::DispatchJob job;
  uint32_t nextLoop = 0;          // the next loop to enter
  const fb::Loop* loop = nullptr; // the loop running, if any
  int64_t trips = 0;
  for (uint32_t d = 0; d < ndis;) {
    if (!loop && nextLoop < nloops && mf->loops()->Get(nextLoop)->begin() == d) {
      // Entering a loop: its trip count is final once the dispatches before
      // it have run.
      const fb::Loop* l = mf->loops()->Get(nextLoop);
      trips = reg(s, l->trip_count());
      // A loop on the untaken side of a run-time If (its first dispatch is
      // guarded off) runs no iteration: its count may be a stale bound.
      const fb::Dispatch* first = mf->dispatches()->Get(l->begin());
      if (first->guard() >= 0 && reg(s, static_cast<uint32_t>(first->guard())) == 0) trips = 0;
      // A while loop: its condition ends it within the bound (checked below).
      if (l->unbounded() && trips > l->max_iterations()) trips = l->max_iterations();
      if (trips > l->max_iterations())
        // A count computed by a kernel arrives clamped to the bound + 1.
        return makeStatus(V4F_STATUS_KERNEL_ERROR,
                          "%s: the trip count is %lld%s, above the bound of %lld iterations it was "
                          "compiled for (v4fc compile --max-loop-iterations)",
                          v4f::rt::str(l->name()), static_cast<long long>(trips),
                          trips == l->max_iterations() + 1 ? " or more" : "",
                          static_cast<long long>(l->max_iterations()));
      if (trips <= 0) {
        // No iteration: the body is skipped (DataValues it produces keep their bounds).
        for (uint32_t k = l->begin(); k < l->end(); ++k) s->skipped[k] = true;
        s->loopCount[nextLoop] = 0;
        std::snprintf(where, sizeof where, "after %s", v4f::rt::str(l->name()));
        if (v4f_status_t st = refresh(l->end(), where)) return st;
        d = l->end();
        ++nextLoop;
        continue;
      }
      loop = l;
    }
    const fb::Dispatch* dis = mf->dispatches()->Get(d);
    // A guarded dispatch (one side of a run-time If) runs only when its
    // guard register is non-zero; its grid and sizes are not even checked.
    s->skipped[d] = dis->guard() >= 0 && reg(s, static_cast<uint32_t>(dis->guard())) == 0;
    if (!s->skipped[d] && s->cuda && v4f::rt::isCudaExecutable(mf, dis->executable())) {
      if (v4f_status_t st = v4f::rt::cudaDispatch(s, d, dis)) return st;
    } else if (!s->skipped[d]) {
      if (v4f_status_t st = prepareJob(s, d, dis, &job)) return st;
      if (job.workgroupCount != 0) {
        const v4f::rt::LoadedExecutable& exe = m->executables[dis->executable()];
        job.fn = exe.entryPoints[dis->entry_point()];
        uint64_t t0 = s->profiling ? v4f::rt::nowNs() : 0;
        int32_t rc = v4f::rt::runOnPool(s, &job);
        if (s->profiling) {
          uint64_t t1 = v4f::rt::nowNs();
          v4f_dispatch_profile_t e{};
          e.name = v4f::rt::str(dis->name());
          e.kernel = mf->executables()->Get(dis->executable())->entry_points()->Get(dis->entry_point())->c_str();
          e.dispatch_index = d;
          e.workgroups = job.workgroupCount;
          e.start_ns = t0 - s->runStartNs;
          e.duration_ns = t1 - t0;
          e.flops = dis->flops() >= 0 ? static_cast<double>(reg(s, static_cast<uint32_t>(dis->flops()))) : -1.0;
          v4f::rt::recordProfile(s, e);
        }
        if (rc != 0)
          return makeStatus(
              V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s' (kernel '%s') failed with code %d%s at workgroup %lld", d,
              v4f::rt::str(dis->name()),
              mf->executables()->Get(dis->executable())->entry_points()->Get(dis->entry_point())->c_str(), rc,
              rc == V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE ? " (index out of range)"
              : rc == V4F_KERNEL_ERROR_SHAPE_MISMATCH   ? " (operand dims disagree)"
              : rc == V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE
                  ? " (the kernel refused its bindings: a buffer smaller than it accesses, or binding or "
                    "push-constant counts not its own -- an inconsistent plan)"
                  : "",
              static_cast<long long>(job.failedWorkgroup.load()));
      }
      if (s->hasDataValues && s->refreshAfter[d]) {
        // Sizes that depend on data become known as their producers run; the
        // buffers were planned for the bounds, so they must still fit.
        std::snprintf(where, sizeof where, "after dispatch %u '%s'", d, v4f::rt::str(dis->name()));
        if (v4f_status_t st = refresh(d + 1, where)) return st;
      }
    }
    ++d;
    if (loop && d == loop->end()) {
      uint32_t l = nextLoop;
      // A condition the body computes (read back after its last dispatch) ends it early.
      bool stop = loop->cond() >= 0 && reg(s, static_cast<uint32_t>(loop->cond())) == 0;
      if (!stop && loop->unbounded() && s->loopIndex[l] + 1 >= loop->max_iterations())
        return makeStatus(V4F_STATUS_KERNEL_ERROR,
                          "%s: its condition still holds after %lld iterations, the bound it was compiled for "
                          "(v4fc compile --max-loop-iterations)",
                          v4f::rt::str(loop->name()), static_cast<long long>(loop->max_iterations()));
      if (!stop && s->loopIndex[l] + 1 < trips) {
        // The next iteration: registers that depend on the iteration (and
        // data the body computes) are re-evaluated before the body reruns.
        ++s->loopIndex[l];
        if (mf->shape_program())
          for (uint32_t i = 0; i < mf->shape_program()->size(); ++i) {
            const fb::ShapeInstr* ins = mf->shape_program()->Get(i);
            if (ins->op() != fb::ShapeOp::DataValue) continue;
            uint32_t producer = mf->buffers()->Get(ins->a())->first_use();
            if (producer >= loop->begin() && producer < loop->end()) s->dataCached[i] = false;
          }
        std::snprintf(where, sizeof where, "in iteration %lld of %s", static_cast<long long>(s->loopIndex[l]),
                      v4f::rt::str(loop->name()));
        if (v4f_status_t st = refresh(loop->begin(), where)) return st;
        d = loop->begin();
      } else {
        // Sizes that follow the iterations run (scan outputs) are now final.
        s->loopCount[l] = s->loopIndex[l] + 1;
        std::snprintf(where, sizeof where, "after %s", v4f::rt::str(loop->name()));
        if (v4f_status_t st = refresh(loop->end(), where)) return st;
        loop = nullptr;
        ++nextLoop;
      }
    }
  }
  if (s->cuda)
    if (v4f_status_t st = v4f::rt::cudaEndRun(s)) return st;
  if (s->hasDataValues) {
    // Outputs report the dims the data gave.
    for (size_t i = 0; i < m->outputs.size(); ++i) {
      const fb::TensorSig* sig = mf->outputs()->Get(static_cast<uint32_t>(i));
      for (int32_t d = 0; d < m->outputs[i].rank; ++d)
        outputs[i].dims[d] = reg(s, sig->dim_regs()->Get(static_cast<uint32_t>(d)));
    }
  }
  return nullptr;
}

// The run's inputs with every fed-back input replaced by the last run's
// output (in the session's buffer, no copy); `count` is the model's.
const v4f_tensor_t* substituteFeedback(v4f_session_s* s, const v4f_tensor_t* inputs, size_t count) {
  for (size_t i = 0; i < count; ++i) s->feedInputs[i] = inputs[i];
  for (size_t k = 0; k < s->feedbackCount; ++k) {
    const auto& f = s->feedback[k];
    if (!f.hasState) continue;
    v4f_tensor_t& t = s->feedInputs[f.input];
    t.data = f.buf[f.cur];
    t.byte_size = static_cast<size_t>(f.cap[f.cur]);
    t.dtype = s->model->inputs[f.input].dtype;
    t.rank = f.rank;
    for (int32_t d = 0; d < V4F_MAX_RANK; ++d) t.dims[d] = f.dims[d];
  }
  return s->feedInputs.data();
}

void destroySession(v4f_session_s* s) {
  if (!s) return;
  s->ownPool.stop();
  v4f::rt::cudaSessionDestroy(s->cuda);
  s->cuda = nullptr;
  if (s->sharedPool) v4f::rt::releaseSharedPool(s->sharedPool);
  s->allocator.free(s->arena);
  s->allocator.free(s->scratch);
  v4f::rt::Allocator a = s->allocator;
  s->regs.reset();
  s->bufferPtrs.reset();
  s->bindingScratch.reset();
  s->lengthScratch.reset();
  s->pushScratch.reset();
  s->transients.reset();
  s->planScratch.reset();
  s->transientOffset.reset();
  s->plannedDims.reset();
  s->capacity.reset();
  s->dataCache.reset();
  s->dataCached.reset();
  s->skipped.reset();
  s->loopIndex.reset();
  s->loopCount.reset();
  s->provisional.reset();
  for (size_t i = 0; i < s->feedbackCount; ++i)
    for (void* p : s->feedback[i].buf) s->allocator.free(p);
  s->feedback.reset();
  s->feedInputs.reset();
  a.destroy(s);
}

} // namespace

extern "C" {

V4F_API void v4f_session_options_init(v4f_session_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

V4F_API v4f_status_t v4f_session_create(v4f_model_t* model, const v4f_session_options_t* options,
                                        const v4f_allocator_t* allocator, v4f_session_t** out_session) {
  if (!out_session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "out_session is NULL");
  *out_session = nullptr;
  if (!model) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "model is NULL");
  int32_t threads = 0;
  v4f_thread_pool_s* shared = nullptr;
  uint64_t maxArena = 0;
  int32_t device = V4F_DEVICE_AUTO, ordinal = 0;
  if (options) {
    if (options->struct_size < offsetof(v4f_session_options_t, thread_count) + sizeof(int32_t))
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session options: struct_size is not set");
    threads = options->thread_count;
    if (options->struct_size >= offsetof(v4f_session_options_t, thread_pool) + sizeof(void*))
      shared = options->thread_pool;
    if (options->struct_size >= offsetof(v4f_session_options_t, max_arena_bytes) + sizeof(uint64_t))
      maxArena = options->max_arena_bytes;
    if (options->struct_size >= offsetof(v4f_session_options_t, device_ordinal) + sizeof(int32_t)) {
      device = options->device;
      ordinal = options->device_ordinal;
    }
  }
  if (device != V4F_DEVICE_AUTO && device != V4F_DEVICE_CPU && device != V4F_DEVICE_CUDA)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session options: unknown device %d", device);
  bool hasCuda = false;
  if (const auto* exes = model->manifest->executables())
    for (uint32_t i = 0; i < exes->size(); ++i)
      if (exes->Get(i)->target() == fb::ExecutableTarget::Cuda) hasCuda = true;
  if (hasCuda && device == V4F_DEVICE_CPU)
    return makeStatus(V4F_STATUS_UNSUPPORTED,
                      "the artifact has GPU dispatches (compiled with --target including cuda), which have no CPU "
                      "kernels: run it on a CUDA device, or recompile with v4fc --target=cpu");
  if (!hasCuda && device == V4F_DEVICE_CUDA)
    return makeStatus(V4F_STATUS_UNSUPPORTED,
                      "the artifact has no GPU kernels (compiled for the CPU only): recompile with v4fc "
                      "--target=cuda or --target=cpu,cuda to run it on a GPU");
  if (shared && threads != 0 && threads != shared->pool.threadCount())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                      "thread_count %d differs from the shared thread pool's %d threads (use 0)", threads,
                      shared->pool.threadCount());
  if (threads < 0 || threads > 1024)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "thread_count %d is out of range [0, 1024]", threads);
  if (threads == 0) threads = v4f::rt::onlineCoreCount();

  v4f::rt::Allocator alloc(allocator);
  v4f_session_s* s = alloc.create<v4f_session_s>();
  if (!s) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  s->allocator = alloc;
  s->model = model;
  s->maxArenaBytes = maxArena;
  const fb::Manifest* mf = model->manifest;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  uint32_t maxBindings = 0, maxPush = 0, ntrans = 0;
  if (mf->dispatches())
    for (uint32_t d = 0; d < mf->dispatches()->size(); ++d) {
      const fb::Dispatch* dis = mf->dispatches()->Get(d);
      if (dis->bindings() && dis->bindings()->size() > maxBindings) maxBindings = dis->bindings()->size();
      if (dis->push_constants() && dis->push_constants()->size() > maxPush) maxPush = dis->push_constants()->size();
    }
  for (uint32_t b = 0; b < nbuf; ++b)
    if (mf->buffers()->Get(b)->kind() == fb::BufferKind::Transient) ++ntrans;
  bool ok =
      s->regs.allocate(s->allocator, model->registerCount) && s->bufferPtrs.allocate(s->allocator, nbuf) &&
      s->bindingScratch.allocate(s->allocator, maxBindings ? maxBindings : 1) &&
      s->lengthScratch.allocate(s->allocator, maxBindings ? maxBindings : 1) &&
      s->pushScratch.allocate(s->allocator, maxPush ? maxPush : 1) && s->transients.allocate(s->allocator, ntrans) &&
      s->planScratch.allocate(s->allocator, size_t(3) * ntrans) && s->transientOffset.allocate(s->allocator, nbuf) &&
      s->plannedDims.allocate(s->allocator, model->inputs.size() * V4F_MAX_RANK) &&
      s->capacity.allocate(s->allocator, nbuf ? nbuf : 1) &&
      s->dataCache.allocate(s->allocator, model->registerCount ? model->registerCount : 1) &&
      s->dataCached.allocate(s->allocator, model->registerCount ? model->registerCount : 1) &&
      s->skipped.allocate(s->allocator, mf->dispatches() && mf->dispatches()->size() ? mf->dispatches()->size() : 1) &&
      s->refreshAfter.allocate(s->allocator,
                               mf->dispatches() && mf->dispatches()->size() ? mf->dispatches()->size() : 1) &&
      s->feedback.allocate(s->allocator, model->outputs.size() ? model->outputs.size() : 1) &&
      s->loopIndex.allocate(s->allocator, mf->loops() && mf->loops()->size() ? mf->loops()->size() : 1) &&
      s->loopCount.allocate(s->allocator, mf->loops() && mf->loops()->size() ? mf->loops()->size() : 1) &&
      s->provisional.allocate(s->allocator, model->registerCount ? model->registerCount : 1) &&
      s->feedInputs.allocate(s->allocator, model->inputs.size() ? model->inputs.size() : 1);
  if (!ok) {
    destroySession(s);
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory creating the session");
  }
  if (mf->shape_program())
    for (uint32_t i = 0; i < mf->shape_program()->size(); ++i)
      if (mf->shape_program()->Get(i)->op() == fb::ShapeOp::DataValue ||
          mf->shape_program()->Get(i)->op() == fb::ShapeOp::LoopCount)
        s->hasDataValues = true;
  // Registers change within a run only when a DataValue's buffer is written
  // (and at loop boundaries, refreshed there): only a dispatch that binds
  // such a buffer re-evaluates the program after it (a loop of many small
  // dispatches with a scan output re-ran the whole program after each).
  {
    uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
    uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
    v4f::rt::Array<bool> read; // per buffer: a DataValue reads it
    if (s->hasDataValues && mf->shape_program() && nbuf) {
      if (!read.allocate(s->allocator, nbuf)) {
        destroySession(s);
        return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory creating the session");
      }
      for (uint32_t i = 0; i < mf->shape_program()->size(); ++i) {
        const fb::ShapeInstr* ins = mf->shape_program()->Get(i);
        if (ins->op() == fb::ShapeOp::DataValue && ins->a() < nbuf) read[ins->a()] = true;
      }
    }
    for (uint32_t d = 0; d < ndis; ++d) {
      s->refreshAfter[d] = false;
      const auto* bindings = mf->dispatches()->Get(d)->bindings();
      if (read.size() && bindings)
        for (uint32_t b : *bindings)
          if (b < nbuf && read[b]) s->refreshAfter[d] = true;
    }
  }
  if (shared) {
    shared->refs.fetch_add(1);
    s->sharedPool = shared;
    s->pool = &shared->pool;
  } else if (v4f_status_t st = s->ownPool.start(s->allocator, threads)) {
    destroySession(s);
    return st;
  }
  if (hasCuda) {
    v4f::rt::CudaSession* c = nullptr;
    if (v4f_status_t st = v4f::rt::cudaSessionCreate(s, ordinal, &c)) {
      destroySession(s);
      return st;
    }
  }
  *out_session = s;
  return nullptr;
}

V4F_API void v4f_session_release(v4f_session_t* session) { destroySession(session); }

V4F_API int32_t v4f_session_thread_count(const v4f_session_t* session) {
  return session ? session->pool->threadCount() : 0;
}

V4F_API size_t v4f_session_peak_memory(const v4f_session_t* session) {
  return session && session->planned ? static_cast<size_t>(session->arenaSize) : 0;
}

V4F_API v4f_status_t v4f_session_resolve_output_shapes(v4f_session_t* session, const v4f_tensor_t* inputs,
                                                       size_t input_count, v4f_tensor_t* outputs, size_t output_count) {
  if (!session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session is NULL");
  BusyGuard guard(session->busy);
  if (!guard.acquired) return sessionBusy();
  if (session->feedbackCount && input_count == session->model->inputs.size() && (inputs || !input_count))
    inputs = substituteFeedback(session, inputs, input_count);
  if (v4f_status_t st = checkInputs(session, inputs, input_count, false)) return st;
  Array<uint64_t> needed;
  if (!needed.allocate(session->allocator, output_count))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (v4f_status_t st = resolveOutputs(session, inputs, outputs, output_count, needed.data())) return st;
  for (size_t i = 0; i < output_count; ++i) outputs[i].byte_size = static_cast<size_t>(needed[i]);
  return planBuffers(session, inputs);
}

V4F_API v4f_status_t v4f_session_bind_feedback(v4f_session_t* session, size_t output_index, size_t input_index) {
  if (!session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session is NULL");
  BusyGuard guard(session->busy);
  if (!guard.acquired) return sessionBusy();
  const v4f_model_s* m = session->model;
  if (output_index >= m->outputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "feedback: output %zu does not exist (the model has %zu)",
                      output_index, m->outputs.size());
  if (input_index >= m->inputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "feedback: input %zu does not exist (the model has %zu)",
                      input_index, m->inputs.size());
  const v4f_tensor_info_t &out = m->outputs[output_index], &in = m->inputs[input_index];
  if (out.dtype != in.dtype || out.rank != in.rank)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                      "feedback: output %zu '%s' (%s, rank %d) cannot feed input %zu '%s' (%s, rank %d)", output_index,
                      out.name, v4f_dtype_name(out.dtype), out.rank, input_index, in.name, v4f_dtype_name(in.dtype),
                      in.rank);
  for (size_t i = 0; i < session->feedbackCount; ++i) {
    const auto& f = session->feedback[i];
    if (f.output == output_index || f.input == input_index)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                        "feedback: output %zu or input %zu is already bound (output %u -> input %u)", output_index,
                        input_index, f.output, f.input);
  }
  auto& f = session->feedback[session->feedbackCount++];
  f = v4f_session_s::Feedback();
  f.output = static_cast<uint32_t>(output_index);
  f.input = static_cast<uint32_t>(input_index);
  return nullptr;
}

V4F_API v4f_status_t v4f_session_reset_feedback(v4f_session_t* session) {
  if (!session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session is NULL");
  BusyGuard guard(session->busy);
  if (!guard.acquired) return sessionBusy();
  for (size_t i = 0; i < session->feedbackCount; ++i) session->feedback[i].hasState = false;
  return nullptr;
}

V4F_API v4f_status_t v4f_session_run(v4f_session_t* session, const v4f_tensor_t* inputs, size_t input_count,
                                     v4f_tensor_t* outputs, size_t output_count) {
  if (!session) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "session is NULL");
  BusyGuard guard(session->busy);
  if (!guard.acquired) return sessionBusy();
  const v4f_model_s* model = session->model;
  bool feeding = session->feedbackCount > 0 && input_count == model->inputs.size() &&
                 output_count == model->outputs.size() && (inputs || !input_count) && outputs;
  if (feeding) inputs = substituteFeedback(session, inputs, input_count);
  if (v4f_status_t st = checkInputs(session, inputs, input_count, true)) return st;
  Array<uint64_t> needed;
  if (!needed.allocate(session->allocator, output_count))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (v4f_status_t st = resolveOutputs(session, inputs, outputs, output_count, needed.data())) return st;
  if (feeding)
    // Fed-back outputs go to the buffer the last run did not write, grown
    // (doubling) when the dims need more.
    for (size_t k = 0; k < session->feedbackCount; ++k) {
      auto& f = session->feedback[k];
      int next = f.hasState ? 1 - f.cur : f.cur;
      uint64_t want = needed[f.output] ? needed[f.output] : 1;
      if (f.cap[next] < want) {
        uint64_t cap = f.cap[next] * 2 > want ? f.cap[next] * 2 : want;
        void* p = cap <= SIZE_MAX ? session->allocator.alloc(static_cast<size_t>(cap), 64) : nullptr;
        if (!p)
          return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "feedback: out of memory for %llu bytes of output %u '%s'",
                            static_cast<unsigned long long>(cap), f.output, model->outputs[f.output].name);
        session->allocator.free(f.buf[next]);
        f.buf[next] = p;
        f.cap[next] = cap;
      }
      outputs[f.output].data = f.buf[next];
      outputs[f.output].byte_size = static_cast<size_t>(f.cap[next]);
    }
  const fb::Manifest* mf = manifestOf(session);
  for (size_t i = 0; i < output_count; ++i) {
    const char* name = session->model->outputs[i].name;
    if (outputs[i].byte_size < needed[i])
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "output %zu '%s': byte_size is %zu, but %llu bytes are needed", i,
                        name, outputs[i].byte_size, static_cast<unsigned long long>(needed[i]));
    if (!outputs[i].data && needed[i])
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "output %zu '%s': data is NULL", i, name);
  }
  // An input buffer's planned size may exceed the tensor bytes (padding).
  for (size_t i = 0; i < input_count; ++i) {
    uint32_t b = mf->inputs()->Get(static_cast<uint32_t>(i))->buffer();
    int64_t size = session->regs[mf->buffers()->Get(b)->size_reg()];
    if (size > 0 && static_cast<uint64_t>(size) > inputs[i].byte_size)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input %zu '%s': byte_size is %zu, but the model reads %lld bytes",
                        i, session->model->inputs[i].name, inputs[i].byte_size, static_cast<long long>(size));
  }
  if (v4f_status_t st = planBuffers(session, inputs)) return st;
  bool replayed = false;
  if (session->cuda)
    if (v4f_status_t st = v4f::rt::cudaRunGraph(session, inputs, outputs, &replayed)) return st;
  if (!replayed)
    if (v4f_status_t st = runDispatches(session, inputs, outputs)) return st;
  if (feeding)
    for (size_t k = 0; k < session->feedbackCount; ++k) {
      auto& f = session->feedback[k];
      if (f.hasState) f.cur = 1 - f.cur;
      f.hasState = true;
      f.rank = outputs[f.output].rank;
      for (int32_t d = 0; d < V4F_MAX_RANK; ++d) f.dims[d] = outputs[f.output].dims[d];
    }
  return nullptr;
}

} // extern "C"
