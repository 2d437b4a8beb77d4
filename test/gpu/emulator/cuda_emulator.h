// cuda_emulator.h - runs the CUDA C++ that v4fc generates (v4fc compile
// --emit=cuda) on the host CPU, so the GPU kernels are checked numerically
// against the CPU kernels on machines without a GPU (docs/gpu.md, "Testing").
//
// The generated translation unit is compiled as host C++ with this header
// force-included (-include) and the fake <cuda_fp16.h>, <cuda_bf16.h> and
// <mma.h> beside it on the include path, into a shared object that
// fake_libcuda.cpp (a stand-in for libcuda.so.1, V4F_CUDA_DRIVER) loads and
// launches kernels through: v4f_emu_launch runs every block of the grid, one
// after the other, with one fiber per CUDA thread. Fibers switch only at
// __syncthreads, __syncwarp and warp shuffles, so a block's threads really
// interleave at every barrier (a kernel that reads shared memory before the
// barrier that publishes it reads stale values here too), and atomics are
// atomic by construction.
//
// What it does not model: timing, the memory model between blocks (they run
// in order, so a kernel relying on one block seeing another's writes would
// pass here), warp-synchronous code without __syncwarp, and the register
// layout of WMMA fragments (each thread of the warp holds the whole tile, so
// only the documented load/store/mma/fill operations are supported -- the
// generated kernels use nothing else). Only the subset of CUDA the generator
// emits is provided; anything else fails to compile, loudly.
#ifndef V4F_TEST_GPU_EMULATOR_CUDA_EMULATOR_H_
#define V4F_TEST_GPU_EMULATOR_CUDA_EMULATOR_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
};

namespace v4f_emu {

// v4f_cuda_args_t (kernel_abi.h) as bytes: every generated kernel takes that
// 528-byte struct by value, which the x86-64 ABI passes in memory whatever
// its member types, so a kernel is called through this type.
struct KernelArgs {
  alignas(8) unsigned char bytes[528];
};

// One CUDA thread: its stack pointer while switched out, and what it waits for.
struct Fiber {
  void* sp = nullptr;
  uint3 tid{0, 0, 0};
  unsigned linear = 0;
  bool done = false;
  int wait = 0; // 0 runnable, 1 __syncthreads, 2 warp barrier
};

struct Block {
  uint3 bid{0, 0, 0};
  dim3 bdim{1, 1, 1}, gdim{1, 1, 1};
  Fiber* fibers = nullptr;
  unsigned count = 0;
  Fiber* current = nullptr;
  void* schedulerSp = nullptr;
  void (*kernel)(KernelArgs) = nullptr;
  const KernelArgs* args = nullptr;
  uint64_t shuffle[1024]; // one slot per thread for warp shuffles
};

inline Block*& block() {
  static Block* b = nullptr; // one launch at a time (fake_libcuda runs kernels in order)
  return b;
}

} // namespace v4f_emu

// The context switch: callee-saved registers on the old stack, then the new
// stack's. A new fiber's stack starts with six zero registers under the
// address of fiberMain.
extern "C" void v4f_emu_switch(void** save, void* load);
asm(R"(
  .text
  .p2align 4
  .hidden v4f_emu_switch
  .type v4f_emu_switch,@function
v4f_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size v4f_emu_switch, .-v4f_emu_switch
)");

namespace v4f_emu {

// Parks the running fiber until the scheduler releases its barrier.
inline void waitAt(int kind) {
  Block* b = block();
  Fiber* f = b->current;
  f->wait = kind;
  v4f_emu_switch(&f->sp, b->schedulerSp);
}

[[noreturn]] inline void fiberMain() {
  Block* b = block();
  b->kernel(*b->args);
  b->current->done = true;
  void* unused;
  v4f_emu_switch(&unused, b->schedulerSp);
  __builtin_unreachable();
}

// Runs one block to completion; false (with why) on a barrier not every
// live thread of the block (or warp) reaches.
inline bool runBlock(Block* b, char* stacks, size_t stackBytes, char* why, size_t whyBytes) {
  for (unsigned t = 0; t < b->count; ++t) {
    Fiber& f = b->fibers[t];
    f = Fiber();
    f.linear = t;
    f.tid = uint3{t % b->bdim.x, t / b->bdim.x % b->bdim.y, t / (b->bdim.x * b->bdim.y)};
    uintptr_t top = reinterpret_cast<uintptr_t>(stacks + (t + 1) * stackBytes) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top - 16);
    sp[0] = reinterpret_cast<void*>(&fiberMain);
    sp[1] = nullptr;
    sp -= 6;
    for (int r = 0; r < 6; ++r) sp[r] = nullptr;
    f.sp = sp;
  }
  for (;;) {
    for (unsigned t = 0; t < b->count; ++t) {
      Fiber& f = b->fibers[t];
      if (f.done || f.wait) continue;
      b->current = &f;
      v4f_emu_switch(&b->schedulerSp, f.sp);
    }
    // Every live fiber waits now. Warps whose live threads all wait at a
    // warp barrier go on first; then a block barrier all live threads reach.
    bool released = false, anyLive = false, allAtBlock = true;
    for (unsigned w = 0; w * 32 < b->count; ++w) {
      bool live = false, all = true;
      for (unsigned t = w * 32; t < b->count && t < w * 32 + 32; ++t) {
        if (b->fibers[t].done) continue;
        live = true;
        all = all && b->fibers[t].wait == 2;
      }
      if (live && all) {
        for (unsigned t = w * 32; t < b->count && t < w * 32 + 32; ++t) b->fibers[t].wait = 0;
        released = true;
      }
    }
    if (released) continue;
    for (unsigned t = 0; t < b->count; ++t) {
      if (b->fibers[t].done) continue;
      anyLive = true;
      allAtBlock = allAtBlock && b->fibers[t].wait == 1;
    }
    if (!anyLive) return true;
    if (allAtBlock) {
      for (unsigned t = 0; t < b->count; ++t) b->fibers[t].wait = 0;
      continue;
    }
    snprintf(why, whyBytes,
             "block (%u,%u,%u): threads wait at different barriers (__syncthreads / __syncwarp / a shuffle) and "
             "none can go on",
             b->bid.x, b->bid.y, b->bid.z);
    return false;
  }
}

template <typename T>
T shuffle(T v, int srcLane) {
  static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
  Block* b = block();
  const unsigned me = b->current->linear, warp = me / 32;
  memcpy(&b->shuffle[me], &v, sizeof(T));
  waitAt(2);
  T r = v;
  const unsigned src = warp * 32 + (static_cast<unsigned>(srcLane) & 31u);
  if (src < b->count) memcpy(&r, &b->shuffle[src], sizeof(T));
  waitAt(2); // nobody overwrites a slot before every lane read it
  return r;
}

} // namespace v4f_emu

// Runs kernel(args) over the grid (args: a v4f_cuda_args_t); 0, or 1 with why.
extern "C" __attribute__((visibility("default"))) int v4f_emu_launch(void* kernel, const unsigned grid[3],
                                                                     const unsigned blockDims[3], const void* args,
                                                                     char* why, size_t whyBytes) {
  using namespace v4f_emu;
  const unsigned threads = blockDims[0] * blockDims[1] * blockDims[2];
  if (threads == 0 || threads > 1024) {
    snprintf(why, whyBytes, "block of %u threads (1 to 1024)", threads);
    return 1;
  }
  constexpr size_t kStack = size_t(256) << 10;
  char* stacks = static_cast<char*>(
      mmap(nullptr, kStack * threads, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (stacks == MAP_FAILED) {
    snprintf(why, whyBytes, "no memory for %u fiber stacks", threads);
    return 1;
  }
  static Fiber fibers[1024];
  static Block b;
  b.bdim = dim3{blockDims[0], blockDims[1], blockDims[2]};
  b.gdim = dim3{grid[0], grid[1], grid[2]};
  b.fibers = fibers;
  b.count = threads;
  b.kernel = reinterpret_cast<void (*)(KernelArgs)>(kernel);
  b.args = static_cast<const KernelArgs*>(args);
  block() = &b;
  int rc = 0;
  for (unsigned z = 0; z < grid[2] && !rc; ++z)
    for (unsigned y = 0; y < grid[1] && !rc; ++y)
      for (unsigned x = 0; x < grid[0] && !rc; ++x) {
        b.bid = uint3{x, y, z};
        if (!runBlock(&b, stacks, kStack, why, whyBytes)) rc = 1;
      }
  block() = nullptr;
  munmap(stacks, kStack * threads);
  return rc;
}

// The CUDA built-ins the generated kernels use.
#define threadIdx (::v4f_emu::block()->current->tid)
#define blockIdx (::v4f_emu::block()->bid)
#define blockDim (::v4f_emu::block()->bdim)
#define gridDim (::v4f_emu::block()->gdim)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __restrict__ __restrict

inline void __syncthreads() { v4f_emu::waitAt(1); }
inline void __syncwarp(unsigned = 0xffffffffu) { v4f_emu::waitAt(2); }
template <typename T>
T __shfl_xor_sync(unsigned, T v, int laneMask, int = 32) {
  return v4f_emu::shuffle(v, static_cast<int>(v4f_emu::block()->current->linear % 32) ^ laneMask);
}
template <typename T>
T __shfl_down_sync(unsigned, T v, int delta, int = 32) {
  const int lane = static_cast<int>(v4f_emu::block()->current->linear % 32);
  return v4f_emu::shuffle(v, lane + delta < 32 ? lane + delta : lane);
}
template <typename T>
T __shfl_sync(unsigned, T v, int srcLane, int = 32) {
  return v4f_emu::shuffle(v, srcLane);
}
inline unsigned atomicCAS(unsigned* p, unsigned compare, unsigned value) {
  unsigned old = *p;
  if (old == compare) *p = value;
  return old;
}
inline float atomicAdd(float* p, float v) {
  float old = *p;
  *p = old + v;
  return old;
}
inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  memcpy(&i, &f, 4);
  return i;
}
inline unsigned __float_as_uint(float f) {
  unsigned i;
  memcpy(&i, &f, 4);
  return i;
}

#endif // V4F_TEST_GPU_EMULATOR_CUDA_EMULATOR_H_
