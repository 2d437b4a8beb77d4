// artifact_reader.cpp - verification of an untrusted .v4f artifact, in a fixed order.
//
// Order (docs/artifact-format.md): header size, magic, format version, header
// size field, file size, manifest bounds, manifest digest, FlatBuffers
// verification, sections (bounds, alignment, digest), plan indices, CPU
// features. Nothing in the manifest is read before the verifier accepted it.
#include "cpu_features.h"
#include "cuda.h"
#include "model.h"
#include "shape_program.h"
#include "v4f/artifact_format.h"

namespace v4f {
namespace rt {

namespace {

constexpr v4f_status_code_t kBad = V4F_STATUS_INVALID_ARTIFACT;

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// [offset, offset+size) inside [lowest, fileSize), without overflow.
bool rangeInFile(uint64_t offset, uint64_t size, uint64_t lowest, uint64_t fileSize) {
  uint64_t end;
  return offset >= lowest && checkedAdd(offset, size, &end) && end <= fileSize;
}

const char* sectionKindName(uint32_t kind) {
  switch (kind) {
  case V4F_SECTION_CPU_LIBRARY: return "cpu-library";
  case V4F_SECTION_CONSTANTS: return "constants";
  case V4F_SECTION_GPU_MODULE: return "gpu-module";
  default: return "unknown";
  }
}

// The fixed header fields: size, magic, version, header size, file size, the
// signature trailer's place. Reads nothing beyond the 128-byte header.
v4f_status_t verifyHeader(const uint8_t* base, size_t size, uint64_t* contentSize, uint32_t* digestAlgorithm) {
  if (size < sizeof(v4f_file_header_t))
    return makeStatus(kBad, "file is truncated: %zu bytes, smaller than the %zu-byte header", size,
                      sizeof(v4f_file_header_t));
  if (memcmp(base, V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE) != 0)
    return makeStatus(kBad, "not a v4f artifact (bad magic)");
  uint16_t major = readU16(base + 8), minor = readU16(base + 10);
  if (major > V4F_ARTIFACT_FORMAT_MAJOR)
    return makeStatus(V4F_STATUS_UNSUPPORTED, "artifact format %u.%u is newer than this runtime (%d.%d)", major, minor,
                      V4F_ARTIFACT_FORMAT_MAJOR, V4F_ARTIFACT_FORMAT_MINOR);
  if (major == 0) return makeStatus(kBad, "artifact format %u.%u is not a valid version", major, minor);
  if (major < V4F_ARTIFACT_FORMAT_OLDEST_MAJOR)
    return makeStatus(V4F_STATUS_UNSUPPORTED,
                      "artifact format %u.%u is older than this runtime (%d.%d) and no longer "
                      "supported: recompile the model with a current v4fc",
                      major, minor, V4F_ARTIFACT_FORMAT_MAJOR, V4F_ARTIFACT_FORMAT_MINOR);
  uint32_t headerSize = readU32(base + 12);
  if (headerSize != sizeof(v4f_file_header_t))
    return makeStatus(kBad, "header_size is %u, expected %zu", headerSize, sizeof(v4f_file_header_t));
  uint64_t fileSize = readU64(base + 16);
  if (fileSize != size)
    return makeStatus(kBad,
                      "file size mismatch: the header says %llu bytes but there are %zu "
                      "(truncated or corrupted)",
                      ull(fileSize), size);
  const uint32_t algorithm = readU32(base + V4F_HEADER_OFFSET_DIGEST_ALGORITHM);
  // BLAKE3 trees from format 5.2 on; BLAKE2b trees in 5.0-5.1 (still read).
  if (algorithm != V4F_DIGEST_ALGORITHM_BLAKE3_TREE && algorithm != V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE)
    return makeStatus(kBad, "header digest_algorithm is %u, expected %d (BLAKE3 tree) or %d (BLAKE2b-256 tree)",
                      algorithm, V4F_DIGEST_ALGORITHM_BLAKE3_TREE, V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE);
  *digestAlgorithm = algorithm;
  uint64_t signatureOffset = readU64(base + V4F_HEADER_OFFSET_SIGNATURE_OFFSET);
  for (size_t i = V4F_HEADER_OFFSET_DIGEST_ALGORITHM + 4; i < V4F_HEADER_OFFSET_SIGNATURE_OFFSET; ++i)
    if (base[i] != 0) return makeStatus(kBad, "header reserved byte %zu is not zero", i);
  for (size_t i = V4F_HEADER_OFFSET_RESERVED; i < sizeof(v4f_file_header_t); ++i)
    if (base[i] != 0) return makeStatus(kBad, "header reserved byte %zu is not zero", i);
  *contentSize = size;
  if (signatureOffset != 0) {
    if (size < sizeof(v4f_file_header_t) + sizeof(v4f_signature_t) || signatureOffset != size - sizeof(v4f_signature_t))
      return makeStatus(kBad, "signature_offset %llu is not the last %zu bytes of the %zu-byte file",
                        ull(signatureOffset), sizeof(v4f_signature_t), size);
    *contentSize = signatureOffset;
  }
  return nullptr;
}

// The manifest's location and digest (after the signature check).
v4f_status_t verifyManifestBytes(const v4f_model_s* m, bool verifyDigests, uint64_t* manifestOffset,
                                 uint64_t* manifestSize) {
  const uint8_t* base = m->base;
  const size_t size = static_cast<size_t>(m->contentSize);
  *manifestOffset = readU64(base + 24);
  *manifestSize = readU64(base + 32);
  if (!rangeInFile(*manifestOffset, *manifestSize, sizeof(v4f_file_header_t), size) || *manifestSize == 0)
    return makeStatus(kBad, "manifest (offset %llu, size %llu) is out of bounds of the %zu-byte file",
                      ull(*manifestOffset), ull(*manifestSize), size);
  if (*manifestOffset % V4F_ARTIFACT_SECTION_ALIGNMENT != 0)
    return makeStatus(kBad, "manifest offset %llu is not a multiple of %d", ull(*manifestOffset),
                      V4F_ARTIFACT_SECTION_ALIGNMENT);
  if (verifyDigests) {
    uint8_t digest[V4F_DIGEST_BYTES];
    if (v4f_status_t s = digestRange(m, m->digestAlgorithm, *manifestOffset, *manifestSize, digest)) return s;
    if (memcmp(digest, base + V4F_HEADER_OFFSET_MANIFEST_DIGEST, V4F_DIGEST_BYTES) != 0)
      return makeStatus(kBad, "manifest digest mismatch (corrupted file)");
  }
  return nullptr;
}

v4f_status_t verifySections(v4f_model_s* m, bool verifyDigests, uint64_t manifestOffset, uint64_t manifestSize) {
  const auto* sections = m->root->sections();
  if (!sections) return nullptr;
  const uint32_t nsec = sections->size();
  if (nsec > 4096) return makeStatus(kBad, "the artifact has %u sections, more than 4096", nsec);
  if (!m->sectionData.allocate(m->allocator, nsec ? nsec : 1) ||
      !m->sectionSize.allocate(m->allocator, nsec ? nsec : 1) || !m->plaintexts.allocate(m->allocator, nsec ? nsec : 1))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < m->plaintexts.size(); ++i) m->plaintexts[i] = nullptr;
  bool seen[4] = {false, false, false, false};
  for (uint32_t i = 0; i < sections->size(); ++i) {
    const fb::Section* s = sections->Get(i);
    uint32_t kind = s->kind();
    if (kind < V4F_SECTION_CPU_LIBRARY || kind > V4F_SECTION_GPU_MODULE)
      return makeStatus(kBad, "section %u has unknown kind %u", i, kind);
    // One constants section; executables may each have their own section.
    if (seen[kind] && kind == V4F_SECTION_CONSTANTS)
      return makeStatus(kBad, "section %u: more than one %s section", i, sectionKindName(kind));
    seen[kind] = true;
    if (!rangeInFile(s->offset(), s->size(), sizeof(v4f_file_header_t), m->contentSize))
      return makeStatus(kBad, "section %u (%s, offset %llu, size %llu) is out of bounds of the %llu-byte file", i,
                        sectionKindName(kind), ull(s->offset()), ull(s->size()), ull(m->contentSize));
    if (s->offset() % V4F_ARTIFACT_SECTION_ALIGNMENT != 0)
      return makeStatus(kBad, "section %u (%s) offset %llu is not a multiple of %d", i, sectionKindName(kind),
                        ull(s->offset()), V4F_ARTIFACT_SECTION_ALIGNMENT);
    uint64_t end = s->offset() + s->size();
    if (s->size() != 0 && s->offset() < manifestOffset + manifestSize && manifestOffset < end)
      return makeStatus(kBad, "section %u (%s) overlaps the manifest", i, sectionKindName(kind));
    if (!s->digest() || s->digest()->size() != V4F_DIGEST_BYTES)
      return makeStatus(kBad, "section %u (%s) has no %d-byte digest", i, sectionKindName(kind), V4F_DIGEST_BYTES);
    if (verifyDigests) {
      uint8_t digest[V4F_DIGEST_BYTES];
      if (v4f_status_t st = digestRange(m, m->digestAlgorithm, s->offset(), s->size(), digest)) return st;
      if (memcmp(digest, s->digest()->data(), V4F_DIGEST_BYTES) != 0)
        return makeStatus(kBad, "section %u (%s) digest mismatch (corrupted file)", i, sectionKindName(kind));
    }
    m->sectionData[i] = m->base + s->offset();
    m->sectionSize[i] = s->size();
    if (s->cipher() != V4F_CIPHER_NONE) {
      if (s->cipher() != V4F_CIPHER_XCHACHA20POLY1305_SECRETSTREAM)
        return makeStatus(kBad, "section %u (%s) uses unknown cipher %u", i, sectionKindName(kind), s->cipher());
      uint64_t plain = s->plain_size();
      uint64_t chunks = plain == 0 ? 1 : (plain + V4F_CIPHER_CHUNK - 1) / V4F_CIPHER_CHUNK;
      if (plain > s->size() || s->size() != V4F_CIPHER_HEADER_BYTES + plain + chunks * V4F_CIPHER_CHUNK_OVERHEAD)
        return makeStatus(kBad, "section %u (%s): %llu stored bytes cannot hold %llu encrypted bytes", i,
                          sectionKindName(kind), ull(s->size()), ull(plain));
      if (!s->key_id() || s->key_id()->size() != 16)
        return makeStatus(kBad, "section %u (%s) is encrypted but has no 16-byte key id", i, sectionKindName(kind));
    }
  }
  return nullptr;
}

v4f_status_t verifyTensorSigs(v4f_model_s* m, bool isInput) {
  const fb::Manifest* mf = m->manifest;
  const auto* sigs = isInput ? mf->inputs() : mf->outputs();
  const char* what = isInput ? "input" : "output";
  Array<v4f_tensor_info_t>& infos = isInput ? m->inputs : m->outputs;
  uint32_t n = sigs ? sigs->size() : 0;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  if (!infos.allocate(m->allocator, n)) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n; ++i) {
    const fb::TensorSig* sig = sigs->Get(i);
    const char* name = str(sig->name());
    v4f_tensor_info_t& info = infos[i];
    info.name = name;
    info.dtype = sig->dtype();
    if (v4f_dtype_size(sig->dtype()) == 0)
      return makeStatus(kBad, "%s %u '%s' has unknown dtype %d", what, i, name, sig->dtype());
    uint32_t rank = sig->dims() ? sig->dims()->size() : 0;
    if (rank > V4F_MAX_RANK)
      return makeStatus(kBad, "%s %u '%s' has rank %u, more than %d", what, i, name, rank, V4F_MAX_RANK);
    uint32_t nregs = sig->dim_regs() ? sig->dim_regs()->size() : 0;
    uint32_t nnames = sig->dim_names() ? sig->dim_names()->size() : 0;
    if (nregs != rank || (nnames != 0 && nnames != rank))
      return makeStatus(kBad, "%s %u '%s' has %u dims but %u dim_regs and %u dim_names", what, i, name, rank, nregs,
                        nnames);
    info.rank = static_cast<int32_t>(rank);
    // Compile-time bounds of symbolic dims: absent, or one per dim; -1 or
    // 1 <= min <= max, only where the dim is symbolic.
    const auto* lo = sig->dim_min();
    const auto* hi = sig->dim_max();
    if ((lo && lo->size() != rank) || (hi && hi->size() != rank) || (bool)lo != (bool)hi)
      return makeStatus(kBad, "%s %u '%s' has dim bounds of the wrong length", what, i, name);
    for (uint32_t d = 0; lo && d < rank; ++d) {
      int64_t a = lo->Get(d), b = hi->Get(d);
      bool none = a == -1 && b == -1;
      if (!none && (a < 1 || b < a || sig->dims()->Get(d) != -1))
        return makeStatus(kBad, "%s %u '%s' dim %u has bad bounds [%lld, %lld]", what, i, name, d,
                          static_cast<long long>(a), static_cast<long long>(b));
    }
    for (uint32_t d = 0; d < rank; ++d) {
      int64_t extent = sig->dims()->Get(d);
      if (extent < -1)
        return makeStatus(kBad, "%s %u '%s' dim %u is %lld", what, i, name, d, static_cast<long long>(extent));
      info.dims[d] = extent;
      info.dim_names[d] = nnames ? str(sig->dim_names()->Get(d)) : "";
      uint32_t reg = sig->dim_regs()->Get(d);
      if (reg >= m->registerCount)
        return makeStatus(kBad, "%s %u '%s' dim %u refers to shape register %u, but there are %u", what, i, name, d,
                          reg, m->registerCount);
    }
    if (sig->buffer() >= nbuf)
      return makeStatus(kBad, "%s %u '%s' refers to buffer %u, but there are %u", what, i, name, sig->buffer(), nbuf);
    const fb::Buffer* buf = mf->buffers()->Get(sig->buffer());
    fb::BufferKind want = isInput ? fb::BufferKind::Input : fb::BufferKind::Output;
    if (buf->kind() != want || buf->index() != i)
      return makeStatus(kBad, "%s %u '%s' refers to buffer %u, which is not %s %u", what, i, name, sig->buffer(), what,
                        i);
  }
  return nullptr;
}

// Every executable must be one this runtime can load: a CPU ELF shared
// object in a CPU library section or a v4f CUDA module in a GPU module
// section, following this runtime's kernel ABI.
v4f_status_t verifyExecutables(const fb::Manifest* mf, const fb::Manifest* root) {
  uint32_t nexe = mf->executables() ? mf->executables()->size() : 0;
  uint32_t nsec = root->sections() ? root->sections()->size() : 0;
  for (uint32_t i = 0; i < nexe; ++i) {
    const fb::Executable* e = mf->executables()->Get(i);
    // Per target: the image format and the section kind that holds it.
    bool cuda = e->target() == fb::ExecutableTarget::Cuda;
    if (!cuda && e->target() != fb::ExecutableTarget::Cpu)
      return makeStatus(V4F_STATUS_UNSUPPORTED, "executable %u targets an unknown device", i);
    if (e->format() != (cuda ? fb::ExecutableFormat::CudaModule : fb::ExecutableFormat::ElfSharedObject))
      return makeStatus(kBad,
                        cuda ? "executable %u: a CUDA executable must be a v4f CUDA module"
                             : "executable %u: a CPU executable must be an ELF shared object",
                        i);
    if (e->abi_version() != V4F_KERNEL_ABI_VERSION)
      return makeStatus(V4F_STATUS_UNSUPPORTED,
                        "executable %u uses kernel ABI version %u, this runtime supports %d "
                        "(recompile the model with a matching v4fc)",
                        i, e->abi_version(), V4F_KERNEL_ABI_VERSION);
    uint32_t kind = cuda ? V4F_SECTION_GPU_MODULE : V4F_SECTION_CPU_LIBRARY;
    if (e->section() >= nsec || root->sections()->Get(e->section())->kind() != kind)
      return makeStatus(kBad, "executable %u refers to section %u, which is not a %s section", i, e->section(),
                        cuda ? "GPU module" : "CPU library");
    for (uint32_t j = 0; j < nexe; ++j)
      if (j != i && mf->executables()->Get(j)->section() == e->section())
        return makeStatus(kBad, "executables %u and %u share section %u", i, j, e->section());
    uint32_t n = e->entry_points() ? e->entry_points()->size() : 0;
    if (n > (1u << 20)) return makeStatus(kBad, "executable %u has too many entry points (%u)", i, n);
    for (uint32_t k = 0; k < n; ++k) {
      const flatbuffers::String* name = e->entry_points()->Get(k);
      if (!name || name->size() == 0) return makeStatus(kBad, "executable %u entry point %u has an empty name", i, k);
    }
  }
  return nullptr;
}

/// Shape program: operands defined earlier, inputs and buffers that exist.
v4f_status_t verifyShapeProgram(const fb::Manifest* mf, uint32_t nregs) {
  uint32_t nin = mf->inputs() ? mf->inputs()->size() : 0;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  // Shape program: operands must be defined earlier; InputDim must name an
  // existing input dimension.
  for (uint32_t i = 0; i < nregs; ++i) {
    const fb::ShapeInstr* ins = mf->shape_program()->Get(i);
    uint8_t op = static_cast<uint8_t>(ins->op());
    if (op > static_cast<uint8_t>(fb::ShapeOp::MAX))
      return makeStatus(kBad, "shape program instruction %u has unknown op %u", i, op);
    if (ins->op() == fb::ShapeOp::Const) continue;
    if (ins->op() == fb::ShapeOp::LoopIndex || ins->op() == fb::ShapeOp::LoopCount) {
      uint32_t nloops = mf->loops() ? mf->loops()->size() : 0;
      if (ins->a() >= nloops)
        return makeStatus(kBad, "shape program instruction %u reads the iteration of loop %u, but there are %u loops",
                          i, ins->a(), nloops);
      if (ins->op() == fb::ShapeOp::LoopCount && (ins->imm() < 0 || ins->imm() >= int64_t(i)))
        return makeStatus(kBad,
                          "shape program instruction %u bounds by register %lld, which is not "
                          "defined before it",
                          i, static_cast<long long>(ins->imm()));
      continue;
    }
    if (ins->op() == fb::ShapeOp::InputDim) {
      if (ins->a() >= nin)
        return makeStatus(kBad, "shape program instruction %u reads input %u, but there are %u inputs", i, ins->a(),
                          nin);
      const auto* dims = mf->inputs()->Get(ins->a())->dims();
      uint32_t rank = dims ? dims->size() : 0;
      if (ins->b() >= rank)
        return makeStatus(kBad, "shape program instruction %u reads dim %u of input %u, which has rank %u", i, ins->b(),
                          ins->a(), rank);
      continue;
    }
    if (ins->op() == fb::ShapeOp::InputValue) {
      if (ins->a() >= nin)
        return makeStatus(kBad, "shape program instruction %u reads input %u, but there are %u inputs", i, ins->a(),
                          nin);
      int32_t dtype = mf->inputs()->Get(ins->a())->dtype();
      if (dtype != V4F_DTYPE_INT64 && dtype != V4F_DTYPE_INT32)
        return makeStatus(kBad,
                          "shape program instruction %u reads values of input %u, which is not "
                          "an int32/int64 tensor",
                          i, ins->a());
      continue;
    }
    if (ins->op() == fb::ShapeOp::DataValue) {
      if (ins->a() >= nbuf || mf->buffers()->Get(ins->a())->kind() != fb::BufferKind::Transient)
        return makeStatus(kBad,
                          "shape program instruction %u reads data of buffer %u, which is not a "
                          "transient buffer",
                          i, ins->a());
      // The buffer must have a constant size that holds element b.
      uint32_t sizeReg = mf->buffers()->Get(ins->a())->size_reg();
      const fb::ShapeInstr* size = sizeReg < nregs ? mf->shape_program()->Get(sizeReg) : nullptr;
      if (!size || size->op() != fb::ShapeOp::Const || size->imm() < (int64_t(ins->b()) + 1) * 8)
        return makeStatus(kBad,
                          "shape program instruction %u reads element %u of buffer %u, which "
                          "does not have a constant size that holds it",
                          i, ins->b(), ins->a());
      if (ins->imm() < 0 || ins->imm() >= int64_t(i))
        return makeStatus(kBad,
                          "shape program instruction %u bounds by register %lld, which is not "
                          "defined before it",
                          i, static_cast<long long>(ins->imm()));
      continue;
    }
    if (ins->op() == fb::ShapeOp::InputScaledDim) {
      if (ins->a() >= nin)
        return makeStatus(kBad, "shape program instruction %u reads input %u, but there are %u inputs", i, ins->a(),
                          nin);
      if (mf->inputs()->Get(ins->a())->dtype() != V4F_DTYPE_FLOAT32)
        return makeStatus(kBad,
                          "shape program instruction %u reads scale factors from input %u, which is "
                          "not a float32 tensor",
                          i, ins->a());
      if (ins->imm() < 0 || ins->imm() >= int64_t(i))
        return makeStatus(kBad,
                          "shape program instruction %u scales register %lld, which is not "
                          "defined before it",
                          i, static_cast<long long>(ins->imm()));
      continue;
    }
    if (ins->a() >= i || ins->b() >= i)
      return makeStatus(kBad,
                        "shape program instruction %u reads register %u, which is not defined "
                        "before it",
                        i, ins->a() >= i ? ins->a() : ins->b());
    if ((ins->op() == fb::ShapeOp::Broadcast || ins->op() == fb::ShapeOp::Expect) &&
        (ins->imm() < -1 || ins->imm() >= int64_t(mf->shape_labels() ? mf->shape_labels()->size() : 0)))
      return makeStatus(kBad, "shape program instruction %u names label %lld, which does not exist", i,
                        static_cast<long long>(ins->imm()));
    if (ins->op() == fb::ShapeOp::Select && (ins->imm() < 0 || ins->imm() >= int64_t(i)))
      return makeStatus(kBad,
                        "shape program instruction %u selects on register %lld, which is not "
                        "defined before it",
                        i, static_cast<long long>(ins->imm()));
  }
  return nullptr;
}

/// Loops: sorted, non-empty, inside the dispatch list, not overlapping or
/// nested, a trip-count register in range and a positive iteration bound.
v4f_status_t verifyLoops(const fb::Manifest* mf, uint32_t nregs) {
  if (!mf->loops()) return nullptr;
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
  uint32_t prevEnd = 0;
  for (uint32_t l = 0; l < mf->loops()->size(); ++l) {
    const fb::Loop* loop = mf->loops()->Get(l);
    const char* name = str(loop->name());
    if (loop->begin() >= loop->end() || loop->end() > ndis)
      return makeStatus(kBad, "loop %u '%s' covers dispatches [%u, %u), which is empty or outside the %u dispatches", l,
                        name, loop->begin(), loop->end(), ndis);
    if (loop->begin() < prevEnd)
      return makeStatus(kBad, "loop %u '%s' overlaps the loop before it (loops must be sorted and not nested)", l,
                        name);
    prevEnd = loop->end();
    if (loop->trip_count() >= nregs)
      return makeStatus(kBad, "loop %u '%s' trip count refers to shape register %u, but there are %u", l, name,
                        loop->trip_count(), nregs);
    if (loop->cond() < -1 || (loop->cond() >= 0 && uint64_t(loop->cond()) >= nregs))
      return makeStatus(kBad, "loop %u '%s' condition refers to shape register %lld, but there are %u", l, name,
                        static_cast<long long>(loop->cond()), nregs);
    if (loop->unbounded() && loop->cond() < 0)
      return makeStatus(kBad, "loop %u '%s' is unbounded but has no condition to end it", l, name);
    if (loop->max_iterations() <= 0)
      return makeStatus(kBad, "loop %u '%s' has a non-positive iteration bound %lld", l, name,
                        static_cast<long long>(loop->max_iterations()));
  }
  return nullptr;
}

/// Dispatches: executable and entry point, grid, scratch, push constants,
/// bindings within their buffers' lifetimes.
v4f_status_t verifyDispatches(const fb::Manifest* mf, uint32_t nregs) {
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  uint32_t nexe = mf->executables() ? mf->executables()->size() : 0;
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
  for (uint32_t d = 0; d < ndis; ++d) {
    const fb::Dispatch* dis = mf->dispatches()->Get(d);
    const char* name = str(dis->name());
    if (dis->executable() >= nexe)
      return makeStatus(kBad, "dispatch %u '%s' uses executable %u, but there are %u executables", d, name,
                        dis->executable(), nexe);
    const auto* entries = mf->executables()->Get(dis->executable())->entry_points();
    uint32_t nentries = entries ? entries->size() : 0;
    if (dis->entry_point() >= nentries)
      return makeStatus(kBad, "dispatch %u '%s' uses entry point %u of executable %u, which has %u", d, name,
                        dis->entry_point(), dis->executable(), nentries);
    bool cuda = mf->executables()->Get(dis->executable())->target() == fb::ExecutableTarget::Cuda;
    if (dis->transfer() > 2 || (dis->transfer() && (!cuda || !dis->bindings() || dis->bindings()->size() != 1)))
      return makeStatus(kBad, "dispatch %u '%s' is a malformed transfer (kind %u: one binding of a CUDA executable)", d,
                        name, unsigned(dis->transfer()));
    if (const auto* bd = dis->block_dim()) {
      uint64_t threads = 1;
      for (uint32_t j = 0; j < bd->size(); ++j) threads *= bd->Get(j);
      if (!cuda || bd->size() > 3 || threads == 0 || threads > 1024)
        return makeStatus(kBad, "dispatch %u '%s' has a bad block size (1 to 1024 threads, CUDA dispatches only)", d,
                          name);
    } else if (cuda && !dis->transfer()) {
      return makeStatus(kBad, "dispatch %u '%s' runs a CUDA kernel without a block size", d, name);
    }
    if (cuda && dis->bindings() && dis->bindings()->size() > V4F_CUDA_MAX_BINDINGS)
      return makeStatus(kBad, "dispatch %u '%s' binds %u buffers (a CUDA kernel takes at most %d)", d, name,
                        dis->bindings()->size(), V4F_CUDA_MAX_BINDINGS);
    if (cuda && dis->push_constants() && dis->push_constants()->size() > V4F_CUDA_MAX_PUSH_CONSTANTS)
      return makeStatus(kBad, "dispatch %u '%s' has too many push constants for a CUDA kernel", d, name);
    const auto* grid = dis->workgroup_count();
    uint32_t ngrid = grid ? grid->size() : 0;
    if (ngrid < 1 || ngrid > 3)
      return makeStatus(kBad, "dispatch %u '%s' has a %u-D workgroup grid (1 to 3 dims allowed)", d, name, ngrid);
    for (uint32_t j = 0; j < ngrid; ++j)
      if (grid->Get(j) >= nregs)
        return makeStatus(kBad,
                          "dispatch %u '%s' workgroup count %u refers to shape register %u, but "
                          "there are %u",
                          d, name, j, grid->Get(j), nregs);
    if (dis->guard() < -1 || (dis->guard() >= 0 && uint64_t(dis->guard()) >= nregs))
      return makeStatus(kBad, "dispatch %u '%s' guard refers to shape register %lld, but there are %u", d, name,
                        static_cast<long long>(dis->guard()), nregs);
    if (dis->flops() < -1 || (dis->flops() >= 0 && uint64_t(dis->flops()) >= nregs))
      return makeStatus(kBad, "dispatch %u '%s' flops count refers to shape register %lld, but there are %u", d, name,
                        static_cast<long long>(dis->flops()), nregs);
    if (dis->scratch_size() >= nregs)
      return makeStatus(kBad, "dispatch %u '%s' scratch size refers to shape register %u, but there are %u", d, name,
                        dis->scratch_size(), nregs);
    if (const auto* pcs = dis->push_constants()) {
      for (uint32_t j = 0; j < pcs->size(); ++j)
        if (pcs->Get(j) >= nregs)
          return makeStatus(kBad,
                            "dispatch %u '%s' push constant %u refers to shape register %u, but "
                            "there are %u",
                            d, name, j, pcs->Get(j), nregs);
    }
    if (const auto* binds = dis->bindings()) {
      for (uint32_t j = 0; j < binds->size(); ++j) {
        uint32_t bi = binds->Get(j);
        if (bi >= nbuf)
          return makeStatus(kBad, "dispatch %u '%s' binding %u refers to buffer %u, but there are %u buffers", d, name,
                            j, bi, nbuf);
        const fb::Buffer* b = mf->buffers()->Get(bi);
        if (b->kind() == fb::BufferKind::Transient && (d < b->first_use() || d > b->last_use()))
          return makeStatus(kBad, "dispatch %u '%s' binds transient buffer %u outside its lifetime [%u, %u]", d, name,
                            bi, b->first_use(), b->last_use());
      }
    }
  }
  return nullptr;
}

v4f_status_t verifyPlan(v4f_model_s* m) {
  const fb::Manifest* mf = m->manifest;
  uint32_t nregs = m->registerCount;
  uint32_t nin = mf->inputs() ? mf->inputs()->size() : 0;
  uint32_t nout = mf->outputs() ? mf->outputs()->size() : 0;
  uint32_t nbuf = mf->buffers() ? mf->buffers()->size() : 0;
  uint32_t nexe = mf->executables() ? mf->executables()->size() : 0;
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;

  // Limits keep hostile plans from making the loader or planner quadratic
  // in absurd sizes (real models stay far below).
  const uint32_t kMaxEntries = 1u << 16;
  if (nbuf > kMaxEntries || nin > kMaxEntries || nout > kMaxEntries || ndis > (1u << 20) || nexe > 64 ||
      nregs > (1u << 20))
    return makeStatus(kBad,
                      "the plan is too large (%u buffers, %u inputs, %u outputs, %u dispatches, "
                      "%u executables, %u shape registers)",
                      nbuf, nin, nout, ndis, nexe, nregs);

  if (v4f_status_t s = verifyShapeProgram(mf, nregs)) return s;

  // Registers computable from constants alone, to bounds-check constant
  // buffers now rather than at run time.
  Array<int64_t> regs;
  Array<bool> known;
  if (!regs.allocate(m->allocator, nregs) || !known.allocate(m->allocator, nregs))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (nregs)
    if (v4f_status_t s = evalShapeProgram(mf, nullptr, regs.data(), known.data())) return s;

  for (uint32_t i = 0; i < nbuf; ++i) {
    const fb::Buffer* b = mf->buffers()->Get(i);
    if (b->size_reg() >= nregs)
      return makeStatus(kBad, "buffer %u size refers to shape register %u, but there are %u", i, b->size_reg(), nregs);
    switch (b->kind()) {
    case fb::BufferKind::Input:
      if (b->index() >= nin)
        return makeStatus(kBad, "buffer %u refers to input %u, but there are %u inputs", i, b->index(), nin);
      // Only the buffer the signature names is the caller's memory (a
      // signature naming no proper buffer is reported with the signatures).
      if (uint32_t named = mf->inputs()->Get(b->index())->buffer();
          named != i && named < nbuf && mf->buffers()->Get(named)->kind() == fb::BufferKind::Input &&
          mf->buffers()->Get(named)->index() == b->index())
        return makeStatus(kBad, "buffer %u claims input %u, whose signature names buffer %u", i, b->index(), named);
      break;
    case fb::BufferKind::Output:
      if (b->index() >= nout)
        return makeStatus(kBad, "buffer %u refers to output %u, but there are %u outputs", i, b->index(), nout);
      if (uint32_t named = mf->outputs()->Get(b->index())->buffer();
          named != i && named < nbuf && mf->buffers()->Get(named)->kind() == fb::BufferKind::Output &&
          mf->buffers()->Get(named)->index() == b->index())
        return makeStatus(kBad, "buffer %u claims output %u, whose signature names buffer %u", i, b->index(), named);
      break;
    case fb::BufferKind::Constant: {
      uint64_t off = b->constant_offset();
      if (off % V4F_ARTIFACT_SECTION_ALIGNMENT != 0 || off > m->constantsSize)
        return makeStatus(kBad,
                          "buffer %u constant offset %llu is misaligned or outside the "
                          "%llu-byte constants section",
                          i, ull(off), ull(m->constantsSize));
      if (known[b->size_reg()]) {
        int64_t sz = regs[b->size_reg()];
        if (sz < 0 || static_cast<uint64_t>(sz) > m->constantsSize - off)
          return makeStatus(kBad,
                            "buffer %u constant range (offset %llu, size %lld) is outside the "
                            "%llu-byte constants section",
                            i, ull(off), static_cast<long long>(sz), ull(m->constantsSize));
      }
      break;
    }
    case fb::BufferKind::Transient:
      if (b->first_use() > b->last_use() || b->last_use() >= ndis)
        return makeStatus(kBad, "buffer %u has lifetime [%u, %u] outside the %u dispatches", i, b->first_use(),
                          b->last_use(), ndis);
      break;
    default: return makeStatus(kBad, "buffer %u has unknown kind %u", i, static_cast<unsigned>(b->kind()));
    }
  }

  if (v4f_status_t s = verifyTensorSigs(m, true)) return s;
  if (v4f_status_t s = verifyTensorSigs(m, false)) return s;

  if (v4f_status_t s = verifyExecutables(mf, m->root)) return s;

  if (v4f_status_t s = verifyDispatches(mf, nregs)) return s;
  if (v4f_status_t s = verifyLoops(mf, nregs)) return s;
  return nullptr;
}

v4f_status_t verifyCpuFeatures(const fb::Executable* exe, uint64_t disabled) {
  const auto* features = exe->features();
  if (!features || features->size() == 0) return nullptr;
  bool wantAmx = false;
  for (uint32_t i = 0; i < features->size(); ++i) {
    const char* name = str(features->Get(i));
    if (cpuFeatureIndex(name) < 0)
      return makeStatus(V4F_STATUS_UNSUPPORTED, "artifact requires unknown CPU feature '%s' (this runtime knows: %s)",
                        name,
                        "sse4.1, sse4.2, avx, avx2, fma, f16c, bmi, bmi2, avx512f, "
                        "avx512bw, avx512dq, avx512vl, avx512vnni, avx512bf16, avx512fp16, "
                        "amx-tile, amx-int8, amx-bf16, avxvnni");
    if (strncmp(name, "amx", 3) == 0) wantAmx = true;
  }
  uint64_t have = detectCpuFeatures(wantAmx) & ~disabled;
  char missing[512];
  size_t len = 0;
  missing[0] = 0;
  uint64_t reported = 0;
  for (uint32_t i = 0; i < features->size(); ++i) {
    int idx = cpuFeatureIndex(str(features->Get(i)));
    uint64_t bit = uint64_t(1) << idx;
    if ((have & bit) || (reported & bit)) continue;
    reported |= bit;
    int n = snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? ", " : "", cpuFeatureName(idx));
    if (n > 0) len = len + static_cast<size_t>(n) < sizeof(missing) ? len + n : sizeof(missing) - 1;
  }
  if (reported)
    return makeStatus(V4F_STATUS_UNSUPPORTED, "artifact requires CPU features not available on this machine: %s",
                      missing);
  return nullptr;
}

// The FlatBuffers 2.0 verifier checks a vector's length field for 4-byte
// alignment only; vectors of 8-byte elements must also be 8-aligned.
template <typename V>
bool aligned8(const V* vec) {
  // An empty vector has no element to misread (FlatBuffers only aligns the
  // length prefix of empty vectors to 4), e.g. the dims of a scalar.
  return !vec || vec->size() == 0 || reinterpret_cast<uintptr_t>(vec->Data()) % 8 == 0;
}

bool eightByteVectorsAligned(const fb::Manifest* mf) {
  if (!aligned8(mf->shape_program())) return false;
  for (const auto* sigs : {mf->inputs(), mf->outputs()})
    if (sigs)
      for (uint32_t i = 0; i < sigs->size(); ++i)
        if (!aligned8(sigs->Get(i)->dims())) return false;
  return true;
}

} // namespace

// Plans of a multi-ISA artifact besides the baseline (the compiler writes
// at most 7).
constexpr uint32_t kMaxVariants = 64;

v4f_status_t verifyArtifact(v4f_model_s* m, const LoadOptions& options) {
  uint64_t manifestOffset = 0, manifestSize = 0, contentSize = 0;
  if (v4f_status_t s = verifyHeader(m->base, m->size, &contentSize, &m->digestAlgorithm)) return s;
  m->contentSize = contentSize;
  // Signatures before anything else is read: a refused file has had only
  // its 128-byte header looked at, and no code is mapped.
  if (v4f_status_t s = verifySignature(m, options)) return s;
  if (v4f_status_t s = verifyManifestBytes(m, options.verifyDigests, &manifestOffset, &manifestSize)) return s;

  const uint8_t* manifestBytes = m->base + manifestOffset;
  flatbuffers::Verifier verifier(manifestBytes, static_cast<size_t>(manifestSize),
                                 /*max_depth=*/32, /*max_tables=*/1u << 20);
  if (!fb::VerifyManifestBuffer(verifier))
    return makeStatus(kBad, "manifest failed FlatBuffers verification (corrupted or not a v4f manifest)");
  m->root = m->manifest = fb::GetManifest(manifestBytes);
  m->variant = 0;
  const auto* variants = m->root->variants();
  const uint32_t nvariants = variants ? variants->size() : 0;
  if (nvariants > kMaxVariants)
    return makeStatus(kBad, "the artifact has %u plan variants, more than %u", nvariants, kMaxVariants);
  for (uint32_t v = 0; v <= nvariants; ++v) {
    const fb::Manifest* plan = v ? variants->Get(v - 1) : m->root;
    if (!eightByteVectorsAligned(plan))
      return makeStatus(kBad, "manifest failed FlatBuffers verification (misaligned 8-byte vector)");
    if (v && ((plan->sections() && plan->sections()->size()) || (plan->variants() && plan->variants()->size())))
      return makeStatus(kBad, "plan variant %u has sections or variants of its own", v);
  }

  if (v4f_status_t s = verifySections(m, options.verifyDigests, manifestOffset, manifestSize)) return s;
  if (v4f_status_t s = decryptSections(m, options)) return s;
  if (const auto* sections = m->root->sections())
    for (uint32_t i = 0; i < sections->size(); ++i)
      if (sections->Get(i)->kind() == V4F_SECTION_CONSTANTS) {
        m->constants = m->sectionData[i];
        m->constantsSize = m->sectionSize[i];
      }
  // Multi-ISA: run the plan whose CPU features this machine has, preferring
  // the one that needs the most; when none fits, report the baseline's
  // missing features.
  if (nvariants) {
    int64_t best = -1;
    uint64_t bestFeatures = 0;
    for (uint32_t v = 0; v <= nvariants; ++v) {
      const fb::Manifest* plan = v ? variants->Get(v - 1) : m->root;
      bool fits = true;
      uint64_t features = 0;
      if (const auto* exes = plan->executables())
        for (uint32_t i = 0; i < exes->size() && fits; ++i) {
          if (v4f_status_t s = verifyCpuFeatures(exes->Get(i), options.disabledFeatures)) {
            v4f_status_free(s);
            fits = false;
          }
          features += exes->Get(i)->features() ? exes->Get(i)->features()->size() : 0;
        }
      if (fits && (best < 0 || features > bestFeatures)) {
        best = v;
        bestFeatures = features;
      }
    }
    if (best > 0) {
      m->variant = static_cast<uint32_t>(best);
      m->manifest = variants->Get(m->variant - 1);
    }
  }
  m->registerCount = m->manifest->shape_program() ? m->manifest->shape_program()->size() : 0;
  if (v4f_status_t s = verifyPlan(m)) return s;
  // CUDA modules: their container (images, interface tables) within the section.
  if (const auto* exes = m->manifest->executables())
    for (uint32_t i = 0; i < exes->size(); ++i)
      if (exes->Get(i)->target() == fb::ExecutableTarget::Cuda)
        if (v4f_status_t s =
                verifyCudaModule(m->sectionData[exes->Get(i)->section()], m->sectionSize[exes->Get(i)->section()],
                                 exes->Get(i)->entry_points() ? exes->Get(i)->entry_points()->size() : 0, i))
          return s;
  if (const auto* exes = m->manifest->executables())
    for (uint32_t i = 0; i < exes->size(); ++i)
      if (v4f_status_t s = verifyCpuFeatures(exes->Get(i), options.disabledFeatures)) return s;
  return nullptr;
}

} // namespace rt
} // namespace v4f
