//===- ScalarCast.cpp - ONNX Cast semantics on one scalar -----------------===//
//
// castScalar builds, inside a v4f.elementwise body, the conversion of one
// element between any two element types the importer knows. Storage-only
// types (bfloat16, float8, [u]int4, [u]int2) are integers inside bodies
// (bodyScalarType); their conversions are written out here as integer and
// float arithmetic, so no LLVM support for those formats is needed:
//   - float8 / bfloat16 <-> float32: exact decode; round-to-nearest-even
//     encode with the ONNX `saturate` rule (clamp to the largest finite value,
//     or else overflow to Inf (E5M2) / NaN (FN, FNUZ)).
//   - [u]int4 / [u]int2: held sign- or zero-extended in a byte; conversion to
//     them truncates to the low bits (wraps), as ONNX's reference does.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/Utils/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

/// A small sign/exponent/mantissa float format (float8 variants, float4).
struct Float8Format {
  unsigned exponentBits, mantissaBits;
  int bias;
  // E5M2 has Inf; FN: only S.1111.111 is NaN; FNUZ: 0x80 is NaN; Finite
  // (float4 E2M1): no Inf/NaN, overflow saturates, NaN becomes -0 (as
  // ml_dtypes, ONNX's reference, converts it).
  enum Kind { IEEE, FN, FNUZ, Finite } kind;
  double maxFinite;
  int64_t maxCode; // magnitude bits of the largest finite value
  unsigned totalBits() const { return 1 + exponentBits + mantissaBits; }
  int64_t signBit() const { return int64_t(1) << (totalBits() - 1); }
};

std::optional<Float8Format> float8Format(Type t) {
  if (llvm::isa<Float8E4M3FNType>(t)) return Float8Format{4, 3, 7, Float8Format::FN, 448.0, 0x7E};
  if (llvm::isa<Float8E4M3FNUZType>(t)) return Float8Format{4, 3, 8, Float8Format::FNUZ, 240.0, 0x7F};
  if (llvm::isa<Float8E5M2Type>(t)) return Float8Format{5, 2, 15, Float8Format::IEEE, 57344.0, 0x7B};
  if (llvm::isa<Float8E5M2FNUZType>(t)) return Float8Format{5, 2, 16, Float8Format::FNUZ, 57344.0, 0x7F};
  if (llvm::isa<Float4E2M1Type>(t)) return Float8Format{2, 1, 1, Float8Format::Finite, 6.0, 0x7};
  return std::nullopt;
}

/// Small arith builder over i32 / f32 scalars.
struct S {
  OpBuilder &b;
  Location l;
  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }
  Value ci(int64_t v) { return b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(int32_t(v))); }
  Value cf(double v) { return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(float(v))); }
  Value band(Value a, int64_t m) { return b.create<arith::AndIOp>(l, a, ci(m)); }
  Value bor(Value a, Value c) { return b.create<arith::OrIOp>(l, a, c); }
  Value shl(Value a, int64_t n) { return b.create<arith::ShLIOp>(l, a, ci(n)); }
  Value shr(Value a, int64_t n) { return b.create<arith::ShRUIOp>(l, a, ci(n)); }
  Value add(Value a, int64_t n) { return b.create<arith::AddIOp>(l, a, ci(n)); }
  Value eq(Value a, int64_t n) { return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a, ci(n)); }
  Value sel(Value c, Value t, Value f) { return b.create<arith::SelectOp>(l, c, t, f); }
  Value toF32(Value bits) { return b.create<arith::BitcastOp>(l, f32(), bits); }
  Value toI32(Value f) { return b.create<arith::BitcastOp>(l, i32(), f); }
  Value pow2(int64_t e) { return cf(std::ldexp(1.0, int(e))); }
};

Value decodeFloat8(OpBuilder &b, Location l, Value bits8, const Float8Format &f) {
  S s{b, l};
  Value u = s.band(b.create<arith::ExtUIOp>(l, s.i32(), bits8), (int64_t(1) << f.totalBits()) - 1);
  Value sign = s.band(u, f.signBit());
  Value e = s.band(s.shr(u, f.mantissaBits), (1 << f.exponentBits) - 1);
  Value m = s.band(u, (1 << f.mantissaBits) - 1);
  // Normal: rebias the exponent and widen the mantissa into float32 bits.
  Value normal = s.toF32(
      s.bor(s.bor(s.shl(sign, 32 - f.totalBits()), s.shl(s.add(e, 127 - f.bias), 23)), s.shl(m, 23 - f.mantissaBits)));
  // Subnormal: m * 2^(1 - bias - mantissaBits).
  Value sub =
      b.create<arith::MulFOp>(l, b.create<arith::UIToFPOp>(l, s.f32(), m), s.pow2(1 - f.bias - int(f.mantissaBits)));
  sub = s.sel(s.eq(sign, 0), sub, b.create<arith::NegFOp>(l, sub));
  Value v = s.sel(s.eq(e, 0), sub, normal);
  Value nan = s.cf(std::nan(""));
  switch (f.kind) {
  case Float8Format::IEEE: {
    Value inf = s.sel(s.eq(sign, 0), s.cf(INFINITY), s.cf(-INFINITY));
    Value special = s.sel(s.eq(m, 0), inf, nan);
    return s.sel(s.eq(e, (1 << f.exponentBits) - 1), special, v);
  }
  case Float8Format::FN: return s.sel(s.eq(s.band(u, 0x7F), 0x7F), nan, v);
  case Float8Format::FNUZ: return s.sel(s.eq(u, 0x80), nan, v);
  case Float8Format::Finite: return v;
  }
  return v;
}

Value encodeFloat8(OpBuilder &b, Location l, Value x, const Float8Format &f, bool saturate) {
  S s{b, l};
  Value bits = s.toI32(x);
  Value sign = s.band(s.shr(bits, 32 - f.totalBits()), f.signBit());
  Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
  Value a = b.create<math::AbsFOp>(l, x);
  // Round |x| to the spacing of its target binade (subnormals share the
  // spacing of the lowest one): r = roundeven(a / q) * q, exact in float32.
  Value ex = s.add(s.band(s.shr(bits, 23), 0xFF), -127);
  Value ee = b.create<arith::MaxSIOp>(l, ex, s.ci(1 - f.bias));
  Value q = s.toF32(s.shl(s.add(ee, 127 - int(f.mantissaBits)), 23));
  Value r = b.create<arith::MulFOp>(l, b.create<math::RoundEvenOp>(l, b.create<arith::DivFOp>(l, a, q)), q);
  Value overflow = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, r, s.cf(f.maxFinite));
  // Encode the rounded magnitude.
  Value rb = s.toI32(r);
  Value isSub = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, r, s.pow2(1 - f.bias));
  Value subCode =
      b.create<arith::FPToUIOp>(l, s.i32(), b.create<arith::MulFOp>(l, r, s.pow2(f.bias + int(f.mantissaBits) - 1)));
  Value normCode = s.bor(s.shl(s.add(s.band(s.shr(rb, 23), 0xFF), f.bias - 127), f.mantissaBits),
                         s.band(s.shr(rb, 23 - f.mantissaBits), (1 << f.mantissaBits) - 1));
  Value mag = s.sel(isSub, subCode, normCode);
  int64_t overflowCode =
      (saturate || f.kind == Float8Format::Finite) ? f.maxCode : (f.kind == Float8Format::IEEE ? 0x7C : 0x7F);
  mag = s.sel(overflow, s.ci(overflowCode), mag);
  Value code = s.bor(mag, sign);
  Value nanCode = f.kind == Float8Format::Finite ? s.ci(f.signBit()) : s.bor(s.ci(0x7F), sign);
  if (f.kind == Float8Format::FNUZ) {
    code = s.sel(s.eq(mag, 0), s.ci(0), code); // no negative zero
    if (!saturate) code = s.sel(overflow, s.ci(0x80), code);
    nanCode = s.ci(0x80);
  }
  code = s.sel(isNan, nanCode, code);
  return b.create<arith::TruncIOp>(l, b.getI8Type(), code);
}

/// FLOAT8E8M0: the float32 exponent field alone; 0xFF is NaN, 0 is 2^-127.
Value decodeE8M0(OpBuilder &b, Location l, Value bits8) {
  S s{b, l};
  Value e = b.create<arith::ExtUIOp>(l, s.i32(), bits8);
  Value v = s.sel(s.eq(e, 0), s.ci(0x00400000), s.shl(e, 23));
  return s.sel(s.eq(e, 0xFF), s.cf(std::nan("")), s.toF32(v));
}

/// Rounds |x| to a power of two by its exponent field (ONNX round_mode up,
/// down or nearest); NaN and Inf become 0xFF, as does overflow unless
/// saturating.
Value encodeE8M0(OpBuilder &b, Location l, Value x, bool saturate, const std::string &roundMode) {
  S s{b, l};
  Value bits = s.toI32(x);
  Value e = s.band(s.shr(bits, 23), 0xFF);
  Value mantissa = s.band(bits, 0x7FFFFF);
  Value roundUp;
  if (roundMode == "nearest") {
    Value g = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, s.band(bits, 0x400000), s.ci(0));
    Value r = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, s.band(bits, 0x200000), s.ci(0));
    Value st = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, s.band(bits, 0x1FFFFF), s.ci(0));
    Value lsb = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, e, s.ci(0));
    roundUp = b.create<arith::AndIOp>(l, g, b.create<arith::OrIOp>(l, r, b.create<arith::OrIOp>(l, st, lsb)));
  } else if (roundMode == "up") {
    roundUp = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, mantissa, s.ci(0));
  } else {
    roundUp = b.create<arith::ConstantOp>(l, b.getBoolAttr(false));
  }
  if (saturate)
    roundUp = b.create<arith::AndIOp>(l, roundUp, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, e, s.ci(0xFE)));
  Value code = b.create<arith::AddIOp>(l, e, b.create<arith::ExtUIOp>(l, s.i32(), roundUp));
  return b.create<arith::TruncIOp>(l, b.getI8Type(), s.sel(s.eq(e, 0xFF), s.ci(0xFF), code));
}

Value decodeBFloat16(OpBuilder &b, Location l, Value bits16) {
  S s{b, l};
  return s.toF32(s.shl(b.create<arith::ExtUIOp>(l, s.i32(), bits16), 16));
}

Value encodeBFloat16(OpBuilder &b, Location l, Value x) {
  S s{b, l};
  Value bits = s.toI32(x);
  // Round to nearest even on the dropped 16 bits; Inf stays Inf.
  Value rounded = b.create<arith::AddIOp>(l, bits, s.add(s.band(s.shr(bits, 16), 1), 0x7FFF));
  Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
  Value hi = s.sel(isNan, s.bor(s.shr(bits, 16), s.ci(0x40)), s.shr(rounded, 16));
  return b.create<arith::TruncIOp>(l, b.getI16Type(), hi);
}

bool isSubByteInt(Type t) { return t.isIntOrIndex() && !t.isInteger(1) && t.getIntOrFloatBitWidth() < 8; }

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return b.create<arith::ConstantOp>(l, b.getFloatAttr(t, v));
}

/// Cast between the element types with native body types.
Value castNative(OpBuilder &b, Location l, Value x, Type from, Type to) {
  Type toBody = bodyScalarType(to);
  if (from == to) return x;
  bool fromF = llvm::isa<FloatType>(from), toF = llvm::isa<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromF) return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNE, x, fconst(b, l, from, 0));
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, x,
                                   b.create<arith::ConstantOp>(l, b.getIntegerAttr(x.getType(), 0)));
  }
  if (fromF && toF) {
    unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    if (fw < tw) return b.create<arith::ExtFOp>(l, toBody, x);
    return b.create<arith::TruncFOp>(l, toBody, x);
  }
  if (fromF) {
    return to.isUnsignedInteger() ? (Value)b.create<arith::FPToUIOp>(l, toBody, x)
                                  : (Value)b.create<arith::FPToSIOp>(l, toBody, x);
  }
  bool fromU = from.isUnsignedInteger() || from.isInteger(1);
  if (toF)
    return fromU ? (Value)b.create<arith::UIToFPOp>(l, toBody, x) : (Value)b.create<arith::SIToFPOp>(l, toBody, x);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw == tw) return x;
  if (fw > tw) return b.create<arith::TruncIOp>(l, toBody, x);
  return fromU ? (Value)b.create<arith::ExtUIOp>(l, toBody, x) : (Value)b.create<arith::ExtSIOp>(l, toBody, x);
}

} // namespace

Value castScalar(OpBuilder &b, Location l, Value x, Type from, Type to, bool saturate, const std::string &roundMode) {
  if (from == to) return x;
  Type f32 = b.getF32Type();
  if (llvm::isa<Float8E8M0Type>(from)) return castScalar(b, l, decodeE8M0(b, l, x), f32, to, saturate, roundMode);
  if (llvm::isa<Float8E8M0Type>(to))
    return encodeE8M0(b, l, castScalar(b, l, x, from, f32, saturate, roundMode), saturate, roundMode);
  // Storage-only sources become float32 or a byte-wide integer first.
  if (auto f = float8Format(from)) return castScalar(b, l, decodeFloat8(b, l, x, *f), f32, to, saturate);
  if (from.isBF16()) return castScalar(b, l, decodeBFloat16(b, l, x), f32, to, saturate);
  if (isSubByteInt(from))
    from =
        IntegerType::get(b.getContext(), 8, from.isUnsignedInteger() ? IntegerType::Unsigned : IntegerType::Signless);
  if (from == to) return x;
  if (auto f = float8Format(to)) return encodeFloat8(b, l, castScalar(b, l, x, from, f32, saturate), *f, saturate);
  if (to.isBF16()) return encodeBFloat16(b, l, castScalar(b, l, x, from, f32, saturate));
  if (isSubByteInt(to)) {
    // Wrap to the low bits, then hold the value extended in a byte.
    Value wide = castNative(b, l, x, from, b.getI32Type());
    Value low = b.create<arith::TruncIOp>(l, b.getIntegerType(to.getIntOrFloatBitWidth()), wide);
    if (to.isUnsignedInteger()) return b.create<arith::ExtUIOp>(l, b.getI8Type(), low);
    return b.create<arith::ExtSIOp>(l, b.getI8Type(), low);
  }
  return castNative(b, l, x, from, to);
}

} // namespace v4f
