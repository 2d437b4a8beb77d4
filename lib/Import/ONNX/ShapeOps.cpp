//===- ShapeOps.cpp - ONNX shape and indexing operators -------------------===//
//
// Shape, Size, Reshape, Expand, Unsqueeze, Squeeze, Slice, ConstantOfShape.
// When everything they read is a constant (or a static shape) they fold to
// constants right here, so static models stay static; otherwise they become
// v4f ops whose result dims the plan computes at run time from the values of
// their shape-like operands (see the plan builder's followed values,
// include/v4f/Plan/ShapeValues.h).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

/// Constants folded at import are kept small; bigger results become ops.
constexpr int64_t kMaxFoldElements = 1 << 16;

DenseElementsAttr i64Vector(MLIRContext *ctx, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, IntegerType::get(ctx, 64));
  return DenseElementsAttr::get(type, values);
}

bool isIndexTensor(RankedTensorType t) { return t.getElementType().isInteger(64) || t.getElementType().isInteger(32); }

LogicalResult importShape(NodeContext &c) {
  auto in = c.inputType(0);
  int64_t rank = in.getRank();
  int64_t start = c.attrs.getInt("start", 0), end = c.attrs.getInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  auto dims = in.getShape().slice(start, end - start);
  if (llvm::none_of(dims, [](int64_t d) { return d == kDyn; })) {
    c.setConstantOutput(0, i64Vector(&c.g.ctx, dims));
    return success();
  }
  auto type = RankedTensorType::get({end - start}, c.b.getI64Type());
  c.setOutput(0,
              c.b.create<ShapeOp>(c.loc, type, c.input(0), c.b.getI64IntegerAttr(start), c.b.getI64IntegerAttr(end)));
  return success();
}

LogicalResult importSize(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.hasStaticShape()) {
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get({}, c.b.getI64Type()), in.getNumElements()));
    return success();
  }
  // The product of the dims, computed by the plan at run time.
  BuildContext bc(c.b, c.loc);
  Value n = dimConstant(bc, 1);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    auto m = dimMul(bc, n, dimOf(bc, c.input(0), d));
    if (failed(m)) return c.fail(bc.error);
    n = *m;
  }
  c.setOutput(0, reshapeTo(bc, n, {}));
  return success();
}

} // namespace

LogicalResult importRuntimeReshape(NodeContext &c) {
  auto in = c.inputType(0);
  auto shapeType = c.inputType(1);
  if (!isIndexTensor(shapeType) || shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return c.fail("the shape input must be a 1-D int64 tensor of static length");
  bool allowZero = c.attrs.getInt("allowzero", 0) != 0;
  int64_t rank = shapeType.getDimSize(0);
  SmallVector<int64_t> shape(rank, kDyn), sources(rank, -1);
  // Entries known at compile time (constants, static dims read through a
  // Shape chain; 0 copying a static input dim) make static result dims. A -1
  // is inferred when every other entry is known or copies a dynamic input
  // dim in place, and every dynamic input dim is so copied (they cancel).
  int64_t inferAt = -1, known = 1;
  bool inferable = true;
  SmallVector<bool> copied(rank, false);
  for (int64_t k = 0; k < rank; ++k) {
    ShapeElement e = shapeElement(c.input(1), k);
    bool copiesDim = k < in.getRank() &&
                     ((e.dimOf && e.dimOf == c.input(0) && e.dim == k) || (e.value && *e.value == 0 && !allowZero));
    if (e.value && *e.value > 0)
      shape[k] = *e.value;
    else if (copiesDim && !in.isDynamicDim(k))
      shape[k] = in.getDimSize(k);
    else if (copiesDim)
      copied[k] = true;
    else if (e.value && *e.value == -1 && inferAt < 0)
      inferAt = k;
    else
      inferable = false;
    if (shape[k] != kDyn) known *= shape[k];
  }
  int64_t staticInput = 1;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!in.isDynamicDim(d))
      staticInput *= in.getDimSize(d);
    else if (d >= rank || !copied[d])
      inferable = false;
  }
  if (inferable && inferAt >= 0 && known > 0 && staticInput % known == 0) shape[inferAt] = staticInput / known;
  auto type = RankedTensorType::get(shape, in.getElementType());
  c.setOutput(0, c.b.create<ReshapeOp>(c.loc, type, c.input(0), c.input(1), c.b.getDenseI64ArrayAttr(sources),
                                       c.b.getBoolAttr(allowZero)));
  return success();
}

namespace {

LogicalResult importExpand(NodeContext &c) {
  auto in = c.inputType(0), shapeType = c.inputType(1);
  if (!isIndexTensor(shapeType) || shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return c.fail("the shape input must be a 1-D int64 tensor of static length");
  int64_t n = shapeType.getDimSize(0), rank = std::max<int64_t>(in.getRank(), n);
  SmallVector<int64_t> shape(rank, kDyn);
  if (auto target = c.constantInts(1)) {
    SmallVector<int64_t> t(target->begin(), target->end());
    if (failed(broadcastShapes(in.getShape(), t, shape)))
      return c.fail("input shape is not broadcastable to the target shape");
  }
  c.setOutput(0,
              c.b.create<ExpandOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), c.input(1)));
  return success();
}

/// Unsqueeze/Squeeze axes: attribute before opset 13, input from 13 on.
std::optional<std::vector<int64_t>> axesOf(NodeContext &c, bool &runtime) {
  runtime = false;
  if (c.opset < 13) return c.attrs.getInts("axes");
  if (!c.hasInput(1)) return std::vector<int64_t>{};
  if (auto v = c.constantInts(1)) return v;
  runtime = true;
  return std::nullopt;
}

LogicalResult reshapeTo(NodeContext &c, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  auto in = c.inputType(0);
  auto type = RankedTensorType::get(shape, in.getElementType());
  if (auto cst = c.constantInput(0); cst && type.hasStaticShape()) {
    c.setConstantOutput(0, cst->reshape(type));
    return success();
  }
  c.setOutput(0, c.b.create<ReshapeOp>(c.loc, type, c.input(0), Value(), c.b.getDenseI64ArrayAttr(sources),
                                       c.b.getBoolAttr(false)));
  return success();
}

LogicalResult importUnsqueeze(NodeContext &c) {
  auto in = c.inputType(0);
  bool runtime;
  auto axes = axesOf(c, runtime);
  if (runtime) {
    auto axesType = c.inputType(1);
    if (axesType.getRank() != 1 || axesType.isDynamicDim(0))
      return c.fail("axes must be a 1-D tensor of static length");
    SmallVector<int64_t> shape(in.getRank() + axesType.getDimSize(0), kDyn);
    c.setOutput(
        0, c.b.create<UnsqueezeOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), c.input(1)));
    return success();
  }
  int64_t outRank = in.getRank() + axes->size();
  std::vector<bool> isNew(outRank, false);
  for (int64_t a : *axes) {
    int64_t n = a < 0 ? a + outRank : a;
    if (n < 0 || n >= outRank || isNew[n]) return c.fail("axes are out of range or repeated");
    isNew[n] = true;
  }
  SmallVector<int64_t> shape, sources;
  int64_t k = 0;
  for (int64_t j = 0; j < outRank; ++j) {
    if (isNew[j]) {
      shape.push_back(1);
      sources.push_back(-1);
    } else {
      shape.push_back(in.getDimSize(k));
      sources.push_back(k++);
    }
  }
  return reshapeTo(c, shape, sources);
}

/// Squeeze whose axes are known only at run time (static input shape, axes
/// of static length k): the target shape is computed from the axis values
/// by one small integer body per output dim, which the plan follows as shape
/// registers; a runtime Reshape then applies it.
LogicalResult importRuntimeSqueeze(NodeContext &c) {
  auto in = c.inputType(0), at = c.inputType(1);
  if (!isIndexTensor(at) || at.getRank() != 1 || at.isDynamicDim(0))
    return c.fail("axes must be a 1-D integer tensor of static length");
  int64_t rank = in.getRank(), k = at.getDimSize(0);
  if (k > rank) return c.fail("more axes than input dims");
  auto i64 = c.b.getI64Type();
  SmallVector<Value> axisValues;
  for (int64_t m = 0; m < k; ++m) {
    Value idx = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({1}, i64), m));
    axisValues.push_back(c.b.create<GatherOp>(c.loc, c.input(1), idx, c.b.getI64IntegerAttr(0)));
  }
  Type ae = at.getElementType();
  // The input's dims follow the axis values (read at run time where dynamic).
  BuildContext bc(c.b, c.loc);
  SmallVector<Value> ins(axisValues);
  for (int64_t i = 0; i < rank; ++i) ins.push_back(dimOf(bc, c.input(0), i));
  SmallVector<Value> outDims;
  for (int64_t j = 0; j < rank - k; ++j) {
    auto dim = buildElementwise(c, ins, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> all) -> Value {
      ArrayRef<Value> a = all.take_front(k), dims = all.drop_front(k);
      auto cst = [&](int64_t v) -> Value { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
      auto eq = [&](Value x, Value y) -> Value { return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, x, y); };
      SmallVector<Value> axes;
      for (Value v : a) axes.push_back(ae.isInteger(64) ? v : (Value)b.create<arith::ExtSIOp>(l, b.getI64Type(), v));
      Value count = cst(0), out = cst(1);
      for (int64_t i = 0; i < rank; ++i) {
        Value kept = cst(1);
        for (Value ax : axes) {
          kept = b.create<arith::SelectOp>(l, eq(ax, cst(i)), cst(0), kept);
          kept = b.create<arith::SelectOp>(l, eq(ax, cst(i - rank)), cst(0), kept);
        }
        Value isKept = eq(kept, cst(1));
        out = b.create<arith::SelectOp>(l, isKept, b.create<arith::SelectOp>(l, eq(count, cst(j)), dims[i], out), out);
        count = b.create<arith::AddIOp>(l, count, kept);
      }
      return out;
    });
    if (failed(dim)) return failure();
    outDims.push_back(*dim);
  }
  Value shape;
  if (outDims.empty())
    shape = c.b.create<arith::ConstantOp>(c.loc,
                                          DenseElementsAttr::get(RankedTensorType::get({0}, i64), ArrayRef<int64_t>{}));
  else if (outDims.size() == 1)
    shape = outDims[0];
  else
    shape = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({rank - k}, i64), ValueRange(outDims),
                                 c.b.getI64IntegerAttr(0));
  SmallVector<int64_t> resultShape(rank - k, kDyn), sources(rank - k, -1);
  c.setOutput(0, c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(resultShape, in.getElementType()), c.input(0),
                                       shape, c.b.getDenseI64ArrayAttr(sources), /*allowzero=*/c.b.getBoolAttr(true)));
  return success();
}

LogicalResult importSqueeze(NodeContext &c) {
  auto in = c.inputType(0);
  bool runtime;
  auto axes = axesOf(c, runtime);
  if (runtime) return importRuntimeSqueeze(c);
  int64_t rank = in.getRank();
  std::vector<bool> drop(rank, false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      if (in.isDynamicDim(i))
        return c.fail("Squeeze without axes over more than 3 dims known only at run time: its output rank "
                      "depends on which of them are 1; give them with --dim or --input-shape");
      drop[i] = in.getDimSize(i) == 1;
    }
  }
  for (int64_t a : *axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank) return c.fail("axis out of range");
    if (!in.isDynamicDim(n) && in.getDimSize(n) != 1) return c.fail("cannot squeeze a dim that is not 1");
    drop[n] = true;
  }
  SmallVector<int64_t> shape, sources;
  for (int64_t i = 0; i < rank; ++i) {
    if (drop[i]) continue;
    shape.push_back(in.getDimSize(i));
    sources.push_back(i);
  }
  return reshapeTo(c, shape, sources);
}

/// ONNX Slice on one axis with constant parameters: (start, count, step).
void clampSlice(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t &first, int64_t &count) {
  // Dims stay below 2^40, so a step beyond +-2^41 takes at most the first
  // element, as that bound does; clamping keeps -step (INT64_MIN) and the
  // count arithmetic from overflowing.
  step = std::clamp<int64_t>(step, -(int64_t(1) << 41), int64_t(1) << 41);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  first = start;
}

LogicalResult importSlice(NodeContext &c);

/// Slice before opset 10: starts, ends and axes are attributes; imported as
/// the opset-10 form with them as constant inputs.
LogicalResult importSliceAttributes(NodeContext &c) {
  if (!c.attrs.has("starts") || !c.attrs.has("ends")) return c.fail("starts and ends are required");
  std::vector<int64_t> starts = c.attrs.getInts("starts"), ends = c.attrs.getInts("ends");
  std::vector<int64_t> axes = c.attrs.getInts("axes");
  if (!c.attrs.has("axes"))
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (ends.size() != starts.size() || axes.size() != starts.size())
    return c.fail("starts, ends and axes must have the same length");
  onnx::NodeProto n = c.node;
  n.clear_attribute();
  n.clear_input();
  n.add_input(c.node.input(0));
  auto i64 = c.b.getI64Type();
  for (auto [what, values] :
       {std::make_pair("starts", &starts), std::make_pair("ends", &ends), std::make_pair("axes", &axes)}) {
    std::string name = c.node.output(0) + "#v4f-" + what;
    c.g.constants[name] =
        DenseElementsAttr::get(RankedTensorType::get({int64_t(values->size())}, i64), ArrayRef<int64_t>(*values));
    n.add_input(name);
  }
  NodeContext c10(n, 10, c.g, c.loc);
  if (failed(importSlice(c10))) return c.fail(c10.error.empty() ? c10.inputError : c10.error);
  return success();
}

LogicalResult importSlice(NodeContext &c) {
  auto in = c.inputType(0);
  int64_t rank = in.getRank();
  if (c.opset < 10) return importSliceAttributes(c);
  for (size_t i = 1; i < c.numInputs(); ++i)
    if (c.hasInput(i)) {
      auto t = c.inputType(i);
      if (!isIndexTensor(t) || t.getRank() != 1 || t.isDynamicDim(0))
        return c.fail("starts/ends/axes/steps must be 1-D integer tensors of static length");
    }
  int64_t n = c.inputType(1).getDimSize(0);
  // starts, ends, axes and steps index the same list (found by fuzzing: a
  // shorter axes or steps was read past its end).
  for (size_t i = 2; i < c.numInputs() && i <= 4; ++i)
    if (c.hasInput(i) && c.inputType(i).getDimSize(0) != n)
      return c.fail("starts, ends, axes and steps must have the same length (starts has " + std::to_string(n) +
                    ", input " + std::to_string(i) + " has " + std::to_string(c.inputType(i).getDimSize(0)) + ")");
  auto starts = c.constantInts(1), ends = c.constantInts(2);
  std::optional<std::vector<int64_t>> axes, steps;
  bool axesKnown = !c.hasInput(3) || (axes = c.constantInts(3)).has_value();
  bool stepsKnown = !c.hasInput(4) || (steps = c.constantInts(4)).has_value();
  if (!axes && axesKnown) {
    axes.emplace();
    for (int64_t i = 0; i < n; ++i) axes->push_back(i);
  }
  if (!steps && stepsKnown) steps = std::vector<int64_t>(n, 1);
  SmallVector<int64_t> shape(in.getShape());
  if (axesKnown) {
    std::vector<bool> seen(rank, false);
    for (int64_t &a : *axes) {
      if (a < 0) a += rank;
      if (a < 0 || a >= rank || seen[a]) return c.fail("axes are out of range or repeated");
      seen[a] = true;
    }
    if (stepsKnown)
      for (int64_t s : *steps)
        if (s == 0) return c.fail("steps must not be 0");
    for (int64_t i = 0; i < n; ++i) {
      int64_t a = (*axes)[i];
      if (starts && ends && stepsKnown && !in.isDynamicDim(a)) {
        int64_t first, count;
        clampSlice(in.getDimSize(a), (*starts)[i], (*ends)[i], (*steps)[i], first, count);
        shape[a] = count;
      } else {
        shape[a] = kDyn;
      }
    }
  } else {
    shape.assign(rank, kDyn);
  }
  auto type = RankedTensorType::get(shape, in.getElementType());
  // A small constant input sliced with constant parameters folds at import
  // (exporters build pad amounts this way: a reversed [2, 2] constant).
  if (auto cst = c.constantInput(0); cst && starts && ends && axesKnown && stepsKnown && type.hasStaticShape() &&
                                     in.hasStaticShape() && cst->getNumElements() <= 4096) {
    SmallVector<int64_t> first(rank, 0), step(rank, 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t a = (*axes)[i], count;
      step[a] = (*steps)[i];
      clampSlice(in.getDimSize(a), (*starts)[i], (*ends)[i], step[a], first[a], count);
    }
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * in.getDimSize(d + 1);
    auto vals = cst->getValues<Attribute>();
    SmallVector<Attribute> out;
    SmallVector<int64_t> idx(rank, 0);
    for (int64_t e = 0, total = type.getNumElements(); e < total; ++e) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) off += (first[d] + idx[d] * step[d]) * strides[d];
      out.push_back(cst->isSplat() ? *vals.begin() : vals[off]);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    c.setConstantOutput(0, DenseElementsAttr::get(type, out));
    return success();
  }
  Value axesV = c.hasInput(3) ? c.input(3) : Value(), stepsV = c.hasInput(4) ? c.input(4) : Value();
  c.setOutput(0, c.b.create<SliceOp>(c.loc, type, c.input(0), c.input(1), c.input(2), axesV, stepsV));
  return success();
}

LogicalResult importConstantOfShape(NodeContext &c) {
  auto shape = c.constantInts(0);
  if (!shape) {
    auto st = c.inputType(0);
    if (!isIndexTensor(st) || st.getRank() != 1 || st.isDynamicDim(0))
      return c.fail("the shape input must be a 1-D int64 tensor of static length");
    TypedAttr value = c.b.getF32FloatAttr(0);
    if (const auto *a = c.attrs.get("value")) {
      std::string err;
      auto t = importTensor(c.g.ctx, a->t(), c.g.modelDir, err);
      if (!t || t.getNumElements() != 1) return c.fail(err.empty() ? "value must hold one element" : err);
      value = llvm::cast<TypedAttr>(*t.getValues<Attribute>().begin());
    }
    // Elements known at compile time (constants inside a Shape -> Gather ->
    // Concat chain) give static dims.
    SmallVector<int64_t> dims(st.getDimSize(0), kDyn);
    for (int64_t k = 0; k < st.getDimSize(0); ++k) {
      ShapeElement e = shapeElement(c.input(0), k);
      if (e.value && *e.value < 0) return c.fail("negative dim in the shape");
      if (e.value) dims[k] = *e.value;
    }
    c.setOutput(0, c.b.create<FillOp>(c.loc, RankedTensorType::get(dims, value.getType()), c.input(0), value));
    return success();
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d < 0) return c.fail("negative dim in the shape");
    count *= d;
    if (count > kMaxFoldElements * 256) return c.fail("the constant would be too large");
  }
  Type element = c.b.getF32Type();
  Attribute value = c.b.getF32FloatAttr(0);
  if (const auto *a = c.attrs.get("value")) {
    std::string err;
    auto t = importTensor(c.g.ctx, a->t(), c.g.modelDir, err);
    if (!t || t.getNumElements() != 1) return c.fail(err.empty() ? "value must hold one element" : err);
    element = t.getElementType();
    auto type = RankedTensorType::get(SmallVector<int64_t>(shape->begin(), shape->end()), element);
    c.setConstantOutput(0, DenseElementsAttr::get(type, *t.getValues<Attribute>().begin()));
    return success();
  }
  auto type = RankedTensorType::get(SmallVector<int64_t>(shape->begin(), shape->end()), element);
  c.setConstantOutput(0, DenseElementsAttr::get(type, value));
  return success();
}

LogicalResult importSplit(NodeContext &c) {
  auto in = c.inputType(0);
  int64_t rank = in.getRank(), axis = c.attrs.getInt("axis", 0);
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  size_t parts = c.node.output_size();
  std::optional<std::vector<int64_t>> sizes;
  bool runtime = false;
  if (c.opset < 13 && c.attrs.has("split"))
    sizes = c.attrs.getInts("split");
  else if (c.opset >= 13 && c.hasInput(1)) {
    sizes = c.constantInts(1);
    runtime = !sizes;
  }
  int64_t dim = in.getDimSize(axis);
  Value runtimeSizes = runtime ? c.input(1) : Value();
  if (!sizes && !runtime && dim == kDyn) {
    // Equal parts of a dim known only at run time: sizes min(chunk, rest)
    // with chunk = ceil(dim / n), computed as values the plan follows.
    int64_t n = c.attrs.getInt("num_outputs", parts);
    if (n <= 0 || (size_t)n != parts) return c.fail("num_outputs must match the number of outputs");
    auto i64 = c.b.getI64Type();
    Value d = c.b.create<ShapeOp>(c.loc, RankedTensorType::get({1}, i64), c.input(0), c.b.getI64IntegerAttr(axis),
                                  c.b.getI64IntegerAttr(axis + 1));
    SmallVector<int64_t> ks;
    for (int64_t k = 0; k < n; ++k) ks.push_back(k);
    Value kv = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({n}, i64), ArrayRef<int64_t>(ks)));
    auto partSizes = buildElementwise(c, {d, kv}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      auto cst = [&](int64_t v) -> Value { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
      Value chunk = b.create<arith::DivSIOp>(l, b.create<arith::AddIOp>(l, a[0], cst(n - 1)), cst(n));
      Value left = b.create<arith::SubIOp>(l, a[0], b.create<arith::MulIOp>(l, a[1], chunk));
      return b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, chunk, left), cst(0));
    });
    if (failed(partSizes)) return failure();
    runtimeSizes = *partSizes;
    runtime = true;
  }
  if (!sizes && !runtime) {
    int64_t n = c.attrs.getInt("num_outputs", parts);
    if (n <= 0 || (size_t)n != parts) return c.fail("num_outputs must match the number of outputs");
    int64_t chunk = (dim + n - 1) / n;
    sizes.emplace();
    for (int64_t k = 0, left = dim; k < n; ++k, left -= chunk)
      sizes->push_back(std::max<int64_t>(std::min(chunk, left), 0));
  }
  SmallVector<Type> types;
  for (size_t k = 0; k < parts; ++k) {
    SmallVector<int64_t> shape(in.getShape());
    shape[axis] = sizes ? (*sizes)[k] : kDyn;
    types.push_back(RankedTensorType::get(shape, in.getElementType()));
  }
  if (sizes) {
    if (sizes->size() != parts)
      return c.fail("split has " + std::to_string(sizes->size()) + " sizes for " + std::to_string(parts) + " outputs");
    int64_t total = 0;
    for (int64_t v : *sizes) {
      if (v < 0) return c.fail("split sizes must be non-negative");
      total += v;
    }
    if (dim != kDyn && total != dim) return c.fail("split sizes do not add up to the axis length");
  }
  // A split of a short 1-D integer tensor (shape arithmetic: exporters split
  // pads and shapes this way) imports as slices, whose values the plan's
  // shape program follows.
  Type et = in.getElementType();
  if (sizes && rank == 1 && dim != kDyn && dim <= 64 && (et.isSignlessInteger(64) || et.isSignlessInteger(32))) {
    auto i64 = c.b.getI64Type();
    auto vec = [&](int64_t v) {
      return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({1}, i64), v));
    };
    int64_t start = 0;
    for (size_t k = 0; k < parts; ++k) {
      int64_t end = start + (*sizes)[k];
      if (c.outputUsed(k))
        c.setOutput(k, c.b.create<SliceOp>(c.loc, types[k], c.input(0), vec(start), vec(end), vec(0), Value()));
      start = end;
    }
    return success();
  }
  auto op = c.b.create<SplitOp>(c.loc, types, c.input(0), runtimeSizes, c.b.getI64IntegerAttr(axis),
                                c.b.getDenseI64ArrayAttr(sizes ? ArrayRef<int64_t>(*sizes) : ArrayRef<int64_t>()));
  for (size_t k = 0; k < parts; ++k)
    if (c.outputUsed(k)) c.setOutput(k, op.getResult(k));
  return success();
}

LogicalResult importRange(NodeContext &c) {
  Type et = c.inputType(0).getElementType();
  for (int i = 0; i < 3; ++i)
    if (c.inputType(i).getRank() != 0 || c.inputType(i).getElementType() != et)
      return c.fail("start, limit and delta must be scalars of one type");
  auto s = c.constantInput(0), l = c.constantInput(1), d = c.constantInput(2);
  if (s && l && d) {
    auto value = [&](DenseElementsAttr a) -> double {
      if (llvm::isa<FloatType>(et)) return (*a.getValues<APFloat>().begin()).convertToDouble();
      return (double)(*a.getValues<APInt>().begin()).getSExtValue();
    };
    double start = value(*s), limit = value(*l), delta = value(*d);
    if (delta == 0) return c.fail("delta must not be 0");
    int64_t n = std::max<int64_t>((int64_t)std::ceil((limit - start) / delta), 0);
    if (n > kMaxFoldElements * 16) return c.fail("the range is too long");
    auto type = RankedTensorType::get({n}, et);
    if (llvm::isa<FloatType>(et)) {
      SmallVector<APFloat> v;
      for (int64_t i = 0; i < n; ++i) {
        APFloat x(start + i * delta);
        bool lost;
        x.convert(llvm::cast<FloatType>(et).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
        v.push_back(x);
      }
      c.setConstantOutput(0, DenseElementsAttr::get(type, v));
    } else {
      SmallVector<APInt> v;
      int64_t is = (int64_t)start, id = (int64_t)delta;
      for (int64_t i = 0; i < n; ++i) v.push_back(APInt(et.getIntOrFloatBitWidth(), is + i * id, true));
      c.setConstantOutput(0, DenseElementsAttr::get(type, v));
    }
    return success();
  }
  if (llvm::isa<FloatType>(et)) {
    // A float Range over integers (torch's arange(end=w) on a dim cast to
    // float: anchor grids): the integer Range, converted. Each operand is a
    // cast of an integer or an integral constant; the count is then exact.
    auto i64 = c.b.getI64Type();
    SmallVector<Value> ints;
    for (int i = 0; i < 3; ++i) {
      if (auto k = c.constantInput(i)) {
        double v = (*k->getValues<APFloat>().begin()).convertToDouble();
        if (v != std::floor(v) || std::fabs(v) > 9007199254740992.0) break;
        ints.push_back(
            c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), (int64_t)v)));
        continue;
      }
      auto ew = c.input(i).getDefiningOp<ElementwiseOp>();
      if (!ew || ew->getNumOperands() != 1) break;
      Block &body = ew.getBody().front();
      Type from = typeOf(ew->getOperand(0)).getElementType();
      if (!from.isSignlessInteger(64) && !from.isSignlessInteger(32)) break;
      if (body.getOperations().size() != 2 || !isa<arith::SIToFPOp>(body.front())) break;
      Value src = ew->getOperand(0);
      if (from.isSignlessInteger(32)) {
        BuildContext bc(c.b, c.loc);
        auto wide = convertElementType(bc, src, i64);
        if (failed(wide)) return c.fail(bc.error);
        src = *wide;
      }
      ints.push_back(src);
    }
    if (ints.size() == 3) {
      Value r = c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), ints[0], ints[1], ints[2]);
      BuildContext bc(c.b, c.loc);
      auto f = convertElementType(bc, r, et);
      if (failed(f)) return c.fail(bc.error);
      c.setOutput(0, *f);
      return success();
    }
  }
  if (!et.isSignlessInteger(64) && !et.isSignlessInteger(32))
    return c.fail("a Range of this type needs constant inputs, or a float Range of integers (casts of integer values "
                  "or integral constants); run-time inputs are supported for int32/int64");
  c.setOutput(0, c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, et), c.input(0), c.input(1), c.input(2)));
  return success();
}

LogicalResult importGatherElements(NodeContext &c) {
  auto d = c.inputType(0), i = c.inputType(1);
  if (!isIndexTensor(i)) return c.fail("indices must be int32 or int64");
  if (d.getRank() != i.getRank()) return c.fail("data and indices must have the same rank");
  int64_t rank = d.getRank(), axis = c.attrs.getInt("axis", 0);
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  auto type = RankedTensorType::get(i.getShape(), d.getElementType());
  c.setOutput(0, c.b.create<GatherElementsOp>(c.loc, type, c.input(0), c.input(1), c.b.getI64IntegerAttr(axis)));
  return success();
}

LogicalResult importTrilu(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 2) return c.fail("input must have rank >= 2");
  Value k = c.hasInput(1) ? c.input(1) : Value();
  if (k && (!isIndexTensor(c.inputType(1)) || c.inputType(1).getNumElements() != 1))
    return c.fail("k must be an int64 scalar");
  c.setOutput(0, c.b.create<TriluOp>(c.loc, in, c.input(0), k, c.b.getBoolAttr(c.attrs.getInt("upper", 1) != 0)));
  return success();
}

LogicalResult importPad(NodeContext &c) {
  auto in = c.inputType(0);
  std::string mode = c.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return c.fail("mode '" + mode + "' is not supported");
  if (c.opset < 11) return c.fail("Pad before opset 11 (pads attribute) is not supported");
  auto pt = c.inputType(1);
  if (!isIndexTensor(pt) || pt.getRank() != 1 || pt.isDynamicDim(0)) return c.fail("pads must be a 1-D int64 tensor");
  Value value = c.hasInput(2) ? c.input(2) : Value();
  if (value && c.inputType(2).getElementType() != in.getElementType())
    return c.fail("constant_value must have the input's element type");
  Value axes = c.hasInput(3) ? c.input(3) : Value();
  int64_t n = axes ? c.inputType(3).getDimSize(0) : in.getRank();
  if (pt.getDimSize(0) != 2 * n) return c.fail("pads must have 2 entries per padded axis");
  // Constant pads (and axes) give the padded axes static sizes where the
  // input's are (exported models' Pad: a later conv then sees its channels
  // and plane); a negative size is refused here, naming the node. Repeated
  // axes and sums that overflow are left to the run-time checks.
  SmallVector<int64_t> shape(in.getRank(), kDyn);
  auto pads = c.constantInts(1);
  std::optional<std::vector<int64_t>> axisList;
  if (axes) axisList = c.constantInts(3);
  if (pads && (!axes || axisList)) {
    std::vector<int64_t> which(n);
    for (int64_t i = 0; i < n; ++i) which[i] = axes ? (*axisList)[i] : i;
    SmallVector<int64_t> added(in.getRank(), 0);
    SmallVector<bool> seen(in.getRank(), false);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; ++i) {
      int64_t ax = which[i] < 0 ? which[i] + in.getRank() : which[i];
      if (ax < 0 || ax >= in.getRank() || seen[ax] || __builtin_add_overflow((*pads)[i], (*pads)[i + n], &added[ax]))
        ok = false; // left to the run-time checks
      else
        seen[ax] = true;
    }
    for (int64_t d = 0; ok && d < in.getRank(); ++d) {
      int64_t size = 0;
      if (in.isDynamicDim(d) || __builtin_add_overflow(in.getDimSize(d), added[d], &size)) continue;
      if (size < 0)
        return c.fail("pads make axis " + std::to_string(d) + " negative (" + std::to_string(in.getDimSize(d)) + " + " +
                      std::to_string(added[d]) + ")");
      // Past 2^40 elements along an axis the run-time checks say why.
      if (size < (int64_t(1) << 40)) shape[d] = size;
    }
  }
  auto type = RankedTensorType::get(shape, in.getElementType());
  c.setOutput(0, c.b.create<PadOp>(c.loc, type, c.input(0), c.input(1), value, axes, c.b.getStringAttr(mode)));
  return success();
}

LogicalResult importCumSum(NodeContext &c) {
  auto in = c.inputType(0), at = c.inputType(1);
  if (in.getElementType().isInteger(1)) return c.fail("bool input is not supported");
  if (!isIndexTensor(at) || at.getNumElements() != 1) return c.fail("axis must be an integer scalar");
  c.setOutput(0, c.b.create<CumSumOp>(c.loc, in, c.input(0), c.input(1),
                                      c.b.getBoolAttr(c.attrs.getInt("exclusive", 0) != 0),
                                      c.b.getBoolAttr(c.attrs.getInt("reverse", 0) != 0),
                                      c.b.getBoolAttr(c.node.op_type() == "CumProd")));
  return success();
}

} // namespace

void addShapeImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Shape"] = {1, kMaxOpset, noCheck, importShape};
  t["Size"] = {1, kMaxOpset, noCheck, importSize};
  t["Expand"] = {8, kMaxOpset, noCheck, importExpand};
  t["Unsqueeze"] = {1, kMaxOpset, noCheck, importUnsqueeze};
  t["Squeeze"] = {1, kMaxOpset, noCheck, importSqueeze};
  t["Slice"] = {1, kMaxOpset, noCheck, importSlice};
  t["ConstantOfShape"] = {9, kMaxOpset, noCheck, importConstantOfShape};
  t["Split"] = {2, kMaxOpset, noCheck, importSplit};
  t["Range"] = {11, kMaxOpset, noCheck, importRange};
  t["GatherElements"] = {11, kMaxOpset, noCheck, importGatherElements};
  t["Trilu"] = {14, kMaxOpset, noCheck, importTrilu};
  t["Pad"] = {11, kMaxOpset, noCheck, importPad};
  t["CumSum"] = {11, kMaxOpset, noCheck, importCumSum};
  t["CumProd"] = {26, kMaxOpset, noCheck, importCumSum};
  addShapePatternImporters(t);
}

} // namespace v4f
