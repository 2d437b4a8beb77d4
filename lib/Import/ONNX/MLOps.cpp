//===- MLOps.cpp - ai.onnx.ml Scaler, Binarizer, Normalizer, features ------===//
//
// The elementwise pre-processing operators of the ai.onnx.ml domain that
// scikit-learn exporters (skl2onnx) put in front of a model, as standard ops
// through the importer table:
//  - Scaler: Y = (X - offset) * scale, per feature (the last dim) or one
//    value for all, as float;
//  - Binarizer: Y = X > threshold ? 1 : 0, in X's type;
//  - Normalizer: each row (the last dim) divided by its largest value
//    (MAX, signed, as ONNX Runtime), L1 or L2 norm, as float (a row whose
//    divisor is 0 is divided by 1: zeros stay zeros);
//  - ArrayFeatureExtractor: the features (last-dim entries) at run-time
//    indices.
// The standard ops are written at opset 17 (a model of ai.onnx.ml operators
// only may import no default-domain opset at all). (TreeEnsemble is in
// TreeEnsembleOps.cpp.)
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"

using namespace mlir;

namespace v4f {
namespace {

using controlflow::Bound;
using controlflow::runNode;
using controlflow::scalarF32;
using controlflow::scalarI64;
using controlflow::vectorI64;

std::vector<float> floatsOf(const NodeAttrs &a, const std::string &name) {
  const auto *attr = a.get(name);
  if (!attr) return {};
  return std::vector<float>(attr->floats().begin(), attr->floats().end());
}

Bound floatConstant(NodeContext &c, const std::vector<float> &v) {
  auto type = RankedTensorType::get({int64_t(v.size())}, c.b.getF32Type());
  return Bound{{}, DenseElementsAttr::get(type, ArrayRef<float>(v))};
}

FailureOr<Bound> asFloat(NodeContext &c) {
  auto in = controlflow::lookup(c.g, c.node.input(0));
  if (!in) return c.fail("input X is not defined");
  auto t = llvm::dyn_cast<RankedTensorType>(in->type());
  if (!t) return c.fail("input X must be a ranked tensor");
  if (t.getElementType().isF32()) return *in;
  if (!t.getElementType().isIntOrFloat()) return c.fail("input X must be numeric");
  return runNode(c, "Cast", {*in},
                 [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::FLOAT); });
}

/// A per-feature list must have one value or one per feature (X's last dim).
std::string checkPerFeature(NodeContext &c, const std::vector<float> &v, const char *what) {
  auto t = c.inputType(0);
  int64_t features = t.getRank() == 0 ? 1 : t.getDimSize(t.getRank() - 1);
  if (v.size() <= 1 || features == ShapedType::kDynamic || int64_t(v.size()) == features) return "";
  return std::string(what) + " has " + std::to_string(v.size()) + " values for " + std::to_string(features) +
         " features";
}

LogicalResult importScaler(NodeContext &c) {
  std::vector<float> offset = floatsOf(c.attrs, "offset"), scale = floatsOf(c.attrs, "scale");
  for (auto [v, what] : {std::pair{&offset, "offset"}, std::pair{&scale, "scale"}})
    if (std::string why = checkPerFeature(c, *v, what); !why.empty()) return c.fail(why);
  controlflow::ScopedOpset opset(c, 17);
  auto x = asFloat(c);
  if (failed(x)) return failure();
  Bound y = *x;
  if (!offset.empty()) {
    auto r = runNode(c, "Sub", {y, floatConstant(c, offset)});
    if (failed(r)) return failure();
    y = *r;
  }
  if (!scale.empty()) {
    auto r = runNode(c, "Mul", {y, floatConstant(c, scale)});
    if (failed(r)) return failure();
    y = *r;
  }
  controlflow::bindName(c.g, c.node.output(0), y);
  return success();
}

LogicalResult importBinarizer(NodeContext &c) {
  auto in = controlflow::lookup(c.g, c.node.input(0));
  if (!in) return c.fail("input X is not defined");
  auto t = llvm::cast<RankedTensorType>(in->type());
  Type et = t.getElementType();
  if (!et.isF32() && !et.isF64() && !et.isSignlessInteger(64) && !et.isSignlessInteger(32))
    return c.fail("input X must be float, double, int64 or int32");
  controlflow::ScopedOpset opset(c, 17);
  float threshold = c.attrs.getFloat("threshold", 0.0f);
  auto scalar = [&](double v) -> Bound {
    auto st = RankedTensorType::get({}, et);
    if (llvm::isa<FloatType>(et)) return Bound{{}, DenseElementsAttr::get(st, FloatAttr::get(et, v))};
    return Bound{{}, DenseElementsAttr::get(st, APInt(et.getIntOrFloatBitWidth(), uint64_t(int64_t(v)), true))};
  };
  auto gt = runNode(c, "Greater", {*in, scalar(threshold)});
  if (failed(gt)) return failure();
  auto y = runNode(c, "Where", {*gt, scalar(1), scalar(0)});
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

LogicalResult importNormalizer(NodeContext &c) {
  std::string norm = c.attrs.getString("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") return c.fail("norm '" + norm + "' is not MAX, L1 or L2");
  controlflow::ScopedOpset opset(c, 17);
  auto x = asFloat(c);
  if (failed(x)) return failure();
  int64_t rank = llvm::cast<RankedTensorType>(x->type()).getRank();
  if (rank < 1 || rank > 2) return c.fail("input X must be 1-D or 2-D");
  auto axes = [&](onnx::NodeProto &n) {
    auto *a = n.add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(-1);
    controlflow::addIntAttr(n, "keepdims", 1);
  };
  FailureOr<Bound> d = failure();
  if (norm == "MAX") {
    d = runNode(c, "ReduceMax", {*x}, axes);
  } else if (norm == "L1") {
    d = runNode(c, "ReduceL1", {*x}, axes);
  } else if (norm == "L2") {
    d = runNode(c, "ReduceL2", {*x}, axes);
  }
  if (failed(d)) return failure();
  // A row of zeros divides by 1 (stays zeros).
  auto zero = floatConstant(c, {0.0f}), one = floatConstant(c, {1.0f});
  auto isZero = runNode(c, "Equal", {*d, zero});
  if (failed(isZero)) return failure();
  auto safe = runNode(c, "Where", {*isZero, one, *d});
  if (failed(safe)) return failure();
  auto y = runNode(c, "Div", {*x, *safe});
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

/// Y = X[..., indices]; a 1-D X is taken as one row ([1, len(indices)]).
LogicalResult importArrayFeatureExtractor(NodeContext &c) {
  auto x = controlflow::lookup(c.g, c.node.input(0));
  auto idx = controlflow::lookup(c.g, c.node.input(1));
  if (!x || !idx) return c.fail("inputs X and Y are required");
  auto xt = llvm::cast<RankedTensorType>(x->type());
  auto it = llvm::cast<RankedTensorType>(idx->type());
  if (xt.getRank() < 1) return c.fail("input X must have at least one dim");
  if (!it.getElementType().isSignlessInteger(64)) return c.fail("input Y (the indices) must be int64");
  controlflow::ScopedOpset opset(c, 17);
  Bound flatIdx = *idx;
  if (it.getRank() != 1) {
    auto r = runNode(c, "Reshape", {*idx, vectorI64(c, {-1})});
    if (failed(r)) return failure();
    flatIdx = *r;
  }
  auto y = runNode(c, "Gather", {*x, flatIdx},
                   [&](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", xt.getRank() - 1); });
  if (failed(y)) return failure();
  if (xt.getRank() == 1) {
    y = runNode(c, "Reshape", {*y, vectorI64(c, {1, -1})});
    if (failed(y)) return failure();
  }
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

} // namespace

void addMLImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["ai.onnx.ml:Scaler"] = {1, kMaxOpset, noCheck, importScaler};
  t["ai.onnx.ml:Binarizer"] = {1, kMaxOpset, noCheck, importBinarizer};
  t["ai.onnx.ml:Normalizer"] = {1, kMaxOpset, noCheck, importNormalizer};
  t["ai.onnx.ml:ArrayFeatureExtractor"] = {1, kMaxOpset, noCheck, importArrayFeatureExtractor};
}

} // namespace v4f
