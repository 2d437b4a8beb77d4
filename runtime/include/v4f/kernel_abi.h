/* v4f/kernel_abi.h - the compiler <-> runtime kernel ABI (standalone, versioned).
 *
 * Every dispatch the compiler emits runs one entry point of one executable of
 * the artifact (for the CPU: an exported C function of the artifact's shared
 * object, with the signature v4f_kernel_fn_t). The runtime knows nothing about
 * what a kernel computes: it binds buffers, evaluates the push constants
 * (dynamic dims etc.) with the shape program, and calls the entry point once
 * per workgroup of the dispatch's 1-, 2- or 3-D workgroup grid, spreading the
 * workgroups over its thread pool. Kernels must be safe to run concurrently
 * for distinct workgroups of the same dispatch.
 *
 * Version 2 passes one v4f_dispatch_state_t per call (version 1 passed the
 * bindings, push constants, a 1-D workgroup id and count as four arguments):
 *   - 3-D workgroup ids and counts;
 *   - every binding's base pointer AND its length in bytes, so a kernel (or a
 *     checking build of one) can refuse to access outside its buffers;
 *   - the push constants with their count;
 *   - per-worker scratch memory: `scratch` is private to the calling worker
 *     for the duration of the call (64-byte aligned, scratch_size bytes, as
 *     many as the dispatch's plan entry asks for), e.g. for packing panels.
 *
 * Version 3 adds each entry point's kernel interface and its checks:
 *   - next to every entry point NAME the library exports a constant
 *     `uint32_t NAME_iface[]` (V4F_KERNEL_INTERFACE_SUFFIX): the number of
 *     bindings N, the number of push constants P, then one V4F_BINDING_*
 *     access mask per binding. The runtime's plan verifier refuses a dispatch
 *     that binds a different number of buffers or push constants than its
 *     kernel declares, or that hands a buffer the kernel writes and the plan
 *     must not change (a caller's input, a constant) to it;
 *   - before it touches a binding or a push constant, every kernel checks
 *     that binding_count == N and push_constant_count == P, and that each
 *     buffer it accesses holds at least the bytes of the tensor the kernel
 *     was generated for -- computed from the same push constants its loops
 *     read -- and returns V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE otherwise.
 *     So an inconsistent plan (a corrupted manifest, a compiler bug) fails
 *     cleanly instead of making the kernel access memory outside its buffers.
 *
 * Only <stdint.h>/<stddef.h>: this header is shared by v4fc and the runtime.
 */
#ifndef V4F_KERNEL_ABI_H_
#define V4F_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the kernel calling convention. */
#define V4F_KERNEL_ABI_VERSION 3

/* Name of the exported `int32_t` global holding V4F_KERNEL_ABI_VERSION that
 * every CPU kernel library defines; the runtime refuses a library whose value
 * differs from its own. */
#define V4F_KERNEL_ABI_VERSION_SYMBOL "v4f_kernel_abi_version"

/* Kernel return codes. Non-zero aborts the run with a runtime error. */
#define V4F_KERNEL_OK 0
#define V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE 1
/* Operands whose dims must agree at run time do not (e.g. a recurrent
 * layer's initial state and X disagree on the batch size). */
#define V4F_KERNEL_ERROR_SHAPE_MISMATCH 2
/* The kernel's entry checks failed: the binding or push-constant count is
 * not the kernel's, or a buffer is smaller than what the kernel accesses. */
#define V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE 3

/* The kernel interface table exported beside entry point NAME as
 * NAME V4F_KERNEL_INTERFACE_SUFFIX (version 3): uint32_t[2 + N] holding
 * {N bindings, P push constants, access mask of binding 0, ..., of N-1}. */
#define V4F_KERNEL_INTERFACE_SUFFIX "_iface"
#define V4F_BINDING_READ 1u  /* the kernel may read the buffer */
#define V4F_BINDING_WRITE 2u /* the kernel may write the buffer */

/* Alignment the runtime guarantees for `scratch`. */
#define V4F_KERNEL_SCRATCH_ALIGNMENT 64

/* What one call of an entry point sees. The runtime owns the struct and every
 * array it points to; they are valid for the duration of the call only. */
typedef struct v4f_dispatch_state_t {
  int64_t workgroup_id[3];         /* x, y, z of this call, each < workgroup_count */
  int64_t workgroup_count[3];      /* the dispatch's grid (1 for unused dims) */
  void* const* bindings;           /* base pointers, in the dispatch's binding order */
  const uint64_t* binding_lengths; /* bytes available at each binding */
  const int64_t* push_constants;   /* the dispatch's push constants, in order */
  uint32_t binding_count;
  uint32_t push_constant_count;
  void* scratch;         /* per-worker scratch (NULL when scratch_size is 0) */
  uint64_t scratch_size; /* bytes of scratch */
  uint32_t worker_id;    /* which worker runs this call, < worker_count */
  uint32_t worker_count;
} v4f_dispatch_state_t;

/* The layout is part of the ABI: generated kernels load these fields by byte
 * offset. Any change here must bump V4F_KERNEL_ABI_VERSION. */
#define V4F_DISPATCH_STATE_OFFSET_WORKGROUP_ID 0
#define V4F_DISPATCH_STATE_OFFSET_WORKGROUP_COUNT 24
#define V4F_DISPATCH_STATE_OFFSET_BINDINGS 48
#define V4F_DISPATCH_STATE_OFFSET_BINDING_LENGTHS 56
#define V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANTS 64
#define V4F_DISPATCH_STATE_OFFSET_BINDING_COUNT 72
#define V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANT_COUNT 76
#define V4F_DISPATCH_STATE_OFFSET_SCRATCH 80
#define V4F_DISPATCH_STATE_OFFSET_SCRATCH_SIZE 88
#define V4F_DISPATCH_STATE_OFFSET_WORKER_ID 96
#define V4F_DISPATCH_STATE_OFFSET_WORKER_COUNT 100
#define V4F_DISPATCH_STATE_SIZE 104

#ifdef __cplusplus
#define V4F_ABI_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define V4F_ABI_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
V4F_ABI_STATIC_ASSERT(sizeof(void*) == 8, "the v4f kernel ABI is defined for 64-bit targets");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, workgroup_id) == V4F_DISPATCH_STATE_OFFSET_WORKGROUP_ID, "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, workgroup_count) == V4F_DISPATCH_STATE_OFFSET_WORKGROUP_COUNT,
                      "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, bindings) == V4F_DISPATCH_STATE_OFFSET_BINDINGS, "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, binding_lengths) == V4F_DISPATCH_STATE_OFFSET_BINDING_LENGTHS,
                      "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, push_constants) == V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANTS,
                      "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, binding_count) == V4F_DISPATCH_STATE_OFFSET_BINDING_COUNT,
                      "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, push_constant_count) ==
                          V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANT_COUNT,
                      "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, scratch) == V4F_DISPATCH_STATE_OFFSET_SCRATCH, "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, scratch_size) == V4F_DISPATCH_STATE_OFFSET_SCRATCH_SIZE, "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, worker_id) == V4F_DISPATCH_STATE_OFFSET_WORKER_ID, "layout");
V4F_ABI_STATIC_ASSERT(offsetof(v4f_dispatch_state_t, worker_count) == V4F_DISPATCH_STATE_OFFSET_WORKER_COUNT, "layout");
V4F_ABI_STATIC_ASSERT(sizeof(v4f_dispatch_state_t) == V4F_DISPATCH_STATE_SIZE, "layout");

/* A CPU entry point. Returns V4F_KERNEL_OK or an error code. */
typedef int32_t (*v4f_kernel_fn_t)(const v4f_dispatch_state_t* state);

/* ---- CUDA executables (artifact format 5.1) ------------------------------
 *
 * A CUDA executable's section holds a v4f CUDA module: a
 * v4f_cuda_module_header_t, then `image_count` v4f_cuda_image_t (one cubin
 * per compiled sm_XX arch and PTX for the lowest one, for forward
 * compatibility), then `interface_words` uint32_t holding, per entry point in
 * order, the same interface table as a CPU entry point's NAME_iface ({N
 * bindings, P push constants, N access masks}); the images' bytes follow at
 * their offsets (from the start of the module). The runtime loads the cubin
 * of the device's arch, else the PTX, with cuModuleLoadData.
 *
 * Every CUDA entry point is `extern "C" __global__ void NAME(v4f_cuda_args_t)`
 * launched over the dispatch's grid (workgroup_count: blocks) with
 * Dispatch.block_dim threads per block. Like a CPU kernel it checks, before
 * touching memory, that each binding holds the bytes it accesses; on failure
 * (or an index out of range) it stores (dispatch_index + 1) << 8 | code into
 * the error word (first error wins) and returns. */
#define V4F_CUDA_MODULE_MAGIC "V4FCUDA1"
#define V4F_CUDA_IMAGE_CUBIN 1u
#define V4F_CUDA_IMAGE_PTX 2u
#define V4F_CUDA_MAX_BINDINGS 24
#define V4F_CUDA_MAX_PUSH_CONSTANTS 16

typedef struct v4f_cuda_module_header_t {
  char magic[8];        /* V4F_CUDA_MODULE_MAGIC */
  uint32_t entry_count; /* == the executable's entry_points count */
  uint32_t image_count;
  uint32_t interface_words;
  uint32_t reserved; /* zero */
} v4f_cuda_module_header_t;

typedef struct v4f_cuda_image_t {
  uint32_t kind;   /* V4F_CUDA_IMAGE_CUBIN or V4F_CUDA_IMAGE_PTX */
  uint32_t arch;   /* compute capability * 10 + minor: 90 = sm_90 */
  uint64_t offset; /* from the start of the module */
  uint64_t size;
} v4f_cuda_image_t;

typedef struct v4f_cuda_args_t {
  uint64_t bindings[V4F_CUDA_MAX_BINDINGS];        /* device addresses */
  uint64_t binding_lengths[V4F_CUDA_MAX_BINDINGS]; /* bytes at each */
  int64_t push_constants[V4F_CUDA_MAX_PUSH_CONSTANTS];
  uint64_t error; /* device address of the run's uint32 error word */
  uint32_t binding_count;
  uint32_t dispatch_index;
} v4f_cuda_args_t;

V4F_ABI_STATIC_ASSERT(sizeof(v4f_cuda_module_header_t) == 24, "layout");
V4F_ABI_STATIC_ASSERT(sizeof(v4f_cuda_image_t) == 24, "layout");
V4F_ABI_STATIC_ASSERT(sizeof(v4f_cuda_args_t) == 528, "layout");

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* V4F_KERNEL_ABI_H_ */
