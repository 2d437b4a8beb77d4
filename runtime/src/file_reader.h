// file_reader.h - reading an artifact file into private memory, hashing the
// digest-tree leaves of its large ranges as each leaf arrives.
//
// v4f_model_load_file copies the file (a mapping would see later writes to
// it) and then checks its digests (artifact_reader.cpp), which hash every
// byte again. The fused reader hashes each 1 MiB leaf right after its pread,
// while the leaf is still in the core's cache, on the same threads that read
// it; verifyArtifact then only hashes the trees' roots (digestRange below).
//
// What a leaf digest here says is only "BLAKE3 of these bytes of the private
// copy": a leaf is hashed after the last write to its bytes, every byte of the
// copy is written once (the header and manifest the plan read are read
// again, and no leaf covers them), and the copy is read-only afterwards. So
// the plan may come from an unverified header and manifest: a wrong plan can
// only waste the hashing, never make a wrong digest pass, because a digest is
// looked up by its exact (offset, size) and recomputed when it is not there.
#ifndef V4F_RUNTIME_SRC_FILE_READER_H_
#define V4F_RUNTIME_SRC_FILE_READER_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

namespace v4f {
namespace rt {

struct LoadOptions;

// Ranges of the private copy whose digest-tree leaves are already hashed.
struct Prehashed {
  static constexpr uint32_t kMaxRanges = 16;
  struct Range {
    uint64_t offset = 0, size = 0;
    // le64(size) || leaf_0 || ... || leaf_{n-1}: the tree root's input.
    uint8_t* root = nullptr;
  };
  uint32_t algorithm = 0; // V4F_DIGEST_ALGORITHM_*; 0: nothing hashed
  uint32_t count = 0;
  Range ranges[kMaxRanges];
  void* storage = nullptr; // every range's root input, one allocation

  const Range* find(uint32_t algorithm, uint64_t offset, uint64_t size) const;
  void release(const Allocator& allocator);
};

// Where a read came up short: the byte it stopped at, and errno (0: the file
// shrank while it was read).
struct ReadFailure {
  size_t at = 0;
  int err = 0;
};

// Reads fd's bytes [0, size) into dst (size bytes, writable) on up to 8
// threads (one per online core, at least 16 MiB each). With BLAKE3 digests
// to check (options.verifyDigests, or a signature policy on a signed file),
// the ranges verifyArtifact will digest -- every section, or the signed bytes
// [0, signature_offset) -- are hashed leaf by leaf as they are read, into
// *prehashed. Returns false with *failure set when a read fails or comes up
// short. Out of memory for the leaves only turns the hashing off.
V4F_INTERNAL bool readArtifactFile(int fd, uint8_t* dst, size_t size, const LoadOptions& options,
                                   const Allocator& allocator, Prehashed* prehashed, ReadFailure* failure);

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_FILE_READER_H_
