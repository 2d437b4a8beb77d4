// V4fRunToolTest.cpp - v4f-run end to end: .npy in/out, random inputs, benchmark JSON, errors.
#include <gtest/gtest.h>
#include <algorithm>

#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "v4f/Support/Npy.h"
#include "TestArtifacts.h"
#include "v4f/artifact_format.h"

using namespace v4f::test;

namespace {

struct Result {
  int exitCode;
  std::string output;
};

Result runTool(const std::string &args) {
  std::string command = std::string(V4F_RUN_PATH) + " " + args + " 2>&1";
  Result r{-1, ""};
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe)) r.output += buf;
  int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class V4fRunTool : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/v4f-run-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    model = dir + "/add_scale.v4f";
    std::string error;
    ASSERT_TRUE(v4f::writeArtifactFile(model, addScalePlan(), addScaleConstants(), error)) << error;
  }
  void TearDown() override { std::system(("rm -rf " + dir).c_str()); }
  std::string dir, model;
};

TEST_F(V4fRunTool, NpyInputsGiveExactOutputs) {
  std::vector<float> x(12), y(12);
  for (int i = 0; i < 12; ++i) {
    x[size_t(i)] = float(i);
    y[size_t(i)] = 1.f;
  }
  int64_t shape[2] = {3, 4};
  std::string error;
  ASSERT_TRUE(v4frun::writeNpy(dir + "/x.npy", V4F_DTYPE_FLOAT32, shape, 2, x.data(), 48, error));
  ASSERT_TRUE(v4frun::writeNpy(dir + "/y.npy", V4F_DTYPE_FLOAT32, shape, 2, y.data(), 48, error));
  Result r =
      runTool(model + " --input x=" + dir + "/x.npy --input y=" + dir + "/y.npy --output-dir " + dir + " --threads 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("output out/0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[3, 4] = [1, 4, 9, 16, 5, 12, 21, 32, ...]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peak arena:"), std::string::npos);
  v4frun::NpyArray out;
  ASSERT_TRUE(v4frun::readNpy(dir + "/out_0.npy", out, error)) << error;
  EXPECT_EQ(out.dtype, V4F_DTYPE_FLOAT32);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{3, 4}));
  ASSERT_EQ(out.data.size(), 48u);
  float values[12];
  std::memcpy(values, out.data.data(), 48);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(values[i], (float(i) + 1.f) * float(i % 4 + 1));
}

TEST_F(V4fRunTool, RandomInputsAndBenchmarkJson) {
  Result r = runTool(model + " --dim batch=5 --benchmark 20 --warmup 2 --threads 1 --json " + dir + "/bench.json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("input  x                    float32  [5, 4] (random)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("latency p50/p90/p99"), std::string::npos) << r.output;
  std::vector<uint8_t> json = readFileBytes(dir + "/bench.json");
  std::string text(json.begin(), json.end());
  for (const char *key :
       {"\"mean_ms\"", "\"p50_ms\"", "\"p90_ms\"", "\"p99_ms\"", "\"throughput_per_s\"", "\"iterations\": 20"})
    EXPECT_NE(text.find(key), std::string::npos) << key << " in " << text;
  // Every timed run's sample, in run order: 20 numbers.
  size_t at = text.find("\"samples_ms\": [");
  ASSERT_NE(at, std::string::npos) << text;
  std::string list = text.substr(at, text.find(']', at) - at);
  EXPECT_EQ(std::count(list.begin(), list.end(), ','), 19) << list;
  // Deterministic random inputs: two runs print the same values.
  Result again = runTool(model + " --dim batch=5 --threads 1");
  Result once = runTool(model + " --dim batch=5 --threads 3");
  auto outputLine = [](const std::string &s) {
    return s.substr(s.find("output"), s.find("load time") - s.find("output"));
  };
  EXPECT_EQ(outputLine(again.output), outputLine(once.output));
}

TEST_F(V4fRunTool, ProfileWritesChromeTraceAndHotspots) {
  Result r = runTool(model + " --dim batch=64 --threads 2 --profile " + dir + "/trace.json --profile-runs 3");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("profile: 3 runs, 2 dispatches"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("%time"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("add ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scale ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mean per dispatch:"), std::string::npos) << r.output;
  std::vector<uint8_t> json = readFileBytes(dir + "/trace.json");
  std::string text(json.begin(), json.end());
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\": \"add\", \"cat\": \"dispatch\", \"ph\": \"X\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\": \"scale\""), std::string::npos) << text;
  Result bad = runTool(model + " --profile " + dir + "/no/such/dir/t.json");
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.output.find("t.json: cannot create"), std::string::npos) << bad.output;
  Result zero = runTool(model + " --profile " + dir + "/t.json --profile-runs 0");
  EXPECT_EQ(zero.exitCode, 1);
  EXPECT_NE(zero.output.find("--profile-runs expects an integer in [1, 100000]"), std::string::npos) << zero.output;
}

TEST_F(V4fRunTool, ErrorsNameTheFile) {
  Result r = runTool(dir + "/missing.v4f");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find(dir + "/missing.v4f: cannot open"), std::string::npos) << r.output;

  int64_t shape[2] = {3, 5};
  std::vector<float> x(15);
  std::string error;
  ASSERT_TRUE(v4frun::writeNpy(dir + "/bad.npy", V4F_DTYPE_FLOAT32, shape, 2, x.data(), 60, error));
  r = runTool(model + " --input x=" + dir + "/bad.npy");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("bad.npy: shape [3, 5] does not match input 'x' [batch, 4]"), std::string::npos) << r.output;

  std::vector<int32_t> xi(12);
  int64_t good[2] = {3, 4};
  ASSERT_TRUE(v4frun::writeNpy(dir + "/int.npy", V4F_DTYPE_INT32, good, 2, xi.data(), 48, error));
  r = runTool(model + " --input x=" + dir + "/int.npy");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("int.npy: dtype int32 does not match input 'x' (float32)"), std::string::npos) << r.output;

  FILE *f = std::fopen((dir + "/fortran.npy").c_str(), "wb");
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  char prefix[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(header.size()), 0};
  std::fwrite(prefix, 1, 10, f);
  std::fwrite(header.data(), 1, header.size(), f);
  std::fwrite(x.data(), 1, 48, f);
  std::fclose(f);
  r = runTool(model + " --input x=" + dir + "/fortran.npy");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("fortran.npy: Fortran-order arrays are not supported"), std::string::npos) << r.output;

  r = runTool(model + " --input nope=" + dir + "/int.npy");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("--input 'nope' does not name an input"), std::string::npos) << r.output;
}

} // namespace

// Hostile arguments get a clear error and exit 1: out-of-range counts are
// not wrapped, a --dim that names no symbolic dim is not ignored, inputs
// that are not regular files (a directory, a FIFO with no writer, a device)
// are refused before they are read, and random inputs too large to
// allocate are refused instead of aborting in the allocator.
TEST_F(V4fRunTool, HostileArgumentsAreRefused) {
  struct Expect {
    std::string args, message;
  };
  ASSERT_EQ(mkfifo((dir + "/fifo.npy").c_str(), 0600), 0);
  ASSERT_EQ(mkdir((dir + "/d.npy").c_str(), 0700), 0);
  std::vector<Expect> cases = {
      {"--threads 4294967297", "--threads expects an integer in [0, 4096], got '4294967297'"},
      {"--threads -1", "--threads expects an integer in [0, 4096]"},
      {"--dim batch=99999999999999999999", "--dim expects an integer in [0, 1099511627776]"},
      {"--dim bacth=2", "--dim 'bacth' does not name a symbolic dim of"},
      {"--input x=" + dir + "/d.npy", dir + "/d.npy: not a regular file"},
      {"--input x=" + dir + "/fifo.npy", dir + "/fifo.npy: not a regular file"},
      {"--input x=/dev/zero", "/dev/zero: not a regular file"},
      {"--dim batch=1099511627776", "would need more than 16 GiB of random data"},
  };
  for (const Expect &e : cases) {
    SCOPED_TRACE(e.args);
    Result r = runTool(model + " " + e.args);
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find(e.message), std::string::npos) << r.output;
  }
  Result fifoModel = runTool(dir + "/fifo.npy");
  EXPECT_EQ(fifoModel.exitCode, 1) << fifoModel.output;
  EXPECT_NE(fifoModel.output.find("not a regular file"), std::string::npos) << fifoModel.output;
}
