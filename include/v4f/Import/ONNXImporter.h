//===- ONNXImporter.h - ONNX model -> v4f dialect ---------------*- C++ -*-===//
#ifndef V4F_IMPORT_ONNXIMPORTER_H
#define V4F_IMPORT_ONNXIMPORTER_H

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

/// Imports `path` into a module holding `func.func @main`. On failure returns
/// null and sets `error` to a message naming the file, node and reason (for
/// unsupported ops: all of them at once).
mlir::OwningOpRef<mlir::ModuleOp> importONNXModel(mlir::MLIRContext &context,
                                                  const std::string &path,
                                                  std::string &error);

/// The ONNX ops and opset ranges the importer accepts, for docs and `check`.
struct SupportedOp {
  const char *opType;
  int64_t minOpset, maxOpset;
};
std::vector<SupportedOp> supportedONNXOps();

} // namespace v4f

#endif // V4F_IMPORT_ONNXIMPORTER_H
