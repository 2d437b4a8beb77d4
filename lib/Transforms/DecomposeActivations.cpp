//===- DecomposeActivations.cpp - v4f.gelu -> elementwise ops --------------===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEACTIVATIONS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return b.create<arith::ConstantOp>(l, b.getFloatAttr(t, v));
}

/// 0.5 * x * (1 + erf(x / sqrt(2))), or the tanh approximation, in x's type.
/// On float32 both forms are written as the named ops exporters use
/// (x * (1 + erf(x * 1/sqrt 2)) * 0.5, and the tanh form with x * x * x), so
/// that v4f-fuse-epilogues makes them the epilogue of a conv or matmul before
/// them, as it does for exported chains; dispatch-region formation fuses them
/// into one pass otherwise. Other types keep one elementwise body.
LogicalResult decomposeGelu(BuildContext &c, GeluOp op, SmallVectorImpl<Value> &results) {
  bool tanhApprox = op.getApproximate() == "tanh";
  Type ty = typeOf(op.getInput()).getElementType();
  if (ty.isF32()) {
    Value x = op.getInput();
    Value term; // erf(x / sqrt 2), or tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    if (tanhApprox) {
      Value cube = c.b.create<MulOp>(c.loc, c.b.create<MulOp>(c.loc, x, x), x);
      Value inner = c.b.create<AddOp>(c.loc, x, c.b.create<MulOp>(c.loc, constF32(c, {}, {0.044715f}), cube));
      term = c.b.create<TanhOp>(c.loc, c.b.create<MulOp>(c.loc, constF32(c, {}, {0.7978845608f}), inner));
    } else {
      term = c.b.create<ErfOp>(c.loc, c.b.create<MulOp>(c.loc, x, constF32(c, {}, {float(M_SQRT1_2)})));
    }
    Value onePlus = c.b.create<AddOp>(c.loc, term, constF32(c, {}, {1.f}));
    results.push_back(c.b.create<MulOp>(c.loc, c.b.create<MulOp>(c.loc, x, onePlus), constF32(c, {}, {0.5f})));
    return success();
  }
  auto y = buildElementwise(c, {op.getInput()}, ty, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    using namespace arith;
    Value x = a[0];
    Value half = fconst(b, l, ty, 0.5), one = fconst(b, l, ty, 1);
    if (tanhApprox) {
      Value x3 = b.create<MulFOp>(l, b.create<MulFOp>(l, x, x), x);
      Value inner = b.create<MulFOp>(l, fconst(b, l, ty, std::sqrt(2.0 / M_PI)),
                                     b.create<AddFOp>(l, x, b.create<MulFOp>(l, fconst(b, l, ty, 0.044715), x3)));
      return b.create<MulFOp>(l, b.create<MulFOp>(l, half, x),
                              b.create<AddFOp>(l, one, b.create<math::TanhOp>(l, inner)));
    }
    Value e = b.create<math::ErfOp>(l, b.create<MulFOp>(l, x, fconst(b, l, ty, M_SQRT1_2)));
    return b.create<MulFOp>(l, b.create<MulFOp>(l, half, x), b.create<AddFOp>(l, one, e));
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

struct DecomposeActivationsPass : v4f::impl::DecomposeActivationsBase<DecomposeActivationsPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<GeluOp>(getOperation(), decomposeGelu))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeActivationsPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<GeluOp>>(patterns.getContext(), decomposeGelu);
}

std::unique_ptr<Pass> v4f::createDecomposeActivationsPass() { return std::make_unique<DecomposeActivationsPass>(); }
