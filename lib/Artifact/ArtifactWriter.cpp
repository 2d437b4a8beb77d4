//===- ArtifactWriter.cpp - Lays out and writes .v4f artifact files -------===//
//
// File layout (docs/artifact-format.md): the 64-byte header, then the CPU
// library section, then the constants section, then the manifest LAST. Putting
// the manifest last lets the writer know every section offset before building
// the manifest, which lists them; the header then points at the manifest.
// Every section starts at a multiple of 64; gaps are zero bytes.
//
// The writer does not validate the plan's indices: the runtime's loader is the
// verifier for untrusted files, and tests use the writer to build hostile ones.
//
//===----------------------------------------------------------------------===//
#include "v4f/Artifact/ArtifactWriter.h"

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

flatbuffers::Offset<fb::TensorSig>
buildTensorSig(flatbuffers::FlatBufferBuilder &fbb, const TensorSignature &sig) {
  auto name = fbb.CreateString(sig.name);
  auto dims = fbb.CreateVector(sig.dims);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> dimNames;
  if (!sig.dimNames.empty())
    dimNames = fbb.CreateVectorOfStrings(sig.dimNames);
  auto dimRegs = fbb.CreateVector(sig.dimRegs);
  return fb::CreateTensorSig(fbb, name, sig.dtype, dims, dimNames, dimRegs, sig.buffer);
}

struct SectionInfo {
  uint32_t kind;
  uint64_t offset;
  const std::vector<uint8_t> *bytes;
};

std::vector<uint8_t> buildManifest(const ExecutablePlan &plan,
                                   const std::vector<SectionInfo> &sections) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto producer = fbb.CreateString(plan.producer);
  auto modelName = fbb.CreateString(plan.modelName);
  auto triple = fbb.CreateString(plan.targetTriple);
  auto cpu = fbb.CreateString(plan.targetCpu);
  auto features = fbb.CreateVectorOfStrings(plan.cpuFeatures);

  std::vector<flatbuffers::Offset<fb::Section>> sectionOffsets;
  for (const SectionInfo &s : sections)
    sectionOffsets.push_back(fb::CreateSection(
        fbb, s.kind, s.offset, s.bytes->size(), v4f_digest64(s.bytes->data(), s.bytes->size())));
  auto sectionVec = fbb.CreateVector(sectionOffsets);

  auto kernels = fbb.CreateVectorOfStrings(plan.kernels);
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
    buffers.push_back(fb::CreateBuffer(fbb, static_cast<fb::BufferKind>(b.kind), b.index,
                                       b.constantOffset, b.sizeReg, b.firstUse, b.lastUse));
  auto bufferVec = fbb.CreateVector(buffers);

  std::vector<flatbuffers::Offset<fb::Dispatch>> dispatches;
  for (const PlanDispatch &d : plan.dispatches) {
    auto bindings = fbb.CreateVector(d.bindings);
    auto push = fbb.CreateVector(d.pushConstants);
    auto name = fbb.CreateString(d.name);
    dispatches.push_back(
        fb::CreateDispatch(fbb, d.kernel, bindings, push, d.workgroupCountReg, name));
  }
  auto dispatchVec = fbb.CreateVector(dispatches);

  auto manifest = fb::CreateManifest(fbb, producer, modelName, triple, cpu, features, sectionVec,
                                     kernels, inVec, outVec, programVec, bufferVec, dispatchVec);
  fb::FinishManifestBuffer(fbb, manifest);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace

bool serializeArtifact(const ExecutablePlan &plan, const std::vector<uint8_t> &cpuLibrary,
                       const std::vector<uint8_t> &constants, std::vector<uint8_t> &out,
                       std::string &error) {
  for (const TensorSignature &sig : plan.inputs)
    if (!sig.dimNames.empty() && sig.dimNames.size() != sig.dims.size()) {
      error = "input '" + sig.name + "': dimNames and dims differ in length";
      return false;
    }
  for (const TensorSignature &sig : plan.outputs)
    if (!sig.dimNames.empty() && sig.dimNames.size() != sig.dims.size()) {
      error = "output '" + sig.name + "': dimNames and dims differ in length";
      return false;
    }

  std::vector<SectionInfo> sections;
  uint64_t offset = sizeof(v4f_file_header_t);
  if (!cpuLibrary.empty()) {
    sections.push_back({V4F_SECTION_CPU_LIBRARY, offset, &cpuLibrary});
    offset = alignTo64(offset + cpuLibrary.size());
  }
  if (!constants.empty()) {
    sections.push_back({V4F_SECTION_CONSTANTS, offset, &constants});
    offset = alignTo64(offset + constants.size());
  }
  std::vector<uint8_t> manifest = buildManifest(plan, sections);
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
  putU64(h + 40, v4f_digest64(manifest.data(), manifest.size()));
  for (const SectionInfo &s : sections)
    std::memcpy(h + s.offset, s.bytes->data(), s.bytes->size());
  std::memcpy(h + manifestOffset, manifest.data(), manifest.size());
  return true;
}

bool writeArtifactFile(const std::string &path, const ExecutablePlan &plan,
                       const std::vector<uint8_t> &cpuLibrary,
                       const std::vector<uint8_t> &constants, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!serializeArtifact(plan, cpuLibrary, constants, bytes, error))
    return false;

  std::string dir = ".";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmpl = (dir == "/" ? std::string("/") : dir + "/") + ".v4f-tmp-XXXXXX";
  std::vector<char> tmpPath(tmpl.begin(), tmpl.end());
  tmpPath.push_back('\0');
  int fd = mkstemp(tmpPath.data());
  if (fd < 0) {
    error = path + ": cannot create a temporary file in '" + dir + "': " + std::strerror(errno);
    return false;
  }
  auto fail = [&](const char *what) {
    error = path + ": " + what + ": " + std::strerror(errno);
    close(fd);
    unlink(tmpPath.data());
    return false;
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return fail("write failed");
    }
    done += static_cast<size_t>(w);
  }
  // mkstemp creates 0600; an artifact is an ordinary output file.
  if (fchmod(fd, 0644) != 0)
    return fail("chmod failed");
  if (fsync(fd) != 0)
    return fail("fsync failed");
  if (close(fd) != 0) {
    error = path + ": close failed: " + std::strerror(errno);
    unlink(tmpPath.data());
    return false;
  }
  if (std::rename(tmpPath.data(), path.c_str()) != 0) {
    error = path + ": rename failed: " + std::strerror(errno);
    unlink(tmpPath.data());
    return false;
  }
  return true;
}

} // namespace v4f
