// shape_program.h - evaluation of the manifest's shape program (int64 registers).
#ifndef V4F_RUNTIME_SRC_SHAPE_PROGRAM_H_
#define V4F_RUNTIME_SRC_SHAPE_PROGRAM_H_

#include "internal.h"
#include "v4f/artifact_manifest_generated.h"

namespace v4f {
namespace rt {

// Evaluates every instruction into regs[0..n). `inputs` gives the caller's
// input tensors (dims read by InputDim); when it is NULL the program is
// evaluated partially: `known[i]` tells whether register i depends only on
// constants. The program must already be verified (operands in range).
// Errors: overflow, division by zero.
// `data` (optional) gives the run's buffer pointers and how many dispatches
// have run, for DataValue registers; without it they take their bound.
// A value is read right after its producer ran and kept in `cache` (per
// register; `cached` says which are filled), so the buffer may be reused.
// A value whose producer was skipped (`skipped[dispatch]`, a guarded
// dispatch of the untaken side of an If) keeps its bound. LoopIndex reads
// `loopIndex` (0 without it).
struct DataValues {
  void* const* bufferPtrs;
  uint32_t dispatchesRun;
  int64_t* cache;
  bool* cached;
  const bool* skipped = nullptr;
  // Per manifest loop: the iteration it is running (LoopIndex; 0 if NULL),
  // and the iterations it ran once it ended (LoopCount; -1 before).
  const int64_t* loopIndex = nullptr;
  const int64_t* loopCount = nullptr;
  // Per register (scratch; NULL: not tracked): set when its value is still
  // a bound (a data value whose producer has not run, the count of a loop
  // still to run) or derives from one. A Broadcast or Expect over such a
  // value checks nothing yet; it is checked again once the value is final.
  bool* provisional = nullptr;
};
V4F_INTERNAL v4f_status_t evalShapeProgram(const fb::Manifest* manifest, const v4f_tensor_t* inputs, int64_t* regs,
                                           bool* known, const DataValues* data = nullptr);

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_SHAPE_PROGRAM_H_
