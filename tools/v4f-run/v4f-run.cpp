//===- v4f-run.cpp - Run a .v4f artifact: .npy in/out, timing, benchmark --===//
//
// Links only the v4f runtime (no LLVM/MLIR). Inputs come from .npy files or
// deterministic random data; outputs go to DIR/<sanitized name>.npy.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <new>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "v4f/Support/Npy.h"
#include "Profile.h"
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

namespace {

const char *kUsage = "usage: v4f-run MODEL.v4f [options]\n"
                     "  --input NAME=FILE.npy   input tensor from a .npy file (repeatable); others get\n"
                     "                          deterministic random data\n"
                     "  --dim NAME=VALUE        value of a symbolic dim for random inputs (default 1)\n"
                     "  --output-dir DIR        write each output to DIR/<name>.npy\n"
                     "  --threads N             threads per session (0 = all cores, default)\n"
                     "  --benchmark N           time N runs after the warm-up runs\n"
                     "  --warmup N              warm-up runs before benchmarking (default 5)\n"
                     "  --json FILE             write timing numbers as JSON\n"
                     "  --timed-stdin           after the warm-up runs, run once per line read from\n"
                     "                          stdin and print that run's time in ms on its own line\n"
                     "                          (for benchmark drivers that alternate with another\n"
                     "                          runtime: bench/suite.py --method paired)\n"
                     "  --print N               values printed per output (default 8)\n"
                     "  --disable-cpu-features LIST  treat these CPU features as absent\n"
                     "  --trusted-key PUB       require a valid signature by this public key (KEY.pub of\n"
                     "                          v4fc keygen; repeatable: any of them) before loading\n"
                     "  --signature-policy P    off, warn or require (default: require with --trusted-key)\n"
                     "  --decrypt-key KEY       key of an encrypted artifact (v4fc keygen --type encryption)\n"
                     "  --feedback OUT=IN       feed output OUT back as input IN on the next run, without\n"
                     "                          copying (repeatable; a KV cache: present_key=past_key)\n"
                     "  --profile FILE          time every dispatch over --profile-runs runs: write the\n"
                     "                          last run as a Chrome trace (chrome://tracing, Perfetto) and\n"
                     "                          print the hotspot table (% of time, GFLOP/s, % of the FMA\n"
                     "                          peak measured on this host at the session's threads)\n"
                     "  --profile-runs N        runs profiled after 2 warm-up runs (default 10)\n"
                     "  --steps N               run N times in a row (default 1); outputs are those of the\n"
                     "                          last run\n"
                     "  --device D              cpu, cuda[:N] or auto (default): where the artifact's GPU\n"
                     "                          dispatches run (v4fc --target with cuda)\n";

struct Options {
  std::string model;
  std::map<std::string, std::string> inputFiles;
  std::map<std::string, int64_t> dims;
  std::string outputDir, jsonPath, disabledFeatures, signaturePolicy;
  bool timedStdin = false;
  int32_t device = V4F_DEVICE_AUTO, deviceOrdinal = 0;
  std::vector<std::string> trustedKeys;
  std::string decryptKey;
  std::vector<std::pair<std::string, std::string>> feedback; // output name, input name
  int threads = 0;
  std::string profilePath;
  long benchmark = 0, warmup = 5, printCount = 8, steps = 1, profileRuns = 10;
};

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "v4f-run: %s\n", message.c_str());
  std::exit(1);
}

long parseCount(const std::string &flag, const std::string &text, long min, long max = LONG_MAX) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < min || v > max)
    fail(flag + " expects an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + text +
         "'");
  return v;
}

std::pair<std::string, std::string> splitAssign(const std::string &flag, const std::string &text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    fail(flag + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--input") {
      auto kv = splitAssign(a, value());
      o.inputFiles[kv.first] = kv.second;
    } else if (a == "--dim") {
      auto kv = splitAssign(a, value());
      o.dims[kv.first] = parseCount(a, kv.second, 0, long(1) << 40);
    } else if (a == "--output-dir") {
      o.outputDir = value();
    } else if (a == "--device") {
      std::string d = value();
      if (d == "cpu")
        o.device = V4F_DEVICE_CPU;
      else if (d == "auto")
        o.device = V4F_DEVICE_AUTO;
      else if (d == "cuda")
        o.device = V4F_DEVICE_CUDA;
      else if (d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.size() < 9 &&
               d.find_first_not_of("0123456789", 5) == std::string::npos) {
        o.device = V4F_DEVICE_CUDA;
        o.deviceOrdinal = std::stoi(d.substr(5));
      } else {
        fail("--device must be cpu, cuda, cuda:N or auto, not '" + d + "'");
      }
    } else if (a == "--threads") {
      o.threads = int(parseCount(a, value(), 0, 4096));
    } else if (a == "--benchmark") {
      o.benchmark = parseCount(a, value(), 1);
    } else if (a == "--warmup") {
      o.warmup = parseCount(a, value(), 0);
    } else if (a == "--timed-stdin") {
      o.timedStdin = true;
    } else if (a == "--json") {
      o.jsonPath = value();
    } else if (a == "--print") {
      o.printCount = parseCount(a, value(), 0);
    } else if (a == "--disable-cpu-features") {
      o.disabledFeatures = value();
    } else if (a == "--decrypt-key") {
      o.decryptKey = value();
    } else if (a == "--trusted-key") {
      o.trustedKeys.push_back(value());
    } else if (a == "--signature-policy") {
      o.signaturePolicy = value();
      if (o.signaturePolicy != "off" && o.signaturePolicy != "warn" && o.signaturePolicy != "require")
        fail("--signature-policy must be off, warn or require, not '" + o.signaturePolicy + "'");
    } else if (a == "--feedback") {
      o.feedback.push_back(splitAssign(a, value()));
    } else if (a == "--profile") {
      o.profilePath = value();
    } else if (a == "--profile-runs") {
      o.profileRuns = parseCount(a, value(), 1, 100000);
    } else if (a == "--steps") {
      o.steps = parseCount(a, value(), 1);
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option '" + a + "'\n" + kUsage);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      fail("more than one model given ('" + o.model + "', '" + a + "')");
    }
  }
  if (o.model.empty()) fail(std::string("no model given\n") + kUsage);
  if (!o.feedback.empty() && !o.profilePath.empty())
    fail("--profile cannot be combined with --feedback (every run would grow the fed-back state)");
  if (!o.feedback.empty() && o.benchmark)
    fail("--benchmark cannot be combined with --feedback (every run would grow the fed-back state)");
  if (o.timedStdin && !o.feedback.empty())
    fail("--timed-stdin cannot be combined with --feedback (every run would grow the fed-back state)");
  return o;
}

void check(v4f_status_t status, const std::string &context) {
  if (!status) return;
  std::string message = v4f_status_message(status);
  v4f_status_free(status);
  fail(context + message);
}

// IEEE half <-> float, enough for printing and random data.
uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  int e = int(exp) - 127 + 15;
  if (exp == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (e >= 31) return uint16_t(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000;
    return uint16_t(sign | (mant >> (14 - e)));
  }
  return uint16_t(sign | uint32_t(e) << 10 | (mant >> 13));
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(float(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(float(mant | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

// splitmix64: the random inputs are the same on every run and machine.
struct Random {
  uint64_t state = 0x5EED5EED5EED5EEDull;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return float(next() >> 40) / float(1 << 24) * 2.f - 1.f; }
};

void fillRandom(Random &rng, int32_t dtype, std::vector<uint8_t> &data) {
  size_t n = data.size() / v4f_dtype_size(dtype);
  for (size_t i = 0; i < n; ++i) {
    uint8_t *p = data.data() + i * v4f_dtype_size(dtype);
    switch (dtype) {
    case V4F_DTYPE_FLOAT32: {
      float v = rng.uniform();
      std::memcpy(p, &v, 4);
      break;
    }
    case V4F_DTYPE_FLOAT64: {
      double v = rng.uniform();
      std::memcpy(p, &v, 8);
      break;
    }
    case V4F_DTYPE_FLOAT16: {
      uint16_t v = floatToHalf(rng.uniform());
      std::memcpy(p, &v, 2);
      break;
    }
    case V4F_DTYPE_BOOL: *p = uint8_t(rng.next() & 1); break;
    case V4F_DTYPE_UINT8: *p = uint8_t(rng.next() % 16); break;
    case V4F_DTYPE_INT8: *p = uint8_t(int8_t(int(rng.next() % 16) - 8)); break;
    case V4F_DTYPE_UINT16: {
      uint16_t v = uint16_t(rng.next() % 16);
      std::memcpy(p, &v, 2);
      break;
    }
    case V4F_DTYPE_INT16: {
      int16_t v = int16_t(int(rng.next() % 16) - 8);
      std::memcpy(p, &v, 2);
      break;
    }
    case V4F_DTYPE_INT32: {
      int32_t v = int32_t(rng.next() % 16) - 8;
      std::memcpy(p, &v, 4);
      break;
    }
    case V4F_DTYPE_INT64: {
      int64_t v = int64_t(rng.next() % 16) - 8;
      std::memcpy(p, &v, 8);
      break;
    }
#ifdef V4F_DTYPE_UINT32
    case V4F_DTYPE_UINT32: {
      uint32_t v = uint32_t(rng.next() % 16);
      std::memcpy(p, &v, 4);
      break;
    }
    case V4F_DTYPE_UINT64: {
      uint64_t v = rng.next() % 16;
      std::memcpy(p, &v, 8);
      break;
    }
#endif
    default: break;
    }
  }
}

std::string formatValue(int32_t dtype, const uint8_t *p) {
  char buf[64];
  switch (dtype) {
  case V4F_DTYPE_FLOAT32: {
    float v;
    std::memcpy(&v, p, 4);
    std::snprintf(buf, sizeof buf, "%g", double(v));
    break;
  }
  case V4F_DTYPE_FLOAT64: {
    double v;
    std::memcpy(&v, p, 8);
    std::snprintf(buf, sizeof buf, "%g", v);
    break;
  }
  case V4F_DTYPE_FLOAT16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    std::snprintf(buf, sizeof buf, "%g", double(halfToFloat(v)));
    break;
  }
  case V4F_DTYPE_BOOL: return *p ? "true" : "false";
  case V4F_DTYPE_UINT8: return std::to_string(*p);
  case V4F_DTYPE_INT8: return std::to_string(int8_t(*p));
  case V4F_DTYPE_UINT16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return std::to_string(v);
  }
  case V4F_DTYPE_INT16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    return std::to_string(v);
  }
  case V4F_DTYPE_INT32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return std::to_string(v);
  }
  case V4F_DTYPE_INT64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return std::to_string(v);
  }
#ifdef V4F_DTYPE_UINT32
  case V4F_DTYPE_UINT32: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return std::to_string(v);
  }
  case V4F_DTYPE_UINT64: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return std::to_string(v);
  }
#endif
  default: return "?";
  }
  return buf;
}

std::string shapeString(const int64_t *dims, int rank, const char *const *names = nullptr) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += dims[i] < 0 && names && names[i][0] ? names[i] : std::to_string(dims[i]);
  }
  return s + "]";
}

// Output names may contain '/', ':' etc.; keep [A-Za-z0-9._-].
std::string sanitizeFileName(const std::string &name) {
  std::string s = name.empty() ? "output" : name;
  for (char &c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  if (s[0] == '.') s[0] = '_';
  return s;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double percentile(std::vector<double> sorted, double p) {
  size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[rank == 0 ? 0 : rank - 1];
}

/// Reads each input from its --input .npy file (checking dtype and shape
/// against the signature) or fills it with deterministic random data.
void prepareInputs(v4f_model_t *model, const Options &opt, std::vector<v4f_tensor_t> &inputs,
                   std::vector<std::vector<uint8_t>> &inputData) {
  const std::string where = opt.model + ": ";
  size_t nin = v4f_model_input_count(model);
  inputData.resize(nin);
  inputs.resize(nin);
  Random rng;
  std::map<std::string, std::string> unused = opt.inputFiles;
  std::map<std::string, int64_t> unusedDims = opt.dims;
  for (size_t i = 0; i < nin; ++i) {
    v4f_tensor_info_t info;
    check(v4f_model_input_info(model, i, &info), where);
    v4f_tensor_t &t = inputs[i];
    t = v4f_tensor_t{};
    t.dtype = info.dtype;
    t.rank = info.rank;
    auto file = opt.inputFiles.find(info.name);
    if (file != opt.inputFiles.end()) {
      unused.erase(info.name);
      v4frun::NpyArray array;
      std::string error;
      if (!v4frun::readNpy(file->second, array, error)) fail(error);
      if (array.dtype != v4frun::npyStorageDtype(info.dtype))
        fail(file->second + ": dtype " + v4f_dtype_name(array.dtype) + " does not match input '" + info.name + "' (" +
             v4f_dtype_name(info.dtype) +
             (v4frun::npyStorageDtype(info.dtype) != info.dtype
                  ? std::string(", given as ") + v4f_dtype_name(v4frun::npyStorageDtype(info.dtype))
                  : std::string()) +
             ")");
      if (int(array.shape.size()) != info.rank)
        fail(file->second + ": shape " + shapeString(array.shape.data(), int(array.shape.size())) +
             " does not match input '" + info.name + "' " + shapeString(info.dims, info.rank, info.dim_names));
      for (int d = 0; d < info.rank; ++d) {
        if (info.dims[d] >= 0 && info.dims[d] != array.shape[size_t(d)])
          fail(file->second + ": shape " + shapeString(array.shape.data(), info.rank) + " does not match input '" +
               info.name + "' " + shapeString(info.dims, info.rank, info.dim_names));
        t.dims[d] = array.shape[size_t(d)];
      }
      inputData[i] = std::move(array.data);
    } else {
      uint64_t count = 1;
      for (int d = 0; d < info.rank; ++d) {
        int64_t v = info.dims[d];
        if (v < 0) {
          auto it = opt.dims.find(info.dim_names[d]);
          v = it == opt.dims.end() ? 1 : it->second;
          unusedDims.erase(info.dim_names[d]);
        }
        t.dims[d] = v;
        if (__builtin_mul_overflow(count, uint64_t(v), &count))
          fail("input '" + std::string(info.name) + "' is too large");
      }
      // Random inputs are allocated here: refuse what cannot be (rather
      // than dying in the allocator).
      constexpr uint64_t kMaxRandomBytes = uint64_t(16) << 30;
      uint64_t bytes;
      if (__builtin_mul_overflow(count, uint64_t(v4f_dtype_size(info.dtype)), &bytes) || bytes > kMaxRandomBytes)
        fail("input '" + std::string(info.name) + "' " + shapeString(t.dims, t.rank) +
             " would need more than 16 GiB of random data; give it with --input or smaller --dim values");
      inputData[i].assign(bytes, 0);
      fillRandom(rng, info.dtype, inputData[i]);
    }
    t.data = inputData[i].data();
    t.byte_size = inputData[i].size();
    std::printf("input  %-20s %-8s %s%s\n", info.name, v4f_dtype_name(info.dtype), shapeString(t.dims, t.rank).c_str(),
                file == opt.inputFiles.end() ? " (random)" : "");
  }
  if (!unused.empty()) fail("--input '" + unused.begin()->first + "' does not name an input of " + opt.model);
  // A --dim that no random input reads is a typo or names a dim an --input
  // file already fixes.
  for (const auto &[name, value] : unusedDims) {
    bool symbolic = false;
    for (size_t i = 0; i < nin && !symbolic; ++i) {
      v4f_tensor_info_t info;
      check(v4f_model_input_info(model, i, &info), where);
      for (int d = 0; d < info.rank; ++d) symbolic |= info.dims[d] < 0 && name == info.dim_names[d];
    }
    if (!symbolic) fail("--dim '" + name + "' does not name a symbolic dim of " + opt.model);
  }
}

/// --benchmark: times opt.benchmark runs after opt.warmup and prints (and
/// with --json writes) the latency statistics.
void runBenchmark(v4f_session_t *session, const Options &opt, std::vector<v4f_tensor_t> &inputs,
                  std::vector<v4f_tensor_t> &outputs, double loadMs, double firstRunMs) {
  const std::string where = opt.model + ": ";
  size_t nin = inputs.size(), nout = outputs.size();
  for (long i = 0; i < opt.warmup; ++i)
    check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
  std::vector<double> times;
  times.reserve(size_t(opt.benchmark));
  for (long i = 0; i < opt.benchmark; ++i) {
    auto start = std::chrono::steady_clock::now();
    check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
    times.push_back(msSince(start));
  }
  double mean = 0;
  for (double t : times) mean += t;
  mean /= double(times.size());
  const std::vector<double> samples = times; // in run order, for --json
  std::sort(times.begin(), times.end());
  double p50 = percentile(times, 50), p90 = percentile(times, 90), p99 = percentile(times, 99);
  double throughput = mean > 0 ? 1000.0 / mean : 0;
  std::printf("benchmark:        %ld runs after %ld warm-up\n", opt.benchmark, opt.warmup);
  std::printf("latency mean:     %.4f ms\n", mean);
  std::printf("latency p50/p90/p99: %.4f / %.4f / %.4f ms\n", p50, p90, p99);
  std::printf("throughput:       %.2f inferences/s\n", throughput);
  if (!opt.jsonPath.empty()) {
    FILE *f = std::fopen(opt.jsonPath.c_str(), "w");
    if (!f) fail(opt.jsonPath + ": cannot create: " + std::strerror(errno));
    std::fprintf(f,
                 "{\"model\": \"%s\", \"threads\": %d, \"warmup\": %ld, \"iterations\": %ld,\n"
                 " \"load_ms\": %.6f, \"first_run_ms\": %.6f, \"mean_ms\": %.6f, \"p50_ms\": %.6f,\n"
                 " \"p90_ms\": %.6f, \"p99_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f,\n"
                 " \"throughput_per_s\": %.6f, \"peak_arena_bytes\": %zu,\n \"samples_ms\": [",
                 v4frun::jsonEscape(opt.model.c_str()).c_str(), v4f_session_thread_count(session), opt.warmup,
                 opt.benchmark, loadMs, firstRunMs, mean, p50, p90, p99, times.front(), times.back(), throughput,
                 v4f_session_peak_memory(session));
    for (size_t i = 0; i < samples.size(); ++i) std::fprintf(f, "%s%.6f", i ? ", " : "", samples[i]);
    std::fprintf(f, "]}\n");
    if (std::fclose(f) != 0) fail(opt.jsonPath + ": write failed");
  }
}

} // namespace

int runMain(int argc, char **argv);

int main(int argc, char **argv) {
  // Never die in the allocator: a shape that cannot be allocated is an error.
  try {
    return runMain(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "v4f-run: out of memory (the inputs or outputs are too large for this machine)\n");
    return 1;
  }
}

int runMain(int argc, char **argv) {
  Options opt = parseArgs(argc, argv);
  const std::string where = opt.model + ": ";

  v4f_model_options_t modelOptions;
  v4f_model_options_init(&modelOptions);
  if (!opt.disabledFeatures.empty()) modelOptions.disabled_cpu_features = opt.disabledFeatures.c_str();
  std::vector<uint8_t> trusted(32 * opt.trustedKeys.size());
  for (size_t k = 0; k < opt.trustedKeys.size(); ++k)
    check(v4f_read_public_key_file(opt.trustedKeys[k].c_str(), trusted.data() + 32 * k), "--trusted-key: ");
  std::string policy =
      opt.signaturePolicy.empty() ? (opt.trustedKeys.empty() ? "off" : "require") : opt.signaturePolicy;
  if (policy == "require" && opt.trustedKeys.empty()) fail("--signature-policy require needs --trusted-key");
  modelOptions.signature_policy = policy == "require" ? V4F_SIGNATURE_REQUIRE
                                  : policy == "warn"  ? V4F_SIGNATURE_WARN
                                                      : V4F_SIGNATURE_OFF;
  modelOptions.trusted_keys = trusted.data();
  modelOptions.trusted_key_count = opt.trustedKeys.size();
  uint8_t decryptionKey[32];
  if (!opt.decryptKey.empty()) {
    check(v4f_read_encryption_key_file(opt.decryptKey.c_str(), decryptionKey), "--decrypt-key: ");
    modelOptions.decryption_key = decryptionKey;
  }
  auto t0 = std::chrono::steady_clock::now();
  v4f_model_t *model = nullptr;
  check(v4f_model_load_file(opt.model.c_str(), &modelOptions, nullptr, &model), "");
  double loadMs = msSince(t0);
  switch (v4f_model_signature_state(model, nullptr)) {
  case V4F_SIGNATURE_STATE_VERIFIED: std::printf("signature:        valid, by a trusted key\n"); break;
  case V4F_SIGNATURE_STATE_UNTRUSTED:
    std::fprintf(stderr, "v4f-run: warning: %s is signed by a key that is not trusted\n", opt.model.c_str());
    break;
  case V4F_SIGNATURE_STATE_UNSIGNED:
    std::fprintf(stderr, "v4f-run: warning: %s is not signed\n", opt.model.c_str());
    break;
  default: break;
  }

  v4f_session_options_t sessionOptions;
  v4f_session_options_init(&sessionOptions);
  sessionOptions.thread_count = opt.threads;
  sessionOptions.device = opt.device;
  sessionOptions.device_ordinal = opt.deviceOrdinal;
  v4f_session_t *session = nullptr;
  check(v4f_session_create(model, &sessionOptions, nullptr, &session), where);

  size_t nin = v4f_model_input_count(model), nout = v4f_model_output_count(model);
  std::vector<v4f_tensor_t> inputs;
  std::vector<std::vector<uint8_t>> inputData;
  prepareInputs(model, opt, inputs, inputData);

  // --feedback OUT=IN by names.
  auto indexOf = [&](bool output, const std::string &name) -> size_t {
    size_t n = output ? nout : nin;
    for (size_t i = 0; i < n; ++i) {
      v4f_tensor_info_t info;
      check(output ? v4f_model_output_info(model, i, &info) : v4f_model_input_info(model, i, &info), where);
      if (name == info.name) return i;
    }
    fail(where + "--feedback names " + (output ? "output" : "input") + " '" + name +
         "', which the model does not have");
  };
  for (const auto &[out, in] : opt.feedback)
    check(v4f_session_bind_feedback(session, indexOf(true, out), indexOf(false, in)), where);

  // Outputs, sized from the resolved shapes before every run (fed-back
  // outputs live in the session's buffers).
  std::vector<v4f_tensor_t> outputs(nout);
  std::vector<std::vector<uint8_t>> outputData(nout);
  double firstRunMs = 0, allRunsMs = 0;
  for (long step = 0; step < opt.steps; ++step) {
    check(v4f_session_resolve_output_shapes(session, inputs.data(), nin, outputs.data(), nout), where);
    for (size_t i = 0; i < nout; ++i) {
      if (outputData[i].size() < outputs[i].byte_size) outputData[i].assign(outputs[i].byte_size, 0);
      outputs[i].data = outputData[i].data();
      outputs[i].byte_size = outputData[i].size();
    }
    t0 = std::chrono::steady_clock::now();
    check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout),
          opt.steps > 1 ? where + "step " + std::to_string(step) + ": " : where);
    double ms = msSince(t0);
    if (step == 0) firstRunMs = ms;
    allRunsMs += ms;
  }

  if (!opt.outputDir.empty()) {
    // Create the output folder (and its parents) like `mkdir -p`.
    for (size_t pos = 1; pos <= opt.outputDir.size(); ++pos) {
      if (pos != opt.outputDir.size() && opt.outputDir[pos] != '/') continue;
      std::string prefix = opt.outputDir.substr(0, pos);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "v4f-run: %s: cannot create the output folder: %s\n", prefix.c_str(),
                     std::strerror(errno));
        return 1;
      }
    }
  }
  for (size_t i = 0; i < nout; ++i) {
    v4f_tensor_info_t info;
    check(v4f_model_output_info(model, i, &info), where);
    const v4f_tensor_t &t = outputs[i];
    size_t elem = v4f_dtype_size(t.dtype);
    size_t count = elem ? t.byte_size / elem : 0;
    uint64_t shapeCount = 1;
    for (int d = 0; d < t.rank; ++d) shapeCount *= uint64_t(t.dims[d]);
    count = std::min<size_t>(count, size_t(shapeCount));
    std::string values;
    for (size_t k = 0; k < count && k < size_t(opt.printCount); ++k)
      values += (k ? ", " : "") + formatValue(t.dtype, static_cast<const uint8_t *>(t.data) + k * elem);
    if (count > size_t(opt.printCount)) values += ", ...";
    std::printf("output %-20s %-8s %s = [%s]\n", info.name, v4f_dtype_name(t.dtype),
                shapeString(t.dims, t.rank).c_str(), values.c_str());
    if (!opt.outputDir.empty()) {
      std::string path = opt.outputDir + "/" + sanitizeFileName(info.name) + ".npy";
      std::string error;
      if (!v4frun::writeNpy(path, t.dtype, t.dims, t.rank, t.data, size_t(shapeCount) * elem, error)) fail(error);
    }
  }
  std::printf("load time:        %.3f ms\n", loadMs);
  std::printf("kernels:          %s (variant %zu of the artifact's %zu plans, 0 = baseline)\n",
              v4f_model_target_cpu(model), v4f_model_variant(model), v4f_model_variant_count(model));
  std::printf("first run:        %.3f ms\n", firstRunMs);
  if (opt.steps > 1)
    std::printf("%ld runs:          %.3f ms (%.3f ms per run)\n", opt.steps, allRunsMs, allRunsMs / opt.steps);
  std::printf("peak arena:       %zu bytes\n", v4f_session_peak_memory(session));
  std::printf("threads:          %d\n", v4f_session_thread_count(session));

  if (opt.timedStdin) {
    // One timed run per line of stdin, its time printed at once: a driver
    // alternating v4f and another runtime run by run sees both under the
    // same machine conditions (bench/suite.py --method paired).
    for (long i = 0; i < opt.warmup; ++i)
      check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int c; (c = std::getchar()) != EOF;) {
      if (c != '\n') continue;
      auto start = std::chrono::steady_clock::now();
      check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
      std::printf("%.6f\n", msSince(start));
      std::fflush(stdout);
    }
  }
  if (opt.benchmark > 0) {
    runBenchmark(session, opt, inputs, outputs, loadMs, firstRunMs);
  } else if (!opt.jsonPath.empty()) {
    fail("--json needs --benchmark N");
  }
  if (!opt.profilePath.empty()) {
    for (int i = 0; i < 2; ++i) check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
    check(v4f_session_set_profiling(session, 1), where);
    v4frun::Profile profile;
    for (long i = 0; i < opt.profileRuns; ++i) {
      check(v4f_session_run(session, inputs.data(), nin, outputs.data(), nout), where);
      profile.addRun(session);
    }
    check(v4f_session_set_profiling(session, 0), where);
    std::string error, isa;
    if (!profile.writeChromeTrace(opt.profilePath, error)) fail(error);
    int threads = v4f_session_thread_count(session);
    double peak = v4frun::measureFmaPeakGflops(threads, &isa);
    profile.printHotspots(stdout, 25, peak, threads);
    std::printf("trace:            %s\n", opt.profilePath.c_str());
  }

  v4f_session_release(session);
  v4f_model_release(model);
  return 0;
}
