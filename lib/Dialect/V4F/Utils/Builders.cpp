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
