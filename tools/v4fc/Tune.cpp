//===- Tune.cpp - v4fc tune ------------------------------------------------===//
//
// The continuous-optimization loop's measuring half (docs/tuning.md):
//   1. compile the model with candidate N for every tunable matmul/conv,
//      N = 0 (the cost model's choices) .. the longest candidate list - 1;
//   2. time every artifact's dispatches with `v4f-run --profile` (medians
//      over --runs runs), the artifacts alternating, --rounds times;
//   3. per op signature, the configuration with the lowest median time
//      (summed over the ops sharing the signature, im2col dispatches
//      included) wins if it beats the cost model's by --min-gain;
//   4. merge the winners into the database (other signatures, targets and
//      codegen versions are kept).
//
//===----------------------------------------------------------------------===//
#include "Tune.h"

#include "v4f/Artifact/ArtifactWriter.h"
#include "v4f/Codegen/Tuning.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace v4f {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "v4fc: error: %s\n", message.c_str());
  return 1;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// Time (µs) of each dispatch name in a v4f-run --profile trace: its
/// minimum over the profiled runs (on a shared machine, interference only
/// ever adds time; the minimum moves least between rounds).
bool readDispatchTimes(const std::string &path, std::map<std::string, double> &times, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = path + ": " + buffer.getError().message();
    return false;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = path + ": " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *stats = root ? root->getArray("v4fDispatchStats") : nullptr;
  if (!stats) {
    error = path + ": no v4fDispatchStats (a v4f-run from another build?)";
    return false;
  }
  for (const llvm::json::Value &v : *stats) {
    const llvm::json::Object *o = v.getAsObject();
    if (!o || !o->getString("name") || !o->getNumber("min_us")) continue;
    times[o->getString("name")->str()] += *o->getNumber("min_us");
  }
  return true;
}

/// The time of the op whose dispatch is `dispatch`: its dispatches are named
/// `dispatch` or `dispatch` + " <stage>" (e.g. "conv 'x' im2col").
double opTime(const std::map<std::string, double> &times, const std::string &dispatch) {
  double t = 0;
  for (auto it = times.lower_bound(dispatch); it != times.end() && it->first.compare(0, dispatch.size(), dispatch) == 0;
       ++it)
    if (it->first.size() == dispatch.size() || it->first[dispatch.size()] == ' ') t += it->second;
  return t;
}

std::string shortKey(const std::string &key) {
  // "v4f.conv(tensor<...>, ...)->tensor<1x512x7x7xf32>{...}": op and result.
  size_t paren = key.find('('), arrow = key.find(")->"), brace = key.rfind('{');
  if (paren == std::string::npos || arrow == std::string::npos || brace == std::string::npos) return key;
  std::string op = key.substr(0, paren);
  std::string firstOperand = key.substr(paren + 1, key.find(", ", paren) - paren - 1);
  return op + " " + firstOperand + " -> " + key.substr(arrow + 3, brace - arrow - 3);
}

} // namespace

int runTune(const TuneRequest &req, CompilerOptions options) {
  if (options.targetCpu.find(',') != std::string::npos)
    return fail("tune measures one target: give --target-cpu a single CPU (host, the default, or the machine's)");
  std::string runner = req.v4fRun;
  if (runner.empty()) {
    std::string self = llvm::sys::fs::getMainExecutable("v4fc", reinterpret_cast<void *>(&runTune));
    llvm::SmallString<256> sibling(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(sibling, "v4f-run");
    runner = sibling.str().str();
  }
  if (!llvm::sys::fs::can_execute(runner))
    return fail("cannot run '" + runner + "' (the v4f-run that measures; --v4f-run PATH)");

  std::string dir = req.workDir;
  bool removeDir = dir.empty();
  if (removeDir) {
    llvm::SmallString<128> tmp;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("v4fc-tune", tmp))
      return fail("cannot create a temporary directory: " + ec.message());
    dir = tmp.str().str();
  } else if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    return fail(dir + ": " + ec.message());
  }
  struct Cleanup {
    std::string dir;
    bool remove;
    ~Cleanup() {
      if (remove) llvm::sys::fs::remove_directories(dir);
    }
  } cleanup{dir, removeDir};

  // 1. One artifact per candidate index.
  std::vector<std::vector<TuningAssignment>> assigned;
  std::string target;
  for (int c = 0;; ++c) {
    std::vector<TuningAssignment> got;
    CompilerOptions o = options;
    o.tuneCandidate = c;
    o.tuneAssignments = &got;
    CompiledModel model;
    std::string error;
    if (!compileONNXModel(req.model, o, model, error)) return fail(error);
    if (got.empty()) return fail(req.model + ": no float matmul or convolution to tune");
    std::string path = dir + "/candidate" + std::to_string(c) + ".v4f";
    if (!writeArtifactFile(path, model.plan, model.constants, error)) return fail(path + ": " + error);
    if (c == 0) target = got.front().target;
    assigned.push_back(std::move(got));
    int longest = 0;
    for (const TuningAssignment &a : assigned.front()) longest = std::max(longest, a.candidates);
    if (req.verbose) std::fprintf(stderr, "[v4fc] tune: compiled candidate %d of %d\n", c + 1, longest);
    if (c + 1 >= longest) break;
  }
  const int candidates = int(assigned.size());

  // 2. Alternating rounds of profiles: per key, per configuration, the op
  // signature's summed time in each round.
  struct Timing {
    TuningConfig config;
    std::vector<double> us;
  };
  std::map<std::string, std::map<std::string, Timing>> byKey; // key -> config description -> times
  std::map<std::string, int> opsPerKey;
  for (const TuningAssignment &a : assigned.front()) opsPerKey[a.key]++;
  std::string profile = dir + "/profile.json", log = dir + "/v4f-run.log";
  // Profiles `artifact` with v4f-run: the time of every dispatch name.
  auto measure = [&](const std::string &artifact, std::map<std::string, double> &times, std::string &error) {
    std::vector<std::string> args = {runner,      artifact, "--threads",      std::to_string(req.threads),
                                     "--profile", profile,  "--profile-runs", std::to_string(req.runs),
                                     "--print",   "0"};
    for (const std::string &d : req.runDims) {
      args.push_back("--dim");
      args.push_back(d);
    }
    std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
    std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
    std::string execError;
    int rc = llvm::sys::ExecuteAndWait(runner, argRefs, std::nullopt, redirects, /*SecondsToWait=*/600, 0, &execError);
    if (rc != 0) {
      std::string detail;
      if (auto text = llvm::MemoryBuffer::getFile(log, true)) detail = (*text)->getBuffer().str();
      error = "measuring " + artifact + " failed (" + runner + " exited " + std::to_string(rc) +
              (execError.empty() ? "" : ": " + execError) + ")" + (detail.empty() ? "" : ":\n" + detail);
      return false;
    }
    return readDispatchTimes(profile, times, error);
  };
  for (int r = 0; r < req.rounds; ++r) {
    for (int c = 0; c < candidates; ++c) {
      std::map<std::string, double> times;
      std::string error;
      if (!measure(dir + "/candidate" + std::to_string(c) + ".v4f", times, error)) return fail(error);
      std::map<std::string, double> perKey;
      std::map<std::string, TuningConfig> configOf;
      for (const TuningAssignment &a : assigned[size_t(c)]) {
        perKey[a.key] += opTime(times, a.dispatch);
        configOf[a.key] = a.config;
      }
      for (const auto &[key, us] : perKey) {
        Timing &t = byKey[key][configOf[key].describe()];
        t.config = configOf[key];
        t.us.push_back(us);
      }
    }
    if (req.verbose) std::fprintf(stderr, "[v4fc] tune: round %d of %d measured\n", r + 1, req.rounds);
  }

  // 3. Winners.
  std::map<std::string, TuningConfig> defaults;
  for (const TuningAssignment &a : assigned.front()) defaults[a.key] = a.config;
  std::vector<TuningEntry> fresh;
  std::printf("%-60s %4s %11s %11s %7s  %s\n", "op (first operand -> result)", "ops", "default ms", "tuned ms", "gain",
              "configuration");
  double totalDefault = 0, totalTuned = 0;
  int changed = 0;
  for (const auto &[key, configs] : byKey) {
    const TuningConfig &def = defaults[key];
    double defaultUs = median(configs.at(def.describe()).us);
    TuningConfig best = def;
    double bestUs = defaultUs;
    for (const auto &[name, t] : configs) {
      double us = median(t.us);
      if (us < bestUs) {
        bestUs = us;
        best = t.config;
      }
    }
    if (!(bestUs < defaultUs * (1 - req.minGain))) {
      best = def;
      bestUs = defaultUs;
    }
    if (!(best == def)) ++changed;
    totalDefault += defaultUs;
    totalTuned += bestUs;
    TuningEntry e;
    e.key = key;
    e.target = target;
    e.codegen = kCodegenVersion;
    e.threads = req.threads;
    e.config = best;
    e.ms = bestUs / 1e3;
    e.defaultMs = defaultUs / 1e3;
    fresh.push_back(e);
    std::printf("%-60s %4d %11.4f %11.4f %6.1f%%  %s%s\n", shortKey(key).substr(0, 60).c_str(), opsPerKey[key],
                defaultUs / 1e3, bestUs / 1e3, defaultUs > 0 ? 100 * (1 - bestUs / defaultUs) : 0.0,
                best == def ? "(default) " : "", best.describe().c_str());
  }
  std::printf("tuned %zu op signatures (%d changed) on %s, %d threads: %.3f -> %.3f ms in the tuned dispatches\n",
              fresh.size(), changed, target.c_str(), req.threads, totalDefault / 1e3, totalTuned / 1e3);

  // Confirmation: the whole model with the winners against the cost model's
  // choices, alternating. Per-op gains measured one candidate at a time can
  // be noise or can interact (a faster op leaving a colder cache); if the
  // tuned model is not faster, the database keeps the cost model's choices.
  std::string error;
  if (changed) {
    std::string trialDb = dir + "/trial.json";
    if (!writeTuningDatabase(trialDb, fresh, error)) return fail(error);
    CompilerOptions o = options;
    o.tuningDb = trialDb;
    CompiledModel model;
    if (!compileONNXModel(req.model, o, model, error)) return fail(error);
    std::string tuned = dir + "/tuned.v4f";
    if (!writeArtifactFile(tuned, model.plan, model.constants, error)) return fail(tuned + ": " + error);
    std::vector<double> base, trial;
    for (int r = 0; r < std::max(req.rounds, 3); ++r) {
      for (int side = 0; side < 2; ++side) {
        std::map<std::string, double> times;
        if (!measure(side ? tuned : dir + "/candidate0.v4f", times, error)) return fail(error);
        double total = 0;
        for (const auto &[name, us] : times) total += us;
        (side ? trial : base).push_back(total);
      }
    }
    double b = median(base), t = median(trial);
    std::printf("whole model (sum of per-dispatch minima, median of %zu alternating rounds): cost model %.3f ms, "
                "tuned %.3f ms\n",
                base.size(), b / 1e3, t / 1e3);
    if (!(t < b)) {
      std::printf("the tuned choices are not faster as a whole: recording the cost model's choices\n");
      for (TuningEntry &e : fresh) {
        e.config = defaults[e.key];
        e.ms = e.defaultMs;
      }
    }
  }

  // 4. Merge into the database.
  std::vector<TuningEntry> entries;
  if (!readTuningDatabase(req.db, entries, error, /*missingOk=*/true)) return fail(error);
  std::set<std::string> replaced;
  for (const TuningEntry &e : fresh) replaced.insert(e.key + "\n" + e.target + "\n" + e.codegen);
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const TuningEntry &e) {
                                 return replaced.count(e.key + "\n" + e.target + "\n" + e.codegen) != 0;
                               }),
                entries.end());
  entries.insert(entries.end(), fresh.begin(), fresh.end());
  if (!writeTuningDatabase(req.db, entries, error)) return fail(error);
  std::printf("wrote %s (%zu entries)\n", req.db.c_str(), entries.size());
  return 0;
}

} // namespace v4f
