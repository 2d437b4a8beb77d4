// CudaPlanTest.cpp - plans with GPU dispatches, without a GPU: transfer
// insertion at placement borders (lib/Plan/Transfers.cpp), the CUDA module
// container's checks at load time, and the runtime's clear refusals when no
// driver is present or the session asks for the wrong device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "TestArtifacts.h"
#include "v4f/Plan/ExecutablePlan.h"
#include "v4f/kernel_abi.h"

using namespace v4f;
using namespace v4f::test;

namespace {

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// A v4f CUDA module with one entry point taking 3 bindings (read, read,
// write) and 2 push constants, and one PTX image (never JIT-compiled here).
std::vector<uint8_t> cudaModule() {
  const char ptx[] = "// not run by these tests\n.version 8.0\n.target sm_90\n";
  std::vector<uint8_t> m(256, 0);
  std::memcpy(m.data(), V4F_CUDA_MODULE_MAGIC, 8);
  put32(m, 8, 1);  // entry points
  put32(m, 12, 1); // images
  put32(m, 16, 5); // interface words
  put32(m, 24, V4F_CUDA_IMAGE_PTX);
  put32(m, 28, 90);
  put64(m, 32, 256);
  put64(m, 40, sizeof ptx);
  const uint32_t iface[5] = {3, 2, V4F_BINDING_READ, V4F_BINDING_READ, V4F_BINDING_WRITE};
  std::memcpy(m.data() + 48, iface, sizeof iface);
  m.insert(m.end(), ptx, ptx + sizeof ptx);
  return m;
}

// add_scale with "scale" on the GPU: add (CPU) -> copy -> scale (GPU) -> copy.
ExecutablePlan cudaPlan() {
  ExecutablePlan p = addScalePlan();
  PlanExecutable gpu;
  gpu.target = ExecutableTarget::Cuda;
  gpu.format = ExecutableFormat::CudaModule;
  gpu.abiVersion = V4F_KERNEL_ABI_VERSION;
  gpu.entryPoints = {"v4f_cuda_0"};
  p.executables.push_back(gpu);
  PlanDispatch &scale = p.dispatches[1];
  scale.executable = 1;
  scale.entryPoint = 0;
  scale.blockDim = {256};
  scale.access = {V4F_BINDING_READ, V4F_BINDING_READ, V4F_BINDING_WRITE};
  return p;
}

std::vector<uint8_t> serialize(ExecutablePlan plan, const std::vector<uint8_t> &module) {
  insertTransfers(plan);
  computeBufferLifetimes(plan);
  plan.executables[0].image = testKernelLibrary();
  plan.executables[1].image = module;
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_TRUE(serializeArtifact(plan, addScaleConstants(), out, error)) << error;
  return out;
}

TEST(CudaPlan, TransfersAtPlacementBorders) {
  ExecutablePlan p = cudaPlan();
  EXPECT_EQ(insertTransfers(p), 2u);
  ASSERT_EQ(p.dispatches.size(), 4u);
  EXPECT_EQ(p.dispatches[0].name, "add");
  // The GPU reads the CPU's sum (transient 2); the constant (3) is on both sides.
  EXPECT_EQ(p.dispatches[1].transfer, PlanDispatch::Transfer::ToDevice);
  EXPECT_EQ(p.dispatches[1].bindings, std::vector<uint32_t>{2});
  EXPECT_EQ(p.dispatches[1].executable, 1u);
  EXPECT_EQ(p.dispatches[2].name, "scale");
  // The output the GPU wrote goes back to the host at the end.
  EXPECT_EQ(p.dispatches[3].transfer, PlanDispatch::Transfer::ToHost);
  EXPECT_EQ(p.dispatches[3].bindings, std::vector<uint32_t>{4});
  // A CPU-only plan gets none.
  ExecutablePlan cpu = addScalePlan();
  EXPECT_EQ(insertTransfers(cpu), 0u);
  EXPECT_EQ(cpu.dispatches.size(), 2u);
}

TEST(CudaPlan, PartialWritesAcrossDevicesCopyTheRestFirst) {
  // Two GPU dispatches and a CPU one writing parts of the same buffer (a
  // concat): the CPU's write must not lose the GPU's part.
  ExecutablePlan p = cudaPlan();
  PlanDispatch second = p.dispatches[1];  // GPU: writes buffer 4
  PlanDispatch cpuPart = p.dispatches[0]; // CPU
  cpuPart.bindings = {0, 1, 4};
  cpuPart.access = {V4F_BINDING_READ, V4F_BINDING_READ, V4F_BINDING_WRITE};
  p.dispatches = {p.dispatches[0], second, cpuPart};
  insertTransfers(p);
  // add, to-device(2), scale (GPU writes 4), to-host(4) before the CPU's partial write, the CPU part.
  ASSERT_EQ(p.dispatches.size(), 5u);
  EXPECT_EQ(p.dispatches[3].transfer, PlanDispatch::Transfer::ToHost);
  EXPECT_EQ(p.dispatches[3].bindings, std::vector<uint32_t>{4});
  EXPECT_EQ(p.dispatches[4].executable, 0u);
}

TEST(CudaPlan, LoadsAndRefusesClearlyWithoutADriver) {
  std::vector<uint8_t> file = serialize(cudaPlan(), cudaModule());
  v4f_model_t *model = nullptr;
  v4f_status_t st = v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model);
  ASSERT_EQ(st, nullptr) << v4f_status_message(st);
  // --device cpu: the GPU dispatches have no CPU kernels.
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.device = V4F_DEVICE_CPU;
  v4f_session_t *session = nullptr;
  st = v4f_session_create(model, &options, nullptr, &session);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(v4f_status_code(st), V4F_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(v4f_status_message(st)).find("has GPU dispatches"), std::string::npos)
      << v4f_status_message(st);
  v4f_status_free(st);
  options.device = 7;
  st = v4f_session_create(model, &options, nullptr, &session);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(v4f_status_message(st)).find("unknown device 7"), std::string::npos);
  v4f_status_free(st);
  // No driver: a clear UNSUPPORTED error, no crash (the driver is opened
  // once per process: this test points it at a path that does not exist).
  setenv("V4F_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  options.device = V4F_DEVICE_AUTO;
  st = v4f_session_create(model, &options, nullptr, &session);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(v4f_status_code(st), V4F_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(v4f_status_message(st)).find("no NVIDIA driver"), std::string::npos) << v4f_status_message(st);
  v4f_status_free(st);
  v4f_model_release(model);
  // A CPU-only artifact on a CUDA device: refused.
  file = buildAddScaleArtifact();
  ASSERT_EQ(v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model), nullptr);
  options.device = V4F_DEVICE_CUDA;
  st = v4f_session_create(model, &options, nullptr, &session);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(v4f_status_message(st)).find("has no GPU kernels"), std::string::npos);
  v4f_status_free(st);
  v4f_model_release(model);
}

TEST(CudaPlan, HostileCudaModulesAreRefused) {
  auto refused = [](std::vector<uint8_t> module, const std::string &why) {
    expectLoadError(serialize(cudaPlan(), module), why);
  };
  std::vector<uint8_t> m = cudaModule();
  m[0] = 'X';
  refused(m, "executable 1: not a v4f CUDA module");
  refused(std::vector<uint8_t>(10, 0), "not a v4f CUDA module (bad magic or too short)");
  m = cudaModule();
  put32(m, 8, 2);
  refused(m, "the CUDA module has 2 interface tables for 1 entry points");
  m = cudaModule();
  put32(m, 12, 0);
  refused(m, "has 0 images");
  m = cudaModule();
  put64(m, 40, 1u << 30);
  refused(m, "CUDA image 0 is out of bounds");
  m = cudaModule();
  put64(m, 32, 8); // overlaps the header
  refused(m, "CUDA image 0 is out of bounds");
  m = cudaModule();
  m.back() = 'x';
  refused(m, "(PTX) is not NUL-terminated");
  m = cudaModule();
  put32(m, 48, 40); // 40 bindings
  refused(m, "declares 40 bindings");
  m = cudaModule();
  put32(m, 16, 9);
  refused(m, "interface words");
  // The dispatch must match its CUDA kernel's interface.
  ExecutablePlan p = cudaPlan();
  p.dispatches[1].pushConstants = {2};
  expectLoadError(serialize(p, cudaModule()),
                  "binds 3 buffers and 1 push constants, but its kernel 'v4f_cuda_0' takes 3 and 2");
  // A transfer with two bindings, or on the CPU executable.
  p = cudaPlan();
  insertTransfers(p);
  p.dispatches[1].bindings = {2, 3};
  computeBufferLifetimes(p);
  p.executables[0].image = testKernelLibrary();
  p.executables[1].image = cudaModule();
  std::vector<uint8_t> out;
  std::string error;
  ASSERT_TRUE(serializeArtifact(p, addScaleConstants(), out, error)) << error;
  expectLoadError(out, "is a malformed transfer");
  // A CUDA kernel dispatch without a block size.
  p = cudaPlan();
  p.dispatches[1].blockDim.clear();
  expectLoadError(serialize(p, cudaModule()), "runs a CUDA kernel without a block size");
  p = cudaPlan();
  p.dispatches[1].blockDim = {64, 64};
  expectLoadError(serialize(p, cudaModule()), "has a bad block size");
}

} // namespace
