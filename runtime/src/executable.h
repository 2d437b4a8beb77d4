// executable.h - the runtime's view of one compiled executable of an artifact.
//
// Dispatches run entry points of executables. A CPU executable is the
// artifact's ELF shared object, loaded from memory (memfd + dlopen); its entry
// points are v4f_kernel_fn_t and run on the session's thread pool. Other
// targets (CUDA) get their own loader and launcher behind the same struct;
// a CUDA module is loaded by each session on its device (cuda.h).
#ifndef V4F_RUNTIME_SRC_EXECUTABLE_H_
#define V4F_RUNTIME_SRC_EXECUTABLE_H_

#include "internal.h"
#include "v4f/kernel_abi.h"

namespace v4f {
namespace rt {

enum class ExecutableKind : uint8_t { Cpu = 0, Cuda = 1 };

struct LoadedExecutable {
  ExecutableKind kind = ExecutableKind::Cpu;
  // CPU: an in-memory file (memfd) dlopen'ed through /proc/self/fd. The fd
  // stays open while the library is loaded so that its /proc path is never
  // reused by another model's library (the loader matches by name).
  int fd = -1;
  void* handle = nullptr;
  v4f_kernel_fn_t* entryPoints = nullptr; // one per manifest entry point
  // Kernel ABI 3: each entry point's interface table (kernel_abi.h), inside
  // the loaded library; NULL in fuzzing builds (stub kernels touch nothing).
  const uint32_t** interfaces = nullptr;
  uint32_t entryPointCount = 0;
  // CUDA: the verified v4f CUDA module in the artifact (cuda.cpp loads it
  // per session, on the session's device).
  const uint8_t* cudaModule = nullptr;
};

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_EXECUTABLE_H_
