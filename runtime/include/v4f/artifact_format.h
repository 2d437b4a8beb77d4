/* v4f/artifact_format.h - the .v4f artifact container (standalone, versioned).
 *
 * Layout of a .v4f file (all integers little-endian):
 *
 *   [0, 128)           v4f_file_header_t
 *   [128, ...)         sections, each starting at a multiple of 64 bytes:
 *                        - the FlatBuffers manifest (schema: artifact_manifest.fbs)
 *                        - one section per executable (the CPU shared object:
 *                          ELF, kernels per kernel_abi.h)
 *                        - constants (weights, already in their final layout)
 *
 * The header locates the manifest and carries its digest; the manifest
 * locates every other section and carries a digest for each (BLAKE2b-256
 * or BLAKE3 hash trees, V4F_DIGEST_* below). Readers must bounds-check every offset/size
 * against the file size (with overflow checks) and refuse a newer major format.
 *
 * Shared by the compiler (writer) and the runtime (reader); <stdint.h> only.
 */
#ifndef V4F_ARTIFACT_FORMAT_H_
#define V4F_ARTIFACT_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define V4F_ARTIFACT_MAGIC "V4FART\r\n" /* 8 bytes, no terminator stored */
#define V4F_ARTIFACT_MAGIC_SIZE 8
/* Major 2: the manifest lists executables (a CPU library per ISA, room for a
 * CUDA module) and each dispatch names its executable and entry point, a 1- to
 * 3-D workgroup grid and its per-worker scratch size; kernels follow kernel ABI
 * version 2. 2.1 adds optional TensorSig.dim_min / dim_max (bounds of symbolic
 * dims), which a 2.0 reader may ignore.
 * Major 3 adds Dispatch.guard: a dispatch runs only when its guard register is
 * non-zero (one side of a run-time If). A 2.x reader would ignore the guard and
 * run both sides, so it must refuse the artifact: hence a new major. 3.1 adds
 * Dispatch.flops, 3.2 Manifest.variants (multi-ISA: one plan per CPU target;
 * a 3.1 reader runs the baseline plan). A 3.x
 * reader still reads 2.x artifacts (they have no guards), and refuses majors
 * below V4F_ARTIFACT_FORMAT_OLDEST_MAJOR or above its own. 3.3 adds
 * Manifest.arena_bytes; 3.4 the signature trailer (below), which a 3.3
 * reader ignores (it still checks everything else). Major 4 adds encrypted
 * sections (Section.cipher): a 3.x reader would run ciphertext, so it must
 * refuse them. Major 5 replaces the 64-bit non-cryptographic digests of
 * majors 2-4 with BLAKE2b-256 hash trees (a 128-byte header holding the
 * manifest's, Section.digest 32 bytes) and requires every dispatch's entry
 * point to come with its kernel interface (kernel ABI 3). A 5.x reader
 * refuses every older major: their digests prove nothing, so they must be
 * recompiled. 5.1 adds CUDA executables (a v4f CUDA module, kernel_abi.h),
 * Dispatch.block_dim and transfer dispatches; a 5.0 reader refuses the CUDA
 * executable they come with. 5.2 adds BLAKE3 digest trees
 * (digest_algorithm 2) and signatures over them (signature algorithm 2),
 * which v4fc writes from then on: a 5.2 reader still reads 5.0/5.1 artifacts
 * (BLAKE2b, algorithm 1); a 5.0/5.1 reader refuses algorithm 2 through its
 * digest_algorithm check. */
#define V4F_ARTIFACT_FORMAT_MAJOR 5
#define V4F_ARTIFACT_FORMAT_MINOR 3
#define V4F_ARTIFACT_FORMAT_OLDEST_MAJOR 5
#define V4F_ARTIFACT_SECTION_ALIGNMENT 64

typedef struct v4f_file_header_t {
  char magic[V4F_ARTIFACT_MAGIC_SIZE]; /* V4F_ARTIFACT_MAGIC */
  uint16_t format_major;               /* readers refuse > their own major */
  uint16_t format_minor;
  uint32_t header_size;     /* sizeof(v4f_file_header_t) == 128 */
  uint64_t file_size;       /* total size of the file in bytes */
  uint64_t manifest_offset; /* multiple of 64 */
  uint64_t manifest_size;
  uint32_t digest_algorithm;   /* V4F_DIGEST_ALGORITHM_* (below) */
  uint32_t reserved0;          /* zero */
  uint64_t signature_offset;   /* 0 = unsigned; else the signature trailer's
                                          offset (file_size - sizeof trailer) */
  uint8_t manifest_digest[32]; /* v4f digest (below) of the manifest bytes */
  uint8_t reserved[40];        /* zero */
} v4f_file_header_t;

#define V4F_HEADER_OFFSET_DIGEST_ALGORITHM 40
#define V4F_HEADER_OFFSET_SIGNATURE_OFFSET 48
#define V4F_HEADER_OFFSET_MANIFEST_DIGEST 56
#define V4F_HEADER_OFFSET_RESERVED 88

#ifdef __cplusplus
static_assert(sizeof(v4f_file_header_t) == 128, "header must be 128 bytes");
static_assert(offsetof(v4f_file_header_t, signature_offset) == V4F_HEADER_OFFSET_SIGNATURE_OFFSET, "layout");
static_assert(offsetof(v4f_file_header_t, manifest_digest) == V4F_HEADER_OFFSET_MANIFEST_DIGEST, "layout");
static_assert(offsetof(v4f_file_header_t, reserved) == V4F_HEADER_OFFSET_RESERVED, "layout");
#else
_Static_assert(sizeof(v4f_file_header_t) == 128, "header must be 128 bytes");
#endif

/* Digests (format 5): the v4f digest of a byte string is a hash tree over
 * 1 MiB leaves, so a reader can hash the leaves of a large section in
 * parallel:
 *   leaf_i = H(bytes[i * LEAF, min((i + 1) * LEAF, size)))
 *   digest = H(le64(size) || leaf_0 || ... || leaf_{n-1})
 * with n = ceil(size / LEAF) (no leaves for an empty string) and H, with a
 * 32-byte output and no key, the header's digest_algorithm:
 *   1 (formats 5.0-5.1) BLAKE2b-256 (libsodium crypto_generichash);
 *   2 (format 5.2 on)   BLAKE3 (its default hash mode, 32 bytes), about
 *                       5x faster than BLAKE2b on AVX2/AVX-512 hosts.
 * One algorithm for the whole file. The header holds the manifest's digest,
 * Section.digest each section's (of the bytes stored: the ciphertext of an
 * encrypted section). Anyone can recompute a digest: they detect corruption,
 * not tampering -- signatures (below) do that. */
#define V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE 1
#define V4F_DIGEST_ALGORITHM_BLAKE3_TREE 2
#define V4F_DIGEST_BYTES 32
#define V4F_DIGEST_LEAF_BYTES (1u << 20)

/* Signed artifacts (format 3.4 on): a v4f_signature_t trailer is appended after
 * the last section, header.signature_offset points at it and header.file_size
 * counts it. The signature covers bytes [0, signature_offset) -- the header
 * with file_size and signature_offset included, the manifest and every
 * section -- as Ed25519 (libsodium crypto_sign_detached) over a digest of
 * those bytes, by the trailer's algorithm:
 *   1 (formats 3.4-5.1) the BLAKE2b-512 digest (crypto_generichash, 64 bytes);
 *   2 (format 5.2 on)   the v4f digest with BLAKE3 (digest algorithm 2 above,
 *                       32 bytes), whatever the header's digest_algorithm.
 * A reader with a trust policy checks it right after the fixed header
 * fields, before reading the manifest. */
#define V4F_SIGNATURE_MAGIC "V4FSIG\0\0"
#define V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512 1
#define V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE 2

typedef struct v4f_signature_t {
  char magic[8];          /* V4F_SIGNATURE_MAGIC */
  uint32_t algorithm;     /* V4F_SIGNATURE_ALGORITHM_* */
  uint32_t reserved0;     /* zero */
  uint8_t public_key[32]; /* the signer's Ed25519 public key */
  uint8_t signature[64];  /* Ed25519 signature of the algorithm's digest */
  uint8_t reserved[16];   /* zero */
} v4f_signature_t;

#ifdef __cplusplus
static_assert(sizeof(v4f_signature_t) == 128, "signature trailer must be 128 bytes");
#else
_Static_assert(sizeof(v4f_signature_t) == 128, "signature trailer must be 128 bytes");
#endif

/* Section ciphers (Section.cipher, format 4). */
#define V4F_CIPHER_NONE 0
#define V4F_CIPHER_XCHACHA20POLY1305_SECRETSTREAM 1
#define V4F_CIPHER_CHUNK (1u << 20)  /* plaintext bytes per secretstream chunk */
#define V4F_CIPHER_HEADER_BYTES 24   /* crypto_secretstream_xchacha20poly1305_HEADERBYTES */
#define V4F_CIPHER_CHUNK_OVERHEAD 17 /* crypto_secretstream_xchacha20poly1305_ABYTES */

/* Section kinds used in the manifest. */
#define V4F_SECTION_CPU_LIBRARY 1
#define V4F_SECTION_CONSTANTS 2
#define V4F_SECTION_GPU_MODULE 3

/* Element types: the numbering of ONNX TensorProto.DataType. */
#define V4F_DTYPE_FLOAT32 1
#define V4F_DTYPE_UINT8 2
#define V4F_DTYPE_INT8 3
#define V4F_DTYPE_UINT16 4
#define V4F_DTYPE_INT16 5
#define V4F_DTYPE_INT32 6
#define V4F_DTYPE_INT64 7
#define V4F_DTYPE_BOOL 9
#define V4F_DTYPE_FLOAT16 10
#define V4F_DTYPE_FLOAT64 11
#define V4F_DTYPE_UINT32 12
#define V4F_DTYPE_UINT64 13
/* Storage-only types: they cross the API one element per byte (bfloat16: two
 * bytes), the 4- and 2-bit integers unpacked and sign- (INT4/INT2) or
 * zero-extended (UINT4/UINT2) into their byte, float8 as its bit pattern. */
#define V4F_DTYPE_BFLOAT16 16
#define V4F_DTYPE_FLOAT8E4M3FN 17
#define V4F_DTYPE_FLOAT8E4M3FNUZ 18
#define V4F_DTYPE_FLOAT8E5M2 19
#define V4F_DTYPE_FLOAT8E5M2FNUZ 20
#define V4F_DTYPE_UINT4 21
#define V4F_DTYPE_INT4 22
#define V4F_DTYPE_FLOAT4E2M1 23 /* one element per byte, in the low 4 bits */
#define V4F_DTYPE_FLOAT8E8M0 24
#define V4F_DTYPE_UINT2 25
#define V4F_DTYPE_INT2 26

/* The name of a V4F_DTYPE_* ("unknown" for others); shared by the runtime's
 * v4f_dtype_name and the compiler's `v4fc inspect`. */
static inline const char* v4f_dtype_format_name(int32_t dtype) {
  switch (dtype) {
  case V4F_DTYPE_FLOAT32: return "float32";
  case V4F_DTYPE_UINT8: return "uint8";
  case V4F_DTYPE_INT8: return "int8";
  case V4F_DTYPE_UINT16: return "uint16";
  case V4F_DTYPE_INT16: return "int16";
  case V4F_DTYPE_INT32: return "int32";
  case V4F_DTYPE_INT64: return "int64";
  case V4F_DTYPE_BOOL: return "bool";
  case V4F_DTYPE_FLOAT16: return "float16";
  case V4F_DTYPE_FLOAT64: return "float64";
  case V4F_DTYPE_UINT32: return "uint32";
  case V4F_DTYPE_UINT64: return "uint64";
  case V4F_DTYPE_BFLOAT16: return "bfloat16";
  case V4F_DTYPE_FLOAT8E4M3FN: return "float8e4m3fn";
  case V4F_DTYPE_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
  case V4F_DTYPE_FLOAT8E5M2: return "float8e5m2";
  case V4F_DTYPE_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
  case V4F_DTYPE_UINT4: return "uint4";
  case V4F_DTYPE_INT4: return "int4";
  case V4F_DTYPE_FLOAT4E2M1: return "float4e2m1";
  case V4F_DTYPE_FLOAT8E8M0: return "float8e8m0";
  case V4F_DTYPE_UINT2: return "uint2";
  case V4F_DTYPE_INT2: return "int2";
  default: return "unknown";
  }
}

/* CPU features an artifact may require, by the names the manifest uses.
 * The runtime detects each with CPUID and refuses an artifact that needs one
 * this CPU lacks (or one it does not know). */
#define V4F_CPU_FEATURE_NAMES                                                                                          \
  "sse4.1", "sse4.2", "avx", "avx2", "fma", "f16c", "bmi", "bmi2", "avx512f", "avx512bw", "avx512dq", "avx512vl",      \
      "avx512vnni", "avx512bf16", "avx512fp16", "amx-tile", "amx-int8", "amx-bf16", "avxvnni"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* V4F_ARTIFACT_FORMAT_H_ */
