// RuntimeApiTest.cpp - the runtime C API on well-formed artifacts: load, query, run, errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <sys/stat.h>
#include <string>
#include <unistd.h>
#include <vector>

#include "TestArtifacts.h"
#include "v4f/artifact_format.h"

using namespace v4f::test;
using v4f::BufferKind;
using v4f::ExecutablePlan;
using v4f::PlanBuffer;

namespace {

// Fails the test with the status message when `s` is an error.
#define ASSERT_OK(expr)                                                                                                \
  do {                                                                                                                 \
    v4f_status_t s_ = (expr);                                                                                          \
    bool ok_ = s_ == nullptr;                                                                                          \
    std::string m_ = v4f_status_message(s_);                                                                           \
    v4f_status_free(s_);                                                                                               \
    ASSERT_TRUE(ok_) << #expr << ": " << m_;                                                                           \
  } while (0)

// Expects `expr` to fail with `code` and a message containing `substring`.
void expectError(v4f_status_t s, v4f_status_code_t code, const std::string &substring) {
  ASSERT_NE(s, nullptr) << "expected an error containing '" << substring << "'";
  std::string message = v4f_status_message(s);
  EXPECT_EQ(v4f_status_code(s), code) << message;
  EXPECT_NE(message.find(substring), std::string::npos) << "message '" << message << "' lacks '" << substring << "'";
  v4f_status_free(s);
}

struct Loaded {
  std::vector<uint8_t> file; // load_memory needs the bytes for the model's lifetime
  v4f_model_t *model = nullptr;
  v4f_session_t *session = nullptr;
  ~Loaded() {
    v4f_session_release(session);
    v4f_model_release(model);
  }
};

void loadAndCreate(std::vector<uint8_t> file, int threads, Loaded &out) {
  out.file = std::move(file);
  ASSERT_OK(v4f_model_load_memory(out.file.data(), out.file.size(), nullptr, nullptr, &out.model));
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.thread_count = threads;
  ASSERT_OK(v4f_session_create(out.model, &options, nullptr, &out.session));
}

// Runs add_scale for `batch` rows and checks (x + y) * c.
void runAddScale(v4f_session_t *session, int64_t batch) {
  size_t n = static_cast<size_t>(batch) * 4;
  std::vector<float> x(n), y(n), out(n, -1.f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 0.5f * static_cast<float>(i);
  }
  v4f_tensor_t inputs[2] = {makeTensor(x.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4}),
                            makeTensor(y.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4})};
  v4f_tensor_t output = makeTensor(out.data(), n * 4, 0, {});
  ASSERT_OK(v4f_session_run(session, inputs, 2, &output, 1));
  EXPECT_EQ(output.dtype, V4F_DTYPE_FLOAT32);
  ASSERT_EQ(output.rank, 2);
  EXPECT_EQ(output.dims[0], batch);
  EXPECT_EQ(output.dims[1], 4);
  for (size_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], (x[i] + y[i]) * static_cast<float>(i % 4 + 1)) << "element " << i;
}

TEST(RuntimeApi, ReleaseNullAndNullStatusAreNoOps) {
  v4f_model_release(nullptr);
  v4f_session_release(nullptr);
  v4f_status_free(nullptr);
  EXPECT_EQ(v4f_status_code(nullptr), V4F_STATUS_OK);
  EXPECT_STREQ(v4f_status_message(nullptr), "");
  EXPECT_EQ(v4f_model_input_count(nullptr), 0u);
  EXPECT_EQ(v4f_session_peak_memory(nullptr), 0u);
}

TEST(RuntimeApi, DtypeHelpers) {
  EXPECT_EQ(v4f_dtype_size(V4F_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(v4f_dtype_size(V4F_DTYPE_FLOAT16), 2u);
  EXPECT_EQ(v4f_dtype_size(V4F_DTYPE_INT64), 8u);
  EXPECT_EQ(v4f_dtype_size(V4F_DTYPE_BOOL), 1u);
  EXPECT_EQ(v4f_dtype_size(12345), 0u);
  EXPECT_STREQ(v4f_dtype_name(V4F_DTYPE_INT8), "int8");
  EXPECT_STREQ(v4f_dtype_name(-3), "unknown");
  EXPECT_EQ(v4f_cpu_has_feature("no-such-feature"), -1);
  EXPECT_GE(v4f_cpu_has_feature("avx2"), 0);
}

TEST(RuntimeApi, LoadFromFileAndQuerySignature) {
  std::string path = writeTempFile("add_scale.v4f", buildAddScaleArtifact());
  v4f_model_t *model = nullptr;
  ASSERT_OK(v4f_model_load_file(path.c_str(), nullptr, nullptr, &model));
  EXPECT_STREQ(v4f_model_name(model), "add_scale");
  EXPECT_STREQ(v4f_model_producer(model), "v4f unittests");
  ASSERT_EQ(v4f_model_input_count(model), 2u);
  ASSERT_EQ(v4f_model_output_count(model), 1u);
  v4f_tensor_info_t info;
  ASSERT_OK(v4f_model_input_info(model, 1, &info));
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.dtype, V4F_DTYPE_FLOAT32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_EQ(info.dims[1], 4);
  EXPECT_STREQ(info.dim_names[0], "batch");
  EXPECT_STREQ(info.dim_names[1], "");
  ASSERT_OK(v4f_model_output_info(model, 0, &info));
  EXPECT_STREQ(info.name, "out/0");
  expectError(v4f_model_input_info(model, 2, &info), V4F_STATUS_INVALID_ARGUMENT, "out of range");
  v4f_model_release(model);
  unlink(path.c_str());
}

// add_scale with a variant plan that needs `features` and scales by
// {10, 20, 30, 40} (its own constant at offset 64 of the shared section), so
// the outputs tell which plan ran.
std::vector<uint8_t> buildMultiIsaArtifact(std::vector<std::string> variantFeatures) {
  ExecutablePlan plan = addScalePlan();
  ExecutablePlan variant = addScalePlan();
  variant.producer.clear();
  variant.modelName.clear();
  variant.executables.front().features = std::move(variantFeatures);
  variant.executables.front().cpu = "variant-cpu";
  for (PlanBuffer &b : variant.buffers)
    if (b.kind == BufferKind::Constant) b.constantOffset = 64;
  plan.variants.push_back(variant);
  std::vector<uint8_t> constants = addScaleConstants();
  constants.resize(64);
  const float c[4] = {10.f, 20.f, 30.f, 40.f};
  constants.insert(constants.end(), reinterpret_cast<const uint8_t *>(c), reinterpret_cast<const uint8_t *>(c + 4));
  return buildArtifact(plan, testKernelLibrary(), constants);
}

// Runs add_scale for 2 rows and returns out[0..3] for x = 1, y = 1.
std::vector<float> runTwoOnes(v4f_session_t *session) {
  std::vector<float> x(8, 1.f), y(8, 1.f), out(8, -1.f);
  v4f_tensor_t inputs[2] = {makeTensor(x.data(), 32, V4F_DTYPE_FLOAT32, {2, 4}),
                            makeTensor(y.data(), 32, V4F_DTYPE_FLOAT32, {2, 4})};
  v4f_tensor_t output = makeTensor(out.data(), 32, 0, {});
  v4f_status_t s = v4f_session_run(session, inputs, 2, &output, 1);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
  return std::vector<float>(out.begin(), out.begin() + 4);
}

TEST(RuntimeApi, MultiIsaArtifactRunsThePlanWithTheMostFeaturesTheCpuHas) {
  // sse4.1 is on every machine this project runs on (x86-64-v2 and up).
  std::vector<uint8_t> file = buildMultiIsaArtifact({"sse4.1"});
  {
    Loaded l;
    ASSERT_NO_FATAL_FAILURE(loadAndCreate(file, 1, l));
    EXPECT_EQ(v4f_model_variant_count(l.model), 2u);
    EXPECT_EQ(v4f_model_variant(l.model), 1u);
    EXPECT_STREQ(v4f_model_target_cpu(l.model), "variant-cpu");
    EXPECT_EQ(runTwoOnes(l.session), (std::vector<float>{20.f, 40.f, 60.f, 80.f}));
  }
  // Without sse4.1 only the baseline fits.
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.disabled_cpu_features = "sse4.1";
  v4f_model_t *model = nullptr;
  ASSERT_OK(v4f_model_load_memory(file.data(), file.size(), &options, nullptr, &model));
  EXPECT_EQ(v4f_model_variant(model), 0u);
  v4f_session_t *session = nullptr;
  ASSERT_OK(v4f_session_create(model, nullptr, nullptr, &session));
  EXPECT_EQ(runTwoOnes(session), (std::vector<float>{2.f, 4.f, 6.f, 8.f}));
  v4f_session_release(session);
  v4f_model_release(model);
  // A single-plan artifact reports one plan.
  Loaded single;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 1, single));
  EXPECT_EQ(v4f_model_variant_count(single.model), 1u);
  EXPECT_EQ(v4f_model_variant(single.model), 0u);
}

TEST(RuntimeApi, MultiIsaArtifactWithNoFittingPlanNamesTheBaselinesFeatures) {
  ExecutablePlan plan = addScalePlan();
  plan.executables.front().features = {"sse4.1"};
  ExecutablePlan variant = plan;
  variant.producer.clear();
  variant.modelName.clear();
  variant.executables.front().features = {"sse4.1", "avx2"};
  plan.variants.push_back(variant);
  std::vector<uint8_t> file = buildArtifact(plan, testKernelLibrary(), addScaleConstants());
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.disabled_cpu_features = "sse4.1,avx2";
  v4f_model_t *model = nullptr;
  expectError(v4f_model_load_memory(file.data(), file.size(), &options, nullptr, &model), V4F_STATUS_UNSUPPORTED,
              "requires CPU features not available on this machine: sse4.1");
  EXPECT_EQ(model, nullptr);
}

TEST(RuntimeApi, MissingFileNamesThePath) {
  v4f_model_t *model = nullptr;
  expectError(v4f_model_load_file("/nonexistent/dir/m.v4f", nullptr, nullptr, &model), V4F_STATUS_NOT_FOUND,
              "/nonexistent/dir/m.v4f: cannot open");
  EXPECT_EQ(model, nullptr);
}

TEST(RuntimeApi, RunsOnOneThreadAtTwoBatchSizes) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 1, l));
  EXPECT_EQ(v4f_session_thread_count(l.session), 1);
  runAddScale(l.session, 3);
  runAddScale(l.session, 17);
  runAddScale(l.session, 1);
}

TEST(RuntimeApi, GuardedDispatchRunsOnlyWhenItsRegisterIsNonZero) {
  // "scale" guarded by a register holding 1 runs; by one holding 0 it is
  // skipped and the output keeps the caller's bytes.
  for (int64_t taken : {1, 0}) {
    SCOPED_TRACE("guard value " + std::to_string(taken));
    v4f::ExecutablePlan plan = addScalePlan();
    plan.shapeProgram.push_back({v4f::ShapeOpKind::Const, 0, 0, taken});
    plan.dispatches[1].guard = static_cast<v4f::Reg>(plan.shapeProgram.size() - 1);
    Loaded l;
    ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildArtifact(plan, testKernelLibrary(), addScaleConstants()), 1, l));
    if (taken) {
      runAddScale(l.session, 3);
      continue;
    }
    std::vector<float> x(8, 1.f), y(8, 2.f), out(8, -1.f);
    v4f_tensor_t inputs[2] = {makeTensor(x.data(), 32, V4F_DTYPE_FLOAT32, {2, 4}),
                              makeTensor(y.data(), 32, V4F_DTYPE_FLOAT32, {2, 4})};
    v4f_tensor_t output = makeTensor(out.data(), 32, 0, {});
    ASSERT_OK(v4f_session_run(l.session, inputs, 2, &output, 1));
    for (float v : out) EXPECT_EQ(v, -1.f);
  }
}

TEST(RuntimeApi, FeedbackFeedsAnOutputBackWithoutCopying) {
  // out = (x + y) * c with out -> x: run k computes (out_{k-1} + y) * c in
  // the session's two buffers, alternating; reset reads the caller's x again.
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 2, l));
  ASSERT_OK(v4f_session_bind_feedback(l.session, 0, 0));
  const int64_t batch = 3;
  const size_t n = batch * 4;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.f;
  }
  std::vector<float> expect = x;
  std::vector<const void *> seen;
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    if (run == 3) {
      ASSERT_OK(v4f_session_reset_feedback(l.session));
      expect = x;
    }
    // After the first run the caller's x is ignored: pass garbage.
    v4f_tensor_t inputs[2] = {run == 0 || run == 3 ? makeTensor(x.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4})
                                                   : makeTensor(nullptr, 0, 0, {}),
                              makeTensor(y.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4})};
    v4f_tensor_t output = makeTensor(nullptr, 0, 0, {});
    ASSERT_OK(v4f_session_run(l.session, inputs, 2, &output, 1));
    ASSERT_NE(output.data, nullptr);
    ASSERT_GE(output.byte_size, n * 4);
    ASSERT_EQ(output.dims[0], batch);
    for (size_t i = 0; i < n; ++i) expect[i] = (expect[i] + y[i]) * static_cast<float>(i % 4 + 1);
    const float *out = static_cast<const float *>(output.data);
    for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], expect[i]) << "element " << i;
    seen.push_back(output.data);
  }
  // Two buffers, swapped every run (the output is written where the next run reads).
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
}

TEST(RuntimeApi, FeedbackBindingErrors) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 1, l));
  auto expectError = [](v4f_status_t s, const std::string &text) {
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(v4f_status_code(s), V4F_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(v4f_status_message(s)).find(text), std::string::npos) << v4f_status_message(s);
    v4f_status_free(s);
  };
  expectError(v4f_session_bind_feedback(l.session, 1, 0), "feedback: output 1 does not exist (the model has 1)");
  expectError(v4f_session_bind_feedback(l.session, 0, 2), "feedback: input 2 does not exist (the model has 2)");
  ASSERT_OK(v4f_session_bind_feedback(l.session, 0, 1));
  expectError(v4f_session_bind_feedback(l.session, 0, 0), "feedback: output 0 or input 0 is already bound");
  expectError(v4f_session_bind_feedback(nullptr, 0, 0), "session is NULL");
  expectError(v4f_session_reset_feedback(nullptr), "session is NULL");
}

TEST(RuntimeApi, RunsOnFourThreads) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 4, l));
  EXPECT_EQ(v4f_session_thread_count(l.session), 4);
  for (int i = 0; i < 20; ++i) runAddScale(l.session, 1 + i * 7);
}

// Kernel ABI v2: a 3-D workgroup grid {x: 5, y: 3, z: 2} and 256 bytes of
// per-worker scratch; the kernel checks ids, counts, scratch alignment and
// privacy (it fills and re-reads its scratch) and writes x + 10y + 100z.
TEST(RuntimeApi, ThreeDimensionalGridAndPerWorkerScratch) {
  v4f::ExecutablePlan p;
  p.producer = "v4f unittests";
  p.modelName = "grid";
  p.executables = {testCpuExecutable({"test_grid_scratch"})};
  // r0..r2 grid, r3 output bytes (30 floats), r4 scratch bytes.
  auto constant = [](int64_t v) {
    v4f::ShapeInstruction i;
    i.op = v4f::ShapeOpKind::Const;
    i.imm = v;
    return i;
  };
  p.shapeProgram = {constant(5), constant(3), constant(2), constant(120), constant(256)};
  v4f::TensorSignature out;
  out.name = "out";
  out.dtype = v4f::DType::Float32;
  out.dims = {2, 3, 5};
  out.dimNames = {"", "", ""};
  out.dimRegs = {2, 1, 0};
  out.buffer = 0;
  p.outputs = {out};
  v4f::PlanBuffer b;
  b.kind = v4f::BufferKind::Output;
  b.sizeReg = 3;
  p.buffers = {b};
  v4f::PlanDispatch d;
  d.bindings = {0};
  d.pushConstants = {0, 1, 2};
  d.workgroupCount = {0, 1, 2};
  d.scratchSize = 4;
  d.name = "grid";
  p.dispatches = {d};
  for (int threads : {1, 3}) {
    Loaded l;
    ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildArtifact(p, testKernelLibrary(), {}), threads, l));
    std::vector<float> values(30, -1.f);
    v4f_tensor_t output = makeTensor(values.data(), values.size() * 4, 0, {});
    ASSERT_OK(v4f_session_run(l.session, nullptr, 0, &output, 1));
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x)
          ASSERT_EQ(values[(z * 3 + y) * 5 + x], float(x + 10 * y + 100 * z)) << x << "," << y << "," << z;
  }
}

TEST(RuntimeApi, DefaultThreadCountIsCoreCount) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 0, l));
  EXPECT_EQ(v4f_session_thread_count(l.session), static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  runAddScale(l.session, 9);
}

TEST(RuntimeApi, ZeroBatchRunsNoWorkgroups) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 2, l));
  v4f_tensor_t inputs[2] = {makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {0, 4}),
                            makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {0, 4})};
  v4f_tensor_t output = makeTensor(nullptr, 0, 0, {});
  ASSERT_OK(v4f_session_run(l.session, inputs, 2, &output, 1));
  EXPECT_EQ(output.dims[0], 0);
}

TEST(RuntimeApi, LoadsUnalignedMemoryAndTwoModelsAtOnce) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  std::vector<uint8_t> shifted(file.size() + 1);
  std::memcpy(shifted.data() + 1, file.data(), file.size());
  Loaded a, b;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(file, 1, a));
  v4f_model_t *unaligned = nullptr;
  ASSERT_OK(v4f_model_load_memory(shifted.data() + 1, file.size(), nullptr, nullptr, &unaligned));
  b.model = unaligned;
  ASSERT_OK(v4f_session_create(b.model, nullptr, nullptr, &b.session));
  runAddScale(a.session, 2);
  runAddScale(b.session, 5);
  // Each model has its own library: releasing one leaves the other usable.
  v4f_session_release(a.session);
  v4f_model_release(a.model);
  a.session = nullptr;
  a.model = nullptr;
  runAddScale(b.session, 6);
}

TEST(RuntimeApi, ProfilingRecordsEveryDispatchOfTheLastRun) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 2, l));
  EXPECT_EQ(v4f_session_profile_count(l.session), 0u);
  runAddScale(l.session, 3);
  EXPECT_EQ(v4f_session_profile_count(l.session), 0u); // off by default
  ASSERT_OK(v4f_session_set_profiling(l.session, 1));
  runAddScale(l.session, 3);
  runAddScale(l.session, 5);
  ASSERT_EQ(v4f_session_profile_count(l.session), 2u); // the last run only: add, scale
  v4f_dispatch_profile_t a{}, b{};
  ASSERT_OK(v4f_session_profile_entry(l.session, 0, &a));
  ASSERT_OK(v4f_session_profile_entry(l.session, 1, &b));
  EXPECT_STREQ(a.name, "add");
  EXPECT_STREQ(b.name, "scale");
  EXPECT_EQ(a.dispatch_index, 0u);
  EXPECT_EQ(b.dispatch_index, 1u);
  EXPECT_GT(a.workgroups, 0);
  EXPECT_NE(a.kernel, nullptr);
  EXPECT_GE(b.start_ns, a.start_ns + a.duration_ns); // dispatches run in order
  EXPECT_EQ(a.flops, -1.0);                          // not counted by this artifact
  expectError(v4f_session_profile_entry(l.session, 2, &a), V4F_STATUS_INVALID_ARGUMENT,
              "index 2 out of range (the last run recorded 2 entries)");
  expectError(v4f_session_profile_entry(l.session, 0, nullptr), V4F_STATUS_INVALID_ARGUMENT, "entry is NULL");
  expectError(v4f_session_set_profiling(nullptr, 1), V4F_STATUS_INVALID_ARGUMENT, "session is NULL");
  ASSERT_OK(v4f_session_set_profiling(l.session, 0));
  EXPECT_EQ(v4f_session_profile_count(l.session), 0u);
  runAddScale(l.session, 2);
  EXPECT_EQ(v4f_session_profile_count(l.session), 0u);
}

TEST(RuntimeApi, ResolveOutputShapesWithoutRunning) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 1, l));
  v4f_tensor_t inputs[2] = {makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {7, 4}),
                            makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {7, 4})};
  v4f_tensor_t output{};
  ASSERT_OK(v4f_session_resolve_output_shapes(l.session, inputs, 2, &output, 1));
  EXPECT_EQ(output.rank, 2);
  EXPECT_EQ(output.dims[0], 7);
  EXPECT_EQ(output.dims[1], 4);
  EXPECT_EQ(output.byte_size, 7u * 4u * 4u);
  EXPECT_EQ(v4f_session_peak_memory(l.session), 128u); // 112 bytes, 64-aligned
}

TEST(RuntimeApi, PeakMemoryReusesNonOverlappingLifetimes) {
  // 5x5 float32 = 100 bytes per transient, 128 once aligned.
  for (bool overlapAll : {false, true}) {
    Loaded l;
    ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildArtifact(chainPlan(5, 5, overlapAll), testKernelLibrary(), {}), 3, l));
    EXPECT_EQ(v4f_session_peak_memory(l.session), 0u);
    std::vector<float> x(25), y(25);
    for (int i = 0; i < 25; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) - 3.f;
    v4f_tensor_t in = makeTensor(x.data(), 100, V4F_DTYPE_FLOAT32, {5, 5});
    v4f_tensor_t out = makeTensor(y.data(), 100, 0, {});
    ASSERT_OK(v4f_session_run(l.session, &in, 1, &out, 1));
    for (size_t i = 0; i < 25; ++i) ASSERT_FLOAT_EQ(y[i], 16.f * x[i]);
    // A lives [0,1], B [1,2], C [2,3]: A and C share an offset.
    EXPECT_EQ(v4f_session_peak_memory(l.session), overlapAll ? 3u * 128u : 2u * 128u) << "overlapAll=" << overlapAll;
  }
}

TEST(RuntimeApi, CustomAllocatorSeesEveryAllocation) {
  struct Counter {
    int live = 0, total = 0;
  } counter;
  v4f_allocator_t allocator;
  allocator.user_data = &counter;
  allocator.alloc = [](void *user, size_t size, size_t alignment) -> void * {
    auto *c = static_cast<Counter *>(user);
    void *p = nullptr;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0) return nullptr;
    ++c->live;
    ++c->total;
    return p;
  };
  allocator.free = [](void *user, void *p) {
    --static_cast<Counter *>(user)->live;
    free(p);
  };
  std::vector<uint8_t> file = buildAddScaleArtifact();
  v4f_model_t *model = nullptr;
  ASSERT_OK(v4f_model_load_memory(file.data(), file.size(), nullptr, &allocator, &model));
  v4f_session_t *session = nullptr;
  ASSERT_OK(v4f_session_create(model, nullptr, &allocator, &session));
  runAddScale(session, 4);
  v4f_session_release(session);
  v4f_model_release(model);
  EXPECT_GT(counter.total, 5);
  EXPECT_EQ(counter.live, 0);
}

class RunErrors : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 2, l)); }
  v4f_status_t run(std::vector<int64_t> xDims, std::vector<int64_t> yDims, int32_t dtype = V4F_DTYPE_FLOAT32,
                   size_t outBytes = 4096) {
    inputs[0] = makeTensor(x, sizeof(x), dtype, xDims);
    inputs[1] = makeTensor(y, sizeof(y), V4F_DTYPE_FLOAT32, yDims);
    output = makeTensor(out, outBytes, 0, {});
    return v4f_session_run(l.session, inputs, 2, &output, 1);
  }
  Loaded l;
  float x[1024] = {}, y[1024] = {}, out[1024] = {};
  v4f_tensor_t inputs[2];
  v4f_tensor_t output;
};

TEST_F(RunErrors, WrongDtype) {
  expectError(run({2, 4}, {2, 4}, V4F_DTYPE_INT32), V4F_STATUS_INVALID_ARGUMENT,
              "input 0 'x': dtype is int32, expected float32");
}

TEST_F(RunErrors, WrongRank) {
  expectError(run({2, 4, 1}, {2, 4}), V4F_STATUS_INVALID_ARGUMENT, "input 0 'x': rank is 3, expected 2");
}

TEST_F(RunErrors, WrongStaticDim) {
  expectError(run({2, 5}, {2, 4}), V4F_STATUS_INVALID_ARGUMENT, "input 0 'x': dim 1 is 5, expected 4");
}

TEST_F(RunErrors, InconsistentSymbolicDim) {
  expectError(run({2, 4}, {3, 4}), V4F_STATUS_INVALID_ARGUMENT, "('batch') is 3 but input 0 'x'");
}

TEST_F(RunErrors, NegativeDim) { expectError(run({-2, 4}, {-2, 4}), V4F_STATUS_INVALID_ARGUMENT, "dim 0 is negative"); }

TEST_F(RunErrors, InputBufferTooSmall) {
  inputs[0] = makeTensor(x, 8, V4F_DTYPE_FLOAT32, {2, 4});
  inputs[1] = makeTensor(y, sizeof(y), V4F_DTYPE_FLOAT32, {2, 4});
  output = makeTensor(out, sizeof(out), 0, {});
  expectError(v4f_session_run(l.session, inputs, 2, &output, 1), V4F_STATUS_INVALID_ARGUMENT,
              "byte_size is 8, the shape needs 32 bytes");
}

TEST_F(RunErrors, OutputTooSmallStatesNeededSizeAndWritesDims) {
  expectError(run({3, 4}, {3, 4}, V4F_DTYPE_FLOAT32, 47), V4F_STATUS_INVALID_ARGUMENT,
              "byte_size is 47, but 48 bytes are needed");
  EXPECT_EQ(output.rank, 2);
  EXPECT_EQ(output.dims[0], 3);
  EXPECT_EQ(output.dims[1], 4);
}

TEST_F(RunErrors, WrongTensorCounts) {
  output = makeTensor(out, sizeof(out), 0, {});
  expectError(v4f_session_run(l.session, inputs, 1, &output, 1), V4F_STATUS_INVALID_ARGUMENT,
              "expected 2 inputs, got 1");
}

TEST(RuntimeApi, KernelErrorNamesTheDispatch) {
  v4f::ExecutablePlan plan = addScalePlan();
  plan.dispatches[1].entryPoint = 2; // test_fail
  plan.dispatches[1].name = "node/Scale_7";
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildArtifact(plan, testKernelLibrary(), addScaleConstants()), 4, l));
  float x[8] = {}, out[8];
  v4f_tensor_t inputs[2] = {makeTensor(x, 32, V4F_DTYPE_FLOAT32, {2, 4}), makeTensor(x, 32, V4F_DTYPE_FLOAT32, {2, 4})};
  v4f_tensor_t output = makeTensor(out, 32, 0, {});
  expectError(v4f_session_run(l.session, inputs, 2, &output, 1), V4F_STATUS_KERNEL_ERROR,
              "dispatch 1 'node/Scale_7' (kernel 'test_fail') failed with code 1");
}

TEST(RuntimeApi, ShapeProgramErrors) {
  v4f::ExecutablePlan plan = addScalePlan();
  v4f::ShapeInstruction div;
  div.op = v4f::ShapeOpKind::FloorDiv;
  div.a = 1;
  div.b = 0; // 4 / batch
  plan.shapeProgram.push_back(div);
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildArtifact(plan, testKernelLibrary(), addScaleConstants()), 1, l));
  v4f_tensor_t inputs[2] = {makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {0, 4}),
                            makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {0, 4})};
  v4f_tensor_t output{};
  expectError(v4f_session_resolve_output_shapes(l.session, inputs, 2, &output, 1), V4F_STATUS_INVALID_ARGUMENT,
              "divides by zero");
  int64_t huge = int64_t(1) << 62;
  inputs[0] = makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {huge, 4});
  inputs[1] = makeTensor(nullptr, 0, V4F_DTYPE_FLOAT32, {huge, 4});
  expectError(v4f_session_resolve_output_shapes(l.session, inputs, 2, &output, 1), V4F_STATUS_INVALID_ARGUMENT,
              "overflows int64");
}

} // namespace

// A FIFO with no writer (or a directory) as the model file: refused at
// once, never a hang waiting for a writer.
TEST(RuntimeApi, NonRegularModelFilesAreRefused) {
  char tmpl[] = "/tmp/v4f-fifo-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string fifo = std::string(tmpl) + "/m.v4f";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  v4f_model_t *model = nullptr;
  expectError(v4f_model_load_file(fifo.c_str(), nullptr, nullptr, &model), V4F_STATUS_INVALID_ARGUMENT,
              fifo + ": not a regular file");
  EXPECT_EQ(model, nullptr);
  expectError(v4f_model_load_file(tmpl, nullptr, nullptr, &model), V4F_STATUS_INVALID_ARGUMENT,
              std::string(tmpl) + ": not a regular file");
  unlink(fifo.c_str());
  rmdir(tmpl);
}

// max_arena_bytes bounds the arena that input shapes may demand.
TEST(RuntimeApi, MaxArenaBytesRefusesLargerShapes) {
  std::vector<uint8_t> file = buildAddScaleArtifact();
  v4f_model_t *model = nullptr;
  ASSERT_OK(v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model));
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.thread_count = 1;
  v4f_session_t *unlimited = nullptr;
  ASSERT_OK(v4f_session_create(model, &options, nullptr, &unlimited));
  runAddScale(unlimited, 64);
  size_t need = v4f_session_peak_memory(unlimited);
  v4f_session_release(unlimited);
  if (need == 0) {
    v4f_model_release(model);
    GTEST_SKIP() << "the test artifact has no transient buffers to bound";
  }
  options.max_arena_bytes = need;
  v4f_session_t *session = nullptr;
  ASSERT_OK(v4f_session_create(model, &options, nullptr, &session));
  runAddScale(session, 64); // exactly the limit: fine
  std::vector<float> x(65 * 4, 1.f), y(65 * 4, 1.f), out(65 * 4);
  v4f_tensor_t in[2] = {makeTensor(x.data(), x.size() * 4, V4F_DTYPE_FLOAT32, {65, 4}),
                        makeTensor(y.data(), y.size() * 4, V4F_DTYPE_FLOAT32, {65, 4})};
  v4f_tensor_t o = makeTensor(out.data(), out.size() * 4, 0, {});
  expectError(v4f_session_run(session, in, 2, &o, 1), V4F_STATUS_RESOURCE_EXHAUSTED,
              "over the session's max_arena_bytes");
  runAddScale(session, 3); // the session still works
  v4f_session_release(session);
  v4f_model_release(model);
}

// A loaded model is a private copy: truncating the file (which would SIGBUS
// a mapping) or overwriting it (which would change the weights or code under
// a mapping) does not affect sessions.
TEST(RuntimeApi, TruncatingOrOverwritingTheFileDoesNotAffectALoadedModel) {
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::string path = writeTempFile("add_scale_mutated.v4f", bytes);
  v4f_model_t *model = nullptr;
  ASSERT_OK(v4f_model_load_file(path.c_str(), nullptr, nullptr, &model));
  v4f_session_t *session = nullptr;
  ASSERT_OK(v4f_session_create(model, nullptr, nullptr, &session));
  runAddScale(session, 3);
  ASSERT_EQ(truncate(path.c_str(), 0), 0);
  runAddScale(session, 5);
  {
    std::vector<uint8_t> garbage(bytes.size(), 0xCC);
    FILE *f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fwrite(garbage.data(), 1, garbage.size(), f);
    fclose(f);
  }
  runAddScale(session, 7);
  v4f_session_release(session);
  v4f_model_release(model);
  unlink(path.c_str());
}

// Three sessions (two models) on one shared 3-thread pool, run from three
// threads at once: every result is right, each session reports the pool's
// thread count, and the pool outlives the creator's release while the
// sessions hold it.
TEST(RuntimeApi, SessionsShareOneThreadPool) {
  v4f_thread_pool_t *pool = nullptr;
  ASSERT_OK(v4f_thread_pool_create(3, nullptr, &pool));
  EXPECT_EQ(v4f_thread_pool_thread_count(pool), 3);
  std::vector<uint8_t> file = buildAddScaleArtifact();
  v4f_model_t *models[2] = {nullptr, nullptr};
  for (auto &m : models) ASSERT_OK(v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &m));
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.thread_pool = pool;
  options.thread_count = 2;
  expectError(v4f_session_create(models[0], &options, nullptr, nullptr), V4F_STATUS_INVALID_ARGUMENT,
              "out_session is NULL");
  v4f_session_t *refused = nullptr;
  expectError(v4f_session_create(models[0], &options, nullptr, &refused), V4F_STATUS_INVALID_ARGUMENT,
              "differs from the shared thread pool's 3 threads");
  EXPECT_EQ(refused, nullptr);
  options.thread_count = 0;
  v4f_session_t *sessions[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) ASSERT_OK(v4f_session_create(models[i % 2], &options, nullptr, &sessions[i]));
  v4f_thread_pool_release(pool); // the sessions keep it alive
  for (auto *s : sessions) EXPECT_EQ(v4f_session_thread_count(s), 3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      for (int iter = 0; iter < 60; ++iter) runAddScale(sessions[i], 1 + (iter * 5 + i) % 37);
    });
  for (auto &t : threads) t.join();
  for (auto *s : sessions) v4f_session_release(s);
  for (auto *m : models) v4f_model_release(m);
  expectError(v4f_thread_pool_create(-1, nullptr, &pool), V4F_STATUS_INVALID_ARGUMENT, "out of range");
  EXPECT_EQ(pool, nullptr);
  v4f_thread_pool_release(nullptr);
}

// Sessions are single-threaded: two threads calling one session at once
// get, for every call, either a correct result or the clear "in use by
// another thread" error — never wrong outputs or a corrupted session.
TEST(RuntimeApi, ConcurrentUseOfOneSessionIsRefused) {
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(loadAndCreate(buildAddScaleArtifact(), 1, l));
  std::atomic<int> ok{0}, busy{0}, wrong{0};
  auto worker = [&](int64_t batch) {
    size_t n = static_cast<size_t>(batch) * 4;
    std::vector<float> x(n), y(n), out(n);
    for (size_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 0.5f * float(i);
    for (int iter = 0; iter < 400; ++iter) {
      std::fill(out.begin(), out.end(), -1.f);
      v4f_tensor_t inputs[2] = {makeTensor(x.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4}),
                                makeTensor(y.data(), n * 4, V4F_DTYPE_FLOAT32, {batch, 4})};
      v4f_tensor_t output = makeTensor(out.data(), n * 4, 0, {});
      v4f_status_t s = v4f_session_run(l.session, inputs, 2, &output, 1);
      if (s) {
        std::string m = v4f_status_message(s);
        (m.find("in use by another thread") != std::string::npos ? busy : wrong)++;
        v4f_status_free(s);
        continue;
      }
      bool right = output.dims[0] == batch;
      for (size_t i = 0; i < n && right; ++i) right = out[i] == (x[i] + y[i]) * float(i % 4 + 1);
      (right ? ok : wrong)++;
    }
  };
  std::thread a(worker, 3), b(worker, 17);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ok.load() + busy.load(), 800);
  EXPECT_GT(ok.load(), 0);
  // The session still works afterwards.
  runAddScale(l.session, 5);
}
