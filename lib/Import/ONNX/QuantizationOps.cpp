//===- QuantizationOps.cpp - ONNX quantization operators as compositions --===//
//
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear import as
// v4f.elementwise ops (plus v4f.reduce for the dynamic range, and a
// broadcast/reshape/split that repeats blocked scales / zero points along the
// block axis):
//
//   QuantizeLinear    y = saturate(roundeven(x / scale) + zero_point)   integer targets
//                     y = cast<float8>(x / scale, saturate)             float8 targets
//   DequantizeLinear  y = (x - zero_point) * scale
//
// Scales and zero points are per-tensor (one element), per-axis (1-D along
// `axis`) or blocked (`block_size`: the input's shape with
// ceil(dim / block_size) along `axis`), as in onnx.reference's
// _quant_utils.reshape_input.
//
// The integer products (MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv) run on the float32 v4f.matmul / v4f.conv: both operands are
// the exact integers (x - zero_point) held in float32, and a float32 sum of
// integers is exact while every partial sum stays below 2^24 in magnitude.
// The importer bounds |partial sum| by K * max|a - za| * max|b - zb| from the
// element types (and constant zero points); when that can reach 2^24 the
// contraction is split along K into chunks that cannot, each chunk's float32
// result is converted to int32 exactly, and the chunks are summed in int32.
// So the int32 results are exact for every input. A dynamic K (matmul) has no
// static bound and runs as one float32 matmul: exact only while the sums stay
// below 2^24. Convolutions split the input channels of each group. The
// requantization of QLinearMatMul / QLinearConv
// (acc * (a_scale * b_scale / y_scale) + y_zero_point) is computed in float64
// like the ONNX reference (numpy promotes int32 * float32 to float64).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

constexpr int64_t kMaxOpset = 28;
constexpr int64_t kDyn = ShapedType::kDynamic;
/// float32 represents every integer of magnitude <= 2^24 exactly.
constexpr int64_t kExactF32 = int64_t(1) << 24;

Type elementOf(Value v) { return typeOf(v).getElementType(); }
std::string noCheck(const NodeAttrs &, int64_t) { return ""; }

bool isFloat8(Type t) { return llvm::isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType>(t); }
bool isNativeFloat(Type t) { return t.isF16() || t.isF32() || t.isF64(); }
bool isScaleType(Type t) { return isNativeFloat(t) || t.isBF16(); }

/// [min, max] of a quantized integer type (8/16/4/2-bit, signed or unsigned).
std::optional<std::pair<int64_t, int64_t>> intRange(Type t) {
  auto it = llvm::dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() == 1 || it.getWidth() > 16) return std::nullopt;
  unsigned w = it.getWidth();
  if (it.isUnsigned()) return std::make_pair<int64_t, int64_t>(0, (int64_t(1) << w) - 1);
  return std::make_pair(-(int64_t(1) << (w - 1)), (int64_t(1) << (w - 1)) - 1);
}

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

Value fconst(OpBuilder &b, Location l, Type t, double v) { return b.create<arith::ConstantOp>(l, b.getFloatAttr(t, v)); }

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

/// Scale or zero point input `i`, reshaped / expanded so that it broadcasts
/// against `x` for quantization axis `axis` (normalized, or -1 when out of
/// range) and `blockSize` (0: not blocked).
FailureOr<Value> quantParam(NodeContext &c, size_t i, RankedTensorType x, int64_t axis, int64_t blockSize,
                            const std::string &what) {
  Value v = c.input(i);
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  if (axis < 0)
    return c.fail("axis " + std::to_string(c.attrs.getInt("axis", 1)) + " is out of range for the rank-" +
                  std::to_string(x.getRank()) + " input (" + what + " is not a single value)");
  int64_t rank = x.getRank(), D = x.getDimSize(axis);
  if (blockSize > 0) {
    if (t.getRank() != rank)
      return c.fail("blocked quantization: " + what + " must have the input's rank (" + std::to_string(rank) + ")");
    if (D == kDyn) return c.fail("blocked quantization needs a static input dim along the axis");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && (t.getDimSize(d) == kDyn || t.getDimSize(d) != x.getDimSize(d)))
        return c.fail("blocked quantization: " + what + " must match the input's static shape except along axis " +
                      std::to_string(axis));
    int64_t blocks = (D + blockSize - 1) / blockSize;
    if (t.getDimSize(axis) != blocks)
      return c.fail("blocked quantization: " + what + " has " + std::to_string(t.getDimSize(axis)) +
                    " blocks along axis " + std::to_string(axis) + ", expected ceil(" + std::to_string(D) + " / " +
                    std::to_string(blockSize) + ") = " + std::to_string(blocks));
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
    SmallVector<int64_t> head(merged), tail(merged);
    head[axis] = D;
    tail[axis] = blocks * blockSize - D;
    auto parts = c.b.create<SplitOp>(c.loc, TypeRange{RankedTensorType::get(head, t.getElementType()),
                                                      RankedTensorType::get(tail, t.getElementType())},
                                     full, Value(), c.b.getI64IntegerAttr(axis),
                                     c.b.getDenseI64ArrayAttr({D, blocks * blockSize - D}));
    return parts.getResult(0);
  }
  if (t.getRank() != 1)
    return c.fail(what + " must be a scalar or a 1-D tensor (per-axis quantization) unless block_size is set");
  int64_t n = t.getDimSize(0);
  if (D != kDyn && n != kDyn && D != n)
    return c.fail(what + " has " + std::to_string(n) + " elements but the input has " + std::to_string(D) +
                  " along axis " + std::to_string(axis));
  SmallVector<int64_t> shape(rank, 1), sources(rank, -1);
  shape[axis] = n;
  sources[axis] = 0;
  return reshapeTo(c, v, shape, sources);
}

struct QuantAxes {
  int64_t axis;      // normalized, -1 when out of range
  int64_t blockSize; // 0 when not blocked
};

FailureOr<QuantAxes> quantAxes(NodeContext &c, RankedTensorType x) {
  int64_t axis = c.attrs.getInt("axis", 1), rank = x.getRank();
  int64_t bs = c.opset >= 21 ? c.attrs.getInt("block_size", 0) : 0;
  if (bs < 0) return c.fail("block_size must be non-negative");
  return QuantAxes{axis >= -rank && axis < rank ? (axis < 0 ? axis + rank : axis) : -1, bs};
}

/// A float8 zero point must be 0 (the reference ignores it); checked when constant.
LogicalResult checkFloat8ZeroPoint(NodeContext &c, size_t i) {
  if (!c.hasInput(i)) return success();
  if (auto cst = c.constantInput(i))
    for (const APFloat &v : cst->getValues<APFloat>())
      if (!v.isZero()) return c.fail("a float8 zero point must be 0");
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear
//===----------------------------------------------------------------------===//

std::string checkQuantize(const NodeAttrs &a, int64_t opset) {
  if (opset >= 21 && a.getInt("block_size", 0) < 0) return "block_size must be non-negative";
  return "";
}

/// Integer quantization of a float scalar `q` (already x / scale, in a
/// native float type): roundeven, + zero point, saturate to `target`.
Value quantizeToInt(OpBuilder &b, Location l, Value q, Value zp, Type zpType, Type target) {
  auto range = *intRange(target);
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

LogicalResult importQuantizeLinear(NodeContext &c) {
  auto xt = c.inputType(0);
  Type xe = xt.getElementType(), se = c.inputType(1).getElementType();
  if (!isScaleType(xe) && !xe.isInteger(32))
    return c.fail("input x must be float32, float16, bfloat16 or int32 (got " + typeName(xe) + ")");
  if (!isScaleType(se)) return c.fail("y_scale must be a float type (got " + typeName(se) + ")");
  // Output type: the zero point's, else output_dtype, else uint8.
  Type out = c.b.getIntegerType(8, /*isSigned=*/false);
  if (c.attrs.has("output_dtype") && c.attrs.getInt("output_dtype", 0) != 0) {
    int64_t code = c.attrs.getInt("output_dtype", 0);
    out = importElementType(c.g.ctx, int32_t(code));
    if (!out) return c.fail("output_dtype " + onnxTypeName(int32_t(code)) + " is not supported");
    if (c.hasInput(2) && elementOf(c.input(2)) != out)
      return c.fail("output_dtype disagrees with the zero point's element type");
  }
  Type zpe;
  if (c.hasInput(2)) out = zpe = elementOf(c.input(2));
  bool f8 = isFloat8(out);
  if (!f8 && !intRange(out))
    return c.fail("quantizing to " + typeName(out) +
                  " is not supported (uint8/int8/uint16/int16/uint4/int4/uint2/int2/float8 are)");
  auto axes = quantAxes(c, xt);
  if (failed(axes)) return failure();
  auto scale = quantParam(c, 1, xt, axes->axis, axes->blockSize, "y_scale");
  if (failed(scale)) return failure();
  SmallVector<Value> ins = {c.input(0), *scale};
  if (c.hasInput(2) && !f8) {
    auto zp = quantParam(c, 2, xt, axes->axis, axes->blockSize, "y_zero_point");
    if (failed(zp)) return failure();
    ins.push_back(*zp);
  }
  if (f8 && failed(checkFloat8ZeroPoint(c, 2))) return failure();
  // x / scale in numpy's type, or in `precision` when given (opset 23+).
  Type dt = divisionType(xe, se);
  if (c.attrs.has("precision") && c.attrs.getInt("precision", 0) != 0) {
    int64_t code = c.attrs.getInt("precision", 0);
    dt = importElementType(c.g.ctx, int32_t(code));
    if (!dt || !isScaleType(dt)) return c.fail("precision " + onnxTypeName(int32_t(code)) + " is not supported");
  }
  bool saturate = c.attrs.getInt("saturate", 1) != 0;
  auto y = buildElementwise(c, ins, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    FloatCalc fc{b, l, dt};
    Value q = fc.div(fc.in(a[0], xe), fc.in(a[1], se));
    if (f8) return castScalar(b, l, q, fc.compute(), out, saturate);
    return quantizeToInt(b, l, q, a.size() > 2 ? a[2] : Value(), zpe, out);
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

LogicalResult importDequantizeLinear(NodeContext &c) {
  auto xt = c.inputType(0);
  Type xe = xt.getElementType(), se = c.inputType(1).getElementType();
  bool f8 = isFloat8(xe);
  if (!f8 && !intRange(xe) && !xe.isInteger(32))
    return c.fail("dequantizing " + typeName(xe) +
                  " is not supported (uint8/int8/uint16/int16/int32/uint4/int4/uint2/int2/float8 are)");
  if (!isScaleType(se)) return c.fail("x_scale must be a float type (got " + typeName(se) + ")");
  Type out = se;
  if (c.attrs.has("output_dtype") && c.attrs.getInt("output_dtype", 0) != 0) {
    int64_t code = c.attrs.getInt("output_dtype", 0);
    out = importElementType(c.g.ctx, int32_t(code));
    if (!out || !isScaleType(out)) return c.fail("output_dtype " + onnxTypeName(int32_t(code)) + " is not supported");
  }
  bool hasZp = c.hasInput(2) && !f8;
  if (f8 && failed(checkFloat8ZeroPoint(c, 2))) return failure();
  if (hasZp && elementOf(c.input(2)) != xe)
    return c.fail("x_zero_point must have x's element type (" + typeName(xe) + "), got " +
                  typeName(elementOf(c.input(2))));
  auto axes = quantAxes(c, xt);
  if (failed(axes)) return failure();
  auto scale = quantParam(c, 1, xt, axes->axis, axes->blockSize, "x_scale");
  if (failed(scale)) return failure();
  SmallVector<Value> ins = {c.input(0), *scale};
  if (hasZp) {
    auto zp = quantParam(c, 2, xt, axes->axis, axes->blockSize, "x_zero_point");
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
  c.setOutput(0, *y);
  return success();
}

LogicalResult importDynamicQuantizeLinear(NodeContext &c) {
  auto xt = c.inputType(0);
  if (!xt.getElementType().isF32()) return c.fail("input x must be float32");
  Type f32 = c.b.getF32Type(), u8 = c.b.getIntegerType(8, false);
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < xt.getRank(); ++i) all.push_back(i);
  auto scalar = RankedTensorType::get({}, f32);
  auto reduce = [&](const char *kind) -> Value {
    return c.b.create<ReduceOp>(c.loc, scalar, c.input(0), Value(), c.b.getStringAttr(kind),
                                c.b.getDenseI64ArrayAttr(all), c.b.getBoolAttr(false));
  };
  Value mx = reduce("max"), mn = reduce("min");
  // scale = (max(0, max x) - min(0, min x)) / 255, or 1 / 255 when the range is empty.
  auto scale = buildElementwise(c, {mx, mn}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value zero = fconst(b, l, f32, 0);
    Value hi = b.create<arith::MaximumFOp>(l, a[0], zero), lo = b.create<arith::MinimumFOp>(l, a[1], zero);
    Value same = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, hi, lo);
    Value range = b.create<arith::SelectOp>(l, same, fconst(b, l, f32, 1), b.create<arith::SubFOp>(l, hi, lo));
    return b.create<arith::DivFOp>(l, range, fconst(b, l, f32, 255));
  });
  if (failed(scale)) return failure();
  // zero point = roundeven(clamp(0 - min(0, min x) / scale, 0, 255)).
  auto zp = buildElementwise(c, {mn, *scale}, u8, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value zero = fconst(b, l, f32, 0);
    Value lo = b.create<arith::MinimumFOp>(l, a[0], zero);
    Value z = b.create<arith::SubFOp>(l, zero, b.create<arith::DivFOp>(l, lo, a[1]));
    z = b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, z, zero), fconst(b, l, f32, 255));
    return b.create<arith::FPToUIOp>(l, b.getI8Type(), b.create<math::RoundEvenOp>(l, z));
  });
  if (failed(zp)) return failure();
  auto y = buildElementwise(c, {c.input(0), *scale, *zp}, u8, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value q = b.create<arith::DivFOp>(l, a[0], a[1]);
    return quantizeToInt(b, l, q, a[2], u8, u8);
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  if (c.outputUsed(1)) c.setOutput(1, *scale);
  if (c.outputUsed(2)) c.setOutput(2, *zp);
  return success();
}

//===----------------------------------------------------------------------===//
// Integer matmul / conv
//===----------------------------------------------------------------------===//

/// Largest |v - zero_point| for a v of element type `t` and zero point input
/// `zpIndex` (absent: 0; constant: its values; else any value of `t`).
int64_t maxAbsCentered(NodeContext &c, Type t, size_t zpIndex) {
  auto range = *intRange(t);
  int64_t zlo = 0, zhi = 0;
  if (c.hasInput(zpIndex)) {
    zlo = range.first, zhi = range.second;
    if (auto cst = c.constantInput(zpIndex)) {
      zlo = INT64_MAX, zhi = INT64_MIN;
      for (const APInt &v : cst->getValues<APInt>()) {
        int64_t z = t.isUnsignedInteger() ? (int64_t)v.getZExtValue() : v.getSExtValue();
        zlo = std::min(zlo, z), zhi = std::max(zhi, z);
      }
      if (zlo > zhi) zlo = zhi = 0;
    }
  }
  return std::max(std::abs(range.first - zhi), std::abs(range.second - zlo));
}

/// (v - zero_point) as exact float32 integers. `zp` is already shaped to broadcast.
FailureOr<Value> centered(NodeContext &c, Value v, Value zp) {
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
FailureOr<Value> sumAsInt32(NodeContext &c, ArrayRef<Value> parts) {
  return buildElementwise(c, parts, c.b.getI32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value acc;
    for (Value p : a) {
      Value i = b.create<arith::FPToSIOp>(l, b.getI32Type(), p);
      acc = acc ? (Value)b.create<arith::AddIOp>(l, acc, i) : i;
    }
    return acc;
  });
}

/// Number of K chunks so that each chunk's float32 partial sums stay exact.
int64_t chunkLength(int64_t maxA, int64_t maxB, int64_t perK) {
  int64_t per = std::max<int64_t>(1, maxA * maxB * perK);
  return std::max<int64_t>(1, kExactF32 / per);
}

/// Splits `v` along `axis` into pieces of at most `len`.
SmallVector<Value> splitInto(NodeContext &c, Value v, int64_t axis, int64_t total, int64_t len) {
  SmallVector<int64_t> sizes;
  for (int64_t k = 0; k < total; k += len) sizes.push_back(std::min(len, total - k));
  return splitBy(c, v, axis, sizes);
}

/// Exact int32 matmul of two float32 tensors holding integers bounded by
/// maxA / maxB in magnitude (see the file comment).
FailureOr<Value> exactMatMul(NodeContext &c, Value a, Value b, int64_t maxA, int64_t maxB) {
  auto ta = typeOf(a), tb = typeOf(b);
  int64_t axisA = ta.getRank() - 1, axisB = tb.getRank() == 1 ? 0 : tb.getRank() - 2;
  int64_t K = ta.getDimSize(axisA);
  if (K == kDyn) K = tb.getDimSize(axisB);
  SmallVector<Value> parts;
  if (K == kDyn) {
    // No static bound: one float32 matmul (exact while |sums| < 2^24).
    Value r;
    if (failed(importMatMulValues(c, a, b, r))) return failure();
    parts.push_back(r);
  } else {
    int64_t len = chunkLength(maxA, maxB, 1);
    auto as = splitInto(c, a, axisA, K, len), bs = splitInto(c, b, axisB, K, len);
    for (size_t k = 0; k < as.size(); ++k) {
      Value r;
      if (failed(importMatMulValues(c, as[k], bs[k], r))) return failure();
      parts.push_back(r);
    }
  }
  return sumAsInt32(c, parts);
}

/// Zero point / scale of the row operand A (or of the output Y): one value,
/// per row (1-D [M] -> [M, 1]), or an N-D tensor used as is.
FailureOr<Value> rowParam(NodeContext &c, size_t i) {
  Value v = c.input(i);
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  if (t.getRank() == 1) return reshapeTo(c, v, {t.getDimSize(0), 1}, {0, -1});
  return v;
}
/// Zero point / scale of the column operand B: one value, per column ([N]), or N-D.
FailureOr<Value> colParam(NodeContext &c, size_t i) {
  Value v = c.input(i);
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  return v;
}

LogicalResult check8Bit(NodeContext &c, size_t i, const char *name) {
  Type t = elementOf(c.input(i));
  if (!t.isInteger(8)) return c.fail(std::string(name) + " must be int8 or uint8 (got " + typeName(t) + ")");
  return success();
}

LogicalResult checkZeroPoint(NodeContext &c, size_t zp, size_t of, const char *name) {
  if (c.hasInput(zp) && elementOf(c.input(zp)) != elementOf(c.input(of)))
    return c.fail(std::string(name) + " must have the element type of '" + c.node.input(of) + "'");
  return success();
}

LogicalResult importMatMulInteger(NodeContext &c) {
  if (failed(check8Bit(c, 0, "A")) || failed(check8Bit(c, 1, "B"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "a_zero_point")) || failed(checkZeroPoint(c, 3, 1, "b_zero_point")))
    return failure();
  Value za, zb;
  if (c.hasInput(2)) {
    auto r = c.inputType(0).getRank() == 1 ? colParam(c, 2) : rowParam(c, 2);
    if (failed(r)) return failure();
    za = *r;
  }
  if (c.hasInput(3)) {
    auto r = colParam(c, 3);
    if (failed(r)) return failure();
    zb = *r;
  }
  auto a = centered(c, c.input(0), za);
  if (failed(a)) return failure();
  auto b = centered(c, c.input(1), zb);
  if (failed(b)) return failure();
  auto y = exactMatMul(c, *a, *b, maxAbsCentered(c, elementOf(c.input(0)), 2), maxAbsCentered(c, elementOf(c.input(1)), 3));
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

/// acc * (sx * sw / sy) + zy, rounded half to even and saturated to `out`
/// (the QLinear* requantization; float64 like the reference).
FailureOr<Value> requantize(NodeContext &c, Value acc, Value sx, Value sw, Value sy, Value zy, Type out) {
  SmallVector<Value> ins = {acc, sx, sw, sy};
  if (zy) ins.push_back(zy);
  Type sxe = elementOf(sx), swe = elementOf(sw), sye = elementOf(sy);
  Type st = sxe == swe && swe == sye ? sxe : c.b.getF32Type();
  return buildElementwise(c, ins, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    FloatCalc fc{b, l, st};
    Value m = fc.div(fc.mul(fc.in(a[1], sxe), fc.in(a[2], swe)), fc.in(a[3], sye));
    Type f64 = b.getF64Type();
    Value d = b.create<arith::MulFOp>(l, b.create<arith::SIToFPOp>(l, f64, a[0]), castScalar(b, l, m, fc.compute(), f64));
    return quantizeToInt(b, l, d, a.size() > 4 ? a[4] : Value(), zy ? elementOf(zy) : Type(), out);
  });
}

LogicalResult checkScale(NodeContext &c, size_t i, const char *name) {
  Type t = elementOf(c.input(i));
  if (!isScaleType(t)) return c.fail(std::string(name) + " must be a float type (got " + typeName(t) + ")");
  return success();
}

LogicalResult importQLinearMatMul(NodeContext &c) {
  for (size_t i : {0, 1, 2, 3, 4, 5, 6})
    if (!c.hasInput(i)) return c.fail("inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point and y_scale are required");
  if (isFloat8(elementOf(c.input(0))) || isFloat8(elementOf(c.input(3))))
    return c.fail("float8 QLinearMatMul is not supported");
  if (failed(check8Bit(c, 0, "a")) || failed(check8Bit(c, 3, "b"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "a_zero_point")) || failed(checkZeroPoint(c, 5, 3, "b_zero_point")))
    return failure();
  for (auto [i, n] : {std::pair<size_t, const char *>{1, "a_scale"}, {4, "b_scale"}, {6, "y_scale"}})
    if (failed(checkScale(c, i, n))) return failure();
  Type out = c.hasInput(7) ? elementOf(c.input(7)) : elementOf(c.input(0));
  if (!out.isInteger(8)) return c.fail("y_zero_point must be int8 or uint8");
  bool aVec = c.inputType(0).getRank() == 1;
  auto za = aVec ? colParam(c, 2) : rowParam(c, 2);
  auto zb = colParam(c, 5);
  auto sa = aVec ? colParam(c, 1) : rowParam(c, 1);
  auto sb = colParam(c, 4);
  auto sy = aVec ? colParam(c, 6) : rowParam(c, 6);
  FailureOr<Value> zy = Value();
  if (c.hasInput(7)) zy = aVec ? colParam(c, 7) : rowParam(c, 7);
  if (failed(za) || failed(zb) || failed(sa) || failed(sb) || failed(sy) || failed(zy)) return failure();
  auto a = centered(c, c.input(0), *za);
  if (failed(a)) return failure();
  auto b = centered(c, c.input(3), *zb);
  if (failed(b)) return failure();
  auto acc = exactMatMul(c, *a, *b, maxAbsCentered(c, elementOf(c.input(0)), 2),
                         maxAbsCentered(c, elementOf(c.input(3)), 5));
  if (failed(acc)) return failure();
  auto y = requantize(c, *acc, *sa, *sb, *sy, *zy, out);
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

/// Exact int32 2-D convolution of float32 tensors holding integers (x padded
/// with zeros, i.e. with the zero point before centering), plus an optional
/// int32 bias.
FailureOr<Value> exactConv(NodeContext &c, Value x, Value w, Value bias, int64_t maxX, int64_t maxW) {
  auto xt = typeOf(x), wt = typeOf(w);
  if (xt.getRank() != 4 || wt.getRank() != 4)
    return c.fail("only 2-D convolution (rank-4 input and weight) is supported");
  if (!wt.hasStaticShape()) return c.fail("the weight must have a static shape");
  int64_t cpg = wt.getDimSize(1), group = c.attrs.getInt("group", 1);
  int64_t len = chunkLength(maxX, maxW, wt.getDimSize(2) * wt.getDimSize(3));
  SmallVector<Value> parts;
  if (cpg <= len) {
    auto r = buildConv2D(c, x, w, Value());
    if (failed(r)) return failure();
    parts.push_back(*r);
  } else {
    // Split every group's input channels into chunks of `len`: x viewed as
    // [N, group, C/group, H, W] and split along the per-group channel dim,
    // w split along its input-channel dim; each chunk is a grouped conv.
    if (xt.isDynamicDim(1)) return c.fail("the input channel dim must be static");
    if (group <= 0 || xt.getDimSize(1) != cpg * group)
      return c.fail("input has " + std::to_string(xt.getDimSize(1)) + " channels but weight*group expects " +
                    std::to_string(cpg * group));
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
      auto r = buildConv2D(c, xk, ws[k], Value());
      if (failed(r)) return failure();
      parts.push_back(*r);
    }
  }
  auto acc = sumAsInt32(c, parts);
  if (failed(acc) || !bias) return acc;
  auto bt = typeOf(bias);
  if (!bt.getElementType().isInteger(32) || bt.getRank() != 1 || bt.getDimSize(0) != wt.getDimSize(0))
    return c.fail("B must be an int32 tensor of shape [M]");
  Value b4 = reshapeTo(c, bias, {wt.getDimSize(0), 1, 1}, {-1, -1, -1});
  return buildElementwise(c, {*acc, b4}, c.b.getI32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::AddIOp>(l, a[0], a[1]);
  });
}

/// Per-output-channel weight zero point / scale: one value, or [M] -> [M, 1, 1, 1]
/// (weights) / [M, 1, 1] (outputs, NCHW).
FailureOr<Value> channelParam(NodeContext &c, size_t i, int64_t trailing) {
  Value v = c.input(i);
  auto t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1) return t.getRank() == 0 ? v : reshapeTo(c, v, {}, {});
  if (t.getRank() != 1) return c.fail("'" + c.node.input(i) + "' must be a scalar or a 1-D per-output-channel tensor");
  SmallVector<int64_t> shape(trailing + 1, 1), sources(trailing + 1, -1);
  shape[0] = t.getDimSize(0);
  sources[0] = 0;
  return reshapeTo(c, v, shape, sources);
}

LogicalResult importConvInteger(NodeContext &c) {
  if (failed(check8Bit(c, 0, "x")) || failed(check8Bit(c, 1, "w"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "x_zero_point")) || failed(checkZeroPoint(c, 3, 1, "w_zero_point")))
    return failure();
  if (c.hasInput(2) && (!typeOf(c.input(2)).hasStaticShape() || typeOf(c.input(2)).getNumElements() != 1))
    return c.fail("x_zero_point must be a single value");
  Value zx, zw;
  if (c.hasInput(2)) zx = *channelParam(c, 2, 0);
  if (c.hasInput(3)) {
    auto r = channelParam(c, 3, 3);
    if (failed(r)) return failure();
    zw = *r;
  }
  auto x = centered(c, c.input(0), zx);
  if (failed(x)) return failure();
  auto w = centered(c, c.input(1), zw);
  if (failed(w)) return failure();
  auto y = exactConv(c, *x, *w, Value(), maxAbsCentered(c, elementOf(c.input(0)), 2),
                     maxAbsCentered(c, elementOf(c.input(1)), 3));
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

LogicalResult importQLinearConv(NodeContext &c) {
  for (size_t i : {0, 1, 2, 3, 4, 5, 6})
    if (!c.hasInput(i)) return c.fail("inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point and y_scale are required");
  if (failed(check8Bit(c, 0, "x")) || failed(check8Bit(c, 3, "w"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "x_zero_point")) || failed(checkZeroPoint(c, 5, 3, "w_zero_point")))
    return failure();
  for (auto [i, n] : {std::pair<size_t, const char *>{1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}})
    if (failed(checkScale(c, i, n))) return failure();
  Type out = c.hasInput(7) ? elementOf(c.input(7)) : elementOf(c.input(0));
  if (!out.isInteger(8)) return c.fail("y_zero_point must be int8 or uint8");
  for (size_t i : {1, 2, 6, 7})
    if (c.hasInput(i) && (!typeOf(c.input(i)).hasStaticShape() || typeOf(c.input(i)).getNumElements() != 1))
      return c.fail("'" + c.node.input(i) + "' must be a single value (per-tensor)");
  auto zx = channelParam(c, 2, 0), zw = channelParam(c, 5, 3), sx = channelParam(c, 1, 0),
       sw = channelParam(c, 4, 2), sy = channelParam(c, 6, 0);
  FailureOr<Value> zy = Value();
  if (c.hasInput(7)) zy = channelParam(c, 7, 0);
  if (failed(zx) || failed(zw) || failed(sx) || failed(sw) || failed(sy) || failed(zy)) return failure();
  auto x = centered(c, c.input(0), *zx);
  if (failed(x)) return failure();
  auto w = centered(c, c.input(3), *zw);
  if (failed(w)) return failure();
  auto acc = exactConv(c, *x, *w, c.hasInput(8) ? c.input(8) : Value(), maxAbsCentered(c, elementOf(c.input(0)), 2),
                       maxAbsCentered(c, elementOf(c.input(3)), 5));
  if (failed(acc)) return failure();
  auto y = requantize(c, *acc, *sx, *sw, *sy, *zy, out);
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

} // namespace

void addQuantizationImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["QuantizeLinear"] = {10, kMaxOpset, checkQuantize, importQuantizeLinear};
  t["DequantizeLinear"] = {10, kMaxOpset, checkQuantize, importDequantizeLinear};
  t["DynamicQuantizeLinear"] = {11, kMaxOpset, noCheck, importDynamicQuantizeLinear};
  t["MatMulInteger"] = {10, kMaxOpset, noCheck, importMatMulInteger};
  t["QLinearMatMul"] = {10, kMaxOpset, noCheck, importQLinearMatMul};
  t["ConvInteger"] = {10, kMaxOpset, checkWindowAttrs, importConvInteger};
  t["QLinearConv"] = {10, kMaxOpset, checkWindowAttrs, importQLinearConv};
}

} // namespace v4f
