//===- TreeEnsembleLegacy.cpp - ai.onnx.ml TreeEnsembleClassifier/Regressor -===//
//
// The legacy tree operators (ai.onnx.ml opsets 1-3) that skl2onnx writes for
// scikit-learn's decision trees, random forests and gradient boosting: nodes
// named by (tree id, node id), their modes as strings ("BRANCH_LEQ", ...,
// "LEAF"), the weights attached to leaf nodes per class (class_*) or target
// (target_*). They are converted to the EnsembleSpec of TreeEnsemble
// (TreeEnsemble.h) and walked the same way; then, as ONNX Runtime does:
//
//  - TreeEnsembleRegressor: the aggregate (SUM, AVERAGE over the trees, MIN,
//    MAX) plus base_values; post_transform NONE.
//  - TreeEnsembleClassifier: per-class sums plus base_values; the label is
//    the class of the largest score and the scores go through post_transform
//    (NONE, LOGISTIC, SOFTMAX). With two labels and weights for one class
//    only (skl2onnx's binary trees) the sum s is the positive class's
//    probability: the label is the positive one when s > 0.5 (s > 0 when a
//    weight is negative) and the scores are [1 - s, s] (or [-s, s], through
//    the logistic function under LOGISTIC).
//
// String class labels (sequences and maps: ZipMap) are not supported.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "TensorImport.h"
#include "TreeEnsemble.h"

#include <map>
#include <set>

using namespace mlir;
using namespace v4f::trees;

namespace v4f {
namespace {

using controlflow::Bound;
using controlflow::runNode;
using controlflow::scalarF32;
using controlflow::scalarI64;
using controlflow::vectorI64;

std::vector<double> floatsOrTensor(NodeContext &c, const std::string &name, std::string &error) {
  std::vector<double> out;
  if (const auto *a = c.attrs.get(name)) {
    for (float v : a->floats()) out.push_back(v);
    return out;
  }
  if (const auto *a = c.attrs.get(name + "_as_tensor")) {
    auto attr = importTensor(c.g.ctx, a->t(), c.g.modelDir, error);
    if (attr && attr.getElementType().isF64())
      for (double v : attr.getValues<double>()) out.push_back(v);
    else if (attr && attr.getElementType().isF32())
      for (float v : attr.getValues<float>()) out.push_back(v);
    else if (error.empty())
      error = name + "_as_tensor must be a float or double tensor";
  }
  return out;
}

FailureOr<int64_t> modeOf(NodeContext &c, const std::string &s) {
  static const std::map<std::string, int64_t> modes = {{"BRANCH_LEQ", LEQ},      {"BRANCH_LT", LT}, {"BRANCH_GTE", GTE},
                                                       {"BRANCH_GT", GT},        {"BRANCH_EQ", EQ}, {"BRANCH_NEQ", NEQ},
                                                       {"BRANCH_MEMBER", MEMBER}};
  auto it = modes.find(s);
  if (it == modes.end()) return c.fail("node mode '" + s + "' is not a known branch mode");
  return it->second;
}

/// The legacy node tables and the `prefix`_* leaf weights as an EnsembleSpec.
FailureOr<EnsembleSpec> legacySpec(NodeContext &c, const std::string &prefix, int64_t targetCount) {
  auto treeIds = c.attrs.getInts("nodes_treeids"), nodeIds = c.attrs.getInts("nodes_nodeids"),
       features = c.attrs.getInts("nodes_featureids"), trueIds = c.attrs.getInts("nodes_truenodeids"),
       falseIds = c.attrs.getInts("nodes_falsenodeids");
  const size_t n = treeIds.size();
  auto missing = c.attrs.getInts("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  std::string error;
  auto values = floatsOrTensor(c, "nodes_values", error);
  if (!error.empty()) return c.fail(error);
  const auto *modesAttr = c.attrs.get("nodes_modes");
  if (!modesAttr) return c.fail("attribute nodes_modes is required");
  if (nodeIds.size() != n || features.size() != n || trueIds.size() != n || falseIds.size() != n ||
      missing.size() != n || values.size() != n || size_t(modesAttr->strings_size()) != n || n == 0)
    return c.fail("the nodes_* attributes must all have one entry per node (and at least one node)");

  std::map<std::pair<int64_t, int64_t>, size_t> byKey;
  for (size_t k = 0; k < n; ++k)
    if (!byKey.insert({{treeIds[k], nodeIds[k]}, k}).second)
      return c.fail("node " + std::to_string(nodeIds[k]) + " of tree " + std::to_string(treeIds[k]) +
                    " is defined twice");
  EnsembleSpec e;
  std::vector<int64_t> index(n, -1), leafIndex(n, -1);
  std::vector<bool> isLeaf(n);
  int64_t commonMode = -1;
  for (size_t k = 0; k < n; ++k) {
    isLeaf[k] = modesAttr->strings(int(k)) == "LEAF";
    if (isLeaf[k]) {
      leafIndex[k] = e.leafCount++;
      continue;
    }
    auto mode = modeOf(c, modesAttr->strings(int(k)));
    if (failed(mode)) return failure();
    if (commonMode < 0) commonMode = *mode;
    index[k] = int64_t(e.featureIds.size());
    e.featureIds.push_back(features[k]);
    e.splits.push_back(values[k]);
    e.modes.push_back(*mode);
    e.missingTrue.push_back(missing[k]);
  }
  if (commonMode < 0) commonMode = LEQ;
  e.trueIds.resize(e.featureIds.size()), e.falseIds.resize(e.featureIds.size());
  e.trueLeaf.resize(e.featureIds.size()), e.falseLeaf.resize(e.featureIds.size());
  std::set<std::pair<int64_t, int64_t>> children;
  for (size_t k = 0; k < n; ++k) {
    if (isLeaf[k]) continue;
    for (int side = 0; side < 2; ++side) {
      int64_t child = side ? trueIds[k] : falseIds[k];
      auto it = byKey.find({treeIds[k], child});
      if (it == byKey.end())
        return c.fail("node " + std::to_string(nodeIds[k]) + " of tree " + std::to_string(treeIds[k]) +
                      " branches to node " + std::to_string(child) + ", which does not exist");
      children.insert({treeIds[k], child});
      size_t ck = it->second;
      (side ? e.trueLeaf : e.falseLeaf)[index[k]] = isLeaf[ck];
      (side ? e.trueIds : e.falseIds)[index[k]] = isLeaf[ck] ? leafIndex[ck] : index[ck];
    }
  }
  // Roots: per tree, the node nothing branches to. A tree that is a single
  // leaf gets a node whose both sides go to it.
  std::map<int64_t, int64_t> rootOf;
  for (size_t k = 0; k < n; ++k) {
    if (children.count({treeIds[k], nodeIds[k]})) continue;
    if (rootOf.count(treeIds[k])) return c.fail("tree " + std::to_string(treeIds[k]) + " has more than one root");
    int64_t root;
    if (isLeaf[k]) {
      root = int64_t(e.featureIds.size());
      e.featureIds.push_back(0), e.splits.push_back(0.0), e.modes.push_back(commonMode), e.missingTrue.push_back(0);
      e.trueIds.push_back(leafIndex[k]), e.falseIds.push_back(leafIndex[k]);
      e.trueLeaf.push_back(1), e.falseLeaf.push_back(1);
    } else {
      root = index[k];
    }
    rootOf[treeIds[k]] = root;
  }
  for (auto [tree, root] : rootOf) e.roots.push_back(root);

  auto wTrees = c.attrs.getInts(prefix + "_treeids"), wNodes = c.attrs.getInts(prefix + "_nodeids"),
       wIds = c.attrs.getInts(prefix + "_ids");
  auto weights = floatsOrTensor(c, prefix + "_weights", error);
  if (!error.empty()) return c.fail(error);
  if (wNodes.size() != wTrees.size() || wIds.size() != wTrees.size() || weights.size() != wTrees.size())
    return c.fail("the " + prefix + "_* attributes must all have one entry per weight");
  for (size_t w = 0; w < wTrees.size(); ++w) {
    auto it = byKey.find({wTrees[w], wNodes[w]});
    if (it == byKey.end() || !isLeaf[it->second])
      return c.fail("a weight is attached to node " + std::to_string(wNodes[w]) + " of tree " +
                    std::to_string(wTrees[w]) + ", which is not a leaf");
    if (wIds[w] < 0 || wIds[w] >= targetCount)
      return c.fail("a weight goes to " + prefix + " " + std::to_string(wIds[w]) + " of " +
                    std::to_string(targetCount));
    e.leafOf.push_back(leafIndex[it->second]);
    e.targets.push_back(wIds[w]);
    e.weights.push_back(weights[w]);
  }
  e.targetCount = targetCount;
  return e;
}

/// `y` as float32 (the legacy operators' scores are float).
FailureOr<Bound> asF32(NodeContext &c, Value y) {
  if (llvm::cast<RankedTensorType>(y.getType()).getElementType().isF32()) return Bound{y, {}};
  return runNode(c, "Cast", {Bound{y, {}}},
                 [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::FLOAT); });
}

Bound rowConstant(NodeContext &c, const std::vector<double> &v) {
  std::vector<float> f(v.begin(), v.end());
  return Bound{
      {}, DenseElementsAttr::get(RankedTensorType::get({1, int64_t(f.size())}, c.b.getF32Type()), ArrayRef<float>(f))};
}

LogicalResult importRegressor(NodeContext &c) {
  int64_t targets = c.attrs.getInt("n_targets", 1);
  if (targets <= 0) return c.fail("n_targets must be positive");
  std::string agg = c.attrs.getString("aggregate_function", "SUM"), post = c.attrs.getString("post_transform", "NONE");
  if (post != "NONE") return c.fail("post_transform '" + post + "' is not supported (NONE only)");
  static const std::map<std::string, int64_t> aggs = {{"SUM", SUM}, {"AVERAGE", AVERAGE}, {"MIN", MIN}, {"MAX", MAX}};
  auto a = aggs.find(agg);
  if (a == aggs.end()) return c.fail("aggregate_function '" + agg + "' is not SUM, AVERAGE, MIN or MAX");
  auto spec = legacySpec(c, "target", targets);
  if (failed(spec)) return failure();
  spec->aggregate = a->second;
  auto y = evaluateEnsemble(c, *spec);
  if (failed(y)) return failure();
  controlflow::ScopedOpset opset(c, 17);
  auto out = asF32(c, *y);
  if (failed(out)) return failure();
  std::string error;
  auto base = floatsOrTensor(c, "base_values", error);
  if (!error.empty()) return c.fail(error);
  if (!base.empty()) {
    if (int64_t(base.size()) != targets) return c.fail("base_values must have one value per target");
    out = runNode(c, "Add", {*out, rowConstant(c, base)});
    if (failed(out)) return failure();
  }
  controlflow::bindName(c.g, c.node.output(0), *out);
  return success();
}

LogicalResult importClassifier(NodeContext &c) {
  if (c.attrs.has("classlabels_strings") && !c.attrs.has("classlabels_int64s"))
    return c.fail("string class labels are not supported (classlabels_int64s only)");
  auto labels = c.attrs.getInts("classlabels_int64s");
  const int64_t C = labels.size();
  if (C < 2) return c.fail("classlabels_int64s must name at least two classes");
  std::string post = c.attrs.getString("post_transform", "NONE"), error;
  if (post != "NONE" && post != "LOGISTIC" && post != "SOFTMAX")
    return c.fail("post_transform '" + post + "' is not supported (NONE, LOGISTIC, SOFTMAX)");
  auto base = floatsOrTensor(c, "base_values", error);
  if (!error.empty()) return c.fail(error);
  auto ids = c.attrs.getInts("class_ids");
  std::set<int64_t> used(ids.begin(), ids.end());
  auto spec = legacySpec(c, "class", C);
  if (failed(spec)) return failure();
  spec->aggregate = SUM;
  auto y = evaluateEnsemble(c, *spec);
  if (failed(y)) return failure();
  controlflow::ScopedOpset opset(c, 17);
  auto scores = asF32(c, *y);
  if (failed(scores)) return failure();
  FailureOr<Bound> label = failure(), probs = failure();
  if (C == 2 && used.size() == 1 && *used.begin() == 0 && base.empty()) {
    // Binary with one weight column: s = the positive class's score.
    bool positive = llvm::all_of(spec->weights, [](double w) { return w >= 0; });
    auto s = runNode(c, "Slice", {*scores, vectorI64(c, {0}), vectorI64(c, {1}), vectorI64(c, {1})});
    if (failed(s)) return failure();
    auto isPos = runNode(c, "Greater", {*s, scalarF32(c, positive ? 0.5f : 0.0f)});
    if (failed(isPos)) return failure();
    auto picked = runNode(c, "Where", {*isPos, vectorI64(c, {labels[1]}), vectorI64(c, {labels[0]})});
    if (failed(picked)) return failure();
    label = runNode(c, "Reshape", {*picked, vectorI64(c, {-1})});
    // [1 - s, s] for probabilities whatever the transform; [-s, s] for
    // margins, through the logistic function under LOGISTIC.
    FailureOr<Bound> first = positive ? runNode(c, "Sub", {scalarF32(c, 1.0f), *s}) : runNode(c, "Neg", {*s});
    if (failed(first)) return failure();
    FailureOr<Bound> second = *s;
    if (post == "LOGISTIC" && !positive) {
      first = runNode(c, "Sigmoid", {*first});
      second = runNode(c, "Sigmoid", {*s});
    }
    if (failed(first) || failed(second)) return failure();
    probs = runNode(c, "Concat", {*first, *second}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 1); });
  } else {
    if (C == 2) return c.fail("two classes with weights for both (or base_values) are not supported");
    for (int64_t k = 0; k < C; ++k)
      if (!used.count(k)) return c.fail("class " + std::to_string(k) + " has no leaf weights");
    if (!base.empty()) {
      if (int64_t(base.size()) != C) return c.fail("base_values must have one value per class");
      scores = runNode(c, "Add", {*scores, rowConstant(c, base)});
      if (failed(scores)) return failure();
    }
    auto arg = runNode(c, "ArgMax", {*scores}, [](onnx::NodeProto &n) {
      controlflow::addIntAttr(n, "axis", 1);
      controlflow::addIntAttr(n, "keepdims", 0);
    });
    if (failed(arg)) return failure();
    label = runNode(c, "Gather", {vectorI64(c, labels), *arg},
                    [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); });
    if (post == "NONE")
      probs = *scores;
    else if (post == "LOGISTIC")
      probs = runNode(c, "Sigmoid", {*scores});
    else
      probs = runNode(c, "Softmax", {*scores}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 1); });
  }
  if (failed(label) || failed(probs)) return failure();
  if (c.outputUsed(0)) controlflow::bindName(c.g, c.node.output(0), *label);
  if (c.outputUsed(1)) controlflow::bindName(c.g, c.node.output(1), *probs);
  return success();
}

} // namespace

void addLegacyTreeEnsembleImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["ai.onnx.ml:TreeEnsembleClassifier"] = {1, kMaxOpset, noCheck, importClassifier};
  t["ai.onnx.ml:TreeEnsembleRegressor"] = {1, kMaxOpset, noCheck, importRegressor};
}

} // namespace v4f
