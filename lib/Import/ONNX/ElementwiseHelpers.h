//===- ElementwiseHelpers.h - shared by the elementwise importer files -*- C++ -*-===//
//
// Small builders used by ElementwiseOps.cpp and ActivationOps.cpp: scalar
// constants, the float-only unary importer shape, and `finish`, which folds
// an elementwise result with constant inputs right away.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_IMPORT_ONNX_ELEMENTWISEHELPERS_H
#define V4F_LIB_IMPORT_ONNX_ELEMENTWISEHELPERS_H

#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <functional>
#include <vector>

namespace v4f {
namespace elementwise {

using namespace mlir;

inline bool isFloat(Type t) { return llvm::isa<FloatType>(t); }
inline bool isUnsigned(Type t) { return t.isUnsignedInteger(); }
inline Type elementOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()).getElementType(); }

inline Value fconst(OpBuilder &b, Location loc, Type t, double v) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, v));
}
inline Value iconst(OpBuilder &b, Location loc, Type t, int64_t v) {
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, v));
}

inline std::vector<Value> allInputs(NodeContext &c) {
  std::vector<Value> v;
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i)) v.push_back(c.input(i));
  return v;
}

inline LogicalResult finish(NodeContext &c, FailureOr<Value> r) {
  if (failed(r)) return failure();
  // Constant inputs (shape arithmetic in function-expanded graphs) fold
  // right away so later shape-taking nodes see constants.
  if (auto folded = foldElementwise(*r)) {
    c.setConstantOutput(0, *folded);
    return success();
  }
  c.setOutput(0, *r);
  return success();
}

/// A float-only unary op: `fn(b, loc, x)` with x of the input's float type.
inline OpImporter floatUnary(int64_t minOpset, std::function<Value(NodeContext &, OpBuilder &, Location, Value)> fn) {
  return {minOpset, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
          [fn](NodeContext &c) -> LogicalResult {
            Type t = elementOf(c.input(0));
            if (!isFloat(t)) return c.fail("input element type must be a float type");
            return finish(c, buildElementwise(c, {c.input(0)}, t, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
                            return fn(c, b, l, a[0]);
                          }));
          }};
}

template <typename MathOp>
OpImporter mathUnary(int64_t minOpset = 1) {
  return floatUnary(minOpset,
                    [](NodeContext &, OpBuilder &b, Location l, Value x) -> Value { return b.create<MathOp>(l, x); });
}

inline Value softplus(OpBuilder &b, Location l, Value x) {
  // log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) to avoid overflow.
  Type t = x.getType();
  Value zero = fconst(b, l, t, 0);
  Value ax = b.create<math::AbsFOp>(l, x);
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, ax));
  return b.create<arith::AddFOp>(l, b.create<arith::MaximumFOp>(l, x, zero), b.create<math::Log1pOp>(l, e));
}

} // namespace elementwise
} // namespace v4f

#endif // V4F_LIB_IMPORT_ONNX_ELEMENTWISEHELPERS_H
