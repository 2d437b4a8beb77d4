//===- ActivationOps.cpp - ONNX math functions and activations ------------===//
//
// The float-only unary operators (rounding, logarithm, trigonometry and the
// activation functions Softplus ... Shrink) import as one v4f.elementwise
// whose scalar body is built here; Gelu imports whole as v4f.gelu
// (v4f-decompose-activations writes its body).
//
//===----------------------------------------------------------------------===//
#include "ElementwiseHelpers.h"

using namespace mlir;
using namespace mlir::arith;

namespace v4f {
using namespace elementwise;

namespace {
/// `generic` for non-float32 inputs; for float32, the named v4f op `named`
/// builds.
OpImporter f32Named(OpImporter generic, std::function<Value(NodeContext &)> named) {
  auto fallback = generic.import;
  generic.import = [fallback, named](NodeContext &c) -> LogicalResult {
    if (!c.inputType(0).getElementType().isF32()) return fallback(c);
    c.setOutput(0, named(c));
    return success();
  };
  return generic;
}
} // namespace

void addActivationImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Ceil"] = mathUnary<math::CeilOp>(6);
  t["Floor"] = mathUnary<math::FloorOp>(6);
  t["Round"] = mathUnary<math::RoundEvenOp>(11);
  t["Log"] = mathUnary<math::LogOp>(6);
  t["Sin"] = mathUnary<math::SinOp>(7);
  t["Cos"] = mathUnary<math::CosOp>(7);
  t["Tan"] = mathUnary<math::TanOp>(7);
  t["Asin"] = mathUnary<math::AsinOp>(7);
  t["Acos"] = mathUnary<math::AcosOp>(7);
  t["Atan"] = mathUnary<math::AtanOp>(7);
  t["Sinh"] = mathUnary<math::SinhOp>(9);
  t["Cosh"] = mathUnary<math::CoshOp>(9);
  t["Asinh"] = mathUnary<math::AsinhOp>(9);
  t["Acosh"] = mathUnary<math::AcoshOp>(9);
  t["Atanh"] = mathUnary<math::AtanhOp>(9);
  t["Reciprocal"] = floatUnary(6, [](NodeContext &, OpBuilder &b, Location l, Value x) -> Value {
    return b.create<DivFOp>(l, fconst(b, l, x.getType(), 1), x);
  });
  t["Softplus"] = floatUnary(1, [](NodeContext &, OpBuilder &b, Location l, Value x) { return softplus(b, l, x); });
  t["Softsign"] = floatUnary(1, [](NodeContext &, OpBuilder &b, Location l, Value x) -> Value {
    Value d = b.create<AddFOp>(l, fconst(b, l, x.getType(), 1), b.create<math::AbsFOp>(l, x));
    return b.create<DivFOp>(l, x, d);
  });
  t["Mish"] = floatUnary(18, [](NodeContext &, OpBuilder &b, Location l, Value x) -> Value {
    return b.create<MulFOp>(l, x, b.create<math::TanhOp>(l, softplus(b, l, x)));
  });
  t["Elu"] = floatUnary(6, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    Type ty = x.getType();
    Value alpha = fconst(b, l, ty, c.attrs.getFloat("alpha", 1.0f));
    Value neg = b.create<MulFOp>(l, alpha, b.create<math::ExpM1Op>(l, x));
    Value ge = b.create<CmpFOp>(l, CmpFPredicate::OGE, x, fconst(b, l, ty, 0));
    return b.create<SelectOp>(l, ge, x, neg);
  });
  t["Celu"] = floatUnary(12, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    Type ty = x.getType();
    float a = c.attrs.getFloat("alpha", 1.0f);
    Value alpha = fconst(b, l, ty, a);
    Value e = b.create<MulFOp>(l, alpha, b.create<math::ExpM1Op>(l, b.create<DivFOp>(l, x, alpha)));
    Value zero = fconst(b, l, ty, 0);
    return b.create<AddFOp>(l, b.create<MaximumFOp>(l, x, zero), b.create<MinimumFOp>(l, e, zero));
  });
  t["Selu"] = floatUnary(6, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    Type ty = x.getType();
    Value alpha = fconst(b, l, ty, c.attrs.getFloat("alpha", 1.67326319217681884765625f));
    Value gamma = fconst(b, l, ty, c.attrs.getFloat("gamma", 1.05070102214813232421875f));
    Value neg = b.create<MulFOp>(l, alpha, b.create<math::ExpM1Op>(l, x));
    Value gt = b.create<CmpFOp>(l, CmpFPredicate::OGT, x, fconst(b, l, ty, 0));
    return b.create<MulFOp>(l, gamma, b.create<SelectOp>(l, gt, x, neg));
  });
  // float32: the named ops, which v4f-fuse-epilogues folds into a
  // preceding conv / matmul (MobileNetV3's HardSwish); other float types:
  // the same formula as an elementwise body.
  t["HardSigmoid"] = f32Named(
      floatUnary(6,
                 [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
                   Type ty = x.getType();
                   Value y =
                       b.create<AddFOp>(l, b.create<MulFOp>(l, x, fconst(b, l, ty, c.attrs.getFloat("alpha", 0.2f))),
                                        fconst(b, l, ty, c.attrs.getFloat("beta", 0.5f)));
                   return b.create<MinimumFOp>(l, b.create<MaximumFOp>(l, y, fconst(b, l, ty, 0)), fconst(b, l, ty, 1));
                 }),
      [](NodeContext &c) -> Value {
        return c.b.create<HardSigmoidOp>(c.loc, c.input(0), c.b.getF32FloatAttr(c.attrs.getFloat("alpha", 0.2f)),
                                         c.b.getF32FloatAttr(c.attrs.getFloat("beta", 0.5f)));
      });
  t["HardSwish"] = f32Named(
      floatUnary(14,
                 [](NodeContext &, OpBuilder &b, Location l, Value x) -> Value {
                   Type ty = x.getType();
                   Value y =
                       b.create<AddFOp>(l, b.create<MulFOp>(l, x, fconst(b, l, ty, 1.0 / 6.0)), fconst(b, l, ty, 0.5));
                   y = b.create<MinimumFOp>(l, b.create<MaximumFOp>(l, y, fconst(b, l, ty, 0)), fconst(b, l, ty, 1));
                   return b.create<MulFOp>(l, x, y);
                 }),
      [](NodeContext &c) -> Value { return c.b.create<HardSwishOp>(c.loc, c.input(0)); });
  t["ThresholdedRelu"] = floatUnary(10, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    Type ty = x.getType();
    Value gt = b.create<CmpFOp>(l, CmpFPredicate::OGT, x, fconst(b, l, ty, c.attrs.getFloat("alpha", 1.0f)));
    return b.create<SelectOp>(l, gt, x, fconst(b, l, ty, 0));
  });
  t["Swish"] = floatUnary(24, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    // x * sigmoid(alpha * x)
    Type ty = x.getType();
    Value one = fconst(b, l, ty, 1);
    Value ax = b.create<MulFOp>(l, x, fconst(b, l, ty, c.attrs.getFloat("alpha", 1.0f)));
    Value sig = b.create<DivFOp>(l, one, b.create<AddFOp>(l, one, b.create<math::ExpOp>(l, b.create<NegFOp>(l, ax))));
    return b.create<MulFOp>(l, x, sig);
  });
  t["Shrink"] = floatUnary(9, [](NodeContext &c, OpBuilder &b, Location l, Value x) -> Value {
    Type ty = x.getType();
    float lambd = c.attrs.getFloat("lambd", 0.5f), bias = c.attrs.getFloat("bias", 0.0f);
    Value lo = b.create<CmpFOp>(l, CmpFPredicate::OLT, x, fconst(b, l, ty, -lambd));
    Value hi = b.create<CmpFOp>(l, CmpFPredicate::OGT, x, fconst(b, l, ty, lambd));
    Value zero = fconst(b, l, ty, 0);
    Value r = b.create<SelectOp>(l, hi, b.create<SubFOp>(l, x, fconst(b, l, ty, bias)), zero);
    return b.create<SelectOp>(l, lo, b.create<AddFOp>(l, x, fconst(b, l, ty, bias)), r);
  });
  // Imported whole (v4f-decompose-activations writes the elementwise body).
  t["Gelu"] = {20, kMaxOpset,
               [](const NodeAttrs &a, int64_t) -> std::string {
                 std::string approx = a.getString("approximate", "none");
                 return approx == "none" || approx == "tanh" ? "" : "approximate must be 'none' or 'tanh'";
               },
               [](NodeContext &c) -> LogicalResult {
                 Type t = elementOf(c.input(0));
                 if (!t.isF16() && !t.isF32() && !t.isF64())
                   return c.fail("input element type must be float16, float32 or float64");
                 c.setOutput(0, c.b.create<GeluOp>(c.loc, c.input(0),
                                                   c.b.getStringAttr(c.attrs.getString("approximate", "none"))));
                 return success();
               }};
}

} // namespace v4f
