//===- Tune.h - v4fc tune: measure GEMM/conv choices on this machine -*- C++ -*-===//
#ifndef V4F_TOOLS_V4FC_TUNE_H
#define V4F_TOOLS_V4FC_TUNE_H

#include "v4f/Compiler/Compiler.h"

#include <string>
#include <vector>

namespace v4f {

struct TuneRequest {
  std::string model, db;
  std::string v4fRun;               // the v4f-run that measures (default: beside v4fc)
  std::string workDir;              // keep the candidate artifacts and profiles here (default: a temp dir, removed)
  std::vector<std::string> runDims; // --dim NAME=VALUE passed to v4f-run for symbolic input dims
  int threads = 1, rounds = 3, runs = 10;
  double minGain = 0.05; // a candidate must beat the default by this fraction to win
  bool verbose = false;
};

/// Compiles `request.model` once per candidate index (every tunable op gets
/// its candidate N, see v4f-apply-tuning), times each artifact's dispatches
/// with v4f-run --profile in alternating rounds, and merges each op
/// signature's fastest configuration into the database. Prints a table.
/// Returns the process exit status.
int runTune(const TuneRequest &request, CompilerOptions options);

} // namespace v4f

#endif
