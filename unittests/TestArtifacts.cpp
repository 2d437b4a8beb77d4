// TestArtifacts.cpp - builders for the small artifacts the unit tests load and corrupt.
#include "TestArtifacts.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "v4f/Artifact/ArtifactSigner.h"
#include "v4f/artifact_format.h"
#include "v4f/kernel_abi.h"
#include "v4f_test/artifact_manifest_objapi.h"

namespace v4f {
namespace test {

std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string writeTempFile(const std::string &name, const std::vector<uint8_t> &bytes) {
  std::string path = ::testing::TempDir() + "v4f-" + std::to_string(getpid()) + "-" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

const std::vector<uint8_t> &testKernelLibrary() {
  static const std::vector<uint8_t> bytes = readFileBytes(V4F_TEST_KERNELS_PATH);
  return bytes;
}

const std::vector<uint8_t> &badAbiKernelLibrary() {
  static const std::vector<uint8_t> bytes = readFileBytes(V4F_TEST_KERNELS_BAD_ABI_PATH);
  return bytes;
}

namespace {
ShapeInstruction instr(ShapeOpKind op, uint32_t a, uint32_t b, int64_t imm = 0) {
  ShapeInstruction i;
  i.op = op;
  i.a = a;
  i.b = b;
  i.imm = imm;
  return i;
}
ShapeInstruction constant(int64_t v) { return instr(ShapeOpKind::Const, 0, 0, v); }

PlanBuffer buffer(BufferKind kind, uint32_t index, uint32_t sizeReg, uint32_t first = 0, uint32_t last = 0) {
  PlanBuffer b;
  b.kind = kind;
  b.index = index;
  b.sizeReg = sizeReg;
  b.firstUse = first;
  b.lastUse = last;
  return b;
}

PlanDispatch dispatch(uint32_t kernel, std::vector<uint32_t> bindings, std::vector<uint32_t> push, uint32_t wgReg,
                      std::string name) {
  PlanDispatch d;
  d.executable = 0;
  d.entryPoint = kernel;
  d.bindings = std::move(bindings);
  d.pushConstants = std::move(push);
  d.workgroupCount = {wgReg};
  d.scratchSize = wgReg; // any register: these kernels ignore scratch
  d.name = std::move(name);
  return d;
}
} // namespace

PlanExecutable testCpuExecutable(std::vector<std::string> entryPoints) {
  PlanExecutable e;
  e.target = ExecutableTarget::Cpu;
  e.format = ExecutableFormat::ElfSharedObject;
  e.abiVersion = V4F_KERNEL_ABI_VERSION;
  e.triple = "x86_64-unknown-linux-gnu";
  e.cpu = "generic";
  e.entryPoints = std::move(entryPoints);
  e.image = testKernelLibrary();
  return e;
}

namespace {} // namespace

ExecutablePlan addScalePlan() {
  ExecutablePlan p;
  p.producer = "v4f unittests";
  p.modelName = "add_scale";
  p.executables = {testCpuExecutable({"test_add_f32", "test_scale_f32", "test_fail"})};
  // r0 batch, r1 4, r2 n = batch*4, r3 4 bytes, r4 n*4 bytes, r5 16 (constant
  // bytes), r6 8, r7 workgroups = min(n, 8).
  p.shapeProgram = {instr(ShapeOpKind::InputDim, 0, 0),
                    constant(4),
                    instr(ShapeOpKind::Mul, 0, 1),
                    constant(4),
                    instr(ShapeOpKind::Mul, 2, 3),
                    constant(16),
                    constant(8),
                    instr(ShapeOpKind::Min, 2, 6)};
  TensorSignature x;
  x.name = "x";
  x.dtype = DType::Float32;
  x.dims = {-1, 4};
  x.dimNames = {"batch", ""};
  x.dimRegs = {0, 1};
  x.buffer = 0;
  TensorSignature y = x;
  y.name = "y";
  y.buffer = 1;
  TensorSignature out = x;
  out.name = "out/0";
  out.buffer = 4;
  p.inputs = {x, y};
  p.outputs = {out};
  PlanBuffer c = buffer(BufferKind::Constant, 0, 5);
  c.constantOffset = 0;
  p.buffers = {buffer(BufferKind::Input, 0, 4), buffer(BufferKind::Input, 1, 4),
               buffer(BufferKind::Transient, 0, 4, 0, 1), c, buffer(BufferKind::Output, 0, 4)};
  p.dispatches = {dispatch(0, {0, 1, 2}, {2}, 7, "add"), dispatch(1, {2, 3, 4}, {2, 1}, 7, "scale")};
  return p;
}

std::vector<uint8_t> addScaleConstants() {
  const float c[4] = {1.f, 2.f, 3.f, 4.f};
  std::vector<uint8_t> bytes(sizeof(c));
  std::memcpy(bytes.data(), c, sizeof(c));
  return bytes;
}

ExecutablePlan chainPlan(int64_t rows, int64_t cols, bool overlapAll) {
  ExecutablePlan p;
  p.producer = "v4f unittests";
  p.modelName = "chain";
  p.executables = {testCpuExecutable({"test_add_f32"})};
  // r0 rows, r1 cols, r2 n, r3 bytes, r4 workgroups (4).
  p.shapeProgram = {constant(rows), constant(cols), instr(ShapeOpKind::Mul, 0, 1), constant(rows * cols * 4),
                    constant(4)};
  TensorSignature x;
  x.name = "x";
  x.dtype = DType::Float32;
  x.dims = {rows, cols};
  x.dimRegs = {0, 1};
  x.buffer = 0;
  TensorSignature out = x;
  out.name = "y";
  out.buffer = 4;
  p.inputs = {x};
  p.outputs = {out};
  uint32_t a0 = 0, a1 = 1, b0 = 1, b1 = 2, c0 = 2, c1 = 3;
  if (overlapAll) a0 = b0 = c0 = 0, a1 = b1 = c1 = 3;
  p.buffers = {buffer(BufferKind::Input, 0, 3), buffer(BufferKind::Transient, 0, 3, a0, a1),
               buffer(BufferKind::Transient, 0, 3, b0, b1), buffer(BufferKind::Transient, 0, 3, c0, c1),
               buffer(BufferKind::Output, 0, 3)};
  p.dispatches = {dispatch(0, {0, 0, 1}, {2}, 4, "a"), dispatch(0, {1, 1, 2}, {2}, 4, "b"),
                  dispatch(0, {2, 2, 3}, {2}, 4, "c"), dispatch(0, {3, 3, 4}, {2}, 4, "d")};
  return p;
}

std::vector<uint8_t> buildArtifact(ExecutablePlan plan, const std::vector<uint8_t> &library,
                                   const std::vector<uint8_t> &constants) {
  for (PlanExecutable &e : plan.executables) e.image = library;
  for (ExecutablePlan &variant : plan.variants)
    for (PlanExecutable &e : variant.executables) e.image = library;
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_TRUE(serializeArtifact(plan, constants, out, error)) << error;
  return out;
}

std::vector<uint8_t> buildAddScaleArtifact() {
  return buildArtifact(addScalePlan(), testKernelLibrary(), addScaleConstants());
}

uint64_t getU64(const std::vector<uint8_t> &file, size_t offset) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | file[offset + static_cast<size_t>(i)];
  return v;
}

void putU64(std::vector<uint8_t> &file, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) file[offset + static_cast<size_t>(i)] = static_cast<uint8_t>(value >> (8 * i));
}

void editManifest(std::vector<uint8_t> &file, const std::function<void(fbtest::ManifestT &)> &edit) {
  uint64_t offset = getU64(file, 24);
  ASSERT_EQ(offset + getU64(file, 32), file.size()) << "the manifest must be the last section";
  std::unique_ptr<fbtest::ManifestT> manifest(fbtest::GetManifest(file.data() + offset)->UnPack());
  edit(*manifest);
  flatbuffers::FlatBufferBuilder fbb;
  fbtest::FinishManifestBuffer(fbb, fbtest::Manifest::Pack(fbb, manifest.get()));
  file.resize(offset);
  file.insert(file.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  putU64(file, 16, file.size());
  putU64(file, 32, fbb.GetSize());
  redigestManifest(file);
}

void redigestManifest(std::vector<uint8_t> &file) {
  uint64_t offset = getU64(file, 24);
  uint32_t algorithm = uint32_t(getU64(file, V4F_HEADER_OFFSET_DIGEST_ALGORITHM));
  v4f::Digest d = v4f::artifactDigest(file.data() + offset, file.size() - offset, algorithm);
  std::memcpy(file.data() + V4F_HEADER_OFFSET_MANIFEST_DIGEST, d.data(), d.size());
}

v4f_status_t tryLoad(const std::vector<uint8_t> &file, const v4f_model_options_t *options) {
  v4f_model_t *model = nullptr;
  v4f_status_t status = v4f_model_load_memory(file.data(), file.size(), options, nullptr, &model);
  if (status) EXPECT_EQ(model, nullptr);
  v4f_model_release(model);
  // The same bytes as a file: v4f_model_load_file reads them with its own
  // reader, which hashes digest-tree leaves as they arrive, planned from the
  // unverified header and manifest (runtime/src/file_reader.h). It must give
  // the same answer, with the path in front of the same message.
  std::string path = writeTempFile("tryload.v4f", file);
  v4f_model_t *fromFile = nullptr;
  v4f_status_t fileStatus = v4f_model_load_file(path.c_str(), options, nullptr, &fromFile);
  std::remove(path.c_str());
  EXPECT_EQ(status == nullptr, fileStatus == nullptr)
      << "from memory: " << (status ? v4f_status_message(status) : "loaded")
      << "; from a file: " << (fileStatus ? v4f_status_message(fileStatus) : "loaded");
  if (status && fileStatus) {
    EXPECT_EQ(v4f_status_code(status), v4f_status_code(fileStatus));
    // Option errors come before the file is opened: no path in front.
    std::string fromMemory = v4f_status_message(status), fromFileMessage = v4f_status_message(fileStatus);
    EXPECT_TRUE(fromFileMessage == path + ": " + fromMemory || fromFileMessage == fromMemory)
        << "from memory: " << fromMemory << "; from a file: " << fromFileMessage;
  }
  if (fileStatus) EXPECT_EQ(fromFile, nullptr);
  v4f_model_release(fromFile);
  v4f_status_free(fileStatus);
  return status;
}

std::string expectLoadError(const std::vector<uint8_t> &file, const std::string &substring,
                            const v4f_model_options_t *options) {
  v4f_status_t status = tryLoad(file, options);
  EXPECT_NE(status, nullptr) << "expected an error containing '" << substring << "'";
  std::string message = v4f_status_message(status);
  EXPECT_NE(message.find(substring), std::string::npos) << "message '" << message << "' lacks '" << substring << "'";
  v4f_status_free(status);
  return message;
}

v4f_tensor_t makeTensor(void *data, size_t bytes, int32_t dtype, std::vector<int64_t> dims) {
  v4f_tensor_t t{};
  t.data = data;
  t.byte_size = bytes;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  return t;
}

} // namespace test
} // namespace v4f
