//===- TreeEnsemble.h - the tree-ensemble walk the ai.onnx.ml forms share -===//
//
// Private to lib/Import/ONNX: TreeEnsemble (opset 5, TreeEnsembleOps.cpp)
// and the legacy TreeEnsembleClassifier / TreeEnsembleRegressor
// (TreeEnsembleLegacy.cpp) describe their trees as an EnsembleSpec and
// evaluate it with evaluateEnsemble.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_IMPORT_ONNX_TREEENSEMBLE_H
#define V4F_LIB_IMPORT_ONNX_TREEENSEMBLE_H

#include "NodeContext.h"

#include <vector>

namespace v4f {
namespace trees {

enum Mode : int64_t { LEQ = 0, LT = 1, GTE = 2, GT = 3, EQ = 4, NEQ = 5, MEMBER = 6 };
enum Aggregate : int64_t { AVERAGE = 0, SUM = 1, MIN = 2, MAX = 3 };
enum PostTransform : int64_t { NONE = 0, SOFTMAX = 1, LOGISTIC = 2, SOFTMAX_ZERO = 3, PROBIT = 4 };

} // namespace trees

/// An ensemble over one index space per kind: internal nodes [0, n) with
/// their feature, split, comparison mode and the node or leaf (trueLeaf /
/// falseLeaf) each side goes to; leaves [0, leafCount); weight entries that
/// each add `weights[w]` to target `targets[w]` of leaf `leafOf[w]`. Trees
/// start at `roots` (internal nodes).
struct EnsembleSpec {
  std::vector<int64_t> featureIds, trueIds, falseIds, trueLeaf, falseLeaf, missingTrue, modes, roots;
  std::vector<double> splits;
  std::vector<int64_t> leafOf, targets;
  std::vector<double> weights;
  int64_t leafCount = 0, targetCount = 0, aggregate = trees::SUM;
};

/// The ensemble over input 0 of the node (X [N, F], float or double):
/// [N, targetCount] in X's type, aggregated over the trees.
mlir::FailureOr<mlir::Value> evaluateEnsemble(NodeContext &c, const EnsembleSpec &e);

} // namespace v4f

#endif // V4F_LIB_IMPORT_ONNX_TREEENSEMBLE_H
