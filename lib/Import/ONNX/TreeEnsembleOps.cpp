//===- TreeEnsembleOps.cpp - ai.onnx.ml TreeEnsemble -> gathers and selects ===//
//
// TreeEnsemble (ai.onnx.ml opset 5: the form LightGBM / XGBoost / sklearn
// converters write today) evaluates every tree of the ensemble for every
// row of X [N, F]. The trees are constants, so the importer lays them out
// as tables over one index space — the internal nodes first, then the
// leaves, a leaf pointing to itself — and walks all trees at once, one
// step per level of the deepest tree:
//
//   feature = Gather(features, node)          [N, T]
//   x       = GatherElements(X, feature, 1)   [N, T]
//   node    = x <op> split[node] (or NaN and missing-tracks-true)
//               ? true_next[node] : false_next[node]
//
// (a tree that reaches its leaf early stays there). The leaves' weights
// (per target) are gathered at the end and aggregated over the trees (sum,
// average, min, max). The comparisons run in X's type, so a split decides
// exactly as in the converter that wrote it.
//
// post_transform is accepted and not applied: ONNX's reference
// implementation of this operator and ONNX Runtime (1.32) both ignore it,
// and models are validated against them.
//
//===----------------------------------------------------------------------===//
#include "TensorImport.h"
#include "TreeEnsemble.h"

#include <cmath>

using namespace mlir;
using namespace v4f::trees;

namespace v4f {
namespace {

/// A float tensor constant of `type` (f32 or f64 elements) from doubles.
DenseElementsAttr floatAttr(RankedTensorType type, const std::vector<double> &values) {
  if (type.getElementType().isF64()) return DenseElementsAttr::get(type, ArrayRef<double>(values));
  std::vector<float> narrow(values.begin(), values.end());
  return DenseElementsAttr::get(type, ArrayRef<float>(narrow));
}

FailureOr<Value> walkEnsemble(NodeContext &c, const EnsembleSpec &e, Type xe, int64_t F, int64_t mode);

std::string checkTreeEnsemble(const NodeAttrs &a, int64_t) {
  for (const char *name : {"nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids", "tree_roots",
                           "leaf_targetids", "nodes_splits", "leaf_weights"})
    if (!a.has(name)) return std::string("attribute ") + name + " is required";
  int64_t agg = a.getInt("aggregate_function", SUM), post = a.getInt("post_transform", NONE);
  if (agg < AVERAGE || agg > MAX) return "aggregate_function must be 0 to 3 (AVERAGE, SUM, MIN, MAX)";
  if (post < NONE || post > PROBIT) return "post_transform must be 0 to 4";
  if (a.getInt("n_targets", 0) <= 0) return "n_targets must be positive";
  return "";
}

/// Doubles of a float tensor attribute.
FailureOr<std::vector<double>> floatTable(NodeContext &c, const char *name) {
  std::string error;
  auto attr = importTensor(c.g.ctx, c.attrs.get(name)->t(), c.g.modelDir, error);
  if (!attr) return c.fail(std::string("attribute ") + name + ": " + error);
  Type t = attr.getElementType();
  std::vector<double> out;
  if (t.isF64())
    for (double v : attr.getValues<double>()) out.push_back(v);
  else if (t.isF32())
    for (float v : attr.getValues<float>()) out.push_back(v);
  else
    return c.fail(std::string("attribute ") + name + " must be a float or double tensor");
  return out;
}

} // namespace

FailureOr<Value> evaluateEnsemble(NodeContext &c, const EnsembleSpec &e) {
  auto xt = c.inputType(0);
  Type xe = xt.getElementType();
  if (!xe.isF32() && !xe.isF64()) return c.fail("X must be float32 or float64");
  if (xt.getRank() != 2) return c.fail("X must be 2-D [rows, features]");
  int64_t F = xt.getDimSize(1);
  const auto &featureIds = e.featureIds, &trueIds = e.trueIds, &falseIds = e.falseIds, &roots = e.roots,
             &trueLeaf = e.trueLeaf, &falseLeaf = e.falseLeaf, &missingTrue = e.missingTrue, &modes = e.modes,
             &targets = e.targets, &leafOf = e.leafOf;
  const std::vector<double> *splits = &e.splits, *weights = &e.weights;
  const int64_t n = featureIds.size(), m = e.leafCount, T = roots.size(), targetCount = e.targetCount;
  if (n == 0 || T == 0 || m == 0) return c.fail("the ensemble has no nodes, trees or leaves");
  if ((int64_t)trueIds.size() != n || (int64_t)falseIds.size() != n || (int64_t)trueLeaf.size() != n ||
      (int64_t)falseLeaf.size() != n || (int64_t)missingTrue.size() != n || (int64_t)splits->size() != n ||
      (int64_t)modes.size() != n)
    return c.fail("the nodes_* attributes must all have one entry per node");
  if (weights->size() != targets.size() || leafOf.size() != targets.size())
    return c.fail("the leaf weights and their targets must have one entry each");
  if (llvm::any_of(modes, [](int64_t v) { return v > NEQ; }))
    return c.fail("BRANCH_MEMBER nodes (set membership) are not supported");
  int64_t mode = modes[0];
  if (llvm::any_of(modes, [&](int64_t v) { return v != mode; }))
    return c.fail("nodes with different comparison modes are not supported (every node must use one mode)");
  return walkEnsemble(c, e, xe, F, mode);
}

namespace {

/// The walk over checked tables (evaluateEnsemble's second half).
FailureOr<Value> walkEnsemble(NodeContext &c, const EnsembleSpec &e, Type xe, int64_t F, int64_t mode) {
  auto xt = c.inputType(0);
  const auto &featureIds = e.featureIds, &trueIds = e.trueIds, &falseIds = e.falseIds, &roots = e.roots,
             &trueLeaf = e.trueLeaf, &falseLeaf = e.falseLeaf, &missingTrue = e.missingTrue, &targets = e.targets;
  const std::vector<double> *splits = &e.splits, *weights = &e.weights;
  const int64_t n = featureIds.size(), m = e.leafCount, T = roots.size(), targetCount = e.targetCount;
  // --- Tables over nodes [0, n) and leaves [n, n + m) --------------------------
  std::vector<int64_t> feature(n + m, 0), next[2];
  std::vector<double> split(n + m, 0.0);
  std::vector<int8_t> missing(n + m, 0);
  next[0].resize(n + m), next[1].resize(n + m);
  for (int64_t i = 0; i < n; ++i) {
    if (featureIds[i] < 0 || (F != ShapedType::kDynamic && featureIds[i] >= F))
      return c.fail("node " + std::to_string(i) + " reads feature " + std::to_string(featureIds[i]) + " of " +
                    std::to_string(F));
    feature[i] = featureIds[i], split[i] = (*splits)[i], missing[i] = missingTrue[i] != 0;
    for (int side = 0; side < 2; ++side) {
      int64_t id = side ? trueIds[i] : falseIds[i];
      bool leaf = (side ? trueLeaf[i] : falseLeaf[i]) != 0;
      if (id < 0 || id >= (leaf ? m : n))
        return c.fail("node " + std::to_string(i) + " branches to " + (leaf ? "leaf " : "node ") + std::to_string(id) +
                      ", which does not exist");
      next[side][i] = leaf ? n + id : id;
    }
  }
  for (int64_t j = 0; j < m; ++j) next[0][n + j] = next[1][n + j] = n + j;
  for (size_t w = 0; w < targets.size(); ++w) {
    if (targets[w] < 0 || targets[w] >= targetCount)
      return c.fail("a leaf adds to target " + std::to_string(targets[w]) + " of " + std::to_string(targetCount));
    if (e.leafOf[w] < 0 || e.leafOf[w] >= m) return c.fail("a leaf weight belongs to no leaf");
  }
  // The walk takes as many steps as the deepest tree has levels of nodes
  // (a cycle in the node graph is refused).
  std::vector<int64_t> depth(n, -1); // -2: on the current path
  int64_t steps = 0;
  for (int64_t r : roots) {
    if (r < 0 || r >= n) return c.fail("tree root " + std::to_string(r) + " is not a node");
    // Iterative DFS computing the number of internal nodes on the longest path.
    std::vector<std::pair<int64_t, int>> stack = {{r, 0}};
    while (!stack.empty()) {
      // (Copies: the pushes below may move the stack.)
      const int64_t i = stack.back().first;
      if (stack.back().second == 0) {
        if (depth[i] >= 0) {
          stack.pop_back();
          continue;
        }
        if (depth[i] == -2) return c.fail("the nodes of a tree form a cycle");
        depth[i] = -2, stack.back().second = 1;
        for (int side = 0; side < 2; ++side)
          if (next[side][i] < n) {
            if (depth[next[side][i]] == -2) return c.fail("the nodes of a tree form a cycle");
            stack.push_back({next[side][i], 0});
          }
        continue;
      }
      int64_t d = 1;
      for (int side = 0; side < 2; ++side)
        if (next[side][i] < n) d = std::max(d, depth[next[side][i]] + 1);
      depth[i] = d;
      stack.pop_back();
    }
    steps = std::max(steps, depth[r]);
  }
  // The walk is unrolled, one step per level: a bound keeps a degenerate
  // ensemble (a chain of nodes) from growing the program without limit.
  constexpr int64_t kMaxDepth = 1024;
  if (steps > kMaxDepth)
    return c.fail("a tree is " + std::to_string(steps) + " levels deep; at most " + std::to_string(kMaxDepth) +
                  " are supported");

  // --- The walk ----------------------------------------------------------------
  OpBuilder &b = c.b;
  auto i64 = b.getI64Type();
  auto table = [&](Type et, auto values) -> Value {
    auto type = RankedTensorType::get({int64_t(values.size())}, et);
    DenseElementsAttr attr;
    if constexpr (std::is_same_v<decltype(values), std::vector<double>>)
      attr = floatAttr(type, values);
    else
      attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(values));
    return b.create<arith::ConstantOp>(c.loc, attr);
  };
  Value features = table(i64, feature), splitsT = table(xe, split), trueT = table(i64, next[1]),
        falseT = table(i64, next[0]);
  bool anyMissing = llvm::is_contained(missing, 1);
  Value missingT = anyMissing ? table(i64, std::vector<int64_t>(missing.begin(), missing.end())) : Value();
  Value node = b.create<arith::ConstantOp>(
      c.loc, DenseElementsAttr::get(RankedTensorType::get({1, T}, i64), ArrayRef<int64_t>(roots)));
  Value x = c.input(0);
  int64_t N = xt.getDimSize(0);
  // The roots for every row: [1, T] expanded to [N, T].
  {
    BuildContext bc(b, c.loc);
    Value shape = b.create<ConcatOp>(c.loc, RankedTensorType::get({2}, i64),
                                     ValueRange{dimOf(bc, x, 0), dimConstant(bc, 1)}, b.getI64IntegerAttr(0));
    node = b.create<ExpandOp>(c.loc, RankedTensorType::get({N, T}, i64), node, shape);
  }
  auto gather = [&](Value tableV, Value idx) -> Value {
    return b.create<GatherOp>(c.loc, tableV, idx, b.getI64IntegerAttr(0));
  };
  for (int64_t s = 0; s < steps; ++s) {
    Value f = gather(features, node);
    Value xv = b.create<GatherElementsOp>(c.loc, RankedTensorType::get({N, T}, xe), x, f, b.getI64IntegerAttr(1));
    SmallVector<Value> ins = {xv, gather(splitsT, node), gather(trueT, node), gather(falseT, node)};
    if (anyMissing) ins.push_back(gather(missingT, node));
    auto stepped = buildElementwise(c, ins, i64, [&](OpBuilder &ob, Location l, ArrayRef<Value> a) -> Value {
      arith::CmpFPredicate pred = mode == LEQ   ? arith::CmpFPredicate::OLE
                                  : mode == LT  ? arith::CmpFPredicate::OLT
                                  : mode == GTE ? arith::CmpFPredicate::OGE
                                  : mode == GT  ? arith::CmpFPredicate::OGT
                                  : mode == EQ  ? arith::CmpFPredicate::OEQ
                                                : arith::CmpFPredicate::ONE;
      Value cond = ob.create<arith::CmpFOp>(l, pred, a[0], a[1]);
      if (anyMissing) {
        Value isNan = ob.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, a[0], a[0]);
        Value tracks = ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, a[4],
                                                ob.create<arith::ConstantOp>(l, ob.getI64IntegerAttr(0)));
        cond = ob.create<arith::OrIOp>(l, cond, ob.create<arith::AndIOp>(l, isNan, tracks));
      }
      return ob.create<arith::SelectOp>(l, cond, a[2], a[3]);
    });
    if (failed(stepped)) return failure();
    node = *stepped;
  }

  // --- Leaves and aggregation ----------------------------------------------------
  int64_t agg = e.aggregate;
  if ((agg == MIN || agg == MAX) && targetCount > 1)
    return c.fail("MIN / MAX aggregation over more than one target is not supported");
  // Per leaf and target: the leaf's weight for its target, 0 elsewhere.
  std::vector<double> leafTable((n + m) * targetCount, 0.0);
  for (size_t w = 0; w < targets.size(); ++w) leafTable[(n + e.leafOf[w]) * targetCount + targets[w]] += (*weights)[w];
  auto leafType = RankedTensorType::get({n + m, targetCount}, xe);
  Value leaves = b.create<arith::ConstantOp>(c.loc, floatAttr(leafType, leafTable));
  Value picked = b.create<GatherOp>(c.loc, leaves, node, b.getI64IntegerAttr(0)); // [N, T, targets]
  const char *kind = agg == MIN ? "min" : agg == MAX ? "max" : "sum";
  Value y = b.create<ReduceOp>(c.loc, RankedTensorType::get({N, targetCount}, xe), picked, Value(),
                               b.getStringAttr(kind), b.getDenseI64ArrayAttr({1}), b.getBoolAttr(false));
  if (agg == AVERAGE) {
    auto t = buildElementwise(c, {y}, xe, [&](OpBuilder &ob, Location l, ArrayRef<Value> a) -> Value {
      return ob.create<arith::DivFOp>(l, a[0], ob.create<arith::ConstantOp>(l, ob.getFloatAttr(xe, (double)T)));
    });
    if (failed(t)) return failure();
    y = *t;
  }
  return y;
}

LogicalResult importTreeEnsemble(NodeContext &c) {
  EnsembleSpec e;
  e.featureIds = c.attrs.getInts("nodes_featureids");
  e.trueIds = c.attrs.getInts("nodes_truenodeids");
  e.falseIds = c.attrs.getInts("nodes_falsenodeids");
  e.roots = c.attrs.getInts("tree_roots");
  e.targets = c.attrs.getInts("leaf_targetids");
  const int64_t n = e.featureIds.size(), m = e.targets.size();
  e.leafCount = m;
  e.targetCount = c.attrs.getInt("n_targets", 0);
  e.aggregate = c.attrs.getInt("aggregate_function", SUM);
  auto ints = [&](const char *name) { return c.attrs.getInts(name, std::vector<int64_t>(n, 0)); };
  e.trueLeaf = ints("nodes_trueleafs");
  e.falseLeaf = ints("nodes_falseleafs");
  e.missingTrue = ints("nodes_missing_value_tracks_true");
  auto splits = floatTable(c, "nodes_splits");
  if (failed(splits)) return failure();
  e.splits = *splits;
  auto weights = floatTable(c, "leaf_weights");
  if (failed(weights)) return failure();
  e.weights = *weights;
  if ((int64_t)e.weights.size() != m) return c.fail("leaf_targetids and leaf_weights must have one entry per leaf");
  for (int64_t j = 0; j < m; ++j) e.leafOf.push_back(j);
  e.modes.assign(n, LEQ);
  if (c.attrs.has("nodes_modes")) {
    std::string error;
    auto attr = importTensor(c.g.ctx, c.attrs.get("nodes_modes")->t(), c.g.modelDir, error);
    if (!attr || !attr.getElementType().isInteger(8)) return c.fail("nodes_modes must be a uint8 tensor");
    e.modes.clear();
    for (const APInt &v : attr.getValues<APInt>()) e.modes.push_back(v.getZExtValue());
  }
  auto y = evaluateEnsemble(c, e);
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

} // namespace

void addTreeEnsembleImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["ai.onnx.ml:TreeEnsemble"] = {1, kMaxOpset, checkTreeEnsemble, importTreeEnsemble};
}

} // namespace v4f
