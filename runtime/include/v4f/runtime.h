/* v4f/runtime.h - the public C API of the v4f runtime (load a .v4f artifact, run it).
 *
 * Conventions (IREE / ONNX Runtime style):
 *  - Every fallible function returns a v4f_status_t: NULL means success, a
 *    non-NULL status carries a code and a message and must be freed with
 *    v4f_status_free(). The library never aborts and never prints.
 *  - Objects are opaque handles with create/release pairs; release(NULL) is a
 *    no-op.
 *  - Options structs start with `struct_size`; initialize them with the
 *    matching *_options_init() so fields added later get their defaults.
 *  - An optional v4f_allocator_t routes the library's allocations; NULL means
 *    the C library's allocator.
 *
 * Thread safety: a model may be shared by any number of sessions on any
 * threads. A session must be used by one thread at a time: a run (or
 * v4f_session_resolve_output_shapes) that overlaps another call on the same
 * session fails with V4F_STATUS_INVALID_ARGUMENT ("in use by another
 * thread") instead of corrupting it.
 */
#ifndef V4F_RUNTIME_H_
#define V4F_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#if defined(V4F_RUNTIME_BUILDING_LIBRARY)
#define V4F_API __attribute__((visibility("default")))
#else
#define V4F_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Highest tensor rank the runtime accepts. */
#define V4F_MAX_RANK 8

/*===--------------------------------------------------------------------===*/
/* Status                                                                   */
/*===--------------------------------------------------------------------===*/

typedef enum v4f_status_code_e {
  V4F_STATUS_OK = 0,
  V4F_STATUS_INVALID_ARGUMENT = 1,   /* caller passed something wrong */
  V4F_STATUS_NOT_FOUND = 2,          /* file or symbol missing */
  V4F_STATUS_INVALID_ARTIFACT = 3,   /* corrupt, truncated or inconsistent file */
  V4F_STATUS_UNSUPPORTED = 4,        /* newer format, missing CPU features, ABI */
  V4F_STATUS_RESOURCE_EXHAUSTED = 5, /* allocation failed */
  V4F_STATUS_KERNEL_ERROR = 6,       /* a kernel returned non-zero */
  V4F_STATUS_INTERNAL = 7,           /* OS call failed (mmap, dlopen, threads) */
} v4f_status_code_t;

typedef struct v4f_status_s* v4f_status_t;

V4F_API v4f_status_code_t v4f_status_code(v4f_status_t status); /* NULL -> OK */
/* Valid until v4f_status_free(status); "" for NULL. */
V4F_API const char* v4f_status_message(v4f_status_t status);
V4F_API void v4f_status_free(v4f_status_t status);

/* "1.0": the runtime version, equal to the newest artifact format it reads. */
V4F_API const char* v4f_runtime_version(void);

/*===--------------------------------------------------------------------===*/
/* Allocator and element types                                              */
/*===--------------------------------------------------------------------===*/

typedef struct v4f_allocator_t {
  /* Returns `size` bytes aligned to `alignment` (a power of two <= 4096), or
   * NULL on failure. */
  void* (*alloc)(void* user_data, size_t size, size_t alignment);
  void (*free)(void* user_data, void* ptr);
  void* user_data;
} v4f_allocator_t;

/* Element types use V4F_DTYPE_* from v4f/artifact_format.h (ONNX numbering).
 * Size in bytes, or 0 for an unknown code. */
V4F_API size_t v4f_dtype_size(int32_t dtype);
/* "float32", "int8", ...; "unknown" for an unknown code. */
V4F_API const char* v4f_dtype_name(int32_t dtype);

/* 1 if this machine (CPUID + OS state) has the named CPU feature (a name
 * from V4F_CPU_FEATURE_NAMES), 0 if not, -1 if the name is unknown. */
V4F_API int v4f_cpu_has_feature(const char* name);

/*===--------------------------------------------------------------------===*/
/* Model                                                                    */
/*===--------------------------------------------------------------------===*/

typedef struct v4f_model_s v4f_model_t;

typedef struct v4f_model_options_t {
  size_t struct_size; /* sizeof(v4f_model_options_t) */
  /* Comma-separated CPU feature names to treat as absent ("avx512f,amx-tile");
   * for testing the refusal path. NULL or "" = none. */
  const char* disabled_cpu_features;
  /* Non-zero (default): check every section digest while loading. */
  int32_t verify_digests;
  /* Signatures (v4fc sign / compile --sign; docs/security.md). With
   * V4F_SIGNATURE_REQUIRE an artifact must carry a valid Ed25519 signature
   * by one of the trusted keys, checked right after the fixed header and
   * before the manifest is read or any code is mapped. V4F_SIGNATURE_WARN
   * loads unsigned artifacts and those signed by an untrusted key (see
   * v4f_model_signature_state) but refuses a signature that does not verify.
   * V4F_SIGNATURE_OFF (default) checks nothing. Verifying loads libsodium
   * (libsodium.so.23) with dlopen. */
  int32_t signature_policy;
  const uint8_t* trusted_keys; /* trusted_key_count x 32-byte Ed25519 public keys */
  size_t trusted_key_count;
  /* Encrypted artifacts (format 4, v4fc compile --encrypt-key): the
   * 32-byte XChaCha20-Poly1305 key, or a callback that supplies it for a key
   * id (the first 16 bytes of BLAKE2b-256 of the key; return 0 when it wrote
   * the key, non-zero when it has none) -- e.g. from a key service. The
   * sections are decrypted into memory only (the code into a sealed memfd);
   * a wrong key or any tampering is refused. Both NULL: an encrypted
   * artifact is refused. */
  const uint8_t* decryption_key;
  int32_t (*decryption_key_callback)(void* user, const uint8_t key_id[16], uint8_t out_key[32]);
  void* decryption_key_user;
} v4f_model_options_t;

#define V4F_SIGNATURE_OFF 0
#define V4F_SIGNATURE_WARN 1
#define V4F_SIGNATURE_REQUIRE 2

/* What loading found out about the signature. */
#define V4F_SIGNATURE_STATE_UNCHECKED 0 /* policy off */
#define V4F_SIGNATURE_STATE_UNSIGNED 1  /* no signature (policy warn) */
#define V4F_SIGNATURE_STATE_UNTRUSTED 2 /* valid, by a key not trusted (policy warn) */
#define V4F_SIGNATURE_STATE_VERIFIED 3  /* valid, by a trusted key */

V4F_API void v4f_model_options_init(v4f_model_options_t* options);

/* Reads the whole file into private read-only memory (not a file mapping:
 * later truncation or overwriting of the file cannot affect the model, and
 * what the signature check verified is what runs); constants are used from
 * that copy.
 * `options` and `allocator` may be NULL. On failure *out_model is NULL and
 * the message names the file and the problem. */
V4F_API v4f_status_t v4f_model_load_file(const char* path, const v4f_model_options_t* options,
                                         const v4f_allocator_t* allocator, v4f_model_t** out_model);

/* Loads from caller memory, which must stay alive and unchanged until the
 * model is released. If `data` is not 64-byte aligned it is copied once into
 * an aligned buffer (sections are 64-aligned relative to the file start). */
V4F_API v4f_status_t v4f_model_load_memory(const void* data, size_t size, const v4f_model_options_t* options,
                                           const v4f_allocator_t* allocator, v4f_model_t** out_model);

/* Sessions hold no reference count: release them before their model. */
V4F_API void v4f_model_release(v4f_model_t* model);

/* V4F_SIGNATURE_STATE_* of a loaded model; with a signature, its signer's
 * public key (32 bytes, valid for the model's life) in *out_key when
 * out_key is not NULL (else NULL). */
V4F_API int32_t v4f_model_signature_state(const v4f_model_t* model, const uint8_t** out_key);

/* Reads a public key file written by `v4fc keygen` (KEY.pub:
 * "v4f-ed25519-public-key <64 hex digits>", or just the hex) into out_key. */
V4F_API v4f_status_t v4f_read_public_key_file(const char* path, uint8_t out_key[32]);

/* Reads an encryption key file written by `v4fc keygen --type encryption`
 * ("v4f-xchacha20poly1305-key <64 hex digits>"); refuses a file that others
 * can read. */
V4F_API v4f_status_t v4f_read_encryption_key_file(const char* path, uint8_t out_key[32]);

/* Non-zero when the loaded artifact's sections were encrypted. */
V4F_API int32_t v4f_model_encrypted(const v4f_model_t* model);

V4F_API size_t v4f_model_input_count(const v4f_model_t* model);
V4F_API size_t v4f_model_output_count(const v4f_model_t* model);
/* Manifest strings (never NULL; "" when absent), valid for the model's life. */
V4F_API const char* v4f_model_name(const v4f_model_t* model);
V4F_API const char* v4f_model_producer(const v4f_model_t* model);
/* Multi-ISA artifacts (v4fc --target-cpu A,B): the artifact holds one plan
 * per CPU target, and loading picks the one whose CPU features this machine
 * has, preferring the one that needs the most (AVX-512 over AVX2 over SSE).
 * v4f_model_variant_count: plans in the artifact (1 for a single target);
 * v4f_model_variant: the index of the plan loaded (0 = the baseline);
 * v4f_model_target_cpu: the LLVM CPU name its kernels were compiled for
 * ("" for a NULL model). */
V4F_API size_t v4f_model_variant_count(const v4f_model_t* model);
V4F_API size_t v4f_model_variant(const v4f_model_t* model);
V4F_API const char* v4f_model_target_cpu(const v4f_model_t* model);

typedef struct v4f_tensor_info_t {
  const char* name; /* valid for the model's lifetime */
  int32_t dtype;    /* V4F_DTYPE_* */
  int32_t rank;
  int64_t dims[V4F_MAX_RANK];          /* -1 where symbolic */
  const char* dim_names[V4F_MAX_RANK]; /* "" where static */
} v4f_tensor_info_t;

V4F_API v4f_status_t v4f_model_input_info(const v4f_model_t* model, size_t index, v4f_tensor_info_t* out_info);
V4F_API v4f_status_t v4f_model_output_info(const v4f_model_t* model, size_t index, v4f_tensor_info_t* out_info);

/*===--------------------------------------------------------------------===*/
/* Session                                                                  */
/*===--------------------------------------------------------------------===*/

typedef struct v4f_session_s v4f_session_t;

/* A pool of worker threads that several sessions share (a server's model
 * instances, several models in one process): their dispatches take turns on
 * it, one dispatch at a time, so any number of sessions never keep more
 * than the pool's threads busy. A session on a shared pool runs its
 * dispatches on the pool's workers plus its calling thread (which waits,
 * without spinning, while another session's dispatch has the pool).
 * Reference counted: sessions keep it alive, so the creator may release it
 * as soon as the sessions are created. */
typedef struct v4f_thread_pool_s v4f_thread_pool_t;

/* thread_count: threads per dispatch, the running session's caller
 * included (0 = number of online cores). */
V4F_API v4f_status_t v4f_thread_pool_create(int32_t thread_count, const v4f_allocator_t* allocator,
                                            v4f_thread_pool_t** out_pool);
V4F_API void v4f_thread_pool_release(v4f_thread_pool_t* pool);
V4F_API int32_t v4f_thread_pool_thread_count(const v4f_thread_pool_t* pool);

typedef struct v4f_session_options_t {
  size_t struct_size; /* sizeof(v4f_session_options_t) */
  /* Threads running workgroups, the calling thread included; 0 (default) =
   * number of online cores; 1 = run everything on the caller, no threads.
   * Must be 0 or the pool's count when thread_pool is set. */
  int32_t thread_count;
  /* NULL (default): the session starts its own threads. Otherwise it runs
   * on this shared pool (and holds a reference to it). */
  v4f_thread_pool_t* thread_pool;
  /* 0 (default): no limit. Otherwise a run or output-shape resolution whose
   * input shapes need a larger arena fails with RESOURCE_EXHAUSTED instead of
   * allocating it (a caller-set bound for untrusted input shapes). */
  uint64_t max_arena_bytes;
  /* Where the artifact's GPU dispatches run (v4fc --target with cuda):
   * V4F_DEVICE_AUTO (default: the CUDA device `device_ordinal` when the
   * artifact has GPU dispatches), V4F_DEVICE_CPU (refuses an artifact with
   * GPU dispatches: it has no CPU kernels for them) or V4F_DEVICE_CUDA
   * (refuses an artifact without any). libcuda.so.1 is opened only then;
   * no driver, no device or no image for the device's arch is a clear
   * UNSUPPORTED error. */
  int32_t device;
  int32_t device_ordinal;
} v4f_session_options_t;

#define V4F_DEVICE_AUTO 0
#define V4F_DEVICE_CPU 1
#define V4F_DEVICE_CUDA 2

V4F_API void v4f_session_options_init(v4f_session_options_t* options);

/* `options` and `allocator` may be NULL (NULL allocator = the C library's,
 * not the model's). */
V4F_API v4f_status_t v4f_session_create(v4f_model_t* model, const v4f_session_options_t* options,
                                        const v4f_allocator_t* allocator, v4f_session_t** out_session);
V4F_API void v4f_session_release(v4f_session_t* session);

/* A tensor passed to or returned from a run. For inputs the caller fills all
 * fields. For outputs the caller provides data/byte_size; the runtime writes
 * dtype, rank and dims (also on a too-small-buffer error, so the caller can
 * reallocate and retry). */
typedef struct v4f_tensor_t {
  void* data;
  size_t byte_size;
  int32_t dtype;
  int32_t rank;
  int64_t dims[V4F_MAX_RANK];
} v4f_tensor_t;

/* Runs the model. Inputs and outputs are matched by position with the model
 * signature; input dtypes/ranks/static dims must match it, a symbolic dim
 * name must have one value across all inputs.
 * Outputs whose dims depend on input *values* (NonZero, Compress): the
 * byte_size needed (see v4f_session_resolve_output_shapes) is for the
 * dims' upper bounds; after the run, outputs[i].dims hold the actual dims
 * and only that many elements are written. */
V4F_API v4f_status_t v4f_session_run(v4f_session_t* session, const v4f_tensor_t* inputs, size_t input_count,
                                     v4f_tensor_t* outputs, size_t output_count);

/* Computes the output dtypes/ranks/dims (and byte_size = the bytes needed)
 * for inputs of the given shapes, without running. Input `data` and
 * `byte_size` are ignored. Also plans the arena for these shapes. Dims that
 * depend on input values are reported as their upper bounds. */
V4F_API v4f_status_t v4f_session_resolve_output_shapes(v4f_session_t* session, const v4f_tensor_t* inputs,
                                                       size_t input_count, v4f_tensor_t* outputs, size_t output_count);

/* Stateful calls (a decoder's KV cache): feeds output `output_index` back as
 * input `input_index` on the session's next runs, without copying. The
 * session owns two buffers per binding and swaps them every run (the output
 * of run t is written straight into the buffer that run t+1 reads), growing
 * them as the dims grow (e.g. a past length that increases by one token per
 * call). On each run:
 *   - inputs[input_index] is the caller's tensor only on the first run after
 *     binding or v4f_session_reset_feedback (e.g. a past of length 0); on
 *     later runs it is ignored (its fields may be anything) and the previous
 *     run's output is used;
 *   - outputs[output_index].data / byte_size are ignored and set to the
 *     session's buffer, which stays valid and unchanged until the next run,
 *     reset or release (read the result there; do not free it).
 * v4f_session_resolve_output_shapes applies the same substitution (it
 * reports the shapes the next run will have).
 * The output and input must have the same dtype and rank; an output or input
 * can be in one binding only. A failed run keeps the previous state. */
V4F_API v4f_status_t v4f_session_bind_feedback(v4f_session_t* session, size_t output_index, size_t input_index);

/* Forgets the fed-back state (the bindings stay): the next run reads the
 * caller's inputs again, e.g. to start a new sequence. */
V4F_API v4f_status_t v4f_session_reset_feedback(v4f_session_t* session);

/* Bytes of the session's arena for the most recently planned input shapes
 * (0 before the first run/resolve or when there are no transient buffers). */
V4F_API size_t v4f_session_peak_memory(const v4f_session_t* session);

/* Threads the session runs workgroups on (the caller included). */
V4F_API int32_t v4f_session_thread_count(const v4f_session_t* session);

/* ---- profiling ---------------------------------------------------------- */

/* One dispatch run of the last v4f_session_run (a dispatch inside a loop
 * appears once per iteration; skipped dispatches do not appear). */
typedef struct v4f_dispatch_profile_t {
  const char* name;        /* source op / ONNX node (valid for the model's lifetime) */
  const char* kernel;      /* the kernel's entry point */
  uint32_t dispatch_index; /* position in the artifact's plan */
  int64_t workgroups;      /* workgroups run */
  uint64_t start_ns;       /* from the start of the run */
  uint64_t duration_ns;    /* wall time, the barrier after it included */
  double flops;            /* operations (a multiply-add counts 2), or -1 when not counted */
} v4f_dispatch_profile_t;

/* Enables (non-zero) or disables per-dispatch timing for the following runs
 * of `session`. Off by default; when on, each run records one entry per
 * dispatch run (two clock reads each). */
V4F_API v4f_status_t v4f_session_set_profiling(v4f_session_t* session, int32_t enable);

/* Entries recorded by the last run (0 when profiling is off or before a run). */
V4F_API size_t v4f_session_profile_count(const v4f_session_t* session);
V4F_API v4f_status_t v4f_session_profile_entry(const v4f_session_t* session, size_t index,
                                               v4f_dispatch_profile_t* entry);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* V4F_RUNTIME_H_ */
