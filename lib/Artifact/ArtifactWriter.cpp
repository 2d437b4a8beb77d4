//===- ArtifactWriter.cpp - Lays out and writes .v4f artifact files -------===//
//
// File layout (docs/artifact-format.md): the 64-byte header, then one section
// per executable (the CPU library), then the constants section, then the manifest LAST. Putting
// the manifest last lets the writer know every section offset before building
// the manifest, which lists them; the header then points at the manifest.
// Every section starts at a multiple of 64; gaps are zero bytes.
//
// The writer does not validate the plan's indices: the runtime's loader is the
// verifier for untrusted files, and tests use the writer to build hostile ones.
//
//===----------------------------------------------------------------------===//
#include "v4f/Artifact/ArtifactWriter.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "v4f/artifact_format.h"
#include "v4f/artifact_manifest_generated.h"

namespace v4f {

namespace {

uint64_t alignTo64(uint64_t v) {
  return (v + V4F_ARTIFACT_SECTION_ALIGNMENT - 1) & ~uint64_t(V4F_ARTIFACT_SECTION_ALIGNMENT - 1);
}

void putU16(uint8_t *p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = uint8_t(v >> (8 * i));
}
void putU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void putU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

// The plan's enums mirror the schema's; a change on either side must fail
// to compile here rather than write wrong numbers.
#define V4F_SAME_ENUM(plan, schema)                                                                                    \
  static_assert(static_cast<int>(plan) == static_cast<int>(schema), #plan " differs from the schema")
V4F_SAME_ENUM(ShapeOpKind::Const, fb::ShapeOp::Const);
V4F_SAME_ENUM(ShapeOpKind::InputDim, fb::ShapeOp::InputDim);
V4F_SAME_ENUM(ShapeOpKind::Add, fb::ShapeOp::Add);
V4F_SAME_ENUM(ShapeOpKind::Sub, fb::ShapeOp::Sub);
V4F_SAME_ENUM(ShapeOpKind::Mul, fb::ShapeOp::Mul);
V4F_SAME_ENUM(ShapeOpKind::FloorDiv, fb::ShapeOp::FloorDiv);
V4F_SAME_ENUM(ShapeOpKind::CeilDiv, fb::ShapeOp::CeilDiv);
V4F_SAME_ENUM(ShapeOpKind::Max, fb::ShapeOp::Max);
V4F_SAME_ENUM(ShapeOpKind::Min, fb::ShapeOp::Min);
V4F_SAME_ENUM(ShapeOpKind::InputValue, fb::ShapeOp::InputValue);
V4F_SAME_ENUM(ShapeOpKind::Select, fb::ShapeOp::Select);
V4F_SAME_ENUM(ShapeOpKind::Lt, fb::ShapeOp::Lt);
V4F_SAME_ENUM(ShapeOpKind::Eq, fb::ShapeOp::Eq);
V4F_SAME_ENUM(ShapeOpKind::InputScaledDim, fb::ShapeOp::InputScaledDim);
V4F_SAME_ENUM(ShapeOpKind::DataValue, fb::ShapeOp::DataValue);
V4F_SAME_ENUM(ShapeOpKind::LoopIndex, fb::ShapeOp::LoopIndex);
V4F_SAME_ENUM(ShapeOpKind::LoopCount, fb::ShapeOp::LoopCount);
V4F_SAME_ENUM(ShapeOpKind::Broadcast, fb::ShapeOp::Broadcast);
V4F_SAME_ENUM(ShapeOpKind::Expect, fb::ShapeOp::Expect);
V4F_SAME_ENUM(ShapeOpKind::Expect, fb::ShapeOp::MAX);
V4F_SAME_ENUM(BufferKind::Input, fb::BufferKind::Input);
V4F_SAME_ENUM(BufferKind::Output, fb::BufferKind::Output);
V4F_SAME_ENUM(BufferKind::Constant, fb::BufferKind::Constant);
V4F_SAME_ENUM(BufferKind::Transient, fb::BufferKind::Transient);
V4F_SAME_ENUM(BufferKind::Transient, fb::BufferKind::MAX);
V4F_SAME_ENUM(ExecutableTarget::Cpu, fb::ExecutableTarget::Cpu);
V4F_SAME_ENUM(ExecutableTarget::Cuda, fb::ExecutableTarget::Cuda);
V4F_SAME_ENUM(ExecutableTarget::Cuda, fb::ExecutableTarget::MAX);
V4F_SAME_ENUM(ExecutableFormat::ElfSharedObject, fb::ExecutableFormat::ElfSharedObject);
V4F_SAME_ENUM(ExecutableFormat::CudaModule, fb::ExecutableFormat::CudaModule);
V4F_SAME_ENUM(ExecutableFormat::CudaModule, fb::ExecutableFormat::MAX);
#undef V4F_SAME_ENUM

flatbuffers::Offset<fb::TensorSig> buildTensorSig(flatbuffers::FlatBufferBuilder &fbb, const TensorSignature &sig) {
  auto name = fbb.CreateString(sig.name);
  auto dims = fbb.CreateVector(sig.dims);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> dimNames;
  if (!sig.dimNames.empty()) dimNames = fbb.CreateVectorOfStrings(sig.dimNames);
  auto dimRegs = fbb.CreateVector(sig.dimRegs);
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> dimMin, dimMax;
  if (!sig.dimMin.empty()) dimMin = fbb.CreateVector(sig.dimMin);
  if (!sig.dimMax.empty()) dimMax = fbb.CreateVector(sig.dimMax);
  return fb::CreateTensorSig(fbb, name, static_cast<int32_t>(sig.dtype), dims, dimNames, dimRegs, sig.buffer, dimMin,
                             dimMax);
}

struct SectionInfo {
  uint32_t kind;
  uint64_t offset;
  const std::vector<uint8_t> *bytes; // as stored (ciphertext when encrypted)
  uint8_t cipher = V4F_CIPHER_NONE;
  uint64_t plainSize = 0;
  std::array<uint8_t, 16> keyId{};
};

uint32_t sectionKind(ExecutableTarget target) {
  return target == ExecutableTarget::Cpu ? V4F_SECTION_CPU_LIBRARY : V4F_SECTION_GPU_MODULE;
}

flatbuffers::Offset<fb::Executable> buildExecutable(flatbuffers::FlatBufferBuilder &fbb, const PlanExecutable &e,
                                                    uint32_t section) {
  auto triple = fbb.CreateString(e.triple);
  auto cpu = fbb.CreateString(e.cpu);
  auto features = fbb.CreateVectorOfStrings(e.features);
  auto entries = fbb.CreateVectorOfStrings(e.entryPoints);
  return fb::CreateExecutable(fbb, static_cast<fb::ExecutableTarget>(e.target),
                              static_cast<fb::ExecutableFormat>(e.format), section, e.abiVersion, triple, cpu, features,
                              entries);
}

/// One plan as a Manifest table: the artifact's own (with `sections`,
/// producer, model name and the variants) or a variant's (plan fields only).
flatbuffers::Offset<fb::Manifest> buildPlanTable(flatbuffers::FlatBufferBuilder &fbb, const ExecutablePlan &plan,
                                                 const std::vector<SectionInfo> *sections,
                                                 const std::vector<std::vector<uint32_t>> &executableSections,
                                                 size_t variant) {
  flatbuffers::Offset<flatbuffers::String> producer, modelName;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Section>>> sectionVec;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Manifest>>> variantVec;
  if (sections) {
    producer = fbb.CreateString(plan.producer);
    modelName = fbb.CreateString(plan.modelName);
    std::vector<flatbuffers::Offset<fb::Section>> sectionOffsets;
    for (const SectionInfo &s : *sections) {
      flatbuffers::Offset<flatbuffers::Vector<uint8_t>> keyId;
      if (s.cipher != V4F_CIPHER_NONE) keyId = fbb.CreateVector(s.keyId.data(), s.keyId.size());
      Digest digest = artifactDigest(s.bytes->data(), s.bytes->size());
      auto digestVec = fbb.CreateVector(digest.data(), digest.size());
      sectionOffsets.push_back(
          fb::CreateSection(fbb, s.kind, s.offset, s.bytes->size(), digestVec, s.cipher, s.plainSize, keyId));
    }
    sectionVec = fbb.CreateVector(sectionOffsets);
    if (!plan.variants.empty()) {
      std::vector<flatbuffers::Offset<fb::Manifest>> variants;
      for (size_t v = 0; v < plan.variants.size(); ++v)
        variants.push_back(buildPlanTable(fbb, plan.variants[v], nullptr, executableSections, v + 1));
      variantVec = fbb.CreateVector(variants);
    }
  }

  std::vector<flatbuffers::Offset<fb::Executable>> executables;
  for (size_t i = 0; i < plan.executables.size(); ++i)
    executables.push_back(buildExecutable(fbb, plan.executables[i], executableSections[variant][i]));
  auto executableVec = fbb.CreateVector(executables);

  std::vector<flatbuffers::Offset<fb::TensorSig>> ins, outs;
  for (const TensorSignature &sig : plan.inputs) ins.push_back(buildTensorSig(fbb, sig));
  for (const TensorSignature &sig : plan.outputs) outs.push_back(buildTensorSig(fbb, sig));
  auto inVec = fbb.CreateVector(ins);
  auto outVec = fbb.CreateVector(outs);

  std::vector<fb::ShapeInstr> program;
  for (const ShapeInstruction &i : plan.shapeProgram)
    program.emplace_back(static_cast<fb::ShapeOp>(i.op), i.a, i.b, i.imm);
  auto programVec = fbb.CreateVectorOfStructs(program);

  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (const PlanBuffer &b : plan.buffers)
    buffers.push_back(fb::CreateBuffer(fbb, static_cast<fb::BufferKind>(b.kind), b.index, b.constantOffset, b.sizeReg,
                                       b.firstUse, b.lastUse));
  auto bufferVec = fbb.CreateVector(buffers);

  std::vector<flatbuffers::Offset<fb::Dispatch>> dispatches;
  for (const PlanDispatch &d : plan.dispatches) {
    auto bindings = fbb.CreateVector(d.bindings);
    auto push = fbb.CreateVector(d.pushConstants);
    auto workgroups = fbb.CreateVector(d.workgroupCount);
    auto name = fbb.CreateString(d.name);
    auto precision = d.precision.empty() ? 0 : fbb.CreateString(d.precision);
    auto blockDim = d.blockDim.empty() ? 0 : fbb.CreateVector(d.blockDim);
    dispatches.push_back(fb::CreateDispatch(fbb, d.executable, d.entryPoint, bindings, push, workgroups, d.scratchSize,
                                            name, d.guard ? int64_t(*d.guard) : int64_t(-1),
                                            d.flops ? int64_t(*d.flops) : int64_t(-1), precision, blockDim,
                                            static_cast<uint8_t>(d.transfer)));
  }
  auto dispatchVec = fbb.CreateVector(dispatches);

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Loop>>> loopVec;
  if (!plan.loops.empty()) {
    std::vector<flatbuffers::Offset<fb::Loop>> loops;
    for (const PlanLoop &l : plan.loops)
      loops.push_back(fb::CreateLoop(fbb, l.begin, l.end, l.tripCount, l.maxIterations, fbb.CreateString(l.name),
                                     l.cond ? int64_t(*l.cond) : int64_t(-1), l.unbounded));
    loopVec = fbb.CreateVector(loops);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> labelVec;
  if (!plan.shapeLabels.empty()) labelVec = fbb.CreateVectorOfStrings(plan.shapeLabels);

  return fb::CreateManifest(fbb, producer, modelName, sectionVec, executableVec, inVec, outVec, programVec, bufferVec,
                            dispatchVec, loopVec, labelVec, variantVec, plan.staticArenaBytes);
}

std::vector<uint8_t> buildManifest(const ExecutablePlan &plan, const std::vector<SectionInfo> &sections,
                                   const std::vector<std::vector<uint32_t>> &executableSections) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  fb::FinishManifestBuffer(fbb, buildPlanTable(fbb, plan, &sections, executableSections, 0));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace

bool serializeArtifact(const ExecutablePlan &plan, const std::vector<uint8_t> &constants, std::vector<uint8_t> &out,
                       std::string &error, const EncryptionKey *encryptionKey) {
  for (const TensorSignature &sig : plan.inputs) {
    if ((!sig.dimMin.empty() && sig.dimMin.size() != sig.dims.size()) ||
        (!sig.dimMax.empty() && sig.dimMax.size() != sig.dims.size())) {
      error = "input '" + sig.name + "': dim bounds and dims differ in length";
      return false;
    }
    if (!sig.dimNames.empty() && sig.dimNames.size() != sig.dims.size()) {
      error = "input '" + sig.name + "': dimNames and dims differ in length";
      return false;
    }
  }
  for (const TensorSignature &sig : plan.outputs)
    if (!sig.dimNames.empty() && sig.dimNames.size() != sig.dims.size()) {
      error = "output '" + sig.name + "': dimNames and dims differ in length";
      return false;
    }

  for (const ExecutablePlan &variant : plan.variants)
    if (!variant.variants.empty()) {
      error = "a plan variant cannot have variants of its own";
      return false;
    }
  // Sections: the baseline's executables, the constants, then each
  // variant's executables.
  std::vector<SectionInfo> sections;
  std::vector<std::vector<uint32_t>> executableSections(1 + plan.variants.size());
  uint64_t offset = sizeof(v4f_file_header_t);
  auto addExecutables = [&](const ExecutablePlan &p, size_t variant) {
    for (const PlanExecutable &e : p.executables) {
      executableSections[variant].push_back(sections.size());
      sections.push_back({sectionKind(e.target), offset, &e.image});
      offset = alignTo64(offset + e.image.size());
    }
  };
  addExecutables(plan, 0);
  if (!constants.empty()) {
    sections.push_back({V4F_SECTION_CONSTANTS, offset, &constants});
    offset = alignTo64(offset + constants.size());
  }
  for (size_t v = 0; v < plan.variants.size(); ++v) addExecutables(plan.variants[v], v + 1);
  // Encryption (format 4): every section becomes a secretstream; offsets
  // follow the ciphertext sizes.
  std::vector<std::vector<uint8_t>> ciphertexts;
  if (encryptionKey) {
    ciphertexts.resize(sections.size());
    std::array<uint8_t, 16> keyId = encryptionKeyId(*encryptionKey);
    offset = sizeof(v4f_file_header_t);
    for (size_t i = 0; i < sections.size(); ++i) {
      SectionInfo &sec = sections[i];
      if (!encryptSection(*sec.bytes, *encryptionKey, ciphertexts[i], error)) return false;
      sec.cipher = V4F_CIPHER_XCHACHA20POLY1305_SECRETSTREAM;
      sec.plainSize = sec.bytes->size();
      sec.keyId = keyId;
      sec.bytes = &ciphertexts[i];
      sec.offset = offset;
      offset = alignTo64(offset + ciphertexts[i].size());
    }
  }
  std::vector<uint8_t> manifest = buildManifest(plan, sections, executableSections);
  const uint64_t manifestOffset = offset;
  const uint64_t fileSize = manifestOffset + manifest.size();

  out.assign(fileSize, 0);
  uint8_t *h = out.data();
  std::memcpy(h, V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE);
  putU16(h + 8, V4F_ARTIFACT_FORMAT_MAJOR);
  putU16(h + 10, V4F_ARTIFACT_FORMAT_MINOR);
  putU32(h + 12, sizeof(v4f_file_header_t));
  putU64(h + 16, fileSize);
  putU64(h + 24, manifestOffset);
  putU64(h + 32, manifest.size());
  putU32(h + V4F_HEADER_OFFSET_DIGEST_ALGORITHM, V4F_DIGEST_ALGORITHM_BLAKE3_TREE);
  Digest manifestDigest = artifactDigest(manifest.data(), manifest.size());
  std::memcpy(h + V4F_HEADER_OFFSET_MANIFEST_DIGEST, manifestDigest.data(), manifestDigest.size());
  for (const SectionInfo &s : sections) std::memcpy(h + s.offset, s.bytes->data(), s.bytes->size());
  std::memcpy(h + manifestOffset, manifest.data(), manifest.size());
  return true;
}

bool writeArtifactFile(const std::string &path, const ExecutablePlan &plan, const std::vector<uint8_t> &constants,
                       std::string &error, const SigningKey *signingKey, const EncryptionKey *encryptionKey) {
  std::vector<uint8_t> bytes;
  if (!serializeArtifact(plan, constants, bytes, error, encryptionKey)) return false;
  // Signed in memory: a signed artifact is never on disk unsigned.
  if (signingKey && !signArtifactBytes(bytes, *signingKey, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeFileAtomically(path, bytes, error);
}

} // namespace v4f
