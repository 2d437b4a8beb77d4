//===- ImportBuilders.cpp - small builders shared by composite importers --===//
#include "NodeContext.h"

#include <algorithm>

using namespace mlir;

namespace v4f {

namespace {
std::optional<std::vector<int64_t>> constantIndices(Value v) {
  if (!v) return std::nullopt;
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? llvm::dyn_cast<DenseIntElementsAttr>(cst.getValue()) : DenseIntElementsAttr();
  if (!attr) return std::nullopt;
  std::vector<int64_t> out;
  for (const APInt &x : attr.getValues<APInt>()) out.push_back(x.getSExtValue());
  return out;
}

ShapeElement shapeElementAt(Value v, int64_t i, int depth) {
  ShapeElement none;
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (depth > 32 || !t || !t.hasStaticShape() || t.getRank() > 1 || i < 0 || i >= t.getNumElements()) return none;
  if (auto values = constantIndices(v)) {
    ShapeElement e;
    e.value = (*values)[values->size() == 1 ? 0 : i];
    return e;
  }
  Operation *def = v.getDefiningOp();
  if (!def) return none;
  if (auto shape = dyn_cast<ShapeOp>(def)) {
    auto in = llvm::cast<RankedTensorType>(shape.getInput().getType());
    int64_t d = (int64_t)shape.getStart() + i;
    ShapeElement e;
    if (in.isDynamicDim(d))
      e.dimOf = shape.getInput(), e.dim = d;
    else
      e.value = in.getDimSize(d);
    return e;
  }
  if (auto cat = dyn_cast<ConcatOp>(def)) {
    for (Value part : cat.getInputs()) {
      int64_t n = llvm::cast<RankedTensorType>(part.getType()).getNumElements();
      if (i < n) return shapeElementAt(part, i, depth + 1);
      i -= n;
    }
    return none;
  }
  if (auto slice = dyn_cast<SliceOp>(def)) {
    auto in = llvm::cast<RankedTensorType>(slice.getInput().getType());
    auto starts = constantIndices(slice.getStarts());
    auto steps = slice.getSteps() ? constantIndices(slice.getSteps()) : std::optional<std::vector<int64_t>>({1});
    if (in.getRank() != 1 || !in.hasStaticShape() || !starts || starts->size() != 1 || !steps || (*steps)[0] <= 0)
      return none;
    int64_t n = in.getDimSize(0), start = (*starts)[0];
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    return shapeElementAt(slice.getInput(), start + i * (*steps)[0], depth + 1);
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    auto idx = constantIndices(gather.getIndices());
    auto data = llvm::cast<RankedTensorType>(gather.getData().getType());
    if (!idx || data.getRank() != 1 || !data.hasStaticShape() || (int64_t)idx->size() <= i) return none;
    int64_t k = (*idx)[i];
    return shapeElementAt(gather.getData(), k < 0 ? k + data.getDimSize(0) : k, depth + 1);
  }
  if (isa<ReshapeOp, UnsqueezeOp>(def) && t.getNumElements() == 1) {
    auto in = llvm::dyn_cast<RankedTensorType>(def->getOperand(0).getType());
    if (in && in.hasStaticShape() && in.getNumElements() == 1) return shapeElementAt(def->getOperand(0), 0, depth + 1);
  }
  return none;
}
} // namespace

ShapeElement shapeElement(Value v, int64_t i) { return shapeElementAt(v, i, 0); }

LogicalResult requireF32(NodeContext &c, size_t i) {
  auto t = c.inputType(i);
  if (!t.getElementType().isF32())
    return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                  "') must be float32 (other element types are not supported yet)");
  return success();
}

Value reshapeTo(NodeContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  BuildContext bc(c.b, c.loc);
  return reshapeTo(bc, in, shape, sources);
}

Value transposeBy(NodeContext &c, Value in, ArrayRef<int64_t> perm) {
  BuildContext bc(c.b, c.loc);
  return transposeBy(bc, in, perm);
}

bool refineInput(NodeContext &c, size_t i, ArrayRef<int64_t> shape) {
  auto t = c.inputType(i);
  if (t.getRank() != (int64_t)shape.size()) return false;
  SmallVector<int64_t> refined, sources;
  bool changed = false;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t have = t.getDimSize(d), want = shape[d];
    if (have != kDyn) {
      if (want != kDyn && want != have) return false;
      refined.push_back(have), sources.push_back(-1);
    } else if (want != kDyn) {
      refined.push_back(want), sources.push_back(-1), changed = true;
    } else {
      refined.push_back(kDyn), sources.push_back(d);
    }
  }
  if (!changed) return true;
  Value v = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(refined, t.getElementType()), c.input(i), Value(),
                                  c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
  c.g.values[c.node.input(i)] = v;
  return true;
}

FailureOr<Value> reshapeToDimProducts(NodeContext &c, Value in, ArrayRef<int64_t> bounds) {
  BuildContext bc(c.b, c.loc);
  SmallVector<Value> dims;
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    Value n = dimConstant(bc, 1);
    for (int64_t d = bounds[k]; d < bounds[k + 1]; ++d) {
      auto m = dimMul(bc, n, dimOf(bc, in, d));
      if (failed(m)) return c.fail(bc.error);
      n = *m;
    }
    dims.push_back(n);
  }
  auto r = reshapeToDims(bc, in, dims);
  if (failed(r)) return c.fail(bc.error);
  return *r;
}

SmallVector<Value> splitBy(NodeContext &c, Value v, int64_t axis, ArrayRef<int64_t> sizes) {
  BuildContext bc(c.b, c.loc);
  return splitBy(bc, v, axis, sizes);
}

FailureOr<Value> buildElementwise(NodeContext &c, ArrayRef<Value> inputs, Type resultElement,
                                  const ElementwiseBodyFn &body) {
  BuildContext bc(c.b, c.loc);
  auto r = buildElementwise(bc, inputs, resultElement, body);
  if (failed(r)) return c.fail(bc.error);
  return r;
}

FailureOr<MomentValues> meanAndVariance(NodeContext &c, ArrayRef<int64_t> axes) {
  BuildContext bc(c.b, c.loc);
  auto r = meanAndVariance(bc, c.input(0), axes);
  if (failed(r)) return c.fail(bc.error);
  return r;
}

LogicalResult importMatMulValues(NodeContext &c, Value a, Value b, Value &out) {
  BuildContext bc(c.b, c.loc);
  auto r = buildMatMul(bc, a, b);
  if (failed(r)) return c.fail(bc.error);
  out = *r;
  return success();
}

} // namespace v4f
