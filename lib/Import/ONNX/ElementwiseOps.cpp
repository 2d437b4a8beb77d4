//===- ElementwiseOps.cpp - ONNX elementwise operators -> v4f.elementwise -===//
//
// Every ONNX operator that is a pure per-element function (with numpy
// broadcasting) imports as one v4f.elementwise whose body is built here from
// scalar arith/math ops, for every element type the operator allows.
//
//===----------------------------------------------------------------------===//
#include "ElementwiseHelpers.h"
#include "NodeContext.h"
#include "TensorImport.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {

std::optional<DenseElementsAttr> foldElementwise(Value v) {
  auto op = v.getDefiningOp<ElementwiseOp>();
  if (!op) return std::nullopt;
  auto folded = foldedValue(op);
  if (folded) op.erase();
  return folded;
}

using namespace elementwise;

namespace {

/// Binary arithmetic for float and integer types.
enum class Arith { Add, Sub, Mul, Div };
OpImporter arithBinary(Arith kind) {
  return {7, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
          [kind](NodeContext &c) -> LogicalResult {
            Type t = elementOf(c.input(0));
            if (t != elementOf(c.input(1))) return c.fail("inputs must have the same element type");
            if (t.isInteger(1)) return c.fail("bool arithmetic is not defined");
            return finish(
                c, buildElementwise(
                       c, {c.input(0), c.input(1)}, t, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                         if (isFloat(t)) {
                           switch (kind) {
                           case Arith::Add: return b.create<arith::AddFOp>(l, a[0], a[1]);
                           case Arith::Sub: return b.create<arith::SubFOp>(l, a[0], a[1]);
                           case Arith::Mul: return b.create<arith::MulFOp>(l, a[0], a[1]);
                           case Arith::Div: return b.create<arith::DivFOp>(l, a[0], a[1]);
                           }
                         }
                         switch (kind) {
                         case Arith::Add: return b.create<arith::AddIOp>(l, a[0], a[1]);
                         case Arith::Sub: return b.create<arith::SubIOp>(l, a[0], a[1]);
                         case Arith::Mul: return b.create<arith::MulIOp>(l, a[0], a[1]);
                         case Arith::Div: {
                           // Integer division by zero is undefined in ONNX; make it 0
                           // rather than a trap.
                           Value zero = iconst(b, l, a[1].getType(), 0), one = iconst(b, l, a[1].getType(), 1);
                           Value isZero = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[1], zero);
                           Value safe = b.create<arith::SelectOp>(l, isZero, one, a[1]);
                           Value q = isUnsigned(t) ? (Value)b.create<arith::DivUIOp>(l, a[0], safe)
                                                   : (Value)b.create<arith::DivSIOp>(l, a[0], safe);
                           return b.create<arith::SelectOp>(l, isZero, zero, q);
                         }
                         }
                         return {};
                       }));
          }};
}

/// Variadic Max/Min/Sum/Mean: a left fold over the inputs, in a tree of
/// v4f.elementwise ops of at most kMaxFoldInputs inputs each (a node with
/// thousands of inputs would otherwise be one body whose code generation
/// and optimization grow much faster than its size); Mean divides by the
/// input count once, at the end.
enum class Fold { Max, Min, Sum, Mean };
constexpr size_t kMaxFoldInputs = 64;
OpImporter variadic(Fold kind) {
  return {8, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
          [kind](NodeContext &c) -> LogicalResult {
            auto inputs = allInputs(c);
            if (inputs.empty()) return c.fail("needs at least one input");
            Type t = elementOf(inputs[0]);
            for (Value v : inputs)
              if (elementOf(v) != t) return c.fail("inputs must have the same element type");
            if ((kind == Fold::Sum || kind == Fold::Mean) && !isFloat(t))
              return c.fail("Sum and Mean need float inputs");
            size_t total = inputs.size();
            auto fold = [&](ArrayRef<Value> ins, bool last) {
              return buildElementwise(c, ins, t, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                Value acc = a[0];
                for (Value x : a.drop_front()) {
                  switch (kind) {
                  case Fold::Max:
                    acc = isFloat(t)      ? (Value)b.create<arith::MaximumFOp>(l, acc, x)
                          : isUnsigned(t) ? (Value)b.create<arith::MaxUIOp>(l, acc, x)
                                          : (Value)b.create<arith::MaxSIOp>(l, acc, x);
                    break;
                  case Fold::Min:
                    acc = isFloat(t)      ? (Value)b.create<arith::MinimumFOp>(l, acc, x)
                          : isUnsigned(t) ? (Value)b.create<arith::MinUIOp>(l, acc, x)
                                          : (Value)b.create<arith::MinSIOp>(l, acc, x);
                    break;
                  case Fold::Sum:
                  case Fold::Mean: acc = b.create<arith::AddFOp>(l, acc, x); break;
                  }
                }
                if (kind == Fold::Mean && last) acc = b.create<arith::DivFOp>(l, acc, fconst(b, l, t, double(total)));
                return acc;
              });
            };
            SmallVector<Value> level(inputs.begin(), inputs.end());
            while (level.size() > kMaxFoldInputs) {
              SmallVector<Value> next;
              for (size_t i = 0; i < level.size(); i += kMaxFoldInputs) {
                auto part = fold(ArrayRef<Value>(level).slice(i, std::min(kMaxFoldInputs, level.size() - i)), false);
                if (failed(part)) return failure();
                next.push_back(*part);
              }
              level = std::move(next);
            }
            return finish(c, fold(level, true));
          }};
}

/// Comparisons: bool result.
OpImporter compare(arith::CmpFPredicate fp, arith::CmpIPredicate sp, arith::CmpIPredicate up, int64_t minOpset = 7) {
  return {minOpset, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
          [=](NodeContext &c) -> LogicalResult {
            Type t = elementOf(c.input(0));
            if (t != elementOf(c.input(1))) return c.fail("inputs must have the same element type");
            return finish(c, buildElementwise(c, {c.input(0), c.input(1)}, c.b.getI1Type(),
                                              [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                if (isFloat(t)) return b.create<arith::CmpFOp>(l, fp, a[0], a[1]);
                                                return b.create<arith::CmpIOp>(l, isUnsigned(t) ? up : sp, a[0], a[1]);
                                              }));
          }};
}

/// Bitwise/logical binary ops on integers or bools.
enum class Bits { And, Or, Xor };
OpImporter bitwise(Bits kind, bool boolOnly, int64_t minOpset) {
  return {minOpset, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
          [=](NodeContext &c) -> LogicalResult {
            Type t = elementOf(c.input(0));
            if (t != elementOf(c.input(1)) || !llvm::isa<IntegerType>(t) || (boolOnly && !t.isInteger(1)))
              return c.fail(boolOnly ? "inputs must be bool" : "inputs must be integers of one type");
            return finish(c, buildElementwise(c, {c.input(0), c.input(1)}, t,
                                              [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                switch (kind) {
                                                case Bits::And: return b.create<arith::AndIOp>(l, a[0], a[1]);
                                                case Bits::Or: return b.create<arith::OrIOp>(l, a[0], a[1]);
                                                case Bits::Xor: return b.create<arith::XOrIOp>(l, a[0], a[1]);
                                                }
                                                return {};
                                              }));
          }};
}

Type onnxTypeToMLIR(NodeContext &c, int64_t onnxType) { return importElementType(c.g.ctx, int32_t(onnxType)); }

/// Pow, Mod, BitShift (integer and non-float32 forms), the variadic folds,
/// comparisons and logical/bitwise ops.
void addArithmeticImporters(std::unordered_map<std::string, OpImporter> &t) {
  using namespace arith;
  // Integer/other-typed forms of the named float ops; float32 keeps the
  // named ops (see ONNXOps.cpp) so fusion patterns still match them.
  t["Pow"] = {7, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
              [](NodeContext &c) {
                Type tx = elementOf(c.input(0)), ty = elementOf(c.input(1));
                return finish(c, buildElementwise(c, {c.input(0), c.input(1)}, tx,
                                                  [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                    if (isFloat(tx)) {
                                                      Value e = castScalar(b, l, a[1], ty, tx);
                                                      return b.create<math::PowFOp>(l, a[0], e);
                                                    }
                                                    if (isFloat(ty)) {
                                                      Value base = castScalar(b, l, a[0], tx, ty);
                                                      Value p = b.create<math::PowFOp>(l, base, a[1]);
                                                      return castScalar(b, l, p, ty, tx);
                                                    }
                                                    Value e = castScalar(b, l, a[1], ty, tx);
                                                    return b.create<math::IPowIOp>(l, a[0], e);
                                                  }));
              }};
  t["Mod"] = {10, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
              [](NodeContext &c) {
                Type ty = elementOf(c.input(0));
                bool fmod = c.attrs.getInt("fmod", 0) != 0;
                return finish(
                    c, buildElementwise(c, {c.input(0), c.input(1)}, ty,
                                        [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                          if (isFloat(ty)) {
                                            Value r = b.create<RemFOp>(l, a[0], a[1]);
                                            if (fmod) return r;
                                            // Python-style for fmod=0: the result takes the divisor's sign.
                                            Value zero = fconst(b, l, ty, 0);
                                            Value rNeg = b.create<CmpFOp>(l, CmpFPredicate::OLT, r, zero);
                                            Value dNeg = b.create<CmpFOp>(l, CmpFPredicate::OLT, a[1], zero);
                                            Value rNonZero = b.create<CmpFOp>(l, CmpFPredicate::ONE, r, zero);
                                            Value fix = b.create<AndIOp>(l, rNonZero, b.create<XOrIOp>(l, rNeg, dNeg));
                                            return b.create<SelectOp>(l, fix, b.create<AddFOp>(l, r, a[1]), r);
                                          }
                                          Type it = a[0].getType();
                                          Value zero = iconst(b, l, it, 0), one = iconst(b, l, it, 1);
                                          Value isZero = b.create<CmpIOp>(l, CmpIPredicate::eq, a[1], zero);
                                          Value d = b.create<SelectOp>(l, isZero, one, a[1]);
                                          if (isUnsigned(ty))
                                            return b.create<SelectOp>(l, isZero, zero, b.create<RemUIOp>(l, a[0], d));
                                          Value r = b.create<RemSIOp>(l, a[0], d);
                                          if (fmod) return b.create<SelectOp>(l, isZero, zero, r);
                                          // Python-style: the result takes the divisor's sign.
                                          Value rNeg = b.create<CmpIOp>(l, CmpIPredicate::slt, r, zero);
                                          Value dNeg = b.create<CmpIOp>(l, CmpIPredicate::slt, d, zero);
                                          Value rNonZero = b.create<CmpIOp>(l, CmpIPredicate::ne, r, zero);
                                          Value fix = b.create<AndIOp>(l, rNonZero, b.create<XOrIOp>(l, rNeg, dNeg));
                                          Value adj = b.create<SelectOp>(l, fix, b.create<AddIOp>(l, r, d), r);
                                          return b.create<SelectOp>(l, isZero, zero, adj);
                                        }));
              }};
  t["BitShift"] = {11, kMaxOpset,
                   [](const NodeAttrs &a, int64_t) {
                     std::string d = a.getString("direction", "");
                     return d == "LEFT" || d == "RIGHT" ? std::string() : "direction must be LEFT or RIGHT";
                   },
                   [](NodeContext &c) {
                     Type ty = elementOf(c.input(0));
                     bool left = c.attrs.getString("direction", "") == "LEFT";
                     return finish(
                         c, buildElementwise(c, {c.input(0), c.input(1)}, ty,
                                             [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                               // numpy semantics: a shift amount outside [0, width) gives
                                               // 0, or -1 for an arithmetic right shift of a negative value;
                                               // signed right shifts are arithmetic.
                                               Type it = a[0].getType();
                                               Value zero = iconst(b, l, it, 0);
                                               Value width = iconst(b, l, it, it.getIntOrFloatBitWidth());
                                               Value outOfRange = b.create<CmpIOp>(l, CmpIPredicate::uge, a[1], width);
                                               bool u = isUnsigned(ty);
                                               Value shifted = left ? (Value)b.create<ShLIOp>(l, a[0], a[1])
                                                               : u  ? (Value)b.create<ShRUIOp>(l, a[0], a[1])
                                                                    : (Value)b.create<ShRSIOp>(l, a[0], a[1]);
                                               Value fill = zero;
                                               if (!left && !u) {
                                                 Value neg = b.create<CmpIOp>(l, CmpIPredicate::slt, a[0], zero);
                                                 fill = b.create<SelectOp>(l, neg, iconst(b, l, it, -1), zero);
                                               }
                                               return b.create<SelectOp>(l, outOfRange, fill, shifted);
                                             }));
                   }};
  t["Max"] = variadic(Fold::Max);
  t["Min"] = variadic(Fold::Min);
  t["Sum"] = variadic(Fold::Sum);
  t["Mean"] = variadic(Fold::Mean);
  t["Equal"] = compare(CmpFPredicate::OEQ, CmpIPredicate::eq, CmpIPredicate::eq);
  t["Greater"] = compare(CmpFPredicate::OGT, CmpIPredicate::sgt, CmpIPredicate::ugt);
  t["GreaterOrEqual"] = compare(CmpFPredicate::OGE, CmpIPredicate::sge, CmpIPredicate::uge, 12);
  t["Less"] = compare(CmpFPredicate::OLT, CmpIPredicate::slt, CmpIPredicate::ult);
  t["LessOrEqual"] = compare(CmpFPredicate::OLE, CmpIPredicate::sle, CmpIPredicate::ule, 12);
  t["And"] = bitwise(Bits::And, true, 7);
  t["Or"] = bitwise(Bits::Or, true, 7);
  t["Xor"] = bitwise(Bits::Xor, true, 7);
  t["BitwiseAnd"] = bitwise(Bits::And, false, 18);
  t["BitwiseOr"] = bitwise(Bits::Or, false, 18);
  t["BitwiseXor"] = bitwise(Bits::Xor, false, 18);
}

/// Where and the casts (Cast, BitCast, CastLike) for every element type.
void addSelectAndCastImporters(std::unordered_map<std::string, OpImporter> &t) {
  using namespace arith;
  t["Where"] = {9, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                [](NodeContext &c) {
                  if (!elementOf(c.input(0)).isInteger(1)) return c.fail("condition must be bool");
                  Type ty = elementOf(c.input(1));
                  if (ty != elementOf(c.input(2))) return c.fail("X and Y must have the same element type");
                  return finish(c, buildElementwise(c, {c.input(0), c.input(1), c.input(2)}, ty,
                                                    [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                      return b.create<SelectOp>(l, a[0], a[1], a[2]);
                                                    }));
                }};
  t["Cast"] = {
      6, kMaxOpset,
      [](const NodeAttrs &a, int64_t) {
        return a.has("to") ? std::string() : std::string("missing the 'to' attribute");
      },
      [](NodeContext &c) {
        Type from = elementOf(c.input(0));
        Type to = onnxTypeToMLIR(c, c.attrs.getInt("to", 0));
        if (!to)
          return c.fail("cast to an unsupported element type (" + onnxTypeName(int32_t(c.attrs.getInt("to", 0))) + ")");
        bool saturate = c.attrs.getInt("saturate", 1) != 0;
        std::string roundMode = c.attrs.getString("round_mode", "up");
        if (roundMode != "up" && roundMode != "down" && roundMode != "nearest")
          return c.fail("round_mode '" + roundMode + "' is not valid");
        return finish(c,
                      buildElementwise(c, {c.input(0)}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                        return castScalar(b, l, a[0], from, to, saturate, roundMode);
                      }));
      }};
  t["BitCast"] = {
      26, kMaxOpset,
      [](const NodeAttrs &a, int64_t) {
        return a.has("to") ? std::string() : std::string("missing the 'to' attribute");
      },
      [](NodeContext &c) {
        Type from = elementOf(c.input(0));
        Type to = onnxTypeToMLIR(c, c.attrs.getInt("to", 0));
        if (!to) return c.fail("bit cast to an unsupported element type");
        if (!from.isIntOrFloat() || !to.isIntOrFloat()) return c.fail("bit cast of this element type is not supported");
        auto bits = [](Type t) { return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth(); };
        if (bits(from) != bits(to) || bits(from) % 8)
          return c.fail("input and output element types must have the same byte size");
        return finish(c,
                      buildElementwise(c, {c.input(0)}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                        Type toBody = bodyScalarType(to);
                        Value x = a[0];
                        if (x.getType().isInteger(1)) x = b.create<ExtUIOp>(l, b.getI8Type(), x);
                        if (toBody.isInteger(1)) {
                          // Any non-zero byte reads as true.
                          Value v = x.getType() == b.getI8Type() ? x : (Value)b.create<BitcastOp>(l, b.getI8Type(), x);
                          return b.create<CmpIOp>(l, CmpIPredicate::ne, v, iconst(b, l, b.getI8Type(), 0));
                        }
                        return x.getType() == toBody ? x : (Value)b.create<BitcastOp>(l, toBody, x);
                      }));
      }};
  t["CastLike"] = {15, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                   [](NodeContext &c) {
                     Type from = elementOf(c.input(0)), to = elementOf(c.input(1));
                     bool saturate = c.attrs.getInt("saturate", 1) != 0;
                     return finish(c, buildElementwise(c, {c.input(0)}, to,
                                                       [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                         return castScalar(b, l, a[0], from, to, saturate);
                                                       }));
                   }};
}

} // namespace

/// Abs, Neg, Sign, IsNaN, IsInf, Not, BitwiseNot, PRelu here, then the
/// arithmetic, comparison, select and cast tables.
void addElementwiseImporters(std::unordered_map<std::string, OpImporter> &t) {
  using namespace arith;
  t["Abs"] = {6, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
              [](NodeContext &c) {
                Type ty = elementOf(c.input(0));
                return finish(
                    c, buildElementwise(c, {c.input(0)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                      if (isFloat(ty)) return b.create<math::AbsFOp>(l, a[0]);
                      if (isUnsigned(ty) || ty.isInteger(1)) return a[0];
                      return b.create<math::AbsIOp>(l, a[0]);
                    }));
              }};
  t["Neg"] = {6, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
              [](NodeContext &c) {
                Type ty = elementOf(c.input(0));
                return finish(
                    c, buildElementwise(c, {c.input(0)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                      if (isFloat(ty)) return b.create<NegFOp>(l, a[0]);
                      return b.create<SubIOp>(l, iconst(b, l, a[0].getType(), 0), a[0]);
                    }));
              }};
  t["Sign"] = {9, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
               [](NodeContext &c) {
                 Type ty = elementOf(c.input(0));
                 return finish(
                     c,
                     buildElementwise(c, {c.input(0)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                       Value x = a[0];
                       if (isFloat(ty)) {
                         Value z = fconst(b, l, ty, 0);
                         Value pos = b.create<CmpFOp>(l, CmpFPredicate::OGT, x, z);
                         Value neg = b.create<CmpFOp>(l, CmpFPredicate::OLT, x, z);
                         return b.create<SelectOp>(l, pos, fconst(b, l, ty, 1),
                                                   b.create<SelectOp>(l, neg, fconst(b, l, ty, -1), z));
                       }
                       Type it = x.getType();
                       Value z = iconst(b, l, it, 0);
                       Value pos = b.create<CmpIOp>(l, isUnsigned(ty) ? CmpIPredicate::ugt : CmpIPredicate::sgt, x, z);
                       Value neg = isUnsigned(ty) ? (Value)iconst(b, l, b.getI1Type(), 0)
                                                  : (Value)b.create<CmpIOp>(l, CmpIPredicate::slt, x, z);
                       return b.create<SelectOp>(l, pos, iconst(b, l, it, 1),
                                                 b.create<SelectOp>(l, neg, iconst(b, l, it, -1), z));
                     }));
               }};
  t["IsNaN"] = {9, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                [](NodeContext &c) {
                  Type ty = elementOf(c.input(0));
                  if (!isFloat(ty)) return c.fail("input must be a float type");
                  return finish(c, buildElementwise(c, {c.input(0)}, c.b.getI1Type(),
                                                    [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                      return b.create<CmpFOp>(l, CmpFPredicate::UNO, a[0], a[0]);
                                                    }));
                }};
  t["IsInf"] = {10, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                [](NodeContext &c) {
                  Type ty = elementOf(c.input(0));
                  if (!isFloat(ty)) return c.fail("input must be a float type");
                  bool pos = c.attrs.getInt("detect_positive", 1), neg = c.attrs.getInt("detect_negative", 1);
                  return finish(c, buildElementwise(c, {c.input(0)}, c.b.getI1Type(),
                                                    [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                      Value p = b.create<CmpFOp>(l, CmpFPredicate::OEQ, a[0],
                                                                                 fconst(b, l, ty, INFINITY));
                                                      Value n = b.create<CmpFOp>(l, CmpFPredicate::OEQ, a[0],
                                                                                 fconst(b, l, ty, -INFINITY));
                                                      Value f = iconst(b, l, b.getI1Type(), 0);
                                                      return b.create<OrIOp>(l, pos ? p : f, neg ? n : f);
                                                    }));
                }};
  t["Not"] = {1, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
              [](NodeContext &c) {
                if (!elementOf(c.input(0)).isInteger(1)) return c.fail("input must be bool");
                return finish(c, buildElementwise(c, {c.input(0)}, c.b.getI1Type(),
                                                  [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                                    return b.create<XOrIOp>(l, a[0], iconst(b, l, b.getI1Type(), 1));
                                                  }));
              }};
  t["BitwiseNot"] = {
      18, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
      [](NodeContext &c) {
        Type ty = elementOf(c.input(0));
        if (!llvm::isa<IntegerType>(ty) || ty.isInteger(1)) return c.fail("input must be an integer");
        return finish(c,
                      buildElementwise(c, {c.input(0)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                        return b.create<XOrIOp>(l, a[0], iconst(b, l, a[0].getType(), -1));
                      }));
      }};
  t["PRelu"] = {7, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                [](NodeContext &c) {
                  Type ty = elementOf(c.input(0));
                  if (ty != elementOf(c.input(1))) return c.fail("X and slope must have the same element type");
                  return finish(
                      c,
                      buildElementwise(
                          c, {c.input(0), c.input(1)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                            if (isFloat(ty)) {
                              Value lt = b.create<CmpFOp>(l, CmpFPredicate::OLT, a[0], fconst(b, l, ty, 0));
                              return b.create<SelectOp>(l, lt, b.create<MulFOp>(l, a[0], a[1]), a[0]);
                            }
                            Value lt = b.create<CmpIOp>(l, CmpIPredicate::slt, a[0], iconst(b, l, a[0].getType(), 0));
                            return b.create<SelectOp>(l, lt, b.create<MulIOp>(l, a[0], a[1]), a[0]);
                          }));
                }};
  addArithmeticImporters(t);
  addSelectAndCastImporters(t);
}

/// Elementwise importers for non-float32 forms of the named ops (Add, Relu...).
LogicalResult importGenericArith(NodeContext &c, const std::string &op) {
  static const std::unordered_map<std::string, OpImporter> generic = [] {
    std::unordered_map<std::string, OpImporter> m;
    m["Add"] = arithBinary(Arith::Add);
    m["Sub"] = arithBinary(Arith::Sub);
    m["Mul"] = arithBinary(Arith::Mul);
    m["Div"] = arithBinary(Arith::Div);
    return m;
  }();
  return generic.at(op).import(c);
}

/// Float-typed (f16/f64) or integer forms of unary named ops.
LogicalResult importGenericUnary(NodeContext &c, const std::string &op) {
  Type ty = elementOf(c.input(0));
  return finish(c, buildElementwise(c, {c.input(0)}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                  Value x = a[0];
                  bool f = isFloat(ty);
                  if (op == "Relu") {
                    if (f) return b.create<arith::MaximumFOp>(l, x, fconst(b, l, ty, 0));
                    return isUnsigned(ty) ? x : (Value)b.create<arith::MaxSIOp>(l, x, iconst(b, l, x.getType(), 0));
                  }
                  if (!f) return Value();
                  if (op == "Sigmoid") {
                    Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x));
                    return b.create<arith::DivFOp>(l, fconst(b, l, ty, 1),
                                                   b.create<arith::AddFOp>(l, fconst(b, l, ty, 1), e));
                  }
                  if (op == "Tanh") return b.create<math::TanhOp>(l, x);
                  if (op == "Erf") return b.create<math::ErfOp>(l, x);
                  if (op == "Exp") return b.create<math::ExpOp>(l, x);
                  if (op == "Sqrt") return b.create<math::SqrtOp>(l, x);
                  if (op == "LeakyRelu") {
                    Value lt = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, fconst(b, l, ty, 0));
                    return b.create<arith::SelectOp>(
                        l, lt, b.create<arith::MulFOp>(l, x, fconst(b, l, ty, c.attrs.getFloat("alpha", 0.01f))), x);
                  }
                  return Value();
                }));
}

/// Clip with non-constant or non-float32 min/max: a 1-3 input elementwise.
LogicalResult importGenericClip(NodeContext &c) {
  Type ty = elementOf(c.input(0));
  std::vector<Value> inputs = {c.input(0)};
  bool hasMin = c.hasInput(1), hasMax = c.hasInput(2);
  if (hasMin) inputs.push_back(c.input(1));
  if (hasMax) inputs.push_back(c.input(2));
  return finish(c, buildElementwise(c, inputs, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                  Value x = a[0];
                  size_t k = 1;
                  bool f = isFloat(ty), u = isUnsigned(ty);
                  if (hasMin) {
                    Value lo = a[k++];
                    x = f   ? (Value)b.create<arith::MaximumFOp>(l, x, lo)
                        : u ? (Value)b.create<arith::MaxUIOp>(l, x, lo)
                            : (Value)b.create<arith::MaxSIOp>(l, x, lo);
                  }
                  if (hasMax) {
                    Value hi = a[k++];
                    x = f   ? (Value)b.create<arith::MinimumFOp>(l, x, hi)
                        : u ? (Value)b.create<arith::MinUIOp>(l, x, hi)
                            : (Value)b.create<arith::MinSIOp>(l, x, hi);
                  }
                  return x;
                }));
}

} // namespace v4f
