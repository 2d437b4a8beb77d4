//===- ONNXImporter.h - ONNX model -> v4f dialect ---------------*- C++ -*-===//
#ifndef V4F_IMPORT_ONNXIMPORTER_H
#define V4F_IMPORT_ONNXIMPORTER_H

#include "v4f/Import/InputValue.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace v4f {

/// One node the importer cannot handle, with the reason.
struct UnsupportedNode {
  std::string nodeName;
  std::string opType;
  int64_t opset = 0;
  std::string reason;
};

struct CoverageReport {
  std::string modelPath;
  int64_t irVersion = 0;
  int64_t opset = 0;
  std::map<std::string, int64_t> opCounts;  // op type -> node count
  std::vector<UnsupportedNode> unsupported; // every node that fails the check
  /// Formats the unsupported list as one multi-line error message.
  std::string formatError() const;
};

/// Loads and checks `path` without building IR. Returns false with `error`
/// set when the file cannot be read or parsed at all.
bool checkONNXModel(const std::string &path, CoverageReport &report, std::string &error);

/// Compile-time shape information for the graph inputs (v4fc --input-shape,
/// --dim): it replaces what the model declares, so pinned dims are static
/// for every pass.
struct ImportOptions {
  /// Input name -> its whole shape (every dim > 0). The rank must match the
  /// model's; a dim the model declares with a value must agree.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Symbolic dim name (dim_param, or `<input>_dim<i>` for an unnamed one)
  /// -> its value (> 0), wherever it appears in the inputs.
  std::map<std::string, int64_t> dimValues;
  /// Symbolic dim name -> [min, max] (v4fc --dim NAME=MIN..MAX): the dim
  /// stays dynamic (static when min == max), the bounds go to the artifact,
  /// and the runtime refuses inputs outside them.
  std::map<std::string, std::pair<int64_t, int64_t>> dimBounds;
  /// --input-value: graph inputs folded to constants (dtype = the ONNX /
  /// V4F_DTYPE code, which must be the input's; shape must fit its dims;
  /// data little-endian, C order). They leave the signature.
  std::map<std::string, InputValue> inputValues;
  /// Iteration bound of a Loop run in the plan (a trip count known only at
  /// run time; checked at run time) and of unrolling a Loop or Scan.
  int64_t maxLoopIterations = 4096;
  /// Filled by the import: one line per input dim the model declares with
  /// dim_value <= 0 (taken as a dynamic dim, as ONNX Runtime does), for
  /// --verbose.
  std::vector<std::string> *notes = nullptr;
};

/// Imports `path` into a module holding `func.func @main`. On failure returns
/// null and sets `error` to a message naming the file, node and reason (for
/// unsupported ops: all of them at once).
/// Every name in `options` must be an input / a dim of the model.
mlir::OwningOpRef<mlir::ModuleOp> importONNXModel(mlir::MLIRContext &context, const std::string &path,
                                                  std::string &error, const ImportOptions &options = {});

/// importONNXModel for a serialized ModelProto in memory: `name` stands for
/// the file in errors and locations, external data is read relative to
/// `modelDir` (e.g. the fuzz target's empty directory).
mlir::OwningOpRef<mlir::ModuleOp> importONNXModelFromMemory(mlir::MLIRContext &context, const std::string &bytes,
                                                            const std::string &name, const std::string &modelDir,
                                                            std::string &error, const ImportOptions &options = {});

/// The ONNX ops and opset ranges the importer accepts, for docs and `check`.
struct SupportedOp {
  const char *opType;
  int64_t minOpset, maxOpset;
};
std::vector<SupportedOp> supportedONNXOps();

} // namespace v4f

#endif // V4F_IMPORT_ONNXIMPORTER_H
