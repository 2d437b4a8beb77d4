// fake_libcuda.cpp - the part of the CUDA driver API that the v4f runtime
// uses (runtime/src/cuda.cpp), implemented on the host so GPU artifacts run
// without a GPU: load it with V4F_CUDA_DRIVER=.../libv4f_fake_cuda.so.
//
// Device memory is host memory, streams run everything at once in order,
// stream capture records the launches, copies and memsets into a graph that
// cuGraphLaunch replays. Kernels come from V4F_FAKE_CUDA_KERNELS: a shared
// object compiled from the artifact's CUDA C++ (v4fc compile --emit=cuda)
// with cuda_emulator.h, whose v4f_emu_launch runs them; the cubin or PTX the
// runtime passes to cuModuleLoadData is not looked at. The device claims
// compute capability 9.0 and the name "v4f host emulator".
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotFound = 500, kLaunchFailed = 719,
                   kInvalidImage = 200;
constexpr size_t kArgsBytes = 528; // sizeof(v4f_cuda_args_t), kernel_abi.h

using LaunchFn = int (*)(void*, const unsigned*, const unsigned*, const void*, char*, size_t);

struct Module {
  void* handle;
  LaunchFn launch;
};
struct Function {
  void* kernel;
  LaunchFn launch;
  std::string name;
};

struct Op {
  enum Kind { Launch, Copy, Set32 } kind = Copy;
  Function* fn = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned char args[kArgsBytes] = {0};
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  unsigned value = 0;
};
struct Graph {
  std::vector<Op> ops;
};
struct Stream {
  Graph* capture = nullptr;
};
struct Event {
  double ms = 0;
};

int gContext; // the primary context's address

double nowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

CUresult run(const Op& op) {
  switch (op.kind) {
  case Op::Copy: memcpy(op.dst, op.src, op.bytes); return kSuccess;
  case Op::Set32:
    for (size_t i = 0; i < op.bytes; ++i) static_cast<unsigned*>(op.dst)[i] = op.value;
    return kSuccess;
  case Op::Launch: {
    char why[512] = {0};
    if (op.fn->launch(op.fn->kernel, op.grid, op.block, op.args, why, sizeof why) != 0) {
      fprintf(stderr, "v4f fake CUDA driver: %s: %s\n", op.fn->name.c_str(), why);
      return kLaunchFailed;
    }
    return kSuccess;
  }
  }
  return kInvalidValue;
}

// Runs op now, or records it when the stream is capturing.
CUresult submit(void* stream, const Op& op) {
  Stream* s = static_cast<Stream*>(stream);
  if (s && s->capture) {
    s->capture->ops.push_back(op);
    return kSuccess;
  }
  return run(op);
}

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDeviceGetCount(int* n) {
  *n = 1;
  return kSuccess;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return kInvalidValue;
  *d = 0;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attribute, CUdevice) {
  switch (attribute) {
  case 75: *v = 9; break;   // compute capability major
  case 76: *v = 0; break;   // minor
  case 16: *v = 132; break; // multiprocessors
  default: *v = 0; break;
  }
  return kSuccess;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  snprintf(name, static_cast<size_t>(len), "v4f host emulator");
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice) {
  *ctx = &gContext;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return kSuccess; }
CUresult cuCtxSetCurrent(void*) { return kSuccess; }

CUresult cuModuleLoadData(void** module, const void*) {
  const char* path = getenv("V4F_FAKE_CUDA_KERNELS");
  if (!path || !*path) {
    fprintf(stderr, "v4f fake CUDA driver: V4F_FAKE_CUDA_KERNELS names no kernel library\n");
    return kInvalidImage;
  }
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  LaunchFn launch = handle ? reinterpret_cast<LaunchFn>(dlsym(handle, "v4f_emu_launch")) : nullptr;
  if (!launch) {
    fprintf(stderr, "v4f fake CUDA driver: %s: %s\n", path, handle ? "no v4f_emu_launch" : dlerror());
    return kInvalidImage;
  }
  *module = new Module{handle, launch};
  return kSuccess;
}
CUresult cuModuleUnload(void* module) {
  delete static_cast<Module*>(module); // the library stays loaded: functions may outlive it in graphs
  return kSuccess;
}
CUresult cuModuleGetFunction(void** fn, void* module, const char* name) {
  Module* m = static_cast<Module*>(module);
  void* kernel = dlsym(m->handle, name);
  if (!kernel) return kNotFound;
  *fn = new Function{kernel, m->launch, name}; // leaked with the process, like the driver's
  return kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  void* q = nullptr;
  if (posix_memalign(&q, 256, bytes ? bytes : 1) != 0) return kOutOfMemory;
  *p = reinterpret_cast<CUdeviceptr>(q);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free(reinterpret_cast<void*>(p));
  return kSuccess;
}
CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned) {
  return posix_memalign(p, 256, bytes ? bytes : 1) == 0 ? kSuccess : kOutOfMemory;
}
CUresult cuMemFreeHost(void* p) {
  free(p);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, void* stream) {
  Op op;
  op.kind = Op::Copy;
  op.dst = reinterpret_cast<void*>(dst);
  op.src = src;
  op.bytes = bytes;
  return submit(stream, op);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, void* stream) {
  Op op;
  op.kind = Op::Copy;
  op.dst = dst;
  op.src = reinterpret_cast<const void*>(src);
  op.bytes = bytes;
  return submit(stream, op);
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, void* stream) {
  Op op;
  op.kind = Op::Set32;
  op.dst = reinterpret_cast<void*>(dst);
  op.value = value;
  op.bytes = count;
  return submit(stream, op);
}

CUresult cuStreamCreate(void** stream, unsigned) {
  *stream = new Stream;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void* stream) {
  delete static_cast<Stream*>(stream);
  return kSuccess;
}
CUresult cuStreamSynchronize(void*) { return kSuccess; }

CUresult cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned sharedBytes, void* stream, void** params, void** extra) {
  if (!fn || !params || !params[0] || extra || sharedBytes) return kInvalidValue;
  Op op;
  op.kind = Op::Launch;
  op.fn = static_cast<Function*>(fn);
  op.grid[0] = gx, op.grid[1] = gy, op.grid[2] = gz;
  op.block[0] = bx, op.block[1] = by, op.block[2] = bz;
  memcpy(op.args, params[0], kArgsBytes);
  return submit(stream, op);
}

CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
  case kInvalidValue: *s = "invalid value (fake driver)"; break;
  case kOutOfMemory: *s = "out of memory (fake driver)"; break;
  case kNotFound: *s = "named symbol not found (fake driver)"; break;
  case kLaunchFailed: *s = "kernel failed under the host emulator (see stderr)"; break;
  case kInvalidImage: *s = "no emulated kernel library (V4F_FAKE_CUDA_KERNELS)"; break;
  default: *s = "unknown error (fake driver)"; break;
  }
  return kSuccess;
}

CUresult cuStreamBeginCapture_v2(void* stream, int) {
  Stream* s = static_cast<Stream*>(stream);
  if (s->capture) return kInvalidValue;
  s->capture = new Graph;
  return kSuccess;
}
CUresult cuStreamEndCapture(void* stream, void** graph) {
  Stream* s = static_cast<Stream*>(stream);
  if (!s->capture) return kInvalidValue;
  *graph = s->capture;
  s->capture = nullptr;
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  *exec = new Graph(*static_cast<Graph*>(graph));
  return kSuccess;
}
CUresult cuGraphLaunch(void* exec, void* stream) {
  for (const Op& op : static_cast<Graph*>(exec)->ops)
    if (CUresult r = submit(stream, op)) return r;
  return kSuccess;
}
CUresult cuGraphExecDestroy(void* exec) {
  delete static_cast<Graph*>(exec);
  return kSuccess;
}
CUresult cuGraphDestroy(void* graph) {
  delete static_cast<Graph*>(graph);
  return kSuccess;
}

CUresult cuEventCreate(void** event, unsigned) {
  *event = new Event;
  return kSuccess;
}
CUresult cuEventRecord(void* event, void*) {
  static_cast<Event*>(event)->ms = nowMs();
  return kSuccess;
}
CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
  *ms = static_cast<float>(static_cast<Event*>(end)->ms - static_cast<Event*>(start)->ms);
  return kSuccess;
}
CUresult cuEventDestroy_v2(void* event) {
  delete static_cast<Event*>(event);
  return kSuccess;
}

} // extern "C"
