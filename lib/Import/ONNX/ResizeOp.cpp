//===- ResizeOp.cpp - ONNX Resize as per-axis gathers and weighted sums ---===//
//
// Resize is separable: each resized axis is interpolated in turn. For an axis
// of input size I and output size O, every output position o maps to a source
// coordinate x (coordinate_transformation_mode), which selects n taps
// (nearest 1, linear 2, cubic 4) at clamped indices with coefficients. The
// importer builds, per axis:
//   o      = range(0, O)                                   (v4f.range)
//   idx_k  = clamp(start(x(o)) + k, 0, I - 1)              (v4f.elementwise)
//   w_k    = coefficient k of x(o)                         (v4f.elementwise)
//   y      = sum_k w_k * gather(x, idx_k, axis)            (v4f.gather, elementwise)
// Scales and sizes may be graph inputs: O comes from v4f.scaled_sizes (scales)
// or the sizes values, both followed by the plan at run time, and the
// coordinate math reads the scale as a tensor. Coordinates are computed in
// float64 like ONNX's reference, the sum in float32.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

struct ResizeAttrs {
  std::string mode, ctm, nearestMode;
  double cubicA;
  bool excludeOutside;
  float extrapolation;
};

/// Operands of the per-axis coordinate bodies, by position.
struct AxisInputs {
  int64_t inSize;
  // Body argument positions: o (i64), O (i64 [1]), then either the scale
  // (f32 [1]) or num/den (i64 [1]) with scale = num / den, then roi start/end.
  bool scaleIsRatio;
  bool hasRoi;
  // A dynamic input size is read from body argument `inArg` (i64), else
  // `inSize` is a constant.
  int inArg = -1;
};

struct Scalar {
  OpBuilder &b;
  Location l;
  Value f(double v) { return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v)); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) { return b.create<arith::CmpFOp>(l, p, x, y); }
  Value sel(Value c, Value x, Value y) { return b.create<arith::SelectOp>(l, c, x, y); }
  Value toF(Value i) { return b.create<arith::SIToFPOp>(l, b.getF64Type(), i); }
  Value ext(Value x) { return x.getType().isF64() ? x : (Value)b.create<arith::ExtFOp>(l, b.getF64Type(), x); }
  Value floor(Value x) { return b.create<math::FloorOp>(l, x); }
};

/// The axis's input size I as a float64 body value.
Value inputSize(Scalar &s, const AxisInputs &ax, ArrayRef<Value> args) {
  return ax.inArg >= 0 ? s.toF(args[ax.inArg]) : s.f(double(ax.inSize));
}

/// Source coordinate of output position args[0] along one axis.
Value sourceCoordinate(Scalar &s, const ResizeAttrs &a, const AxisInputs &ax, ArrayRef<Value> args) {
  Value o = s.toF(args[0]), outInt = s.toF(args[1]);
  Value scale = ax.scaleIsRatio ? s.div(s.toF(args[2]), s.toF(args[3])) : s.ext(args[2]);
  size_t next = ax.scaleIsRatio ? 4 : 3;
  Value in = inputSize(s, ax, args), inMinus1 = s.sub(in, s.f(1));
  Value outWidth = s.mul(scale, in);
  Value isOne = s.cmp(arith::CmpFPredicate::OEQ, outWidth, s.f(1));
  Value half = s.f(0.5);
  Value halfPixel = s.sub(s.div(s.add(o, half), scale), half);
  if (a.ctm == "align_corners") return s.sel(isOne, s.f(0), s.div(s.mul(o, inMinus1), s.sub(outWidth, s.f(1))));
  if (a.ctm == "asymmetric") return s.div(o, scale);
  if (a.ctm == "pytorch_half_pixel") return s.sel(isOne, s.f(-0.5), halfPixel);
  if (a.ctm == "half_pixel_symmetric") {
    Value adjustment = s.div(outInt, outWidth);
    Value offset = s.mul(s.div(in, s.f(2)), s.sub(s.f(1), adjustment));
    return s.add(offset, halfPixel);
  }
  if (a.ctm == "tf_crop_and_resize") {
    Value r0 = s.ext(args[next]), r1 = s.ext(args[next + 1]);
    Value span = s.mul(s.sub(r1, r0), inMinus1);
    Value x = s.sel(isOne, s.div(span, s.f(2)), s.div(s.mul(o, span), s.sub(outWidth, s.f(1))));
    return s.add(x, s.mul(r0, inMinus1));
  }
  return halfPixel; // half_pixel
}

int64_t tapCount(const ResizeAttrs &a) { return a.mode == "cubic" ? 4 : 2; }

/// Coefficients of the taps for a coordinate's fractional part `ratio`.
SmallVector<Value> coefficients(Scalar &s, const ResizeAttrs &a, Value ratio) {
  if (a.mode == "linear") return {s.sub(s.f(1), ratio), ratio};
  if (a.mode == "cubic") {
    double A = a.cubicA;
    auto outer = [&](Value t) { // |t| in [1, 2]
      return s.sub(s.mul(s.add(s.mul(s.sub(s.mul(s.f(A), t), s.f(5 * A)), t), s.f(8 * A)), t), s.f(4 * A));
    };
    auto inner = [&](Value t) { // |t| in [0, 1]
      return s.add(s.mul(s.mul(s.sub(s.mul(s.f(A + 2), t), s.f(A + 3)), t), t), s.f(1));
    };
    Value oneMinus = s.sub(s.f(1), ratio);
    return {outer(s.add(ratio, s.f(1))), inner(ratio), inner(oneMinus), outer(s.add(oneMinus, s.f(1)))};
  }
  // nearest: one of the two taps; an integral coordinate takes the second.
  Value isInt = s.cmp(arith::CmpFPredicate::OEQ, ratio, s.f(1));
  Value second;
  if (a.nearestMode == "round_prefer_ceil")
    second = s.cmp(arith::CmpFPredicate::OGE, ratio, s.f(0.5));
  else if (a.nearestMode == "floor")
    second = s.b.create<arith::ConstantOp>(s.l, s.b.getBoolAttr(false));
  else if (a.nearestMode == "ceil")
    second = s.b.create<arith::ConstantOp>(s.l, s.b.getBoolAttr(true));
  else
    second = s.cmp(arith::CmpFPredicate::OGT, ratio, s.f(0.5));
  second = s.b.create<arith::OrIOp>(s.l, second, isInt);
  Value w1 = s.sel(second, s.f(1), s.f(0));
  return {s.sub(s.f(1), w1), w1};
}

/// Index of the first tap (may lie outside [0, I)) and the coefficients.
std::pair<Value, SmallVector<Value>> taps(Scalar &s, const ResizeAttrs &a, const AxisInputs &ax, ArrayRef<Value> args) {
  Value x = sourceCoordinate(s, a, ax, args);
  Value xf = s.floor(x);
  Value ratio = s.sel(s.cmp(arith::CmpFPredicate::OEQ, x, xf), s.f(1), s.sub(x, xf));
  SmallVector<Value> coeffs = coefficients(s, a, ratio);
  int64_t n = tapCount(a), pad = n / 2;
  Value padded = s.add(x, s.f(double(pad)));
  Value p = s.floor(padded);
  Value frac = s.sub(padded, p);
  Value offset =
      s.sel(s.cmp(arith::CmpFPredicate::OEQ, frac, s.f(0)), s.f(double(-(n / 2))), s.f(double(-(n / 2) + 1)));
  Value start = s.sub(s.add(p, offset), s.f(double(pad)));
  Value startI = s.b.create<arith::FPToSIOp>(s.l, s.b.getI64Type(), start);
  if (a.excludeOutside) {
    Value sum = s.f(0);
    for (int64_t k = 0; k < n; ++k) {
      Value at = s.add(start, s.f(double(k)));
      Value outside = s.b.create<arith::OrIOp>(s.l, s.cmp(arith::CmpFPredicate::OLT, at, s.f(0)),
                                               s.cmp(arith::CmpFPredicate::OGE, at, inputSize(s, ax, args)));
      coeffs[k] = s.sel(outside, s.f(0), coeffs[k]);
      sum = s.add(sum, coeffs[k]);
    }
    sum = s.sel(s.cmp(arith::CmpFPredicate::OEQ, sum, s.f(0)), s.f(1), sum);
    for (auto &w : coeffs) w = s.div(w, sum);
  }
  return {startI, coeffs};
}

/// clamp(i, 0, I - 1) with I the axis's (constant or body argument) size.
Value clampIndex(OpBuilder &b, Location l, Value i, const AxisInputs &ax, ArrayRef<Value> args) {
  Value lo = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
  Value hi = ax.inArg >= 0 ? (Value)b.create<arith::SubIOp>(l, args[ax.inArg],
                                                            b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1)))
                           : (Value)b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(ax.inSize - 1));
  return b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, i, lo), hi);
}

/// What Resize's attributes and inputs ask for, validated.
struct ResizeSpec {
  ResizeAttrs a;
  std::string policy;
  SmallVector<int64_t> axes;
  bool useSizes = false, useScales = false, tfCrop = false;
};

/// The per-axis quantities: output size O (i64 [1]) and the scale (f32
/// [1]) or the exact ratio num/den (i64 [1] each).
struct ResizeAxes {
  SmallVector<Value> outSize, scale, num, den;
  // Input size I (i64 [1]) of each resized axis: a constant, or read from
  // the input's shape when the dim is dynamic.
  SmallVector<Value> inSize;
};

Value constI64(NodeContext &c, ArrayRef<int64_t> shape, ArrayRef<int64_t> v) {
  return c.b.create<arith::ConstantOp>(c.loc,
                                       DenseElementsAttr::get(RankedTensorType::get(shape, c.b.getI64Type()), v));
}
/// t[i] as a [1] tensor.
Value element(NodeContext &c, Value t, int64_t i) {
  return c.b.create<GatherOp>(c.loc, t, constI64(c, {1}, {i}), c.b.getI64IntegerAttr(0));
}
FailureOr<Value> intOp(NodeContext &c, ArrayRef<Value> ins,
                       const std::function<Value(OpBuilder &, Location, ArrayRef<Value>)> &fn) {
  return buildElementwise(c, ins, c.b.getI64Type(), fn);
}

LogicalResult parseResize(NodeContext &c, ResizeSpec &spec) {
  auto in = c.inputType(0);
  if (!in.getElementType().isF32()) return c.fail("input must be float32 (other element types are not supported yet)");
  if (c.opset < 11) return c.fail("Resize before opset 11 is not supported");
  ResizeAttrs &a = spec.a;
  a = ResizeAttrs{c.attrs.getString("mode", "nearest"),
                  c.attrs.getString("coordinate_transformation_mode", "half_pixel"),
                  c.attrs.getString("nearest_mode", "round_prefer_floor"),
                  c.attrs.getFloat("cubic_coeff_a", -0.75f),
                  c.attrs.getInt("exclude_outside", 0) != 0,
                  c.attrs.getFloat("extrapolation_value", 0.0f)};
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") return c.fail("unknown mode '" + a.mode + "'");
  static const char *modes[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                "align_corners", "asymmetric",           "tf_crop_and_resize"};
  if (!llvm::is_contained(modes, a.ctm)) return c.fail("unknown coordinate_transformation_mode '" + a.ctm + "'");
  static const char *nearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(nearestModes, a.nearestMode)) return c.fail("unknown nearest_mode '" + a.nearestMode + "'");
  if (c.attrs.getInt("antialias", 0) != 0) return c.fail("antialias=1 is not supported yet");
  std::string &policy = spec.policy;
  policy = c.attrs.getString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return c.fail("unknown keep_aspect_ratio_policy '" + policy + "'");

  int64_t rank = in.getRank();
  SmallVector<int64_t> &axes = spec.axes;
  if (c.attrs.has("axes")) {
    for (int64_t ax : c.attrs.getInts("axes")) {
      if (ax < -rank || ax >= rank) return c.fail("axis out of range");
      axes.push_back(ax < 0 ? ax + rank : ax);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  int64_t n = axes.size();
  // A run-time length counts as given (it must then match, checked at run time).
  auto nonEmpty = [&](size_t i) {
    return c.hasInput(i) && (!c.inputType(i).hasStaticShape() || c.inputType(i).getNumElements() != 0);
  };
  bool useSizes = spec.useSizes = nonEmpty(3), useScales = spec.useScales = nonEmpty(2);
  if (useSizes == useScales) return c.fail("exactly one of scales and sizes must be given");
  size_t given = useSizes ? 3 : 2;
  refineInput(c, given, {n});
  auto gt = c.inputType(given);
  if (gt.getRank() != 1 || gt.getDimSize(0) != n)
    return c.fail(std::string(useSizes ? "sizes" : "scales") + " must have one entry per resized axis");
  if (useSizes && !gt.getElementType().isInteger(64)) return c.fail("sizes must be int64");
  if (useScales && !gt.getElementType().isF32()) return c.fail("scales must be float32");
  bool tfCrop = spec.tfCrop = a.ctm == "tf_crop_and_resize";
  if (tfCrop) {
    if (!nonEmpty(1)) return c.fail("tf_crop_and_resize needs roi");
    refineInput(c, 1, {2 * n});
    if (c.inputType(1).getRank() != 1 || c.inputType(1).getDimSize(0) != 2 * n)
      return c.fail("roi must have 2 entries per resized axis");
    if (!c.inputType(1).getElementType().isF32()) return c.fail("roi must be float32");
  }

  return success();
}

/// Output sizes from scales (a ScaledSizes op) or sizes (with
/// keep_aspect_ratio_policy), and the scales or ratios the taps use.
LogicalResult resizeSizes(NodeContext &c, const ResizeSpec &spec, ResizeAxes &r) {
  auto in = c.inputType(0);
  const ResizeAttrs &a = spec.a;
  const std::string &policy = spec.policy;
  ArrayRef<int64_t> axes = spec.axes;
  bool useScales = spec.useScales;
  int64_t n = axes.size();
  auto i64 = c.b.getI64Type();
  (void)a;
  // Per axis: output size O (i64 [1]) and the scale (f32 [1], or num/den).
  SmallVector<Value> &outSize = r.outSize, &scale = r.scale, &num = r.num, &den = r.den;
  outSize.resize(n);
  scale.resize(n);
  num.resize(n);
  den.resize(n);
  Value shape;
  for (int64_t i = 0; i < n; ++i) {
    int64_t I = in.getDimSize(axes[i]);
    if (I != kDyn) {
      r.inSize.push_back(constI64(c, {1}, {I}));
      continue;
    }
    if (!shape)
      shape = c.b.create<ShapeOp>(c.loc, RankedTensorType::get({in.getRank()}, i64), c.input(0),
                                  c.b.getI64IntegerAttr(0), c.b.getI64IntegerAttr(in.getRank()));
    r.inSize.push_back(element(c, shape, axes[i]));
  }
  if (useScales) {
    Value sizes = c.b.create<ScaledSizesOp>(c.loc, RankedTensorType::get({n}, i64), c.input(0), c.input(2),
                                            c.b.getDenseI64ArrayAttr(axes));
    // Constant scales of static dims: the output size floor(I * scale) is
    // known now (as v4f.scaled_sizes computes it, in double), so the
    // resized tensor's type is static (exported detectors' and FPNs'
    // Resize(scales = [1, 1, 2, 2])) and the kernels after it see its plane.
    auto constScales = c.constantInput(2);
    std::optional<SmallVector<float>> scaleValues;
    if (constScales) scaleValues = llvm::to_vector(constScales->getValues<float>());
    for (int64_t i = 0; i < n; ++i) {
      int64_t I = in.getDimSize(axes[i]);
      double O = scaleValues && I != kDyn ? std::floor(double((*scaleValues)[i]) * double(I)) : -1;
      outSize[i] = O >= 0 && O < double(int64_t(1) << 40) ? constI64(c, {1}, {int64_t(O)}) : element(c, sizes, i);
      scale[i] = element(c, c.input(2), i);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      // A size known at compile time gives a static result dim.
      ShapeElement e = shapeElement(c.input(3), i);
      outSize[i] = e.value ? constI64(c, {1}, {*e.value}) : element(c, c.input(3), i);
      num[i] = outSize[i];
      den[i] = r.inSize[i];
    }
    if (policy != "stretch") {
      // One scale for all axes: the smallest (not_larger) or largest ratio
      // O_i / I_i, compared exactly as O_i * I_j < O_j * I_i.
      Value bn = num[0], bd = den[0];
      for (int64_t i = 1; i < n; ++i) {
        auto pick = [&](bool wantNum) {
          return intOp(c, {num[i], den[i], bn, bd}, [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
            Value lhs = b.create<arith::MulIOp>(l, v[0], v[3]), rhs = b.create<arith::MulIOp>(l, v[2], v[1]);
            auto pred = policy == "not_larger" ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sgt;
            Value better = b.create<arith::CmpIOp>(l, pred, lhs, rhs);
            return b.create<arith::SelectOp>(l, better, wantNum ? v[0] : v[1], wantNum ? v[2] : v[3]);
          });
        };
        auto nn = pick(true), dd = pick(false);
        if (failed(nn) || failed(dd)) return failure();
        bn = *nn;
        bd = *dd;
      }
      for (int64_t i = 0; i < n; ++i) {
        // round_half_up(num / den * I) = floor((2 * num * I + den) / (2 * den))
        auto o = intOp(c, {bn, bd, r.inSize[i]}, [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
          Value two = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(2));
          Value top =
              b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, b.create<arith::MulIOp>(l, two, v[0]), v[2]), v[1]);
          return b.create<arith::DivSIOp>(l, top, b.create<arith::MulIOp>(l, two, v[1]));
        });
        if (failed(o)) return failure();
        outSize[i] = *o;
        num[i] = bn;
        den[i] = bd;
      }
    }
  }

  return success();
}

/// Resizes `x` along axis `i` of the spec: gathers of the taps weighted
/// (linear/cubic) or picked (nearest), tf_crop_and_resize extrapolation.
FailureOr<Value> resizeAxis(NodeContext &c, const ResizeSpec &spec, const ResizeAxes &r, Value x, int64_t i) {
  auto in = c.inputType(0);
  const ResizeAttrs &a = spec.a;
  int64_t rank = in.getRank(), n = spec.axes.size();
  bool useSizes = spec.useSizes, tfCrop = spec.tfCrop;
  auto i64 = c.b.getI64Type();
  const SmallVector<Value> &outSize = r.outSize, &scale = r.scale, &num = r.num, &den = r.den;
  int64_t axis = spec.axes[i], I = in.getDimSize(axis);
  AxisInputs ax{I, useSizes, tfCrop};
  Value zero = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), int64_t(0)));
  Value one = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), int64_t(1)));
  Value limit = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({}, i64), outSize[i], Value(),
                                      c.b.getDenseI64ArrayAttr({}), c.b.getBoolAttr(false));
  int64_t staticO = kDyn;
  if (auto cst = outSize[i].getDefiningOp<arith::ConstantOp>())
    staticO = llvm::cast<DenseIntElementsAttr>(cst.getValue()).getValues<APInt>()[0].getSExtValue();
  Value o = c.b.create<RangeOp>(c.loc, RankedTensorType::get({staticO}, i64), zero, limit, one);
  SmallVector<Value> ins = {o, outSize[i]};
  if (useSizes)
    ins.append({num[i], den[i]});
  else
    ins.push_back(scale[i]);
  if (tfCrop) ins.append({element(c, c.input(1), i), element(c, c.input(1), n + i)});
  if (I == kDyn) {
    ax.inArg = ins.size();
    ins.push_back(r.inSize[i]);
  }

  int64_t taps_ = tapCount(a);
  // Weights shaped [O, 1, ..., 1] to broadcast along `axis`.
  SmallVector<int64_t> wShape(rank - axis, 1), wSources(rank - axis, -1);
  wShape[0] = kDyn;
  wSources[0] = 0;
  auto asColumn = [&](Value v) -> Value {
    // The leading dim is copied from v (dim_sources 0): static when the
    // output size is known at compile time (e.g. H fixed with --dim).
    auto vt = llvm::cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(wShape);
    shape[0] = vt.getDimSize(0);
    return c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(shape, vt.getElementType()), v, Value(),
                                 c.b.getDenseI64ArrayAttr(wSources), c.b.getBoolAttr(false));
  };
  SmallVector<Value> sumIns;
  if (a.mode == "nearest") {
    // The tap with coefficient 1.
    auto idx = intOp(c, ins, [&](OpBuilder &b, Location l, ArrayRef<Value> args) -> Value {
      Scalar s{b, l};
      auto [start, w] = taps(s, a, ax, args);
      Value second = s.cmp(arith::CmpFPredicate::OGT, w[1], s.f(0.5));
      Value at = b.create<arith::AddIOp>(l, start, b.create<arith::ExtUIOp>(l, b.getI64Type(), second));
      return clampIndex(b, l, at, ax, args);
    });
    if (failed(idx)) return failure();
    sumIns.push_back(c.b.create<GatherOp>(c.loc, x, *idx, c.b.getI64IntegerAttr(axis)));
  } else {
    for (int64_t k = 0; k < taps_; ++k) {
      auto idx = intOp(c, ins, [&](OpBuilder &b, Location l, ArrayRef<Value> args) -> Value {
        Scalar s{b, l};
        Value start = taps(s, a, ax, args).first;
        return clampIndex(
            b, l, b.create<arith::AddIOp>(l, start, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(k))), ax, args);
      });
      auto w = buildElementwise(c, ins, c.b.getF32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> args) -> Value {
        Scalar s{b, l};
        return b.create<arith::TruncFOp>(l, b.getF32Type(), taps(s, a, ax, args).second[k]);
      });
      if (failed(idx) || failed(w)) return failure();
      sumIns.push_back(c.b.create<GatherOp>(c.loc, x, *idx, c.b.getI64IntegerAttr(axis)));
      sumIns.push_back(asColumn(*w));
    }
  }
  if (tfCrop) {
    // Positions whose source lies outside [0, I - 1] take extrapolation_value.
    auto outside =
        buildElementwise(c, ins, c.b.getI1Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> args) -> Value {
          Scalar s{b, l};
          Value xo = sourceCoordinate(s, a, ax, args);
          return b.create<arith::OrIOp>(l, s.cmp(arith::CmpFPredicate::OLT, xo, s.f(0)),
                                        s.cmp(arith::CmpFPredicate::OGT, xo, s.sub(inputSize(s, ax, args), s.f(1))));
        });
    if (failed(outside)) return failure();
    sumIns.push_back(asColumn(*outside));
  }
  bool nearest = a.mode == "nearest";
  if (nearest && !tfCrop) return sumIns[0]; // the gather is the result: no copy
  auto y = buildElementwise(c, sumIns, c.b.getF32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
    Value acc;
    size_t pairs = nearest ? 0 : size_t(taps_);
    if (nearest) acc = v[0];
    for (size_t k = 0; k < pairs; ++k) {
      Value term = b.create<arith::MulFOp>(l, v[2 * k], v[2 * k + 1]);
      acc = acc ? (Value)b.create<arith::AddFOp>(l, acc, term) : term;
    }
    if (tfCrop)
      acc = b.create<arith::SelectOp>(l, v.back(), b.create<arith::ConstantOp>(l, b.getF32FloatAttr(a.extrapolation)),
                                      acc);
    return acc;
  });
  return y;
}

/// An axis resized to its own size (scale exactly 1) maps every output
/// position onto itself in every coordinate mode but tf_crop_and_resize:
/// the axis is left alone. Known when the size is (the input's own dim, or
/// a constant equal to its static value) or the scale is the constant 1.
bool isIdentityAxis(NodeContext &c, const ResizeSpec &spec, int64_t i) {
  auto in = c.inputType(0);
  int64_t axis = spec.axes[i];
  if (spec.useSizes) {
    if (spec.policy != "stretch") return false;
    ShapeElement e = shapeElement(c.input(3), i);
    if (e.value) return !in.isDynamicDim(axis) && *e.value == in.getDimSize(axis);
    return e.dimOf == c.input(0) && e.dim == axis;
  }
  auto scales = c.constantInput(2);
  if (!scales) return false;
  auto values = llvm::to_vector(scales->getValues<float>());
  return (int64_t)values.size() > i && values[i] == 1.0f;
}

LogicalResult importResize(NodeContext &c) {
  ResizeSpec spec;
  if (failed(parseResize(c, spec))) return failure();
  ResizeAxes r;
  if (failed(resizeSizes(c, spec, r))) return failure();
  Value x = c.input(0);
  for (int64_t i = 0; i < (int64_t)spec.axes.size(); ++i) {
    if (!spec.tfCrop && isIdentityAxis(c, spec, i)) continue;
    auto y = resizeAxis(c, spec, r, x, i);
    if (failed(y)) return failure();
    x = *y;
  }
  c.setOutput(0, x);
  return success();
}

} // namespace

void addResizeImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Resize"] = {11, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); }, importResize};
}

} // namespace v4f
