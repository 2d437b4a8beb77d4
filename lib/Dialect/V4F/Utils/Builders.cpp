//===- Builders.cpp - v4f IR builders shared by the importer and the passes ===//
#include "v4f/Dialect/V4F/Utils/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace v4f {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Value reshapeTo(BuildContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  SmallVector<int64_t> src(sources.begin(), sources.end());
  if (src.empty()) src.assign(shape.size(), -1);
  auto type = RankedTensorType::get(shape, typeOf(in).getElementType());
  return c.b.create<ReshapeOp>(c.loc, type, in, Value(), c.b.getDenseI64ArrayAttr(src), c.b.getBoolAttr(false));
}

Value dimConstant(BuildContext &c, int64_t v) {
  auto type = RankedTensorType::get({1}, c.b.getI64Type());
  return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(type, ArrayRef<int64_t>{v}));
}

Value dimOf(BuildContext &c, Value v, int64_t axis) {
  auto t = typeOf(v);
  if (!t.isDynamicDim(axis)) return dimConstant(c, t.getDimSize(axis));
  return c.b.create<ShapeOp>(c.loc, RankedTensorType::get({1}, c.b.getI64Type()), v, c.b.getI64IntegerAttr(axis),
                             c.b.getI64IntegerAttr(axis + 1));
}

std::optional<int64_t> constantDim(Value dim) {
  auto cst = dim.getDefiningOp<arith::ConstantOp>();
  if (!cst) return std::nullopt;
  auto attr = llvm::dyn_cast<DenseIntElementsAttr>(cst.getValue());
  if (!attr || attr.getNumElements() != 1) return std::nullopt;
  return (*attr.getValues<APInt>().begin()).getSExtValue();
}

namespace {
/// A dim computed from two dims: `fold` when both are constants, else a
/// v4f.elementwise whose body `body` builds (the plan's shape program
/// follows it).
FailureOr<Value> dimArith(BuildContext &c, Value a, Value b, int64_t (*fold)(int64_t, int64_t),
                          Value (*body)(OpBuilder &, Location, Value, Value)) {
  auto x = constantDim(a), y = constantDim(b);
  if (x && y) return dimConstant(c, fold(*x, *y));
  return buildElementwise(c, {a, b}, c.b.getI64Type(),
                          [&](OpBuilder &ob, Location l, ArrayRef<Value> v) { return body(ob, l, v[0], v[1]); });
}
} // namespace

FailureOr<Value> dimMul(BuildContext &c, Value a, Value b) {
  if (constantDim(a) == 1) return b;
  if (constantDim(b) == 1) return a;
  return dimArith(
      c, a, b, [](int64_t x, int64_t y) { return x * y; },
      [](OpBuilder &ob, Location l, Value x, Value y) -> Value { return ob.create<arith::MulIOp>(l, x, y); });
}

FailureOr<Value> dimDiv(BuildContext &c, Value a, Value b) {
  if (constantDim(b) == 1) return a;
  if (constantDim(b) == 0) return c.fail("a dim divided by 0");
  return dimArith(
      c, a, b, [](int64_t x, int64_t y) { return x / y; },
      [](OpBuilder &ob, Location l, Value x, Value y) -> Value { return ob.create<arith::DivSIOp>(l, x, y); });
}

FailureOr<Value> dimSub(BuildContext &c, Value a, Value b) {
  if (constantDim(b) == 0) return a;
  return dimArith(
      c, a, b, [](int64_t x, int64_t y) { return x - y; },
      [](OpBuilder &ob, Location l, Value x, Value y) -> Value { return ob.create<arith::SubIOp>(l, x, y); });
}

FailureOr<Value> dimAdd(BuildContext &c, Value a, Value b) {
  if (constantDim(b) == 0) return a;
  if (constantDim(a) == 0) return b;
  return dimArith(
      c, a, b, [](int64_t x, int64_t y) { return x + y; },
      [](OpBuilder &ob, Location l, Value x, Value y) -> Value { return ob.create<arith::AddIOp>(l, x, y); });
}

FailureOr<Value> reshapeToDims(BuildContext &c, Value in, ArrayRef<Value> dims) {
  auto t = typeOf(in);
  SmallVector<int64_t> shape, sources;
  bool runTime = false;
  for (Value d : dims) {
    if (auto v = constantDim(d)) {
      if (*v < 0) return c.fail("a reshape to a negative dim");
      shape.push_back(*v), sources.push_back(-1);
      continue;
    }
    shape.push_back(ShapedType::kDynamic);
    auto s = d.getDefiningOp<ShapeOp>();
    if (s && s.getInput() == in && s.getEnd() == s.getStart() + 1) {
      sources.push_back(s.getStart());
      continue;
    }
    sources.push_back(-1);
    runTime = true;
  }
  if (!runTime) return reshapeTo(c, in, shape, sources);
  auto i64 = c.b.getI64Type();
  Value target = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({int64_t(dims.size())}, i64), ValueRange(dims),
                                      c.b.getI64IntegerAttr(0));
  return (Value)c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(shape, t.getElementType()), in, target,
                                      c.b.getDenseI64ArrayAttr(SmallVector<int64_t>(shape.size(), -1)),
                                      /*allowzero=*/c.b.getBoolAttr(true));
}

FailureOr<Value> reshapeToType(BuildContext &c, Value v, RankedTensorType want, bool exact) {
  if (v.getType() == want) return v;
  auto t = typeOf(v);
  if (t.getRank() != want.getRank() || t.getElementType() != want.getElementType())
    return c.fail("the value's rank or element type differs from the type it should have");
  SmallVector<Value> dims;
  for (int64_t i = 0; i < want.getRank(); ++i) {
    if (!want.isDynamicDim(i))
      dims.push_back(dimConstant(c, want.getDimSize(i)));
    else if (t.isDynamicDim(i) || !exact)
      dims.push_back(dimOf(c, v, i));
    else
      return c.fail("the value knows a dim its type should not");
  }
  return reshapeToDims(c, v, dims);
}

FailureOr<SmallVector<Value>> splitByDims(BuildContext &c, Value v, int64_t axis, ArrayRef<Value> sizes) {
  SmallVector<int64_t> known;
  for (Value s : sizes) known.push_back(constantDim(s).value_or(ShapedType::kDynamic));
  if (!llvm::is_contained(known, ShapedType::kDynamic)) return splitBy(c, v, axis, known);
  auto t = typeOf(v);
  SmallVector<Type> types;
  for (int64_t k : known) {
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = k;
    types.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  Value sizeV = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({int64_t(sizes.size())}, c.b.getI64Type()),
                                     ValueRange(sizes), c.b.getI64IntegerAttr(0));
  auto op = c.b.create<SplitOp>(c.loc, types, v, sizeV, c.b.getI64IntegerAttr(axis), c.b.getDenseI64ArrayAttr({}));
  return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

Value transposeBy(BuildContext &c, Value in, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
  if (identity) return in;
  return c.b.create<TransposeOp>(c.loc, in, c.b.getDenseI64ArrayAttr(perm));
}

SmallVector<Value> splitBy(BuildContext &c, Value v, int64_t axis, ArrayRef<int64_t> sizes) {
  if (sizes.size() == 1) return {v};
  auto t = typeOf(v);
  SmallVector<Type> types;
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = s;
    types.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  auto op = c.b.create<SplitOp>(c.loc, types, v, Value(), c.b.getI64IntegerAttr(axis), c.b.getDenseI64ArrayAttr(sizes));
  return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

Value constF32(BuildContext &c, ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, c.b.getF32Type());
  return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(type, values));
}

FailureOr<Value> buildElementwise(BuildContext &c, ArrayRef<Value> inputs, Type resultElement,
                                  const ElementwiseBodyFn &body) {
  SmallVector<int64_t> shape;
  for (Value v : inputs) {
    SmallVector<int64_t> next;
    if (failed(broadcastShapes(shape, typeOf(v).getShape(), next)))
      return c.fail("input shapes are not broadcast-compatible");
    shape = next;
  }
  auto type = RankedTensorType::get(shape, resultElement);
  auto op = c.b.create<ElementwiseOp>(c.loc, type, ValueRange(inputs));
  Block &block = op.getBody().front();
  OpBuilder::InsertionGuard guard(c.b);
  c.b.setInsertionPointToStart(&block);
  SmallVector<Value> args(block.getArguments().begin(), block.getArguments().end());
  Value r = body(c.b, c.loc, args);
  if (!r) return c.fail("unsupported element type combination");
  c.b.create<YieldOp>(c.loc, r);
  return op.getResult();
}

FailureOr<Value> buildMatMul(BuildContext &c, Value a, Value b) {
  constexpr int64_t kDyn = ShapedType::kDynamic;
  auto ta = typeOf(a), tb = typeOf(b);
  bool squeezeA = ta.getRank() == 1, squeezeB = tb.getRank() == 1;
  if (squeezeA) a = reshapeTo(c, a, {1, ta.getDimSize(0)}, {-1, 0});
  if (squeezeB) b = reshapeTo(c, b, {tb.getDimSize(0), 1}, {0, -1});
  ta = typeOf(a);
  tb = typeOf(b);
  int64_t ka = ta.getDimSize(ta.getRank() - 1), kb = tb.getDimSize(tb.getRank() - 2);
  if (ka != kDyn && kb != kDyn && ka != kb)
    return c.fail("contraction dims differ (" + std::to_string(ka) + " vs " + std::to_string(kb) + ")");
  SmallVector<int64_t> batch;
  if (failed(broadcastShapes(ta.getShape().drop_back(2), tb.getShape().drop_back(2), batch)))
    return c.fail("batch dims are not broadcast-compatible");
  Value r = c.b.create<MatMulOp>(c.loc, a, b, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                                 c.b.getF32FloatAttr(0));
  if (squeezeA || squeezeB) {
    auto rt = typeOf(r);
    SmallVector<int64_t> shape, sources;
    for (int64_t i = 0; i < rt.getRank(); ++i) {
      if ((squeezeA && i == rt.getRank() - 2) || (squeezeB && i == rt.getRank() - 1)) continue;
      shape.push_back(rt.getDimSize(i));
      sources.push_back(i);
    }
    r = reshapeTo(c, r, shape, sources);
  }
  return r;
}

} // namespace v4f

FailureOr<Value> v4f::convertElementType(BuildContext &c, Value v, Type to) {
  Type from = typeOf(v).getElementType();
  if (from == to) return v;
  return buildElementwise(c, {v}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return castScalar(b, l, a[0], from, to);
  });
}

std::optional<DenseElementsAttr> v4f::foldedValue(Operation *op) {
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(results)) || results.size() != 1) return std::nullopt;
  auto attr = llvm::dyn_cast_if_present<DenseElementsAttr>(llvm::dyn_cast_if_present<Attribute>(results[0]));
  if (!attr) return std::nullopt;
  return attr;
}

FailureOr<v4f::MomentValues> v4f::meanAndVariance(BuildContext &c, Value x, ArrayRef<int64_t> axes) {
  auto in = llvm::cast<RankedTensorType>(x.getType());
  Type f = in.getElementType();
  SmallVector<int64_t> reduced(in.getShape());
  for (int64_t a : axes) reduced[a] = 1;
  auto rtype = RankedTensorType::get(reduced, f);
  auto mean = [&](Value v) -> Value {
    return c.b.create<ReduceOp>(c.loc, rtype, v, Value(), c.b.getStringAttr("mean"), c.b.getDenseI64ArrayAttr(axes),
                                c.b.getBoolAttr(true));
  };
  Value mu = mean(x);
  auto dev = buildElementwise(c, {x, mu}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::SubFOp>(l, a[0], a[1]);
  });
  if (failed(dev)) return failure();
  auto sq = buildElementwise(c, {*dev}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  return MomentValues{mu, *dev, mean(*sq)};
}
