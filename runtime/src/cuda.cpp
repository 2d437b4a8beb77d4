// cuda.cpp - GPU dispatches through the CUDA driver API, opened with dlopen.
//
// Device memory mirrors the host plan: the device arena has the host
// arena's layout (the same memory plan, the same offsets), the constants
// section is uploaded once per session, and every input or output buffer a
// GPU dispatch touches gets a device buffer. Transfer dispatches (inserted
// by the compiler at placement borders) copy between the two sides; kernel
// dispatches launch on the session's stream. A plan that runs entirely on
// the GPU with static shapes is captured once as a CUDA Graph and replayed.
#include "cuda.h"

#include "session.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace v4f {
namespace rt {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUevent = struct CUevent_st*;

constexpr int kAttrComputeCapabilityMajor = 75, kAttrComputeCapabilityMinor = 76;
constexpr int kStreamNonBlocking = 1, kCaptureModeRelaxed = 2;

struct Driver {
  void* handle = nullptr;
  char error[512] = {0};
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGetCount)(int*) = nullptr;
  CUresult (*deviceGet)(CUdevice*, int) = nullptr;
  CUresult (*deviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*deviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*moduleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*moduleUnload)(CUmodule) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*memAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*memFree)(CUdeviceptr) = nullptr;
  CUresult (*memHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*memFreeHost)(void*) = nullptr;
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*memcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*memsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*streamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*streamDestroy)(CUstream) = nullptr;
  CUresult (*streamSynchronize)(CUstream) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void**, void**) = nullptr;
  CUresult (*getErrorString)(CUresult, const char**) = nullptr;
  CUresult (*streamBeginCapture)(CUstream, int) = nullptr;
  CUresult (*streamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*graphInstantiate)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*graphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*graphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*graphDestroy)(CUgraph) = nullptr;
  CUresult (*eventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*eventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*eventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*eventDestroy)(CUevent) = nullptr;
};

Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* path = std::getenv("V4F_CUDA_DRIVER");
    d.handle = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char* why = dlerror();
      std::snprintf(d.error, sizeof d.error,
                    "no NVIDIA driver: %s could not be opened (%s); this artifact has GPU dispatches, so it needs "
                    "a machine with an NVIDIA GPU and driver (or recompile with v4fc --target=cpu)",
                    path && *path ? path : "libcuda.so.1", why ? why : "not found");
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(d.handle, name));
      if (!fn && !d.error[0]) std::snprintf(d.error, sizeof d.error, "the NVIDIA driver lacks %s (too old?)", name);
    };
    sym(d.init, "cuInit");
    sym(d.deviceGetCount, "cuDeviceGetCount");
    sym(d.deviceGet, "cuDeviceGet");
    sym(d.deviceGetAttribute, "cuDeviceGetAttribute");
    sym(d.deviceGetName, "cuDeviceGetName");
    sym(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(d.ctxSetCurrent, "cuCtxSetCurrent");
    sym(d.moduleLoadData, "cuModuleLoadData");
    sym(d.moduleUnload, "cuModuleUnload");
    sym(d.moduleGetFunction, "cuModuleGetFunction");
    sym(d.memAlloc, "cuMemAlloc_v2");
    sym(d.memFree, "cuMemFree_v2");
    sym(d.memHostAlloc, "cuMemHostAlloc");
    sym(d.memFreeHost, "cuMemFreeHost");
    sym(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    sym(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    sym(d.memsetD32Async, "cuMemsetD32Async");
    sym(d.streamCreate, "cuStreamCreate");
    sym(d.streamDestroy, "cuStreamDestroy_v2");
    sym(d.streamSynchronize, "cuStreamSynchronize");
    sym(d.launchKernel, "cuLaunchKernel");
    sym(d.getErrorString, "cuGetErrorString");
    sym(d.streamBeginCapture, "cuStreamBeginCapture_v2");
    sym(d.streamEndCapture, "cuStreamEndCapture");
    sym(d.graphInstantiate, "cuGraphInstantiateWithFlags");
    sym(d.graphLaunch, "cuGraphLaunch");
    sym(d.graphExecDestroy, "cuGraphExecDestroy");
    sym(d.graphDestroy, "cuGraphDestroy");
    sym(d.eventCreate, "cuEventCreate");
    sym(d.eventRecord, "cuEventRecord");
    sym(d.eventElapsedTime, "cuEventElapsedTime");
    sym(d.eventDestroy, "cuEventDestroy_v2");
    if (d.error[0]) return;
    CUresult r = d.init(0);
    if (r != 0) {
      const char* s = nullptr;
      d.getErrorString(r, &s);
      std::snprintf(d.error, sizeof d.error, "the NVIDIA driver failed to initialize (cuInit: %s)", s ? s : "unknown");
    }
  });
  return d;
}

const char* cuError(CUresult r) {
  const char* s = nullptr;
  if (driver().getErrorString) driver().getErrorString(r, &s);
  return s ? s : "unknown CUDA error";
}

uint32_t rd32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t rd64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

} // namespace

struct CudaSession {
  Allocator allocator;
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool retained = false;
  CUstream stream = nullptr;
  int arch = 0;
  char name[128] = {0};
  Array<CUmodule> modules;      // per manifest executable (null for CPU ones)
  Array<CUfunction*> functions; // per manifest executable: one per entry point
  CUdeviceptr constants = 0;
  CUdeviceptr arena = 0;
  uint64_t arenaCap = 0;
  Array<CUdeviceptr> io; // per buffer: device copy of an input/output
  Array<uint64_t> ioCap;
  Array<bool> onGpu; // per buffer: a GPU dispatch binds it
  CUdeviceptr error = 0;
  uint32_t* errorHost = nullptr; // pinned
  // CUDA Graphs (every dispatch on the GPU, static shapes).
  bool graphEligible = false;
  bool capturing = false;
  CUgraphExec graph = nullptr;
  uint64_t generation = 0, graphGeneration = ~0ull; // bumped when a device or pinned buffer moves
  Array<void*> pinned;                              // per buffer: pinned staging of an input/output
  Array<uint64_t> pinnedCap;
  v4f_cuda_args_t args;
  // Profiling (v4f_session_set_profiling): an event before each GPU
  // dispatch of the run and one after the last, read once the stream is done.
  Array<CUevent> events;    // ndis + 1
  Array<uint32_t> profiled; // dispatch indices in the order they ran
  uint32_t profiledCount = 0;
};

v4f_status_t verifyCudaModule(const uint8_t* data, uint64_t size, uint32_t entryCount, uint32_t e) {
  if (size < sizeof(v4f_cuda_module_header_t) || std::memcmp(data, V4F_CUDA_MODULE_MAGIC, 8) != 0)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: not a v4f CUDA module (bad magic or too short)", e);
  uint32_t entries = rd32(data + 8), images = rd32(data + 12), words = rd32(data + 16);
  if (entries != entryCount)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                      "executable %u: the CUDA module has %u interface tables for %u entry points", e, entries,
                      entryCount);
  if (images == 0 || images > 64 || words > (1u << 24))
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                      "executable %u: the CUDA module has %u images and %u interface words", e, images, words);
  uint64_t tableEnd =
      sizeof(v4f_cuda_module_header_t) + uint64_t(images) * sizeof(v4f_cuda_image_t) + uint64_t(words) * 4;
  if (tableEnd > size)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: the CUDA module's tables exceed its section", e);
  for (uint32_t i = 0; i < images; ++i) {
    const uint8_t* im = data + sizeof(v4f_cuda_module_header_t) + i * sizeof(v4f_cuda_image_t);
    uint32_t kind = rd32(im);
    uint64_t off = rd64(im + 8), n = rd64(im + 16);
    if ((kind != V4F_CUDA_IMAGE_CUBIN && kind != V4F_CUDA_IMAGE_PTX) || n == 0 || off < tableEnd || off > size ||
        n > size - off)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: CUDA image %u is out of bounds or of unknown kind",
                        e, i);
    if (kind == V4F_CUDA_IMAGE_PTX && data[off + n - 1] != 0)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: CUDA image %u (PTX) is not NUL-terminated", e, i);
  }
  const uint8_t* w = data + sizeof(v4f_cuda_module_header_t) + uint64_t(images) * sizeof(v4f_cuda_image_t);
  uint64_t at = 0;
  for (uint32_t k = 0; k < entries; ++k) {
    if (at + 2 > words)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: interface table of entry point %u is truncated", e,
                        k);
    uint32_t nb = rd32(w + at * 4), np = rd32(w + at * 4 + 4);
    if (nb > V4F_CUDA_MAX_BINDINGS || np > V4F_CUDA_MAX_PUSH_CONSTANTS || at + 2 + nb > words)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                        "executable %u: interface table of entry point %u declares %u bindings and %u push constants",
                        e, k, nb, np);
    at += 2 + nb;
  }
  if (at != words)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: %u interface words, but the tables take %llu", e,
                      words, static_cast<unsigned long long>(at));
  return nullptr;
}

const uint32_t* cudaModuleInterface(const uint8_t* data, uint32_t entry) {
  uint32_t images = rd32(data + 12);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(data + sizeof(v4f_cuda_module_header_t) +
                                                        uint64_t(images) * sizeof(v4f_cuda_image_t));
  for (uint32_t k = 0; k < entry; ++k) w += 2 + w[0];
  return w;
}

namespace {

CUdeviceptr devicePtr(v4f_session_s* s, uint32_t b) {
  const fb::Buffer* buf = s->model->manifest->buffers()->Get(b);
  CudaSession* c = s->cuda;
  switch (buf->kind()) {
  case fb::BufferKind::Transient: return c->arena + s->transientOffset[b];
  case fb::BufferKind::Constant: return c->constants + buf->constant_offset();
  default: return c->io[b];
  }
}

v4f_status_t cuFail(CUresult r, const char* what) {
  return makeStatus(V4F_STATUS_KERNEL_ERROR, "CUDA: %s failed: %s", what, cuError(r));
}

} // namespace

v4f_status_t cudaSessionCreate(v4f_session_s* s, int32_t ordinal, CudaSession** out) {
  *out = nullptr;
  Driver& d = driver();
  if (d.error[0]) return makeStatus(V4F_STATUS_UNSUPPORTED, "%s", d.error);
  int count = 0;
  CUresult r = d.deviceGetCount(&count);
  if (r != 0 || count == 0)
    return makeStatus(V4F_STATUS_UNSUPPORTED, "no CUDA device found (cuDeviceGetCount: %s, %d devices)",
                      r ? cuError(r) : "ok", count);
  if (ordinal < 0 || ordinal >= count)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "CUDA device %d does not exist (this machine has %d)", ordinal,
                      count);
  const v4f_model_s* m = s->model;
  const fb::Manifest* mf = m->manifest;
  CudaSession* c = s->allocator.create<CudaSession>();
  if (!c) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  c->allocator = s->allocator;
  s->cuda = c;
  uint32_t nexe = mf->executables() ? mf->executables()->size() : 0;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  if (!c->modules.allocate(s->allocator, nexe ? nexe : 1) || !c->functions.allocate(s->allocator, nexe ? nexe : 1) ||
      !c->io.allocate(s->allocator, nbuf ? nbuf : 1) || !c->ioCap.allocate(s->allocator, nbuf ? nbuf : 1) ||
      !c->onGpu.allocate(s->allocator, nbuf ? nbuf : 1) || !c->pinned.allocate(s->allocator, nbuf ? nbuf : 1) ||
      !c->pinnedCap.allocate(s->allocator, nbuf ? nbuf : 1))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < nexe; ++i) {
    c->modules[i] = nullptr;
    c->functions[i] = nullptr;
  }
  for (uint32_t b = 0; b < nbuf; ++b) {
    c->io[b] = 0;
    c->ioCap[b] = 0;
    c->onGpu[b] = false;
    c->pinned[b] = nullptr;
    c->pinnedCap[b] = 0;
  }
  if ((r = d.deviceGet(&c->device, ordinal))) return cuFail(r, "cuDeviceGet");
  int major = 0, minor = 0;
  d.deviceGetAttribute(&major, kAttrComputeCapabilityMajor, c->device);
  d.deviceGetAttribute(&minor, kAttrComputeCapabilityMinor, c->device);
  c->arch = major * 10 + minor;
  d.deviceGetName(c->name, sizeof c->name - 1, c->device);
  if ((r = d.primaryCtxRetain(&c->context, c->device))) return cuFail(r, "cuDevicePrimaryCtxRetain");
  c->retained = true;
  if ((r = d.ctxSetCurrent(c->context))) return cuFail(r, "cuCtxSetCurrent");
  if ((r = d.streamCreate(&c->stream, kStreamNonBlocking))) return cuFail(r, "cuStreamCreate");
  // Modules: the cubin of this arch, else PTX (JIT-compiled by the driver for newer GPUs).
  for (uint32_t e = 0; e < nexe; ++e) {
    const fb::Executable* exe = mf->executables()->Get(e);
    if (exe->target() != fb::ExecutableTarget::Cuda) continue;
    const uint8_t* data = m->sectionData[exe->section()];
    uint32_t images = rd32(data + 12);
    const uint8_t* chosen = nullptr;
    int ptxArch = 0;
    char archs[128] = {0};
    for (uint32_t i = 0; i < images; ++i) {
      const uint8_t* im = data + sizeof(v4f_cuda_module_header_t) + i * sizeof(v4f_cuda_image_t);
      uint32_t kind = rd32(im), arch = rd32(im + 4);
      size_t len = std::strlen(archs);
      std::snprintf(archs + len, sizeof archs - len, "%s%s_%u", len ? ", " : "",
                    kind == V4F_CUDA_IMAGE_PTX ? "compute" : "sm", arch);
      if (kind == V4F_CUDA_IMAGE_CUBIN && int(arch) == c->arch) chosen = data + rd64(im + 8);
      if (kind == V4F_CUDA_IMAGE_PTX && int(arch) <= c->arch && !ptxArch) ptxArch = int(arch);
    }
    if (!chosen && ptxArch)
      for (uint32_t i = 0; i < images; ++i) {
        const uint8_t* im = data + sizeof(v4f_cuda_module_header_t) + i * sizeof(v4f_cuda_image_t);
        if (rd32(im) == V4F_CUDA_IMAGE_PTX) chosen = data + rd64(im + 8);
      }
    if (!chosen)
      return makeStatus(V4F_STATUS_UNSUPPORTED,
                        "the artifact's CUDA kernels were compiled for %s, which cannot run on %s (sm_%d); recompile "
                        "with --cuda-arch=sm_%d",
                        archs, c->name, c->arch, c->arch);
    if ((r = d.moduleLoadData(&c->modules[e], chosen)))
      return cuFail(r, "cuModuleLoadData (the artifact's CUDA module)");
    uint32_t n = exe->entry_points() ? exe->entry_points()->size() : 0;
    if (!(c->functions[e] = static_cast<CUfunction*>(s->allocator.alloc(sizeof(CUfunction) * (n ? n : 1), 64))))
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t k = 0; k < n; ++k)
      if ((r = d.moduleGetFunction(&c->functions[e][k], c->modules[e], exe->entry_points()->Get(k)->c_str())))
        return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "CUDA: entry point '%s' is not in the module: %s",
                          exe->entry_points()->Get(k)->c_str(), cuError(r));
  }
  // Which buffers the GPU touches; whether the plan may be replayed as a graph.
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
  bool allGpu = ndis > 0 && !(mf->loops() && mf->loops()->size()) && !s->hasDataValues;
  for (uint32_t k = 0; k < ndis; ++k) {
    const fb::Dispatch* dis = mf->dispatches()->Get(k);
    bool gpu = isCudaExecutable(mf, dis->executable());
    if (!gpu || dis->guard() >= 0) allGpu = false;
    if (gpu && dis->bindings())
      for (uint32_t j = 0; j < dis->bindings()->size(); ++j) c->onGpu[dis->bindings()->Get(j)] = true;
  }
  const char* graphs = std::getenv("V4F_CUDA_GRAPHS");
  c->graphEligible = allGpu && !(graphs && std::strcmp(graphs, "0") == 0);
  if (m->constantsSize) {
    if ((r = d.memAlloc(&c->constants, m->constantsSize))) return cuFail(r, "cuMemAlloc (constants)");
    if ((r = d.memcpyHtoDAsync(c->constants, m->constants, m->constantsSize, c->stream)))
      return cuFail(r, "uploading the constants");
  }
  if ((r = d.memAlloc(&c->error, 64))) return cuFail(r, "cuMemAlloc");
  if ((r = d.memHostAlloc(reinterpret_cast<void**>(&c->errorHost), 64, 0))) return cuFail(r, "cuMemHostAlloc");
  if ((r = d.memsetD32Async(c->error, 0, 16, c->stream))) return cuFail(r, "cuMemsetD32Async");
  if ((r = d.streamSynchronize(c->stream))) return cuFail(r, "cuStreamSynchronize");
  *out = c;
  return nullptr;
}

void cudaSessionDestroy(CudaSession* c) {
  if (!c) return;
  Driver& d = driver();
  if (c->context) d.ctxSetCurrent(c->context);
  if (c->stream) d.streamSynchronize(c->stream);
  if (c->graph) d.graphExecDestroy(c->graph);
  for (size_t b = 0; b < c->io.size(); ++b) {
    if (c->io[b]) d.memFree(c->io[b]);
    if (c->pinned[b]) d.memFreeHost(c->pinned[b]);
  }
  if (c->arena) d.memFree(c->arena);
  if (c->constants) d.memFree(c->constants);
  if (c->error) d.memFree(c->error);
  if (c->errorHost) d.memFreeHost(c->errorHost);
  for (size_t e = 0; e < c->modules.size(); ++e) {
    if (c->modules[e]) d.moduleUnload(c->modules[e]);
    if (c->functions[e]) c->allocator.free(c->functions[e]);
  }
  for (size_t k = 0; k < c->events.size(); ++k)
    if (c->events[k]) d.eventDestroy(c->events[k]);
  if (c->stream) d.streamDestroy(c->stream);
  if (c->retained) d.primaryCtxRelease(c->device);
  Allocator a = c->allocator;
  a.destroy(c);
}

v4f_status_t cudaBeginRun(v4f_session_s* s) {
  CudaSession* c = s->cuda;
  Driver& d = driver();
  CUresult r;
  if ((r = d.ctxSetCurrent(c->context))) return cuFail(r, "cuCtxSetCurrent");
  c->profiledCount = 0;
  if (s->profiling && !c->events.size()) {
    uint32_t n = (s->model->manifest->dispatches() ? s->model->manifest->dispatches()->size() : 0) + 1;
    if (!c->events.allocate(s->allocator, n) || !c->profiled.allocate(s->allocator, n))
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t k = 0; k < n; ++k)
      if ((r = d.eventCreate(&c->events[k], 0))) return cuFail(r, "cuEventCreate");
  }
  if (s->arenaSize > c->arenaCap) {
    if (c->arena) d.memFree(c->arena);
    c->arena = 0;
    c->arenaCap = 0;
    if ((r = d.memAlloc(&c->arena, s->arenaSize)))
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "CUDA: cannot allocate the %llu-byte device arena: %s",
                        static_cast<unsigned long long>(s->arenaSize), cuError(r));
    c->arenaCap = s->arenaSize;
    ++c->generation;
  }
  const fb::Manifest* mf = s->model->manifest;
  for (uint32_t b = 0; b < c->io.size() && mf->buffers() && b < mf->buffers()->size(); ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    if (!c->onGpu[b] || (buf->kind() != fb::BufferKind::Input && buf->kind() != fb::BufferKind::Output)) continue;
    uint64_t need = static_cast<uint64_t>(s->regs[buf->size_reg()]);
    if (need == 0) need = 1;
    if (need > c->ioCap[b]) {
      if (c->io[b]) d.memFree(c->io[b]);
      c->io[b] = 0;
      c->ioCap[b] = 0;
      if ((r = d.memAlloc(&c->io[b], need)))
        return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "CUDA: cannot allocate %llu bytes for buffer %u: %s",
                          static_cast<unsigned long long>(need), b, cuError(r));
      c->ioCap[b] = need;
      ++c->generation;
    }
  }
  return nullptr;
}

v4f_status_t cudaDispatch(v4f_session_s* s, uint32_t d, const fb::Dispatch* dis) {
  CudaSession* c = s->cuda;
  Driver& drv = driver();
  const fb::Manifest* mf = s->model->manifest;
  CUresult r;
  if (s->profiling && !c->capturing && c->events.size() && c->profiledCount + 1 < c->events.size()) {
    drv.eventRecord(c->events[c->profiledCount], c->stream);
    c->profiled[c->profiledCount++] = d;
  }
  if (dis->transfer() != 0) {
    uint32_t b = dis->bindings()->Get(0);
    const fb::Buffer* buf = mf->buffers()->Get(b);
    uint64_t bytes = static_cast<uint64_t>(s->regs[buf->size_reg()]);
    if (bytes == 0) return nullptr;
    bool io = buf->kind() == fb::BufferKind::Input || buf->kind() == fb::BufferKind::Output;
    void* host = c->capturing && io ? c->pinned[b] : s->bufferPtrs[b];
    if (dis->transfer() == 1) {
      if ((r = drv.memcpyHtoDAsync(devicePtr(s, b), host, bytes, c->stream)))
        return makeStatus(V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s': copy to the GPU failed: %s", d, str(dis->name()),
                          cuError(r));
    } else {
      if (buf->kind() == fb::BufferKind::Constant || buf->kind() == fb::BufferKind::Input)
        return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "dispatch %u '%s' copies into a read-only buffer", d,
                          str(dis->name()));
      if ((r = drv.memcpyDtoHAsync(host, devicePtr(s, b), bytes, c->stream)))
        return makeStatus(V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s': copy from the GPU failed: %s", d,
                          str(dis->name()), cuError(r));
      // The host reads it next (a CPU dispatch or the caller).
      if (!c->capturing && (r = drv.streamSynchronize(c->stream)))
        return makeStatus(V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s': the GPU failed: %s", d, str(dis->name()),
                          cuError(r));
    }
    return nullptr;
  }
  int64_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  const auto* wg = dis->workgroup_count();
  for (uint32_t j = 0; j < wg->size() && j < 3; ++j) grid[j] = s->regs[wg->Get(j)];
  const auto* bd = dis->block_dim();
  for (uint32_t j = 0; bd && j < bd->size() && j < 3; ++j) block[j] = bd->Get(j);
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return nullptr;
  if (grid[0] < 0 || grid[0] > 0x7fffffff || grid[1] < 0 || grid[1] > 65535 || grid[2] < 0 || grid[2] > 65535)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "dispatch %u '%s': grid %lld x %lld x %lld exceeds the GPU's limits",
                      d, str(dis->name()), static_cast<long long>(grid[0]), static_cast<long long>(grid[1]),
                      static_cast<long long>(grid[2]));
  v4f_cuda_args_t& a = c->args;
  std::memset(&a, 0, sizeof a);
  uint32_t nb = dis->bindings() ? dis->bindings()->size() : 0;
  for (uint32_t j = 0; j < nb; ++j) {
    uint32_t b = dis->bindings()->Get(j);
    a.bindings[j] = devicePtr(s, b);
    a.binding_lengths[j] = static_cast<uint64_t>(s->regs[mf->buffers()->Get(b)->size_reg()]);
  }
  uint32_t np = dis->push_constants() ? dis->push_constants()->size() : 0;
  for (uint32_t j = 0; j < np; ++j) a.push_constants[j] = s->regs[dis->push_constants()->Get(j)];
  a.binding_count = nb;
  a.dispatch_index = d;
  a.error = c->error;
  void* params[] = {&a};
  CUfunction fn = c->functions[dis->executable()][dis->entry_point()];
  if ((r = drv.launchKernel(fn, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]), block[0], block[1], block[2],
                            0, c->stream, params, nullptr)))
    return makeStatus(V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s': the GPU kernel launch failed: %s", d,
                      str(dis->name()), cuError(r));
  return nullptr;
}

v4f_status_t cudaEndRun(v4f_session_s* s) {
  CudaSession* c = s->cuda;
  Driver& d = driver();
  CUresult r;
  if (s->profiling && c->profiledCount) d.eventRecord(c->events[c->profiledCount], c->stream);
  if ((r = d.memcpyDtoHAsync(c->errorHost, c->error, 4, c->stream)) || (r = d.streamSynchronize(c->stream)))
    return makeStatus(V4F_STATUS_KERNEL_ERROR, "the GPU failed while running the model: %s", cuError(r));
  if (s->profiling && c->profiledCount) {
    // GPU dispatches: the time between consecutive events (the GPU runs the
    // stream in order), placed after the host time the run started.
    const fb::Manifest* pm = s->model->manifest;
    uint64_t at = nowNs() - s->runStartNs;
    float total = 0;
    d.eventElapsedTime(&total, c->events[0], c->events[c->profiledCount]);
    uint64_t begin = at > uint64_t(total * 1e6) ? at - uint64_t(total * 1e6) : 0;
    for (uint32_t k = 0; k < c->profiledCount; ++k) {
      float ms = 0, from = 0;
      d.eventElapsedTime(&ms, c->events[k], c->events[k + 1]);
      d.eventElapsedTime(&from, c->events[0], c->events[k]);
      const fb::Dispatch* dis = pm->dispatches()->Get(c->profiled[k]);
      v4f_dispatch_profile_t e{};
      e.name = str(dis->name());
      e.kernel = dis->transfer()
                     ? (dis->transfer() == 1 ? "copy to GPU" : "copy to host")
                     : pm->executables()->Get(dis->executable())->entry_points()->Get(dis->entry_point())->c_str();
      e.dispatch_index = c->profiled[k];
      e.workgroups = 1;
      for (uint32_t j = 0; j < dis->workgroup_count()->size(); ++j)
        e.workgroups *= s->regs[dis->workgroup_count()->Get(j)];
      e.start_ns = begin + uint64_t(double(from) * 1e6);
      e.duration_ns = uint64_t(double(ms) * 1e6);
      e.flops = dis->flops() >= 0 ? static_cast<double>(s->regs[static_cast<uint32_t>(dis->flops())]) : -1.0;
      recordProfile(s, e);
    }
    c->profiledCount = 0;
  }
  uint32_t e = *c->errorHost;
  if (e == 0) return nullptr;
  d.memsetD32Async(c->error, 0, 1, c->stream);
  d.streamSynchronize(c->stream);
  uint32_t dispatch = (e >> 8) - 1, code = e & 0xff;
  const fb::Manifest* mf = s->model->manifest;
  const char* name =
      mf->dispatches() && dispatch < mf->dispatches()->size() ? str(mf->dispatches()->Get(dispatch)->name()) : "?";
  return makeStatus(
      V4F_STATUS_KERNEL_ERROR, "dispatch %u '%s' (GPU) failed with code %u%s", dispatch, name, code,
      code == V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE ? " (index out of range)"
      : code == V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE
          ? " (the kernel refused its bindings: a buffer smaller than it accesses -- an inconsistent plan)"
          : "");
}

v4f_status_t cudaRunGraph(v4f_session_s* s, const v4f_tensor_t* inputs, v4f_tensor_t* outputs, bool* handled) {
  CudaSession* c = s->cuda;
  *handled = false;
  if (!c || !c->graphEligible || s->profiling) return nullptr;
  *handled = true;
  Driver& d = driver();
  if (v4f_status_t st = cudaBeginRun(s)) return st;
  const fb::Manifest* mf = s->model->manifest;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  CUresult r;
  for (uint32_t b = 0; b < nbuf; ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    bool in = buf->kind() == fb::BufferKind::Input, out = buf->kind() == fb::BufferKind::Output;
    if (!in && !out) continue;
    uint64_t bytes = static_cast<uint64_t>(s->regs[buf->size_reg()]);
    if (bytes > c->pinnedCap[b]) {
      if (c->pinned[b]) d.memFreeHost(c->pinned[b]);
      c->pinned[b] = nullptr;
      c->pinnedCap[b] = 0;
      if ((r = d.memHostAlloc(&c->pinned[b], bytes, 0))) return cuFail(r, "cuMemHostAlloc (staging)");
      c->pinnedCap[b] = bytes;
      ++c->generation;
    }
    if (in && bytes) std::memcpy(c->pinned[b], inputs[buf->index()].data, bytes);
  }
  if (!c->graph || c->graphGeneration != c->generation) {
    if (c->graph) d.graphExecDestroy(c->graph);
    c->graph = nullptr;
    if ((r = d.streamBeginCapture(c->stream, kCaptureModeRelaxed))) return cuFail(r, "cuStreamBeginCapture");
    c->capturing = true;
    uint32_t ndis = mf->dispatches()->size();
    v4f_status_t failed = nullptr;
    for (uint32_t k = 0; k < ndis && !failed; ++k) failed = cudaDispatch(s, k, mf->dispatches()->Get(k));
    c->capturing = false;
    CUgraph graph = nullptr;
    r = d.streamEndCapture(c->stream, &graph);
    if (failed) {
      if (graph) d.graphDestroy(graph);
      return failed;
    }
    if (r) return cuFail(r, "cuStreamEndCapture");
    r = d.graphInstantiate(&c->graph, graph, 0);
    d.graphDestroy(graph);
    if (r) return cuFail(r, "cuGraphInstantiate");
    c->graphGeneration = c->generation;
  }
  if ((r = d.graphLaunch(c->graph, c->stream))) return cuFail(r, "cuGraphLaunch");
  if (v4f_status_t st = cudaEndRun(s)) return st;
  for (uint32_t b = 0; b < nbuf; ++b) {
    const fb::Buffer* buf = mf->buffers()->Get(b);
    if (buf->kind() != fb::BufferKind::Output) continue;
    uint64_t bytes = static_cast<uint64_t>(s->regs[buf->size_reg()]);
    if (bytes) std::memcpy(outputs[buf->index()].data, c->pinned[b], bytes);
  }
  return nullptr;
}

} // namespace rt
} // namespace v4f
