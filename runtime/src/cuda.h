// cuda.h - the runtime's CUDA path: the driver API through dlopen, CUDA
// modules, and the per-session device state (stream, arena, transfers,
// CUDA Graphs). The runtime's DT_NEEDED stays libc/libm: libcuda.so.1 is
// opened only when a session runs an artifact with GPU dispatches.
#ifndef V4F_RUNTIME_SRC_CUDA_H_
#define V4F_RUNTIME_SRC_CUDA_H_

#include "internal.h"
#include "v4f/artifact_manifest_generated.h"
#include "v4f/kernel_abi.h"

struct v4f_session_s;
struct v4f_model_s;

namespace v4f {
namespace rt {

// Checks a v4f CUDA module (kernel_abi.h) of `size` bytes for an executable
// with `entryCount` entry points: header, image table and interface tables
// inside the section, each image non-empty and within bounds.
V4F_INTERNAL v4f_status_t verifyCudaModule(const uint8_t* data, uint64_t size, uint32_t entryCount,
                                           uint32_t executable);

// The interface table ({N, P, masks...}) of entry point `entry` of a verified module.
V4F_INTERNAL const uint32_t* cudaModuleInterface(const uint8_t* data, uint32_t entry);

struct CudaSession;

// Opens the driver, device `ordinal` and the model's CUDA modules for a
// session; uploads the constants. Clear errors when there is no driver, no
// device, or no image for the device's arch.
V4F_INTERNAL v4f_status_t cudaSessionCreate(v4f_session_s* s, int32_t ordinal, CudaSession** out);
V4F_INTERNAL void cudaSessionDestroy(CudaSession* c);

// Runs the whole plan when the session may replay it as a CUDA Graph
// (every dispatch on the GPU, static shapes): sets *handled.
V4F_INTERNAL v4f_status_t cudaRunGraph(v4f_session_s* s, const v4f_tensor_t* inputs, v4f_tensor_t* outputs,
                                       bool* handled);

// Before a run's dispatches: device buffers for the arena and every input
// and output the GPU touches, sized by this run's shape registers.
V4F_INTERNAL v4f_status_t cudaBeginRun(v4f_session_s* s);
// One GPU dispatch: a transfer (copy) or a kernel launch on the session's stream.
V4F_INTERNAL v4f_status_t cudaDispatch(v4f_session_s* s, uint32_t d, const fb::Dispatch* dis);
// After the dispatches: waits for the stream and reports a kernel's error.
V4F_INTERNAL v4f_status_t cudaEndRun(v4f_session_s* s);

// Whether executable `e` of the manifest is a CUDA module.
inline bool isCudaExecutable(const fb::Manifest* mf, uint32_t e) {
  return mf->executables() && e < mf->executables()->size() &&
         mf->executables()->Get(e)->target() == fb::ExecutableTarget::Cuda;
}

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_CUDA_H_
