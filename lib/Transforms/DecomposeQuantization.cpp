//===- DecomposeQuantization.cpp - quantization ops -> float32/int32 compositions ===//
//
// v4f.quantize / v4f.dequantize become one v4f.elementwise each (plus a
// broadcast/reshape/split that repeats blocked scales / zero points along
// the block axis):
//
//   quantize    y = saturate(roundeven(x / scale) + zero_point)   integer targets
//               y = cast<float8>(x / scale, saturate)             float8 targets
//   dequantize  y = (x - zero_point) * scale
//
// Scales and zero points are per-tensor (one element), per-axis (1-D along
// `axis`) or blocked (`block_size`: the input's shape with
// ceil(dim / block_size) along `axis`), as in onnx.reference's
// _quant_utils.reshape_input.
//
// The integer products (matmul_integer, qlinear_matmul, conv_integer,
// qlinear_conv) run on the float32 v4f.matmul / v4f.conv: both operands are
// the exact integers (x - zero_point) held in float32, and a float32 sum of
// integers is exact while every partial sum stays below 2^24 in magnitude.
// The partial sums are bounded by K * max|a - za| * max|b - zb| from the
// element types (and constant zero points); when that can reach 2^24 the
// contraction is split along K into chunks that cannot, each chunk's float32
// result is converted to int32 exactly, and the chunks are summed in int32.
// So the int32 results are exact for every input. A dynamic K (matmul) has no
// static bound and runs as one float32 matmul: exact only while the sums stay
// below 2^24. Convolutions split the input channels of each group. The
// QLinear requantization (acc * (a_scale * b_scale / y_scale) + y_zero_point)
// is computed in float64 like the ONNX reference (numpy promotes int32 *
// float32 to float64).
//
//===----------------------------------------------------------------------===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEQUANTIZATION
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
/// float32 represents every integer of magnitude <= 2^24 exactly.
constexpr int64_t kExactF32 = int64_t(1) << 24;

Type elementOf(Value v) { return typeOf(v).getElementType(); }
Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return b.create<arith::ConstantOp>(l, b.getFloatAttr(t, v));
}

/// Arithmetic in the element type `t` as numpy does it: native floats compute
/// in their own type; bfloat16 computes in float32 and rounds each result.
struct FloatCalc {
  OpBuilder &b;
  Location l;
  Type t; // element type of the values (f16/f32/f64/bf16)
  Type compute() const { return t.isBF16() ? b.getF32Type() : t; }
  Value in(Value x, Type from) { return round(castScalar(b, l, x, from, compute())); }
  Value round(Value x) {
    if (!t.isBF16()) return x;
    return castScalar(b, l, castScalar(b, l, x, b.getF32Type(), t), t, b.getF32Type());
  }
  Value mul(Value x, Value y) { return round(b.create<arith::MulFOp>(l, x, y)); }
  Value div(Value x, Value y) { return round(b.create<arith::DivFOp>(l, x, y)); }
};

/// The float type numpy computes `x / scale` in (x float or int32).
Type divisionType(Type x, Type s) {
  if (x == s) return x;
  if (x.isF64() || s.isF64() || x.isInteger(32)) return Float64Type::get(x.getContext());
  return Float32Type::get(x.getContext());
}

/// Scale or zero point `v`, reshaped / expanded so that it broadcasts
/// against `x` for quantization `axis` and `blockSize` (0: not blocked).
FailureOr<Value> quantParam(BuildContext &c, Value v, RankedTensorType x, int64_t axis, int64_t blockSize,
                            const char *what) {
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  std::string error = quantParamShapeError(x, t, axis, blockSize, what);
  if (!error.empty()) return c.fail(error);
  int64_t rank = x.getRank(), D = x.getDimSize(axis);
  if (blockSize > 0) {
    int64_t blocks = t.getDimSize(axis);
    if (blocks == D) return v;
    // Repeat each block's value block_size times along the axis: view it as
    // [..., blocks, 1, ...], broadcast against [1, ..., block_size, ..., 1]
    // in an identity v4f.elementwise, merge the two dims and drop the excess
    // of a partial last block. (Not v4f.gather: its CPU kernel copies float32
    // elements only, and zero points are 8/16-bit.)
    SmallVector<int64_t> split(t.getShape()), sources(rank + 1, -1), ones(rank + 1, 1);
    split.insert(split.begin() + axis + 1, 1);
    ones[axis + 1] = blockSize;
    auto onesType = RankedTensorType::get(ones, c.b.getI1Type());
    Value shaper = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(onesType, false));
    auto rep = buildElementwise(c, {reshapeTo(c, v, split, sources), shaper}, t.getElementType(),
                                [](OpBuilder &, Location, ArrayRef<Value> a) { return a[0]; });
    if (failed(rep)) return failure();
    SmallVector<int64_t> merged(t.getShape()), msrc(rank, -1);
    merged[axis] = blocks * blockSize;
    Value full = reshapeTo(c, *rep, merged, msrc);
    if (blocks * blockSize == D) return full;
    return splitBy(c, full, axis, {D, blocks * blockSize - D})[0];
  }
  SmallVector<int64_t> shape(rank, 1), sources(rank, -1);
  shape[axis] = t.getDimSize(0);
  sources[axis] = 0;
  return reshapeTo(c, v, shape, sources);
}

/// Integer quantization of a float scalar `q` (already x / scale, in a
/// native float type): roundeven, + zero point, saturate to `target`.
Value quantizeToInt(OpBuilder &b, Location l, Value q, Value zp, Type zpType, Type target) {
  auto range = *quantizedIntRange(target);
  Type ft = q.getType().isF64() ? (Type)b.getF64Type() : (Type)b.getF32Type();
  Value r = b.create<math::RoundEvenOp>(l, q);
  if (r.getType() != ft) r = b.create<arith::ExtFOp>(l, ft, r);
  if (zp) r = b.create<arith::AddFOp>(l, r, castScalar(b, l, zp, zpType, ft));
  Value lo = fconst(b, l, ft, double(range.first)), hi = fconst(b, l, ft, double(range.second));
  Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, r, r);
  Value clamped = b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, r, lo), hi);
  clamped = b.create<arith::SelectOp>(l, isNan, lo, clamped);
  Value i = b.create<arith::FPToSIOp>(l, b.getI32Type(), clamped);
  return castScalar(b, l, i, b.getI32Type(), target);
}

LogicalResult decomposeQuantize(BuildContext &c, QuantizeOp op, SmallVectorImpl<Value> &results) {
  auto xt = typeOf(op.getInput());
  Type xe = xt.getElementType(), se = elementOf(op.getScale()), out = elementOf(op.getResult());
  bool f8 = isFloat8Type(out);
  auto scale = quantParam(c, op.getScale(), xt, op.getAxis(), op.getBlockSize(), "scale");
  if (failed(scale)) return failure();
  SmallVector<Value> ins = {op.getInput(), *scale};
  Type zpe;
  if (op.getZeroPoint() && !f8) {
    auto zp = quantParam(c, op.getZeroPoint(), xt, op.getAxis(), op.getBlockSize(), "zero point");
    if (failed(zp)) return failure();
    ins.push_back(*zp);
    zpe = elementOf(op.getZeroPoint());
  }
  // x / scale in numpy's type, or in `precision` when given.
  Type dt = op.getPrecision() ? *op.getPrecision() : divisionType(xe, se);
  bool saturate = op.getSaturate();
  auto y = buildElementwise(c, ins, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    FloatCalc fc{b, l, dt};
    Value q = fc.div(fc.in(a[0], xe), fc.in(a[1], se));
    if (f8) return castScalar(b, l, q, fc.compute(), out, saturate);
    return quantizeToInt(b, l, q, a.size() > 2 ? a[2] : Value(), zpe, out);
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

LogicalResult decomposeDequantize(BuildContext &c, DequantizeOp op, SmallVectorImpl<Value> &results) {
  auto xt = typeOf(op.getInput());
  Type xe = xt.getElementType(), se = elementOf(op.getScale()), out = elementOf(op.getResult());
  bool f8 = isFloat8Type(xe);
  bool hasZp = op.getZeroPoint() && !f8;
  auto scale = quantParam(c, op.getScale(), xt, op.getAxis(), op.getBlockSize(), "scale");
  if (failed(scale)) return failure();
  SmallVector<Value> ins = {op.getInput(), *scale};
  if (hasZp) {
    auto zp = quantParam(c, op.getZeroPoint(), xt, op.getAxis(), op.getBlockSize(), "zero point");
    if (failed(zp)) return failure();
    ins.push_back(*zp);
  }
  auto y = buildElementwise(c, ins, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    // (x - zero_point) exactly in integers, then float32 (as the reference's
    // x.astype(float32)); times the scale in float32 (float64 for a float64 scale).
    Type ct = se.isF64() ? (Type)b.getF64Type() : (Type)b.getF32Type();
    Value dx;
    if (f8) {
      dx = castScalar(b, l, a[0], xe, b.getF32Type());
    } else {
      Type wide = xe.isInteger(32) ? (Type)b.getI64Type() : (Type)b.getI32Type();
      Value xi = castScalar(b, l, a[0], xe, wide);
      if (hasZp) xi = b.create<arith::SubIOp>(l, xi, castScalar(b, l, a[2], xe, wide));
      dx = b.create<arith::SIToFPOp>(l, b.getF32Type(), xi);
    }
    dx = castScalar(b, l, dx, b.getF32Type(), ct);
    Value y = b.create<arith::MulFOp>(l, dx, castScalar(b, l, a[1], se, ct));
    return castScalar(b, l, y, ct, out);
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

//===----------------------------------------------------------------------===//
// Integer matmul / conv
//===----------------------------------------------------------------------===//

/// Largest |v - zero_point| for a v of element type `t` and zero point `zp`
/// (absent: 0; constant: its values; else any value of `t`).
int64_t maxAbsCentered(Type t, Value zp) {
  auto range = *quantizedIntRange(t);
  int64_t zlo = 0, zhi = 0;
  if (zp) {
    zlo = range.first, zhi = range.second;
    DenseElementsAttr cst;
    if (matchPattern(zp, m_Constant(&cst))) {
      zlo = INT64_MAX, zhi = INT64_MIN;
      for (const APInt &v : cst.getValues<APInt>()) {
        int64_t z = t.isUnsignedInteger() ? (int64_t)v.getZExtValue() : v.getSExtValue();
        zlo = std::min(zlo, z), zhi = std::max(zhi, z);
      }
      if (zlo > zhi) zlo = zhi = 0;
    }
  }
  return std::max(std::abs(range.first - zhi), std::abs(range.second - zlo));
}

/// (v - zero_point) as exact float32 integers. `zp` is already shaped to broadcast.
FailureOr<Value> centered(BuildContext &c, Value v, Value zp) {
  Type t = elementOf(v);
  SmallVector<Value> ins = {v};
  if (zp) ins.push_back(zp);
  return buildElementwise(c, ins, c.b.getF32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value x = castScalar(b, l, a[0], t, b.getI32Type());
    if (a.size() > 1) x = b.create<arith::SubIOp>(l, x, castScalar(b, l, a[1], elementOf(zp), b.getI32Type()));
    return b.create<arith::SIToFPOp>(l, b.getF32Type(), x);
  });
}

/// Sum of float32 tensors holding exact integers, as int32.
FailureOr<Value> sumAsInt32(BuildContext &c, ArrayRef<Value> parts) {
  return buildElementwise(c, parts, c.b.getI32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value acc;
    for (Value p : a) {
      Value i = b.create<arith::FPToSIOp>(l, b.getI32Type(), p);
      acc = acc ? (Value)b.create<arith::AddIOp>(l, acc, i) : i;
    }
    return acc;
  });
}

/// Length of the K chunks whose float32 partial sums stay exact.
int64_t chunkLength(int64_t maxA, int64_t maxB, int64_t perK) {
  int64_t per = std::max<int64_t>(1, maxA * maxB * perK);
  return std::max<int64_t>(1, kExactF32 / per);
}

/// Splits `v` along `axis` into pieces of at most `len`.
SmallVector<Value> splitInto(BuildContext &c, Value v, int64_t axis, int64_t total, int64_t len) {
  SmallVector<int64_t> sizes;
  for (int64_t k = 0; k < total; k += len) sizes.push_back(std::min(len, total - k));
  return splitBy(c, v, axis, sizes);
}

/// Exact int32 matmul of two float32 tensors holding integers bounded by
/// maxA / maxB in magnitude (see the file comment).
FailureOr<Value> exactMatMul(BuildContext &c, Value a, Value b, int64_t maxA, int64_t maxB) {
  auto ta = typeOf(a), tb = typeOf(b);
  int64_t axisA = ta.getRank() - 1, axisB = tb.getRank() == 1 ? 0 : tb.getRank() - 2;
  int64_t K = ta.getDimSize(axisA);
  if (K == kDyn) K = tb.getDimSize(axisB);
  SmallVector<Value> parts;
  if (K == kDyn) {
    // No static bound: one float32 matmul (exact while |sums| < 2^24).
    auto r = buildMatMul(c, a, b);
    if (failed(r)) return failure();
    parts.push_back(*r);
  } else {
    int64_t len = chunkLength(maxA, maxB, 1);
    auto as = splitInto(c, a, axisA, K, len), bs = splitInto(c, b, axisB, K, len);
    for (size_t k = 0; k < as.size(); ++k) {
      auto r = buildMatMul(c, as[k], bs[k]);
      if (failed(r)) return failure();
      parts.push_back(*r);
    }
  }
  return sumAsInt32(c, parts);
}

/// Zero point / scale of the row operand A (or of the output Y): one value,
/// per row (1-D [M] -> [M, 1]) when A has rank >= 2, or used as is.
Value rowParam(BuildContext &c, Value v, bool rows) {
  if (!v) return v;
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  if (rows && t.getRank() == 1) return reshapeTo(c, v, {t.getDimSize(0), 1}, {0, -1});
  return v;
}
/// Zero point / scale of the column operand B: one value, per column ([N]), or N-D.
Value colParam(BuildContext &c, Value v) { return rowParam(c, v, false); }

LogicalResult decomposeMatMulInteger(BuildContext &c, MatMulIntegerOp op, SmallVectorImpl<Value> &results) {
  bool rows = typeOf(op.getA()).getRank() >= 2;
  Value za = rowParam(c, op.getAZeroPoint(), rows), zb = colParam(c, op.getBZeroPoint());
  auto a = centered(c, op.getA(), za);
  if (failed(a)) return failure();
  auto b = centered(c, op.getB(), zb);
  if (failed(b)) return failure();
  auto y = exactMatMul(c, *a, *b, maxAbsCentered(elementOf(op.getA()), op.getAZeroPoint()),
                       maxAbsCentered(elementOf(op.getB()), op.getBZeroPoint()));
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

/// acc * (sx * sw / sy) + zy, rounded half to even and saturated to `out`
/// (the QLinear* requantization; float64 like the reference).
FailureOr<Value> requantize(BuildContext &c, Value acc, Value sx, Value sw, Value sy, Value zy, Type out) {
  SmallVector<Value> ins = {acc, sx, sw, sy};
  if (zy) ins.push_back(zy);
  Type sxe = elementOf(sx), swe = elementOf(sw), sye = elementOf(sy);
  Type st = sxe == swe && swe == sye ? sxe : c.b.getF32Type();
  return buildElementwise(c, ins, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    FloatCalc fc{b, l, st};
    Value m = fc.div(fc.mul(fc.in(a[1], sxe), fc.in(a[2], swe)), fc.in(a[3], sye));
    Type f64 = b.getF64Type();
    Value d =
        b.create<arith::MulFOp>(l, b.create<arith::SIToFPOp>(l, f64, a[0]), castScalar(b, l, m, fc.compute(), f64));
    return quantizeToInt(b, l, d, a.size() > 4 ? a[4] : Value(), zy ? elementOf(zy) : Type(), out);
  });
}

LogicalResult decomposeQLinearMatMul(BuildContext &c, QLinearMatMulOp op, SmallVectorImpl<Value> &results) {
  bool rows = typeOf(op.getA()).getRank() >= 2;
  Value za = rowParam(c, op.getAZeroPoint(), rows), zb = colParam(c, op.getBZeroPoint());
  Value sa = rowParam(c, op.getAScale(), rows), sb = colParam(c, op.getBScale());
  Value sy = rowParam(c, op.getYScale(), rows), zy = rowParam(c, op.getYZeroPoint(), rows);
  auto a = centered(c, op.getA(), za);
  if (failed(a)) return failure();
  auto b = centered(c, op.getB(), zb);
  if (failed(b)) return failure();
  auto acc = exactMatMul(c, *a, *b, maxAbsCentered(elementOf(op.getA()), op.getAZeroPoint()),
                         maxAbsCentered(elementOf(op.getB()), op.getBZeroPoint()));
  if (failed(acc)) return failure();
  auto y = requantize(c, *acc, sa, sb, sy, zy, elementOf(op.getResult()));
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

/// The window of an integer conv op.
struct Window {
  DenseI64ArrayAttr strides, dilations, pads;
  int64_t group;
};

Value conv2D(BuildContext &c, Value x, Value w, const Window &win) {
  return c.b.create<ConvOp>(c.loc, x, w, Value(), Value(), win.strides, win.dilations, win.pads,
                            c.b.getI64IntegerAttr(win.group), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                            c.b.getF32FloatAttr(0));
}

/// Exact int32 2-D convolution of float32 tensors holding integers (x padded
/// with zeros, i.e. with the zero point before centering), plus an optional
/// int32 bias.
FailureOr<Value> exactConv(BuildContext &c, Value x, Value w, Value bias, const Window &win, int64_t maxX,
                           int64_t maxW) {
  auto xt = typeOf(x), wt = typeOf(w);
  int64_t cpg = wt.getDimSize(1), group = win.group;
  int64_t len = chunkLength(maxX, maxW, wt.getDimSize(2) * wt.getDimSize(3));
  SmallVector<Value> parts;
  if (cpg <= len) {
    parts.push_back(conv2D(c, x, w, win));
  } else {
    // Split every group's input channels into chunks of `len`: x viewed as
    // [N, group, C/group, H, W] and split along the per-group channel dim,
    // w split along its input-channel dim; each chunk is a grouped conv.
    if (xt.isDynamicDim(1)) return c.fail("the input channel dim must be static");
    Value xg = x;
    if (group > 1)
      xg = reshapeTo(c, x, {xt.getDimSize(0), group, cpg, xt.getDimSize(2), xt.getDimSize(3)}, {0, -1, -1, 2, 3});
    auto xs = splitInto(c, xg, group > 1 ? 2 : 1, cpg, len), ws = splitInto(c, w, 1, cpg, len);
    for (size_t k = 0; k < xs.size(); ++k) {
      Value xk = xs[k];
      if (group > 1) {
        auto kt = typeOf(xk);
        xk = reshapeTo(c, xk, {kt.getDimSize(0), group * kt.getDimSize(2), kt.getDimSize(3), kt.getDimSize(4)},
                       {0, -1, 3, 4});
      }
      parts.push_back(conv2D(c, xk, ws[k], win));
    }
  }
  auto acc = sumAsInt32(c, parts);
  if (failed(acc) || !bias) return acc;
  Value b4 = reshapeTo(c, bias, {wt.getDimSize(0), 1, 1}, {-1, -1, -1});
  return buildElementwise(c, {*acc, b4}, c.b.getI32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::AddIOp>(l, a[0], a[1]);
  });
}

/// Per-output-channel weight zero point / scale: one value, or [M] -> [M, 1, 1, 1]
/// (weights) / [M, 1, 1] (outputs, NCHW).
Value channelParam(BuildContext &c, Value v, int64_t trailing) {
  if (!v) return v;
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  SmallVector<int64_t> shape(trailing + 1, 1), sources(trailing + 1, -1);
  shape[0] = t.getDimSize(0);
  sources[0] = 0;
  return reshapeTo(c, v, shape, sources);
}

template <typename ConvOpT>
Window windowOf(ConvOpT op) {
  return {op.getStridesAttr(), op.getDilationsAttr(), op.getPadsAttr(), (int64_t)op.getGroup()};
}

LogicalResult decomposeConvInteger(BuildContext &c, ConvIntegerOp op, SmallVectorImpl<Value> &results) {
  Value zx = channelParam(c, op.getXZeroPoint(), 0), zw = channelParam(c, op.getWZeroPoint(), 3);
  auto x = centered(c, op.getX(), zx);
  if (failed(x)) return failure();
  auto w = centered(c, op.getW(), zw);
  if (failed(w)) return failure();
  auto y = exactConv(c, *x, *w, Value(), windowOf(op), maxAbsCentered(elementOf(op.getX()), op.getXZeroPoint()),
                     maxAbsCentered(elementOf(op.getW()), op.getWZeroPoint()));
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

LogicalResult decomposeQLinearConv(BuildContext &c, QLinearConvOp op, SmallVectorImpl<Value> &results) {
  Value zx = channelParam(c, op.getXZeroPoint(), 0), zw = channelParam(c, op.getWZeroPoint(), 3);
  Value sx = channelParam(c, op.getXScale(), 0), sw = channelParam(c, op.getWScale(), 2);
  Value sy = channelParam(c, op.getYScale(), 0), zy = channelParam(c, op.getYZeroPoint(), 0);
  auto x = centered(c, op.getX(), zx);
  if (failed(x)) return failure();
  auto w = centered(c, op.getW(), zw);
  if (failed(w)) return failure();
  auto acc = exactConv(c, *x, *w, op.getBias(), windowOf(op), maxAbsCentered(elementOf(op.getX()), op.getXZeroPoint()),
                       maxAbsCentered(elementOf(op.getW()), op.getWZeroPoint()));
  if (failed(acc)) return failure();
  auto y = requantize(c, *acc, sx, sw, sy, zy, elementOf(op.getResult()));
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

struct DecomposeQuantizationPass : v4f::impl::DecomposeQuantizationBase<DecomposeQuantizationPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(decomposeAll<QuantizeOp>(root, decomposeQuantize)) ||
        failed(decomposeAll<DequantizeOp>(root, decomposeDequantize)) ||
        failed(decomposeAll<MatMulIntegerOp>(root, decomposeMatMulInteger)) ||
        failed(decomposeAll<QLinearMatMulOp>(root, decomposeQLinearMatMul)) ||
        failed(decomposeAll<ConvIntegerOp>(root, decomposeConvInteger)) ||
        failed(decomposeAll<QLinearConvOp>(root, decomposeQLinearConv)))
      signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeQuantizationPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<DecomposePattern<QuantizeOp>>(ctx, decomposeQuantize);
  patterns.add<DecomposePattern<DequantizeOp>>(ctx, decomposeDequantize);
  patterns.add<DecomposePattern<MatMulIntegerOp>>(ctx, decomposeMatMulInteger);
  patterns.add<DecomposePattern<QLinearMatMulOp>>(ctx, decomposeQLinearMatMul);
  patterns.add<DecomposePattern<ConvIntegerOp>>(ctx, decomposeConvInteger);
  patterns.add<DecomposePattern<QLinearConvOp>>(ctx, decomposeQLinearConv);
}

std::unique_ptr<Pass> v4f::createDecomposeQuantizationPass() { return std::make_unique<DecomposeQuantizationPass>(); }
