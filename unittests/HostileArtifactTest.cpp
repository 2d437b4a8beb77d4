// HostileArtifactTest.cpp - corrupted, truncated and hostile .v4f files must fail cleanly.
//
// Each case expects a non-NULL status whose message names the problem; none
// may crash, hang or allocate absurd amounts (ASan/UBSan builds check that).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "TestArtifacts.h"
#include "v4f/artifact_format.h"
#include "v4f_test/artifact_manifest_objapi.h"

using namespace v4f::test;
namespace fbt = v4f::fbtest;

namespace {

constexpr uint64_t kHugeOffset = 0xFFFFFFFFFFFFFFC0ull;

// Index of the section of `kind` in the manifest.
size_t sectionIndex(const fbt::ManifestT &m, uint32_t kind) {
  for (size_t i = 0; i < m.sections.size(); ++i)
    if (m.sections[i]->kind == kind) return i;
  ADD_FAILURE() << "no section of kind " << kind;
  return 0;
}

TEST(HostileArtifact, WellFormedArtifactLoads) {
  v4f_status_t s = tryLoad(buildAddScaleArtifact());
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
}

TEST(HostileArtifact, TruncatedAtEveryPosition) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 256 && n < file.size(); ++n) lengths.push_back(n);
  for (size_t n = 257; n < file.size(); n += 61) lengths.push_back(n);
  lengths.push_back(file.size() - 1);
  for (size_t n : lengths) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<long>(n));
    SCOPED_TRACE("length " + std::to_string(n));
    expectLoadError(cut, "truncated");
  }
}

TEST(HostileArtifact, WrongMagic) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file[0] = 'X';
  expectLoadError(file, "not a v4f artifact (bad magic)");
}

TEST(HostileArtifact, NewerFormatVersionNamesBothVersions) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file[8] = V4F_ARTIFACT_FORMAT_MAJOR + 1;
  file[10] = 0;
  std::string path = writeTempFile("newer.v4f", file);
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_file(path.c_str(), nullptr, nullptr, &model);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(v4f_status_code(s), V4F_STATUS_UNSUPPORTED);
  EXPECT_EQ(std::string(v4f_status_message(s)), path + ": artifact format 6.0 is newer than this runtime (5.3)");
  v4f_status_free(s);
  unlink(path.c_str());
}

TEST(HostileArtifact, WrongHeaderSize) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file[12] = 32;
  expectLoadError(file, "header_size is 32, expected 128");
}

TEST(HostileArtifact, FileSizeMismatch) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file.push_back(0);
  expectLoadError(file, "file size mismatch: the header says");
  file.pop_back();
  putU64(file, 16, file.size() + 64);
  expectLoadError(file, "file size mismatch");
}

TEST(HostileArtifact, ManifestOutOfBoundsOrOverflowing) {
  std::vector<uint8_t> base = buildAddScaleArtifact();
  std::vector<uint8_t> file = base;
  putU64(file, 24, kHugeOffset); // offset + size wraps around
  expectLoadError(file, "manifest (offset 18446744073709551552");
  file = base;
  putU64(file, 32, ~uint64_t(0)); // size alone overflows
  expectLoadError(file, "is out of bounds");
  file = base;
  putU64(file, 24, 0); // overlaps the header
  expectLoadError(file, "is out of bounds");
  file = base;
  putU64(file, 32, getU64(base, 32) + 1);
  expectLoadError(file, "is out of bounds");
  file = base;
  putU64(file, 24, getU64(base, 24) - 8);
  putU64(file, 32, getU64(base, 32) + 8);
  expectLoadError(file, "is not a multiple of 64");
}

TEST(HostileArtifact, ManifestDigestMismatch) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file[getU64(file, 24) + 20] ^= 0x40;
  expectLoadError(file, "manifest digest mismatch");
}

TEST(HostileArtifact, ManifestFailingFlatBuffersVerification) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  uint64_t offset = getU64(file, 24), size = getU64(file, 32);
  uint32_t state = 12345;
  for (uint64_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    file[offset + i] = static_cast<uint8_t>(state >> 24);
  }
  (void)size;
  redigestManifest(file);
  expectLoadError(file, "manifest failed FlatBuffers verification");
}

TEST(HostileArtifact, SectionOutOfBoundsOrOverflowing) {
  std::vector<uint8_t> base = buildAddScaleArtifact();
  std::vector<uint8_t> file = base;
  editManifest(file,
               [](fbt::ManifestT &m) { m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->offset = kHugeOffset; });
  expectLoadError(file, "section 1 (constants, offset 18446744073709551552, size 16) is out of bounds");
  file = base;
  editManifest(
      file, [](fbt::ManifestT &m) { m.sections[sectionIndex(m, V4F_SECTION_CPU_LIBRARY)]->size = ~uint64_t(0) - 32; });
  expectLoadError(file, "section 0 (cpu-library");
  file = base;
  editManifest(file,
               [&](fbt::ManifestT &m) { m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->size = base.size(); });
  expectLoadError(file, "is out of bounds");
  file = base;
  editManifest(file, [](fbt::ManifestT &m) { m.sections[0]->offset = 0; });
  expectLoadError(file, "is out of bounds");
}

TEST(HostileArtifact, MisalignedSection) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->offset += 4; });
  expectLoadError(file, "section 1 (constants) offset");
  expectLoadError(file, "is not a multiple of 64");
}

TEST(HostileArtifact, SectionOverlappingManifest) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  uint64_t manifestOffset = getU64(file, 24);
  editManifest(file,
               [&](fbt::ManifestT &m) { m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->offset = manifestOffset; });
  expectLoadError(file, "overlaps the manifest");
}

TEST(HostileArtifact, UnknownAndDuplicateSections) {
  std::vector<uint8_t> base = buildAddScaleArtifact();
  std::vector<uint8_t> file = base;
  editManifest(file, [](fbt::ManifestT &m) { m.sections[0]->kind = 77; });
  expectLoadError(file, "section 0 has unknown kind 77");
  file = base;
  editManifest(file, [](fbt::ManifestT &m) { m.sections[0]->kind = m.sections[1]->kind; });
  expectLoadError(file, "more than one constants section");
}

TEST(HostileArtifact, ConstantsDigestMismatch) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  uint64_t constantsOffset = 0;
  editManifest(
      file, [&](fbt::ManifestT &m) { constantsOffset = m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->offset; });
  file[constantsOffset + 3] ^= 1;
  expectLoadError(file, "section 1 (constants) digest mismatch");
  // Skipping digest verification is an explicit opt-out.
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.verify_digests = 0;
  v4f_status_t s = tryLoad(file, &options);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
}

// A constants section of 20 MiB + 5 bytes: 21 digest leaves, hashed on
// several threads (one per 4 leaves). It verifies, and one flipped bit in
// any leaf -- the first, a middle one, the short last one -- or in the
// length-prefixed root's input (a byte more) is refused. Run under TSan too
// (docs/testing.md).
TEST(HostileArtifact, LargeSectionDigestOnSeveralThreads) {
  std::vector<uint8_t> constants = addScaleConstants();
  constants.resize((size_t(20) << 20) + 5);
  for (size_t i = 16; i < constants.size(); ++i) constants[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  const std::vector<uint8_t> base = buildArtifact(addScalePlan(), testKernelLibrary(), constants);
  v4f_status_t s = tryLoad(base);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
  std::vector<uint8_t> probe = base;
  uint64_t constantsOffset = 0;
  editManifest(
      probe, [&](fbt::ManifestT &m) { constantsOffset = m.sections[sectionIndex(m, V4F_SECTION_CONSTANTS)]->offset; });
  for (uint64_t at : {uint64_t(100), uint64_t(9) << 20, (uint64_t(20) << 20) + 4}) {
    std::vector<uint8_t> file = base;
    file[constantsOffset + at] ^= 0x80;
    expectLoadError(file, "section 1 (constants) digest mismatch");
  }
}

TEST(HostileArtifact, PlanReferencesMissingBuffer) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->bindings[2] = 99; });
  expectLoadError(file, "dispatch 1 'scale' binding 2 refers to buffer 99, but there are 5 buffers");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.outputs[0]->buffer = 5; });
  expectLoadError(file, "output 0 'out/0' refers to buffer 5, but there are 5");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.outputs[0]->buffer = 2; });
  expectLoadError(file, "refers to buffer 2, which is not output 0");
}

TEST(HostileArtifact, PlanReferencesMissingKernel) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->entry_point = 3; });
  expectLoadError(file, "dispatch 0 'add' uses entry point 3 of executable 0, which has 3");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->executable = 1; });
  expectLoadError(file, "dispatch 1 'scale' uses executable 1, but there are 1 executables");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.executables[0]->entry_points[2] = ""; });
  expectLoadError(file, "executable 0 entry point 2 has an empty name");
}

TEST(HostileArtifact, ExecutablesThisRuntimeCannotRun) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.executables[0]->target = fbt::ExecutableTarget::Cuda; });
  expectLoadError(file, "executable 0: a CUDA executable must be a v4f CUDA module");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.executables[0]->target = fbt::ExecutableTarget::Cuda;
    m.executables[0]->format = fbt::ExecutableFormat::CudaModule;
  });
  expectLoadError(file, "which is not a GPU module section");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.executables[0]->target = static_cast<fbt::ExecutableTarget>(7); });
  expectLoadError(file, "targets an unknown device");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.executables[0]->abi_version = 1; });
  expectLoadError(file, "executable 0 uses kernel ABI version 1, this runtime supports 3");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.executables[0]->section = static_cast<uint32_t>(sectionIndex(m, V4F_SECTION_CONSTANTS));
  });
  expectLoadError(file, "which is not a CPU library section");
  file = buildAddScaleArtifact();
  editManifest(
      file, [](fbt::ManifestT &m) { m.executables.push_back(std::make_unique<fbt::ExecutableT>(*m.executables[0])); });
  expectLoadError(file, "executables 0 and 1 share section");
}

// A multi-ISA artifact whose variant is a copy of the add_scale plan that
// needs sse4.1 (every machine here has it, so loading picks the variant).
std::vector<uint8_t> buildWithVariant() {
  v4f::ExecutablePlan plan = addScalePlan();
  v4f::ExecutablePlan variant = plan;
  variant.producer.clear();
  variant.modelName.clear();
  variant.executables.front().features = {"sse4.1"};
  plan.variants.push_back(variant);
  return buildArtifact(plan, testKernelLibrary(), addScaleConstants());
}

TEST(HostileArtifact, BadPlanVariantsAreRefused) {
  ASSERT_EQ(tryLoad(buildWithVariant()), nullptr);
  // The variant picked is verified like any plan.
  std::vector<uint8_t> file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) { m.variants[0]->dispatches[1]->bindings[2] = 99; });
  expectLoadError(file, "dispatch 1 'scale' binding 2 refers to buffer 99, but there are 5 buffers");
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) { m.variants[0]->executables[0]->section = 7; });
  expectLoadError(file, "executable 0 refers to section 7, which is not a CPU library section");
  // Its executables live in the artifact's sections: a variant naming the
  // constants section is refused.
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) {
    m.variants[0]->executables[0]->section = static_cast<uint32_t>(sectionIndex(m, V4F_SECTION_CONSTANTS));
  });
  expectLoadError(file, "which is not a CPU library section");
  // Sections and variants belong to the artifact's own manifest only.
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) {
    m.variants[0]->sections.push_back(std::make_unique<fbt::SectionT>(*m.sections[0]));
  });
  expectLoadError(file, "plan variant 1 has sections or variants of its own");
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) { m.variants[0]->variants.push_back(std::make_unique<fbt::ManifestT>()); });
  expectLoadError(file, "plan variant 1 has sections or variants of its own");
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) {
    for (int i = 0; i < 65; ++i) m.variants.push_back(std::make_unique<fbt::ManifestT>());
  });
  expectLoadError(file, "the artifact has 66 plan variants, more than 64");
  // A variant with an unknown CPU feature is never picked; an unknown
  // feature in the baseline is still an error.
  file = buildWithVariant();
  editManifest(file, [](fbt::ManifestT &m) { m.variants[0]->executables[0]->features = {"sse9"}; });
  ASSERT_EQ(tryLoad(file), nullptr);
}

TEST(HostileArtifact, OldFormatVersionIsRefused) {
  // An artifact of format 1 (kernel ABI v1, one CPU kernel list) is refused
  // before its manifest is read, with a message saying what to do.
  std::vector<uint8_t> file = buildAddScaleArtifact();
  file[8] = 1;
  file[9] = 0;
  file[10] = 0; // minor
  file[11] = 0;
  expectLoadError(file, "artifact format 1.0 is older than this runtime (5.3) and no longer supported: "
                        "recompile the model");
}

TEST(HostileArtifact, BadWorkgroupGridOrScratch) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->workgroup_count.clear(); });
  expectLoadError(file, "dispatch 0 'add' has a 0-D workgroup grid (1 to 3 dims allowed)");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->workgroup_count.assign(4, 0); });
  expectLoadError(file, "has a 4-D workgroup grid");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->scratch_size = 77; });
  expectLoadError(file, "dispatch 1 'scale' scratch size refers to shape register 77, but there are 8");
  // CUDA fields (format 5.1) on a CPU dispatch: a block size, a transfer.
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->block_dim = {256}; });
  expectLoadError(file, "dispatch 0 'add' has a bad block size (1 to 1024 threads, CUDA dispatches only)");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->transfer = 1; });
  expectLoadError(file, "dispatch 0 'add' is a malformed transfer");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->transfer = 9; });
  expectLoadError(file, "dispatch 0 'add' is a malformed transfer (kind 9");
}

TEST(HostileArtifact, PlanReferencesMissingRegister) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->push_constants[0] = 100; });
  expectLoadError(file, "push constant 0 refers to shape register 100, but there are 8");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->workgroup_count = {1, 8}; });
  expectLoadError(file, "workgroup count 1 refers to shape register 8");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.buffers[3]->size_reg = 1000; });
  expectLoadError(file, "buffer 3 size refers to shape register 1000");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[0]->dim_regs[1] = 8; });
  expectLoadError(file, "input 0 'x' dim 1 refers to shape register 8");
  file = buildAddScaleArtifact();
  // Instruction 2 (Mul) reading register 5, defined only later.
  editManifest(file, [](fbt::ManifestT &m) { m.shape_program[2] = fbt::ShapeInstr(fbt::ShapeOp::Mul, 0, 5, 0); });
  expectLoadError(file, "shape program instruction 2 reads register 5, which is not defined before it");
  file = buildAddScaleArtifact();
  editManifest(
      file, [](fbt::ManifestT &m) { m.shape_program[3] = fbt::ShapeInstr(static_cast<fbt::ShapeOp>(200), 0, 0, 0); });
  expectLoadError(file, "shape program instruction 3 has unknown op 200");
}

TEST(HostileArtifact, PlanReferencesMissingInput) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.buffers[1]->index = 2; });
  expectLoadError(file, "buffer 1 refers to input 2, but there are 2 inputs");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.shape_program[0] = fbt::ShapeInstr(fbt::ShapeOp::InputDim, 3, 0, 0); });
  expectLoadError(file, "shape program instruction 0 reads input 3, but there are 2 inputs");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.shape_program[0] = fbt::ShapeInstr(fbt::ShapeOp::InputDim, 1, 2, 0); });
  expectLoadError(file, "shape program instruction 0 reads dim 2 of input 1, which has rank 2");
}

// Loads `file` (which must load), runs add_scale once at batch 1 on a
// session with `maxArenaBytes`, and returns the run's error message (the
// test fails if the run succeeds); `code` receives its status code.
std::string runAddScaleOnce(const std::vector<uint8_t> &file, uint64_t maxArenaBytes, int32_t *code = nullptr) {
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  if (s) {
    v4f_status_free(s);
    return "load failed";
  }
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.max_arena_bytes = maxArenaBytes;
  v4f_session_t *session = nullptr;
  s = v4f_session_create(model, &options, nullptr, &session);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  std::string error = "session failed";
  if (!s) {
    float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1}, out[4];
    v4f_tensor_t in[2] = {makeTensor(x, 16, V4F_DTYPE_FLOAT32, {1, 4}), makeTensor(y, 16, V4F_DTYPE_FLOAT32, {1, 4})};
    v4f_tensor_t o = makeTensor(out, 16, 0, {});
    s = v4f_session_run(session, in, 2, &o, 1);
    EXPECT_NE(s, nullptr) << "the run succeeded";
    error = v4f_status_message(s);
    if (code) *code = v4f_status_code(s);
  }
  v4f_status_free(s);
  v4f_session_release(session);
  v4f_model_release(model);
  return error;
}

// The audit's memory-safety cases: a transient buffer turned into a second
// "input 0" (kernels would address caller memory with the transient's larger
// size), and an input buffer planned larger than the tensor the signature
// describes. The first is refused at load, the second before any kernel runs.
TEST(HostileArtifact, CallerBuffersAreOnlyTheSignaturesAndNoLargerThanTheTensors) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.buffers[2]->kind = fbt::BufferKind::Input;
    m.buffers[2]->index = 0;
  });
  expectLoadError(file, "buffer 2 claims input 0, whose signature names buffer 0");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.buffers[2]->kind = fbt::BufferKind::Output;
    m.buffers[2]->index = 0;
  });
  expectLoadError(file, "buffer 2 claims output 0, whose signature names buffer 4");

  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.shape_program.push_back(fbt::ShapeInstr(fbt::ShapeOp::Const, 0, 0, 1 << 20));
    m.buffers[0]->size_reg = static_cast<uint32_t>(m.shape_program.size() - 1);
  });
  std::string error;
  ASSERT_NO_FATAL_FAILURE(error = runAddScaleOnce(file, 0));
  EXPECT_NE(error.find("input 0 'x': byte_size is 16, but the model reads 1048576 bytes"), std::string::npos) << error;
}

// Found by fuzz_artifact: a plan whose transient buffer claims 2 TiB. The
// arena allocation fails cleanly (RESOURCE_EXHAUSTED, no abort), and with
// max_arena_bytes it is refused before anything is allocated.
TEST(HostileArtifact, HugeArenaIsAnErrorNotAnAbort) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.shape_program.push_back(fbt::ShapeInstr(fbt::ShapeOp::Const, 0, 0, int64_t(1) << 41));
    m.buffers[2]->size_reg = static_cast<uint32_t>(m.shape_program.size() - 1);
  });
  for (uint64_t limit : {uint64_t(256) << 20, uint64_t(0)}) {
#if V4F_SANITIZED
    if (limit == 0) continue; // the sanitizer's allocator aborts on 2 TiB instead of failing
#endif
    int32_t code = 0;
    std::string error;
    ASSERT_NO_FATAL_FAILURE(error = runAddScaleOnce(file, limit, &code));
    EXPECT_EQ(code, V4F_STATUS_RESOURCE_EXHAUSTED) << error;
    EXPECT_NE(error.find(limit ? "over the session's max_arena_bytes" : "arena"), std::string::npos) << error;
  }
}

TEST(HostileArtifact, InconsistentSignatureAndBuffers) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[0]->dtype = 99; });
  expectLoadError(file, "input 0 'x' has unknown dtype 99");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[1]->dim_regs.pop_back(); });
  expectLoadError(file, "input 1 'y' has 2 dims but 1 dim_regs");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[0]->dims.assign(9, 1); });
  expectLoadError(file, "has rank 9, more than 8");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.buffers[2]->last_use = 2; });
  expectLoadError(file, "buffer 2 has lifetime [0, 2] outside the 2 dispatches");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.buffers[2]->first_use = 1; // still bound by dispatch 0
  });
  expectLoadError(file, "dispatch 0 'add' binds transient buffer 2 outside its lifetime [1, 1]");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.buffers[3]->constant_offset = 64; });
  expectLoadError(file, "constant offset 64 is misaligned or outside the 16-byte constants section");
  file = buildAddScaleArtifact();
  editManifest(file,
               [](fbt::ManifestT &m) { m.shape_program[5] = fbt::ShapeInstr(fbt::ShapeOp::Const, 0, 0, 1 << 20); });
  expectLoadError(file, "constant range (offset 0, size 1048576) is outside");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[0]->buffer = 1; });
  expectLoadError(file, "refers to buffer 1, which is not input 0");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.buffers[2]->kind = static_cast<fbt::BufferKind>(9); });
  expectLoadError(file, "buffer 2 has unknown kind 9");
}

TEST(HostileArtifact, KernelMissingFromLibrary) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.executables[0].entryPoints[1] = "no_such_kernel";
  expectLoadError(buildArtifact(plan, testKernelLibrary(), addScaleConstants()),
                  "kernel 'no_such_kernel' is not exported by the CPU library");
}

TEST(HostileArtifact, NoLibraryOrNotAnElf) {
  v4f::ExecutablePlan noExecutable = addScalePlan();
  noExecutable.executables.clear();
  expectLoadError(buildArtifact(noExecutable, {}, addScaleConstants()),
                  "dispatch 0 'add' uses executable 0, but there are 0 executables");
  std::vector<uint8_t> garbage(300, 0x5a);
  expectLoadError(buildArtifact(addScalePlan(), garbage, addScaleConstants()),
                  "the CPU library section is not an ELF file");
  std::vector<uint8_t> broken = testKernelLibrary();
  broken.resize(200);
  expectLoadError(buildArtifact(addScalePlan(), broken, addScaleConstants()), "cannot load the CPU library");
}

TEST(HostileArtifact, KernelAbiVersionMismatch) {
  expectLoadError(buildArtifact(addScalePlan(), badAbiKernelLibrary(), addScaleConstants()),
                  "the CPU library uses kernel ABI version 99, this runtime supports 3");
}

TEST(HostileArtifact, MissingCpuFeaturesAreNamed) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.executables[0].features = {"sse4.2", "avx2", "amx-tile"};
  std::vector<uint8_t> file = buildArtifact(plan, testKernelLibrary(), addScaleConstants());
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.disabled_cpu_features = "avx2, amx-tile";
  std::string message =
      expectLoadError(file, "artifact requires CPU features not available on this machine: ", &options);
  EXPECT_NE(message.find("avx2"), std::string::npos) << message;
  EXPECT_NE(message.find("amx-tile"), std::string::npos) << message;

  options.disabled_cpu_features = "avx2,warp-drive";
  expectLoadError(file, "disabled_cpu_features: unknown CPU feature 'warp-drive'", &options);
}

TEST(HostileArtifact, UnknownCpuFeatureRefused) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.executables[0].features = {"avx2", "quantum-entangler"};
  expectLoadError(buildArtifact(plan, testKernelLibrary(), addScaleConstants()),
                  "artifact requires unknown CPU feature 'quantum-entangler'");
}

TEST(HostileArtifact, HugePlanIsRefused) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.buffers.resize(70000, plan.buffers[2]);
  expectLoadError(buildArtifact(plan, testKernelLibrary(), addScaleConstants()),
                  "the plan is too large (70000 buffers");
}

TEST(HostileArtifact, RandomByteFlipsNeverCrash) {
  // Flips in the manifest (re-digested so the FlatBuffers and plan checks see
  // them); section digests stay on, so sections moved by a flip are caught.
  std::vector<uint8_t> base = buildAddScaleArtifact();
  uint32_t state = 987654321u;
  uint64_t manifestOffset = getU64(base, 24);
  // V4F_FLIP_ITERATIONS runs longer by hand (e.g. under ASan).
  const char *env = std::getenv("V4F_FLIP_ITERATIONS");
  int iterations = env ? std::atoi(env) : 400;
  for (int i = 0; i < iterations; ++i) {
    std::vector<uint8_t> file = base;
    state = state * 1664525u + 1013904223u;
    uint64_t pos = manifestOffset + (state >> 8) % (file.size() - manifestOffset);
    file[pos] ^= static_cast<uint8_t>(1u << (state & 7));
    redigestManifest(file);
    v4f_status_free(tryLoad(file));
  }
}

// Format 2.1: compile-time bounds of symbolic dims (v4fc --dim N=MIN..MAX)
// are verified at load: one per dim or none, only on symbolic dims,
// 1 <= min <= max (or -1, -1 for an unbounded dim).
TEST(HostileArtifact, BadDimBoundsAreRefused) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.inputs[0]->dim_min = {1};
    m.inputs[0]->dim_max = {4};
  });
  expectLoadError(file, "input 0 'x' has dim bounds of the wrong length");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.inputs[0]->dim_max = {4, -1}; });
  expectLoadError(file, "input 0 'x' has dim bounds of the wrong length");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.inputs[0]->dim_min = {1, 1};
    m.inputs[0]->dim_max = {4, 4}; // dim 1 is static
  });
  expectLoadError(file, "input 0 'x' dim 1 has bad bounds [1, 4]");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.inputs[0]->dim_min = {5, -1};
    m.inputs[0]->dim_max = {4, -1};
  });
  expectLoadError(file, "input 0 'x' dim 0 has bad bounds [5, 4]");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.inputs[0]->dim_min = {0, -1};
    m.inputs[0]->dim_max = {4, -1};
  });
  expectLoadError(file, "input 0 'x' dim 0 has bad bounds [0, 4]");
}

TEST(HostileArtifact, GuardOutOfRangeIsRefused) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  uint32_t nregs = 0;
  editManifest(file, [&](fbt::ManifestT &m) {
    nregs = static_cast<uint32_t>(m.shape_program.size());
    m.dispatches[1]->guard = nregs;
  });
  expectLoadError(file, "dispatch 1 'scale' guard refers to shape register " + std::to_string(nregs) +
                            ", but there are " + std::to_string(nregs));
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->guard = -2; });
  expectLoadError(file, "dispatch 0 'add' guard refers to shape register -2");
}

TEST(HostileArtifact, FlopsRegisterOutOfRangeIsRefused) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  uint32_t nregs = 0;
  editManifest(file, [&](fbt::ManifestT &m) {
    nregs = static_cast<uint32_t>(m.shape_program.size());
    m.dispatches[0]->flops = nregs;
  });
  expectLoadError(file, "dispatch 0 'add' flops count refers to shape register " + std::to_string(nregs) +
                            ", but there are " + std::to_string(nregs));
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->flops = -7; });
  expectLoadError(file, "dispatch 1 'scale' flops count refers to shape register -7");
}

TEST(HostileArtifact, BadLoopsAreRefused) {
  auto withLoop = [](uint32_t begin, uint32_t end, uint32_t trip, int64_t max) {
    std::vector<uint8_t> file = buildAddScaleArtifact();
    editManifest(file, [&](fbt::ManifestT &m) {
      auto loop = std::make_unique<fbt::LoopT>();
      loop->begin = begin;
      loop->end = end;
      loop->trip_count = trip;
      loop->max_iterations = max;
      loop->name = "loop 'L'";
      m.loops.push_back(std::move(loop));
    });
    return file;
  };
  expectLoadError(withLoop(1, 1, 0, 4),
                  "loop 0 'loop 'L'' covers dispatches [1, 1), which is empty or outside the 2 dispatches");
  expectLoadError(withLoop(0, 3, 0, 4), "covers dispatches [0, 3), which is empty or outside the 2 dispatches");
  expectLoadError(withLoop(0, 2, 1000, 4), "loop 0 'loop 'L'' trip count refers to shape register 1000");
  expectLoadError(withLoop(0, 2, 0, 0), "loop 0 'loop 'L'' has a non-positive iteration bound 0");
  std::vector<uint8_t> badCond = withLoop(0, 2, 0, 4);
  editManifest(badCond, [](fbt::ManifestT &m) { m.loops[0]->cond = 5000; });
  expectLoadError(badCond, "loop 0 'loop 'L'' condition refers to shape register 5000");
  std::vector<uint8_t> file = withLoop(0, 2, 0, 4);
  editManifest(file, [](fbt::ManifestT &m) {
    auto second = std::make_unique<fbt::LoopT>(*m.loops[0]);
    second->begin = 1;
    m.loops.push_back(std::move(second));
  });
  expectLoadError(file, "loop 1 'loop 'L'' overlaps the loop before it");
  // An iteration-number register needs its loop.
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.shape_program[0] = fbt::ShapeInstr(fbt::ShapeOp::LoopIndex, 0, 0, 0); });
  expectLoadError(file, "shape program instruction 0 reads the iteration of loop 0, but there are 0 loops");
  // A well-formed loop loads.
  v4f_status_t s = tryLoad(withLoop(0, 2, 0, 4));
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
}

TEST(HostileArtifact, BroadcastLabelOutOfRangeIsRefused) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file,
               [](fbt::ManifestT &m) { m.shape_program.push_back(fbt::ShapeInstr(fbt::ShapeOp::Broadcast, 0, 0, 3)); });
  expectLoadError(file, "names label 3, which does not exist");
}

TEST(HostileArtifact, Formats2To4AreRefused) {
  // Format 5 replaced their 64-bit non-cryptographic digests: older
  // artifacts are refused with what to do, before the manifest is read.
  for (uint8_t major : {2, 3, 4}) {
    std::vector<uint8_t> file = buildAddScaleArtifact();
    file[8] = major;
    file[10] = 0;
    expectLoadError(file, "artifact format " + std::to_string(major) +
                              ".0 is older than this runtime (5.3) and no longer supported: recompile the model");
  }
}

// Kernel ABI 3: the plan verifier checks every dispatch against its kernel's
// interface table (test_kernels.c exports them).
TEST(HostileArtifact, DispatchNotMatchingItsKernelInterface) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->bindings.pop_back(); });
  expectLoadError(file, "dispatch 0 'add' binds 2 buffers and 1 push constants, but its kernel 'test_add_f32' takes "
                        "3 and 1");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->push_constants.pop_back(); });
  expectLoadError(file, "dispatch 1 'scale' binds 3 buffers and 1 push constants, but its kernel 'test_scale_f32' "
                        "takes 3 and 2");
  // The kernel writes binding 2: an input or a constant there is refused.
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[0]->bindings[2] = 0; });
  expectLoadError(file, "dispatch 0 'add': kernel 'test_add_f32' writes its binding 2, which is the caller's input "
                        "buffer 0 (read-only)");
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.dispatches[1]->bindings[2] = 3; });
  expectLoadError(file, "writes its binding 2, which is constant buffer 3 (read-only)");
  // An entry point without an interface table.
  file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) { m.executables[0]->entry_points[2] = "v4f_kernel_abi_version"; });
  expectLoadError(file, "kernel 'v4f_kernel_abi_version' has no interface table 'v4f_kernel_abi_version_iface'");
}

TEST(HostileArtifact, InputsOutsideCompiledBoundsAreRefused) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  editManifest(file, [](fbt::ManifestT &m) {
    m.inputs[0]->dim_min = {2, -1};
    m.inputs[0]->dim_max = {8, -1};
  });
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model);
  ASSERT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_session_t *session = nullptr;
  s = v4f_session_create(model, nullptr, nullptr, &session);
  ASSERT_EQ(s, nullptr) << v4f_status_message(s);
  for (int64_t batch : {1, 2, 8, 9}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    v4f_tensor_t inputs[2] = {makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {batch, 4}),
                              makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {batch, 4})};
    v4f_tensor_t output{};
    s = v4f_session_resolve_output_shapes(session, inputs, 2, &output, 1);
    if (batch >= 2 && batch <= 8) {
      EXPECT_EQ(s, nullptr) << v4f_status_message(s);
    } else {
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(v4f_status_code(s), V4F_STATUS_INVALID_ARGUMENT);
      EXPECT_NE(std::string(v4f_status_message(s))
                    .find("input 0 'x': dim 0 ('batch') is " + std::to_string(batch) +
                          ", outside the bounds [2, 8] it was compiled for"),
                std::string::npos)
          << v4f_status_message(s);
    }
    v4f_status_free(s);
  }
  v4f_session_release(session);
  v4f_model_release(model);
}

} // namespace
