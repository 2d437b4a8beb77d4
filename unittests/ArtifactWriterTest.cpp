// ArtifactWriterTest.cpp - the writer's layout, determinism, round trip and atomic file writes.
#include <gtest/gtest.h>

#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "TestArtifacts.h"
#include "v4f/artifact_format.h"
#include "v4f/kernel_abi.h"
#include "v4f_test/artifact_manifest_objapi.h"

using namespace v4f::test;
namespace fbt = v4f::fbtest;

namespace {

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

std::string makeTempDir() {
  std::string tmpl = ::testing::TempDir() + "v4f-writer-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  EXPECT_NE(mkdtemp(buf.data()), nullptr);
  return buf.data();
}

TEST(ArtifactWriter, DeterministicBytes) {
  std::vector<uint8_t> a = buildAddScaleArtifact();
  std::vector<uint8_t> b = buildAddScaleArtifact();
  EXPECT_EQ(a, b);
  // A different plan gives different bytes (the test can fail).
  v4f::ExecutablePlan plan = addScalePlan();
  plan.modelName = "other";
  EXPECT_NE(a, buildArtifact(plan, testKernelLibrary(), addScaleConstants()));
}

TEST(ArtifactWriter, HeaderAndSectionLayout) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  ASSERT_GE(file.size(), 128u);
  EXPECT_EQ(std::memcmp(file.data(), V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE), 0);
  EXPECT_EQ(file[8] | file[9] << 8, V4F_ARTIFACT_FORMAT_MAJOR);
  EXPECT_EQ(file[12], 128);
  EXPECT_EQ(getU64(file, 16), file.size());
  uint64_t manifestOffset = getU64(file, 24), manifestSize = getU64(file, 32);
  EXPECT_EQ(manifestOffset % 64, 0u);
  EXPECT_EQ(manifestOffset + manifestSize, file.size()) << "the manifest is last";
  EXPECT_EQ(getU64(file, 40), uint64_t(V4F_DIGEST_ALGORITHM_BLAKE3_TREE)) << "algorithm, reserved";
  v4f::Digest manifestDigest = v4f::artifactDigest(file.data() + manifestOffset, manifestSize);
  EXPECT_EQ(std::memcmp(file.data() + 56, manifestDigest.data(), 32), 0);
  for (size_t i = 48; i < 56; ++i) EXPECT_EQ(file[i], 0) << "signature_offset byte " << i;
  for (size_t i = 88; i < 128; ++i) EXPECT_EQ(file[i], 0) << "reserved byte " << i;

  std::unique_ptr<fbt::ManifestT> m(fbt::GetManifest(file.data() + manifestOffset)->UnPack());
  ASSERT_EQ(m->sections.size(), 2u);
  const auto &lib = *m->sections[0];
  const auto &constants = *m->sections[1];
  EXPECT_EQ(lib.kind, uint32_t(V4F_SECTION_CPU_LIBRARY));
  EXPECT_EQ(lib.offset, 128u);
  EXPECT_EQ(lib.size, testKernelLibrary().size());
  EXPECT_EQ(std::memcmp(file.data() + lib.offset, testKernelLibrary().data(), lib.size), 0);
  v4f::Digest libDigest = v4f::artifactDigest(testKernelLibrary().data(), lib.size);
  EXPECT_EQ(lib.digest, std::vector<uint8_t>(libDigest.begin(), libDigest.end()));
  EXPECT_EQ(constants.kind, uint32_t(V4F_SECTION_CONSTANTS));
  EXPECT_EQ(constants.offset % 64, 0u);
  EXPECT_GE(constants.offset, lib.offset + lib.size);
  EXPECT_EQ(constants.size, 16u);
  EXPECT_EQ(std::memcmp(file.data() + constants.offset, addScaleConstants().data(), 16), 0);
  // Padding between sections is zero.
  for (uint64_t i = lib.offset + lib.size; i < constants.offset; ++i) ASSERT_EQ(file[i], 0) << "padding byte " << i;
}

TEST(ArtifactWriter, RoundTripsThePlan) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.executables[0].features = {"avx2", "fma"};
  std::vector<uint8_t> file = buildArtifact(plan, testKernelLibrary(), addScaleConstants());
  std::unique_ptr<fbt::ManifestT> m(fbt::GetManifest(file.data() + getU64(file, 24))->UnPack());
  EXPECT_EQ(m->producer, plan.producer);
  EXPECT_EQ(m->model_name, plan.modelName);
  ASSERT_EQ(m->executables.size(), 1u);
  const fbt::ExecutableT &exe = *m->executables[0];
  EXPECT_EQ(exe.target, fbt::ExecutableTarget::Cpu);
  EXPECT_EQ(exe.format, fbt::ExecutableFormat::ElfSharedObject);
  EXPECT_EQ(exe.abi_version, uint32_t(V4F_KERNEL_ABI_VERSION));
  EXPECT_EQ(exe.triple, plan.executables[0].triple);
  EXPECT_EQ(exe.cpu, plan.executables[0].cpu);
  EXPECT_EQ(exe.features, plan.executables[0].features);
  EXPECT_EQ(exe.entry_points, plan.executables[0].entryPoints);
  ASSERT_LT(exe.section, m->sections.size());
  EXPECT_EQ(m->sections[exe.section]->kind, uint32_t(V4F_SECTION_CPU_LIBRARY));
  ASSERT_EQ(m->inputs.size(), 2u);
  EXPECT_EQ(m->inputs[0]->name, "x");
  EXPECT_EQ(m->inputs[0]->dims, plan.inputs[0].dims);
  EXPECT_EQ(m->inputs[0]->dim_names, plan.inputs[0].dimNames);
  EXPECT_EQ(m->inputs[0]->dim_regs, plan.inputs[0].dimRegs);
  EXPECT_EQ(m->outputs[0]->buffer, 4u);
  ASSERT_EQ(m->shape_program.size(), plan.shapeProgram.size());
  for (size_t i = 0; i < plan.shapeProgram.size(); ++i) {
    EXPECT_EQ(static_cast<uint8_t>(m->shape_program[i].op()), static_cast<uint8_t>(plan.shapeProgram[i].op));
    EXPECT_EQ(m->shape_program[i].a(), plan.shapeProgram[i].a);
    EXPECT_EQ(m->shape_program[i].b(), plan.shapeProgram[i].b);
    EXPECT_EQ(m->shape_program[i].imm(), plan.shapeProgram[i].imm);
  }
  ASSERT_EQ(m->buffers.size(), plan.buffers.size());
  EXPECT_EQ(m->buffers[2]->kind, fbt::BufferKind::Transient);
  EXPECT_EQ(m->buffers[2]->last_use, 1u);
  ASSERT_EQ(m->dispatches.size(), 2u);
  EXPECT_EQ(m->dispatches[1]->name, "scale");
  EXPECT_EQ(m->dispatches[1]->bindings, plan.dispatches[1].bindings);
  EXPECT_EQ(m->dispatches[1]->push_constants, plan.dispatches[1].pushConstants);
  EXPECT_EQ(m->dispatches[1]->workgroup_count, std::vector<uint32_t>{7u});
  EXPECT_EQ(m->dispatches[1]->executable, 0u);
  EXPECT_EQ(m->dispatches[1]->entry_point, 1u);
}

TEST(ArtifactWriter, RejectsMismatchedDimNames) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.inputs[0].dimNames = {"batch"};
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_FALSE(v4f::serializeArtifact(plan, {}, out, error));
  EXPECT_NE(error.find("dimNames and dims differ"), std::string::npos) << error;
}

TEST(ArtifactWriter, WritesFileAtomicallyAndLoads) {
  std::string dir = makeTempDir();
  std::string path = dir + "/model.v4f";
  std::string error;
  ASSERT_TRUE(v4f::writeArtifactFile(path, addScalePlan(), addScaleConstants(), error)) << error;
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.v4f"}) << "no temporary left behind";
  EXPECT_EQ(readFileBytes(path), buildAddScaleArtifact());
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_file(path.c_str(), nullptr, nullptr, &model);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
  v4f_model_release(model);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(ArtifactWriter, FailedWriteLeavesNothing) {
  std::string dir = makeTempDir();
  std::string error;
  EXPECT_FALSE(v4f::writeArtifactFile(dir + "/missing/model.v4f", addScalePlan(), addScaleConstants(), error));
  EXPECT_NE(error.find("cannot create a temporary file"), std::string::npos) << error;
  // Renaming over a directory fails after the data was written.
  ASSERT_EQ(mkdir((dir + "/taken").c_str(), 0755), 0);
  EXPECT_FALSE(v4f::writeArtifactFile(dir + "/taken", addScalePlan(), addScaleConstants(), error));
  EXPECT_NE(error.find("rename failed"), std::string::npos) << error;
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"taken"});
  rmdir((dir + "/taken").c_str());
  rmdir(dir.c_str());
}

} // namespace
