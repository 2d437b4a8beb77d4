//===- LossOps.cpp - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss ===//
//
// Both decompose at import into existing v4f ops: the picked log-probability
// is a gather_elements along the class axis, class weights a gather, the
// ignore_index a mask, and the reduction a v4f.reduce (mean divides by the
// sum of the effective weights, as ONNX specifies).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

using namespace mlir;

namespace v4f {
namespace {

Type elementOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()).getElementType(); }
/// `in` reshaped to `shape`; a dynamic result dim i is input dim from[i].
Value reshapeValue(NodeContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> from) {
  SmallVector<int64_t> sources(shape.size(), -1);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == ShapedType::kDynamic) sources[i] = from[i];
  auto type = RankedTensorType::get(shape, elementOf(in));
  return c.b.create<ReshapeOp>(c.loc, type, in, Value(), c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
}

Value reduceAll(NodeContext &c, Value in) {
  auto t = typeOf(in);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < t.getRank(); ++i) axes.push_back(i);
  return c.b.create<ReduceOp>(c.loc, RankedTensorType::get({}, t.getElementType()), in, Value(),
                              c.b.getStringAttr("sum"), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(false));
}

/// NLL on log-probabilities `logp` [N, C, d...] with integer `target` [N, d...].
FailureOr<Value> negativeLogLikelihood(NodeContext &c, Value logp, Value target, Value weight) {
  auto lt = typeOf(logp), tt = typeOf(target);
  if (lt.getRank() < 2 || tt.getRank() != lt.getRank() - 1)
    return c.fail("input must be [N, C, ...] and target [N, ...]");
  // Dims known only at run time: N and the spatial dims of input and target
  // are checked against each other when the gathers broadcast them.
  Type ft = lt.getElementType(), it = tt.getElementType();
  if (!llvm::isa<FloatType>(ft) || !it.isSignlessInteger()) return c.fail("input must be float and target integer");
  int64_t ignore = c.attrs.getInt("ignore_index", INT64_MIN);
  bool hasIgnore = c.attrs.has("ignore_index");
  std::string reduction = c.attrs.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return c.fail("reduction must be none, sum or mean");
  // Ignored targets gather class 0 (in range) and are masked out below.
  auto safe = buildElementwise(c, {target}, it, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    if (!hasIgnore) return a[0];
    Value ig = b.create<arith::ConstantOp>(l, b.getIntegerAttr(it, ignore));
    Value zero = b.create<arith::ConstantOp>(l, b.getIntegerAttr(it, 0));
    Value is = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[0], ig);
    return b.create<arith::SelectOp>(l, is, zero, a[0]);
  });
  if (failed(safe)) return failure();
  SmallVector<int64_t> withClass(tt.getShape()), toClass, fromClass;
  withClass.insert(withClass.begin() + 1, 1);
  for (int64_t i = 0; i < (int64_t)withClass.size(); ++i) toClass.push_back(i == 0 ? 0 : i - 1);
  for (int64_t i = 0; i < tt.getRank(); ++i) fromClass.push_back(i == 0 ? 0 : i + 1);
  Value idx = reshapeValue(c, *safe, withClass, toClass);
  auto gType = RankedTensorType::get(withClass, ft);
  Value picked = c.b.create<GatherElementsOp>(c.loc, gType, logp, idx, c.b.getI64IntegerAttr(1));
  picked = reshapeValue(c, picked, tt.getShape(), fromClass);
  // Effective weight per element: weight[target] (or 1), 0 where ignored.
  Value w;
  if (weight) {
    auto wType = RankedTensorType::get(tt.getShape(), ft);
    w = c.b.create<GatherOp>(c.loc, wType, weight, *safe, c.b.getI64IntegerAttr(0));
  }
  SmallVector<Value> ins = {target};
  if (w) ins.push_back(w);
  auto eff = buildElementwise(c, ins, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value one = b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, 1.0));
    Value zero = b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, 0.0));
    Value wv = a.size() > 1 ? a[1] : one;
    if (!hasIgnore) return wv;
    Value ig = b.create<arith::ConstantOp>(l, b.getIntegerAttr(it, ignore));
    Value is = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[0], ig);
    return b.create<arith::SelectOp>(l, is, zero, wv);
  });
  if (failed(eff)) return failure();
  auto loss = buildElementwise(c, {picked, *eff}, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::NegFOp>(l, b.create<arith::MulFOp>(l, a[0], a[1]));
  });
  if (failed(loss)) return failure();
  if (reduction == "none") return *loss;
  Value total = reduceAll(c, *loss);
  if (reduction == "sum") return total;
  Value denom = reduceAll(c, *eff);
  return buildElementwise(c, {total, denom}, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::DivFOp>(l, a[0], a[1]);
  });
}

LogicalResult importNLL(NodeContext &c) {
  auto r = negativeLogLikelihood(c, c.input(0), c.input(1), c.hasInput(2) ? c.input(2) : Value());
  if (failed(r)) return failure();
  c.setOutput(0, *r);
  return success();
}

LogicalResult importSCE(NodeContext &c) {
  Value scores = c.input(0);
  auto st = typeOf(scores);
  if (!st.getElementType().isF32()) return c.fail("scores must be float32");
  if (st.getRank() < 2) return c.fail("scores must be [N, C, ...]");
  // log_softmax over the class axis (the softmax kernel handles any axis).
  Value logp = c.b.create<SoftmaxOp>(c.loc, scores, Value(), c.b.getI64IntegerAttr(1), c.b.getStringAttr("log_softmax"),
                                     c.b.getF32FloatAttr(1.f), c.b.getBoolAttr(false));
  auto r = negativeLogLikelihood(c, logp, c.input(1), c.hasInput(2) ? c.input(2) : Value());
  if (failed(r)) return failure();
  c.setOutput(0, *r);
  if (c.outputUsed(1)) c.setOutput(1, logp);
  return success();
}

} // namespace

void addLossImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["NegativeLogLikelihoodLoss"] = {12, kMaxOpset, noCheck, importNLL};
  t["SoftmaxCrossEntropyLoss"] = {12, kMaxOpset, noCheck, importSCE};
}

} // namespace v4f
