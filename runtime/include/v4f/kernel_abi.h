/* v4f/kernel_abi.h - the compiler <-> runtime CPU kernel ABI (standalone, versioned).
 *
 * Every dispatch region the compiler emits becomes one exported C function in
 * the artifact's CPU shared object with the signature v4f_kernel_fn_t. The
 * runtime knows nothing about what a kernel computes: it binds buffers, passes
 * the push constants (dynamic dims evaluated by the shape program) and calls
 * the kernel once per workgroup id in [0, workgroup_count), spreading the ids
 * over its thread pool. Kernels must be safe to run concurrently for distinct
 * workgroup ids of the same dispatch.
 *
 * Only <stdint.h>-level includes: this header is shared by v4fc and the runtime.
 */
#ifndef V4F_KERNEL_ABI_H_
#define V4F_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the kernel calling convention. */
#define V4F_KERNEL_ABI_VERSION 1

/* Name of the exported `int32_t` global holding V4F_KERNEL_ABI_VERSION that
 * every CPU kernel library defines; the runtime refuses a library whose value
 * differs from its own. */
#define V4F_KERNEL_ABI_VERSION_SYMBOL "v4f_kernel_abi_version"

/* Kernel return codes. Non-zero aborts the run with a runtime error. */
#define V4F_KERNEL_OK 0
#define V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE 1

/* bindings:       base pointers of the buffers listed by the dispatch, in order.
 * push_constants: int64 values listed by the dispatch (dynamic dims etc.).
 * workgroup_id:   which slice of the work this call performs.
 * workgroup_count: total number of slices of this dispatch. */
typedef int32_t (*v4f_kernel_fn_t)(void* const* bindings,
                                   const int64_t* push_constants,
                                   int64_t workgroup_id,
                                   int64_t workgroup_count);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* V4F_KERNEL_ABI_H_ */
