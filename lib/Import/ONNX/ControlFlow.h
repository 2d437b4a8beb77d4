//===- ControlFlow.h - the ONNX control-flow importers' shared pieces -----===//
//
// Private to lib/Import/ONNX: what If (ControlFlowOps.cpp) and Loop / Scan
// (LoopScanOps.cpp) share: values bound to ONNX names (constants kept
// foldable), importing a subgraph in a fresh binding scope, synthesized
// nodes run through the ordinary importer table, stacking.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_IMPORT_ONNX_CONTROLFLOW_H
#define V4F_LIB_IMPORT_ONNX_CONTROLFLOW_H

#include "NodeContext.h"

#include <functional>
#include <optional>
#include <string>

namespace v4f {
namespace controlflow {

/// A named value: a constant (kept foldable) or an SSA value.
struct Bound {
  mlir::Value v;
  mlir::DenseElementsAttr cst;
  mlir::Type type() const { return cst ? mlir::Type(cst.getType()) : v.getType(); }
};

/// The value bound to `name` in the importer's current scope, if any.
std::optional<Bound> lookup(GraphState &g, const std::string &name);
/// Binds `name` to `b` in the current scope.
void bindName(GraphState &g, const std::string &name, const Bound &b);
/// `b` as an SSA value (a constant op for a constant).
mlir::Value materialize(NodeContext &c, const Bound &b);
/// Imports `body` with its inputs bound to `inputs` in a fresh scope (its
/// names shadow outer ones until it returns); returns its outputs.
mlir::FailureOr<llvm::SmallVector<Bound>> importSubgraph(NodeContext &c, const onnx::GraphProto &body,
                                                         llvm::ArrayRef<Bound> inputs, const std::string &where);
/// Imports one synthesized node `op` over `ins` (bound to temporary names).
mlir::FailureOr<Bound> runNode(NodeContext &c, const std::string &op, llvm::ArrayRef<Bound> ins,
                               const std::function<void(onnx::NodeProto &)> &setAttrs = {});
void addIntAttr(onnx::NodeProto &n, const std::string &name, int64_t v);
Bound scalarI64(NodeContext &c, int64_t v);
Bound scalarBool(NodeContext &c, bool v);
/// A float32 scalar and an int64 vector constant (shapes, axes, pads).
Bound scalarF32(NodeContext &c, float v);
Bound vectorI64(NodeContext &c, llvm::ArrayRef<int64_t> v);
/// The value of a one-element integer (or bool) constant.
std::optional<int64_t> constantInt(const Bound &b);
/// `pieces` stacked along a new axis `axis` (in reverse order if `reverse`).
mlir::FailureOr<Bound> stack(NodeContext &c, llvm::ArrayRef<Bound> pieces, int64_t axis, bool reverse,
                             const std::string &what);

/// Imports synthesized nodes at `opset` for its lifetime (an importer that
/// writes its operator as standard ONNX nodes knows their spelling, whatever
/// the model's default opset is).
class ScopedOpset {
public:
  ScopedOpset(NodeContext &c, int64_t opset) : c(c), saved(c.opset) { c.opset = opset; }
  ScopedOpset(const ScopedOpset &) = delete;
  ScopedOpset &operator=(const ScopedOpset &) = delete;
  ~ScopedOpset() { c.opset = saved; }

private:
  NodeContext &c;
  int64_t saved;
};

/// The ops a builder has created since a mark (in its insertion block).
struct OpMark {
  mlir::Block *block;
  mlir::Operation *last; // the op before the insertion point, or null
};
OpMark markOps(mlir::OpBuilder &b);
/// Erases the ops created at `b`'s insertion point since `m` (a failed
/// attempt whose values nothing outside it uses).
void eraseSince(mlir::OpBuilder &b, const OpMark &m);

/// The Loop and Scan importers (LoopScanOps.cpp).
mlir::LogicalResult importLoop(NodeContext &c);
mlir::LogicalResult importScan(NodeContext &c);

} // namespace controlflow
} // namespace v4f

#endif // V4F_LIB_IMPORT_ONNX_CONTROLFLOW_H
