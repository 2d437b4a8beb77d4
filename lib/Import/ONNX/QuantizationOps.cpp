//===- QuantizationOps.cpp - ONNX quantization operators -> whole v4f ops --===//
//
// QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger and QLinearConv import 1:1 as v4f.quantize, v4f.dequantize,
// v4f.matmul_integer, v4f.qlinear_matmul, v4f.conv_integer and
// v4f.qlinear_conv; v4f-decompose-quantization rewrites them into float32 /
// int32 compositions (lib/Transforms/DecomposeQuantization.cpp explains the
// exactness argument). The importer resolves the opset variants (output
// dtype, axis, block_size, precision, auto_pad) and checks the types and
// shapes with messages that name the ONNX inputs.
//
// DynamicQuantizeLinear stays a composition: two v4f.reduce (max, min),
// scalar v4f.elementwise ops for the scale and zero point, and a
// v4f.quantize.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace v4f {
namespace {

Type elementOf(Value v) { return typeOf(v).getElementType(); }
bool isScaleType(Type t) { return t.isF16() || t.isF32() || t.isF64() || t.isBF16(); }

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return b.create<arith::ConstantOp>(l, b.getFloatAttr(t, v));
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

/// Scale or zero point input `i` must broadcast against x for `axes`.
LogicalResult checkQuantParam(NodeContext &c, size_t i, RankedTensorType x, const QuantAxes &axes,
                              const std::string &what) {
  auto t = c.inputType(i);
  if (t.hasStaticShape() && t.getNumElements() == 1) return success();
  if (axes.axis < 0)
    return c.fail("axis " + std::to_string(c.attrs.getInt("axis", 1)) + " is out of range for the rank-" +
                  std::to_string(x.getRank()) + " input (" + what + " is not a single value)");
  std::string error = quantParamShapeError(x, t, axes.axis, axes.blockSize, what);
  if (!error.empty()) return c.fail(error);
  return success();
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
  if (c.hasInput(2)) out = elementOf(c.input(2));
  bool f8 = isFloat8Type(out);
  if (!f8 && !quantizedIntRange(out))
    return c.fail("quantizing to " + typeName(out) +
                  " is not supported (uint8/int8/uint16/int16/uint4/int4/uint2/int2/float8 are)");
  auto axes = quantAxes(c, xt);
  if (failed(axes) || failed(checkQuantParam(c, 1, xt, *axes, "y_scale"))) return failure();
  // A float8 zero point is ignored (it must be 0), so it is not kept.
  bool hasZp = c.hasInput(2) && !f8;
  if (hasZp && failed(checkQuantParam(c, 2, xt, *axes, "y_zero_point"))) return failure();
  if (f8 && failed(checkFloat8ZeroPoint(c, 2))) return failure();
  TypeAttr precision;
  if (c.attrs.has("precision") && c.attrs.getInt("precision", 0) != 0) {
    int64_t code = c.attrs.getInt("precision", 0);
    Type dt = importElementType(c.g.ctx, int32_t(code));
    if (!dt || !isScaleType(dt)) return c.fail("precision " + onnxTypeName(int32_t(code)) + " is not supported");
    precision = TypeAttr::get(dt);
  }
  auto y = c.b.create<QuantizeOp>(c.loc, RankedTensorType::get(xt.getShape(), out), c.input(0), c.input(1),
                                  hasZp ? c.input(2) : Value(), c.b.getI64IntegerAttr(std::max<int64_t>(axes->axis, 0)),
                                  c.b.getI64IntegerAttr(axes->blockSize),
                                  c.b.getBoolAttr(c.attrs.getInt("saturate", 1) != 0), precision);
  c.setOutput(0, y);
  return success();
}

LogicalResult importDequantizeLinear(NodeContext &c) {
  auto xt = c.inputType(0);
  Type xe = xt.getElementType(), se = c.inputType(1).getElementType();
  bool f8 = isFloat8Type(xe);
  if (!f8 && !quantizedIntRange(xe) && !xe.isInteger(32))
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
  if (failed(axes) || failed(checkQuantParam(c, 1, xt, *axes, "x_scale"))) return failure();
  if (hasZp && failed(checkQuantParam(c, 2, xt, *axes, "x_zero_point"))) return failure();
  auto y = c.b.create<DequantizeOp>(
      c.loc, RankedTensorType::get(xt.getShape(), out), c.input(0), c.input(1), hasZp ? c.input(2) : Value(),
      c.b.getI64IntegerAttr(std::max<int64_t>(axes->axis, 0)), c.b.getI64IntegerAttr(axes->blockSize));
  c.setOutput(0, y);
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
  auto y =
      c.b.create<QuantizeOp>(c.loc, RankedTensorType::get(xt.getShape(), u8), c.input(0), *scale, *zp,
                             c.b.getI64IntegerAttr(0), c.b.getI64IntegerAttr(0), c.b.getBoolAttr(true), TypeAttr());
  c.setOutput(0, y);
  if (c.outputUsed(1)) c.setOutput(1, *scale);
  if (c.outputUsed(2)) c.setOutput(2, *zp);
  return success();
}

//===----------------------------------------------------------------------===//
// Integer matmul / conv
//===----------------------------------------------------------------------===//

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

LogicalResult checkScale(NodeContext &c, size_t i, const char *name) {
  Type t = elementOf(c.input(i));
  if (!isScaleType(t)) return c.fail(std::string(name) + " must be a float type (got " + typeName(t) + ")");
  return success();
}

/// Runs the verifier of the just-built `op`; on failure erases it and fails
/// the node with the verifier's message (the broadcast rules of the scales
/// and zero points live in the verifier only).
LogicalResult verifyBuilt(NodeContext &c, Operation *op) {
  std::string message;
  ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &d) {
    if (message.empty()) message = d.str();
    return success();
  });
  if (succeeded(verify(op))) return success();
  op->erase();
  return c.fail(message);
}

/// The numpy matmul shape of inputs a and b.
FailureOr<SmallVector<int64_t>> matmulShape(NodeContext &c, size_t a, size_t b) {
  SmallVector<int64_t> shape;
  if (failed(matmulResultShape(c.inputType(a).getShape(), c.inputType(b).getShape(), shape)))
    return c.fail("'" + c.node.input(a) + "' (" + typeName(c.inputType(a)) + ") and '" + c.node.input(b) + "' (" +
                  typeName(c.inputType(b)) + ") do not multiply (contraction or batch dims differ)");
  return shape;
}

LogicalResult importMatMulInteger(NodeContext &c) {
  if (failed(check8Bit(c, 0, "A")) || failed(check8Bit(c, 1, "B"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "a_zero_point")) || failed(checkZeroPoint(c, 3, 1, "b_zero_point")))
    return failure();
  auto shape = matmulShape(c, 0, 1);
  if (failed(shape)) return failure();
  auto type = RankedTensorType::get(*shape, c.b.getI32Type());
  auto y = c.b.create<MatMulIntegerOp>(c.loc, type, c.input(0), c.input(1), c.hasInput(2) ? c.input(2) : Value(),
                                       c.hasInput(3) ? c.input(3) : Value());
  if (failed(verifyBuilt(c, y))) return failure();
  c.setOutput(0, y);
  return success();
}

LogicalResult importQLinearMatMul(NodeContext &c) {
  for (size_t i : {0, 1, 2, 3, 4, 5, 6})
    if (!c.hasInput(i))
      return c.fail("inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point and y_scale are required");
  if (isFloat8Type(elementOf(c.input(0))) || isFloat8Type(elementOf(c.input(3))))
    return c.fail("float8 QLinearMatMul is not supported");
  if (failed(check8Bit(c, 0, "a")) || failed(check8Bit(c, 3, "b"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "a_zero_point")) || failed(checkZeroPoint(c, 5, 3, "b_zero_point")))
    return failure();
  for (auto [i, n] : {std::pair<size_t, const char *>{1, "a_scale"}, {4, "b_scale"}, {6, "y_scale"}})
    if (failed(checkScale(c, i, n))) return failure();
  Type out = c.hasInput(7) ? elementOf(c.input(7)) : elementOf(c.input(0));
  if (!out.isInteger(8)) return c.fail("y_zero_point must be int8 or uint8");
  auto shape = matmulShape(c, 0, 3);
  if (failed(shape)) return failure();
  auto y =
      c.b.create<QLinearMatMulOp>(c.loc, RankedTensorType::get(*shape, out), c.input(0), c.input(1), c.input(2),
                                  c.input(3), c.input(4), c.input(5), c.input(6), c.hasInput(7) ? c.input(7) : Value());
  if (failed(verifyBuilt(c, y))) return failure();
  c.setOutput(0, y);
  return success();
}

/// `name` (input i) must be one value.
LogicalResult checkSingle(NodeContext &c, size_t i, const std::string &what) {
  if (c.hasInput(i) && (!c.inputType(i).hasStaticShape() || c.inputType(i).getNumElements() != 1)) return c.fail(what);
  return success();
}

/// One value or [M] (per output channel).
LogicalResult checkChannelParam(NodeContext &c, size_t i, int64_t channels) {
  auto t = c.inputType(i);
  if (t.hasStaticShape() && t.getNumElements() == 1) return success();
  if (t.getRank() != 1 || t.getDimSize(0) != channels)
    return c.fail("'" + c.node.input(i) + "' must be a scalar or a 1-D per-output-channel tensor");
  return success();
}

LogicalResult importConvInteger(NodeContext &c) {
  if (failed(check8Bit(c, 0, "x")) || failed(check8Bit(c, 1, "w"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "x_zero_point")) || failed(checkZeroPoint(c, 3, 1, "w_zero_point")))
    return failure();
  if (failed(checkSingle(c, 2, "x_zero_point must be a single value"))) return failure();
  auto win = convWindow(c, c.inputType(0), c.inputType(1));
  if (failed(win)) return failure();
  if (c.hasInput(3) && failed(checkChannelParam(c, 3, c.inputType(1).getDimSize(0)))) return failure();
  auto y = c.b.create<ConvIntegerOp>(c.loc, RankedTensorType::get(win->shape, c.b.getI32Type()), c.input(0), c.input(1),
                                     c.hasInput(2) ? c.input(2) : Value(), c.hasInput(3) ? c.input(3) : Value(),
                                     c.b.getDenseI64ArrayAttr(win->strides), c.b.getDenseI64ArrayAttr(win->dilations),
                                     c.b.getDenseI64ArrayAttr(win->pads), c.b.getI64IntegerAttr(win->group));
  c.setOutput(0, y);
  return success();
}

LogicalResult importQLinearConv(NodeContext &c) {
  for (size_t i : {0, 1, 2, 3, 4, 5, 6})
    if (!c.hasInput(i))
      return c.fail("inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point and y_scale are required");
  if (failed(check8Bit(c, 0, "x")) || failed(check8Bit(c, 3, "w"))) return failure();
  if (failed(checkZeroPoint(c, 2, 0, "x_zero_point")) || failed(checkZeroPoint(c, 5, 3, "w_zero_point")))
    return failure();
  for (auto [i, n] : {std::pair<size_t, const char *>{1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}})
    if (failed(checkScale(c, i, n))) return failure();
  Type out = c.hasInput(7) ? elementOf(c.input(7)) : elementOf(c.input(0));
  if (!out.isInteger(8)) return c.fail("y_zero_point must be int8 or uint8");
  for (size_t i : {1, 2, 6, 7})
    if (failed(checkSingle(c, i,
                           "'" + (i < c.numInputs() ? c.node.input(i) : "") + "' must be a single value (per-tensor)")))
      return failure();
  auto win = convWindow(c, c.inputType(0), c.inputType(3));
  if (failed(win)) return failure();
  int64_t channels = c.inputType(3).getDimSize(0);
  if (failed(checkChannelParam(c, 5, channels)) || failed(checkChannelParam(c, 4, channels))) return failure();
  if (c.hasInput(8)) {
    auto bt = c.inputType(8);
    if (!bt.getElementType().isInteger(32) || bt.getRank() != 1 || bt.getDimSize(0) != channels)
      return c.fail("B must be an int32 tensor of shape [M]");
  }
  auto y = c.b.create<QLinearConvOp>(c.loc, RankedTensorType::get(win->shape, out), c.input(0), c.input(1), c.input(2),
                                     c.input(3), c.input(4), c.input(5), c.input(6),
                                     c.hasInput(7) ? c.input(7) : Value(), c.hasInput(8) ? c.input(8) : Value(),
                                     c.b.getDenseI64ArrayAttr(win->strides), c.b.getDenseI64ArrayAttr(win->dilations),
                                     c.b.getDenseI64ArrayAttr(win->pads), c.b.getI64IntegerAttr(win->group));
  c.setOutput(0, y);
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
