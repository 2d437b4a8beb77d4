// file_reader.cpp - the artifact file into private memory, on every core,
// with the digest-tree leaves of the ranges to verify hashed as they arrive
// (file_reader.h says why that is sound).
#include "file_reader.h"

#include <blake3.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "model.h"
#include "v4f/artifact_format.h"

namespace v4f {
namespace rt {

namespace {

constexpr uint64_t kLeaf = V4F_DIGEST_LEAF_BYTES;
constexpr uint64_t kLeavesPerUnit = 4;             // a unit of a planned range: 4 leaves
constexpr uint64_t kPlainUnit = uint64_t(4) << 20; // bytes no digest covers: 4 MiB units
constexpr uint64_t kMaxManifest = uint64_t(64) << 20;

// A range's tree-root input, le64(size) || leaves, rounded up to 64 bytes.
size_t rootBytes(uint64_t size) {
  return static_cast<size_t>(alignUp64(8 + (size + kLeaf - 1) / kLeaf * V4F_DIGEST_BYTES));
}

// [begin, end) of fd into dst + begin.
bool readFully(int fd, uint8_t* dst, uint64_t begin, uint64_t end, ReadFailure* failure) {
  uint64_t at = begin;
  while (at < end) {
    ssize_t r = pread(fd, dst + at, static_cast<size_t>(end - at), static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      failure->at = static_cast<size_t>(at);
      failure->err = r < 0 ? errno : 0;
      return false;
    }
    at += static_cast<uint64_t>(r);
  }
  return true;
}

struct Span {
  uint64_t offset, size;
};

// `span` lies in [lowest, limit) and overlaps none of taken[0, n).
bool placeable(Span span, uint64_t lowest, uint64_t limit, const Span* taken, uint32_t n) {
  if (span.size == 0 || span.offset < lowest || span.offset > limit || span.size > limit - span.offset) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (span.offset < taken[i].offset + taken[i].size && taken[i].offset < span.offset + span.size) return false;
  return true;
}

// The ranges verifyArtifact will digest with BLAKE3 trees, found by reading
// the header (and the signature trailer or the manifest) into dst. Anything
// unexpected plans nothing: verifyArtifact reports it.
uint32_t planRanges(int fd, uint8_t* dst, size_t size, const LoadOptions& options, Span* out) {
  constexpr uint64_t kHeader = sizeof(v4f_file_header_t);
  ReadFailure ignored;
  if (size < kHeader || !readFully(fd, dst, 0, kHeader, &ignored)) return 0;
  if (memcmp(dst, V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE) != 0 || readU32(dst + 12) != kHeader ||
      readU64(dst + 16) != size ||
      readU32(dst + V4F_HEADER_OFFSET_DIGEST_ALGORITHM) != V4F_DIGEST_ALGORITHM_BLAKE3_TREE)
    return 0;
  uint64_t contentSize = size;
  const uint64_t signatureOffset = readU64(dst + V4F_HEADER_OFFSET_SIGNATURE_OFFSET);
  if (signatureOffset != 0) {
    if (size < kHeader + sizeof(v4f_signature_t) || signatureOffset != size - sizeof(v4f_signature_t)) return 0;
    contentSize = signatureOffset;
    // A signature policy hashes all signed bytes first (verifySignature);
    // the sections' digests are then computed from memory.
    if (options.signaturePolicy != V4F_SIGNATURE_OFF) {
      if (!readFully(fd, dst, signatureOffset, size, &ignored)) return 0;
      if (readU32(dst + signatureOffset + offsetof(v4f_signature_t, algorithm)) ==
          V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE) {
        out[0] = Span{0, contentSize};
        return 1;
      }
    }
  }
  if (!options.verifyDigests) return 0;
  const Span manifest{readU64(dst + 24), readU64(dst + 32)};
  if (manifest.size > kMaxManifest || !placeable(manifest, kHeader, contentSize, nullptr, 0) ||
      !readFully(fd, dst, manifest.offset, manifest.offset + manifest.size, &ignored))
    return 0;
  const uint8_t* bytes = dst + manifest.offset;
  flatbuffers::Verifier verifier(bytes, static_cast<size_t>(manifest.size), /*max_depth=*/32,
                                 /*max_tables=*/1u << 20);
  if (!fb::VerifyManifestBuffer(verifier)) return 0;
  const auto* sections = fb::GetManifest(bytes)->sections();
  uint32_t n = 0;
  Span taken[Prehashed::kMaxRanges + 1] = {manifest};
  for (uint32_t i = 0; sections && i < sections->size() && n < Prehashed::kMaxRanges; ++i) {
    Span s{sections->Get(i)->offset(), sections->Get(i)->size()};
    if (!placeable(s, kHeader, contentSize, taken, n + 1)) continue;
    taken[n + 1] = s;
    out[n++] = s;
  }
  return n;
}

// [begin, end) of the file; range >= 0: leaves of that planned range, each
// hashed right after its read.
struct Unit {
  uint64_t begin, end;
  int32_t range;
};

struct Shared {
  int fd;
  uint8_t* dst;
  const Unit* units;
  size_t unitCount;
  const Span* spans;
  Prehashed* prehashed; // null: read only
  std::atomic<bool> failed{false};
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  bool anyFailure = false;
  ReadFailure failure; // the lowest byte a read stopped at
};

// One reader's share: units [first, end), contiguous in the file, so each
// thread faults in its own huge pages (dynamic claims measured no faster).
struct Worker {
  Shared* sh;
  size_t first, end;
};

void* readUnits(void* arg) {
  Worker* wk = static_cast<Worker*>(arg);
  Shared* sh = wk->sh;
  ReadFailure failure;
  bool ok = true;
  for (size_t u = wk->first; ok && u < wk->end && !sh->failed.load(std::memory_order_relaxed); ++u) {
    const Unit& unit = sh->units[u];
    if (unit.range < 0 || !sh->prehashed) {
      ok = readFully(sh->fd, sh->dst, unit.begin, unit.end, &failure);
      continue;
    }
    const Span& span = sh->spans[unit.range];
    uint8_t* leaves = sh->prehashed->ranges[unit.range].root + 8;
    for (uint64_t at = unit.begin; ok && at < unit.end; at += kLeaf) {
      uint64_t end = unit.end - at < kLeaf ? unit.end : at + kLeaf;
      ok = readFully(sh->fd, sh->dst, at, end, &failure);
      if (!ok) break;
      blake3_hasher h;
      blake3_hasher_init(&h);
      blake3_hasher_update(&h, sh->dst + at, static_cast<size_t>(end - at));
      blake3_hasher_finalize(&h, leaves + (at - span.offset) / kLeaf * V4F_DIGEST_BYTES, V4F_DIGEST_BYTES);
    }
  }
  if (!ok) {
    pthread_mutex_lock(&sh->lock);
    if (!sh->anyFailure || failure.at < sh->failure.at) sh->failure = failure;
    sh->anyFailure = true;
    pthread_mutex_unlock(&sh->lock);
    sh->failed.store(true, std::memory_order_relaxed);
  }
  return nullptr;
}

// Splits [begin, end) into units of at most `step` bytes.
size_t addUnits(Unit* units, size_t n, uint64_t begin, uint64_t end, uint64_t step, int32_t range) {
  for (uint64_t at = begin; at < end; at += step) units[n++] = Unit{at, end - at < step ? end : at + step, range};
  return n;
}

} // namespace

const Prehashed::Range* Prehashed::find(uint32_t alg, uint64_t offset, uint64_t size) const {
  if (alg != algorithm) return nullptr;
  for (uint32_t i = 0; i < count; ++i)
    if (ranges[i].offset == offset && ranges[i].size == size) return &ranges[i];
  return nullptr;
}

void Prehashed::release(const Allocator& allocator) {
  if (storage) allocator.free(storage);
  *this = Prehashed();
}

bool readArtifactFile(int fd, uint8_t* dst, size_t size, const LoadOptions& options, const Allocator& allocator,
                      Prehashed* prehashed, ReadFailure* failure) {
  *prehashed = Prehashed();
  Span spans[Prehashed::kMaxRanges];
  uint32_t n = planRanges(fd, dst, size, options, spans);
  // In file order (insertion sort of at most 16).
  for (uint32_t i = 1; i < n; ++i)
    for (uint32_t j = i; j > 0 && spans[j].offset < spans[j - 1].offset; --j) {
      Span t = spans[j];
      spans[j] = spans[j - 1];
      spans[j - 1] = t;
    }
  if (n) {
    size_t bytes = 0;
    for (uint32_t i = 0; i < n; ++i) bytes += rootBytes(spans[i].size);
    uint8_t* storage = static_cast<uint8_t*>(allocator.alloc(bytes, 64));
    if (!storage) n = 0; // read without hashing; verifyArtifact hashes as before
    prehashed->storage = storage;
    for (uint32_t i = 0; i < n; ++i) {
      Prehashed::Range& r = prehashed->ranges[i];
      r.offset = spans[i].offset;
      r.size = spans[i].size;
      r.root = storage;
      for (int b = 0; b < 8; ++b) storage[b] = static_cast<uint8_t>(r.size >> (8 * b));
      storage += rootBytes(r.size);
    }
  }

  // Units in file order: the gaps in 4 MiB pieces, the ranges 4 leaves each.
  Unit* units = static_cast<Unit*>(allocator.alloc(sizeof(Unit) * (2 * (size / kPlainUnit) + 4 * n + 4), 64));
  if (!units) {
    prehashed->release(allocator);
    failure->at = 0;
    failure->err = ENOMEM;
    return false;
  }
  size_t count = 0;
  uint64_t cursor = 0;
  for (uint32_t i = 0; i < n; ++i) {
    count = addUnits(units, count, cursor, spans[i].offset, kPlainUnit, -1);
    count = addUnits(units, count, spans[i].offset, spans[i].offset + spans[i].size, kLeavesPerUnit * kLeaf,
                     static_cast<int32_t>(i));
    cursor = spans[i].offset + spans[i].size;
  }
  count = addUnits(units, count, cursor, size, kPlainUnit, -1);

  Shared sh;
  sh.fd = fd;
  sh.dst = dst;
  sh.units = units;
  sh.unitCount = count;
  sh.spans = spans;
  sh.prehashed = n ? prehashed : nullptr;
  // One reader per online core, at most 8, each with at least 16 MiB.
  constexpr size_t kMinShare = size_t(16) << 20;
  size_t workers = size / kMinShare;
  if (workers > 8) workers = 8;
  if (workers > static_cast<size_t>(onlineCoreCount())) workers = static_cast<size_t>(onlineCoreCount());
  if (workers < 1) workers = 1;
  pthread_t threads[8];
  bool started[8] = {false};
  Worker wk[8];
  for (size_t w = 0; w < workers; ++w) wk[w] = Worker{&sh, count * w / workers, count * (w + 1) / workers};
  for (size_t w = 1; w < workers; ++w) started[w] = pthread_create(&threads[w], nullptr, readUnits, &wk[w]) == 0;
  readUnits(&wk[0]);
  for (size_t w = 1; w < workers; ++w)
    if (started[w])
      pthread_join(threads[w], nullptr);
    else
      readUnits(&wk[w]);
  allocator.free(units);
  if (sh.anyFailure) {
    *failure = sh.failure;
    prehashed->release(allocator);
    return false;
  }
  prehashed->algorithm = n ? V4F_DIGEST_ALGORITHM_BLAKE3_TREE : 0;
  prehashed->count = n;
  return true;
}

} // namespace rt
} // namespace v4f
