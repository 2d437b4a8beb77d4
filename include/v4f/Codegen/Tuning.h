//===- Tuning.h - measured GEMM choices: candidates, keys, database -*- C++ -*-===//
//
// `v4fc tune` measures, on the machine it runs on, alternatives to the cost
// model's lowering choices for a model's matmuls and convs, and records the
// winners in a JSON database; `v4fc compile --tuning-db` applies them
// (pass v4f-apply-tuning, docs/tuning.md).
//
// A choice (TuningConfig) is the GEMM tiling (#v4f.gemm_tiling) and, for a
// conv, its algorithm ("" = im2col/pointwise GEMM with pixels in lanes,
// "channel_lanes", "winograd_2x2", "winograd_4x4", "winograd_4x4_direct_weights"). Each tunable op has an
// ordered candidate list whose first entry is the cost model's choice. Entries are keyed by the op's
// signature (tuningKey), the target CPU and the codegen version
// (kCodegenVersion), so a database from another machine kind or another
// kernel generator is ignored, never misapplied.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_CODEGEN_TUNING_H
#define V4F_CODEGEN_TUNING_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class Pass;
class Operation;
} // namespace mlir

namespace v4f {

/// Bumped whenever the GEMM/conv kernels or the meaning of a tiling change:
/// database entries recorded for another version are not applied.
inline constexpr const char *kCodegenVersion = "v4f-cpu-gemm-4";

struct TuningConfig {
  // conv only: "", "channel_lanes", "winograd_2x2", "winograd_4x4", "winograd_4x4_direct_weights"
  std::string algorithm;
  int64_t mr = 0, nr = 0, lanes = 0, mb = 0, nb = 0, kc = 0;
  std::string describe() const;
  bool operator==(const TuningConfig &o) const {
    return algorithm == o.algorithm && mr == o.mr && nr == o.nr && lanes == o.lanes && mb == o.mb && nb == o.nb &&
           kc == o.kc;
  }
};

/// What v4f-apply-tuning did to one op.
struct TuningAssignment {
  std::string dispatch; // the op's dispatch name in profiles ("conv 'n_Conv_27'")
  std::string key;      // tuningKey(op)
  std::string target;   // tuningTarget(module)
  int candidates = 0;   // length of its candidate list
  TuningConfig config;  // the configuration it got
};

/// One database entry.
struct TuningEntry {
  std::string key, target, codegen;
  int64_t threads = 1;
  TuningConfig config;
  double ms = 0, defaultMs = 0; // measured time of the winner and of candidate 0
};

struct TuningOptions {
  std::string dbPath;                                // apply this database's winners
  int candidate = -1;                                // or give every tunable op its candidate N
  std::vector<TuningAssignment> *assigned = nullptr; // filled with what each op got
  std::vector<std::string> *notes = nullptr;         // e.g. "tuning: 12 of 53 ops from the database"
};

std::unique_ptr<mlir::Pass> createApplyTuningPass(const TuningOptions &options);

/// The signature a database entry is keyed by.
std::string tuningKey(mlir::Operation *op);
/// "sapphirerapids/avx512": the target a module is compiled for.
std::string tuningTarget(mlir::Operation *module);

/// Reads / writes a database. Reading a missing file gives no entries and
/// no error when `missingOk`.
bool readTuningDatabase(const std::string &path, std::vector<TuningEntry> &entries, std::string &error,
                        bool missingOk = false);
bool writeTuningDatabase(const std::string &path, const std::vector<TuningEntry> &entries, std::string &error);

} // namespace v4f

#endif // V4F_CODEGEN_TUNING_H
