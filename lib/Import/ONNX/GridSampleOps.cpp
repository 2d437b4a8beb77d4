//===- GridSampleOps.cpp - ONNX GridSample / AffineGrid as v4f compositions ===//
//
// GridSample (opsets 16, 20, 22), X [N, C, S_0 .. S_k-1] (k = 1..3 spatial
// dims), grid [N, O_0 .. O_k-1, k] with the grid's last axis in reverse
// spatial order (x = W first). Every output position reads T = taps^k input
// positions (nearest 1, linear 2, cubic 4 taps per dim):
//
//   g_d        = v4f.slice of grid component k-1-d, viewed as [N, 1, 1, P]
//                (P = prod O)
//   index      = v4f.elementwise(g_*, tap offsets [1, 1, T, 1]) -> i64
//                [N, 1, T, P]: the flattened source position of each tap,
//                clamped (border), reflected (reflection) or clamped with a
//                zero weight (zeros), so it is always in range
//   weight     = v4f.elementwise(same inputs) -> [N, 1, T, P]: the product of
//                the per-dim linear / cubic (A = -0.75) coefficients, 0 for
//                taps outside the input with padding zeros
//   values     = v4f.gather_elements(X as [N, C, L], index expanded to
//                [N, C, T, P] and viewed as [N, C, T*P], axis 2)
//   Y          = sum over the taps of weight * value (v4f.reduce), viewed as
//                [N, C, O...].
//
// Coordinates follow the ONNX reference: denormalization per align_corners,
// nearest rounds half to even, out-of-range coordinates are clamped (border)
// or reflected (reflection) before the taps are taken, and each tap index is
// treated again by the padding mode.
//
// AffineGrid (opset 20+): theta [N, 2, 3] / [N, 3, 4], size [N, C, (D,) H, W].
// With a constant size and float32 theta, the base grid (x, y, (z,) 1) per
// output position is a constant [H*W, 3] and grid = base x theta^T (v4f.matmul).
// With a run-time size (or float16/float64 theta), the base coordinates come
// from v4f.range and the product is one broadcasting v4f.elementwise
// theta[n, i, j] * base[..., j] followed by a sum over j (v4f.reduce).
// float64 is computed in float64 throughout (the ONNX reference rounds its
// GridSample coordinates and its AffineGrid output to float32).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace v4f {
namespace {

/// Sources for a reshape that keeps dim 0 (the batch, maybe dynamic) in place.
SmallVector<int64_t> batchSources(size_t rank) {
  SmallVector<int64_t> s(rank, -1);
  s[0] = 0;
  return s;
}

Value i64Constant(NodeContext &c, ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, c.b.getI64Type());
  return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(type, values));
}

/// Element j of the last axis of `in`, kept as a size-1 dim (`shape`).
Value sliceLast(NodeContext &c, Value in, int64_t j, ArrayRef<int64_t> shape) {
  int64_t axis = typeOf(in).getRank() - 1;
  return c.b.create<SliceOp>(c.loc, RankedTensorType::get(shape, typeOf(in).getElementType()), in,
                             i64Constant(c, {1}, {j}), i64Constant(c, {1}, {j + 1}), i64Constant(c, {1}, {axis}),
                             Value());
}

bool isSupportedFloat(Type t) { return t.isF16() || t.isF32() || t.isF64(); }

/// Converts a body scalar between float types.
Value convertScalar(OpBuilder &b, Location l, Value v, Type to) {
  Type from = v.getType();
  if (from == to) return v;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()) return b.create<arith::ExtFOp>(l, to, v);
  return b.create<arith::TruncFOp>(l, to, v);
}

/// Converts a float tensor to element type `to`, or returns it.
FailureOr<Value> convertTensor(NodeContext &c, Value v, Type to) {
  if (typeOf(v).getElementType() == to) return v;
  return buildElementwise(
      c, {v}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value { return convertScalar(b, l, a[0], to); });
}

// ===------------------------------------------------------------------=== //
// GridSample
// ===------------------------------------------------------------------=== //

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

std::optional<Mode> parseMode(const std::string &m) {
  if (m == "nearest") return Mode::Nearest;
  if (m == "linear" || m == "bilinear") return Mode::Linear;
  if (m == "cubic" || m == "bicubic") return Mode::Cubic;
  return std::nullopt;
}

std::optional<Padding> parsePadding(const std::string &p) {
  if (p == "zeros") return Padding::Zeros;
  if (p == "border") return Padding::Border;
  if (p == "reflection") return Padding::Reflection;
  return std::nullopt;
}

std::string defaultMode(int64_t opset) { return opset < 20 ? "bilinear" : "linear"; }

std::string checkGridSample(const NodeAttrs &a, int64_t opset) {
  std::string mode = a.getString("mode", defaultMode(opset));
  if (!parseMode(mode)) return "mode='" + mode + "' is not supported (nearest, linear/bilinear, cubic/bicubic)";
  std::string pad = a.getString("padding_mode", "zeros");
  if (!parsePadding(pad)) return "padding_mode='" + pad + "' is not supported (zeros, border, reflection)";
  int64_t align = a.getInt("align_corners", 0);
  if (align != 0 && align != 1) return "align_corners must be 0 or 1";
  return "";
}

/// Scalar helpers for the GridSample bodies, all in float type `ft`.
struct SampleBody {
  OpBuilder &b;
  Location l;
  Type ft;
  Mode mode;
  Padding pad;
  bool align;

  Value cst(double v) { return b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, v)); }
  Value lt(Value x, Value y) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, y); }
  Value gt(Value x, Value y) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, y); }
  Value sel(Value c, Value x, Value y) { return b.create<arith::SelectOp>(l, c, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value floor(Value x) { return b.create<math::FloorOp>(l, x); }

  // A dim's size is a body scalar of type ft (a constant when static).
  Value lo(Value) { return cst(align ? 0.0 : -0.5); }
  Value hi(Value size) { return sub(size, cst(align ? 1.0 : 0.5)); }

  /// Reflects x into [lo, hi] by the nearer border until it is inside
  /// (the ONNX reference's _gs_reflect); x inside stays as is.
  Value reflect(Value x, Value size) {
    Value vmin = lo(size), vmax = hi(size), range = sub(vmax, vmin);
    Value below = lt(x, vmin), above = gt(x, vmax);
    Value outside = b.create<arith::OrIOp>(l, below, above);
    // An empty range (a size-1 dim with align_corners) pins x to xmin.
    Value empty = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, range, cst(0.0));
    Value safeRange = sel(empty, cst(1.0), range);
    Value dx = sel(below, sub(vmin, x), sub(x, vmax));
    Value n = floor(div(dx, safeRange));
    Value r = sub(dx, mul(n, safeRange));
    Value half = mul(n, cst(0.5));
    Value even = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, floor(half), half);
    // Below the range an even count lands at xmin + r, above it at xmax - r;
    // an odd count lands at the other border.
    Value fromMin = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, below, even);
    Value folded = sel(fromMin, add(vmin, r), sub(vmax, r));
    return sel(outside, sel(empty, vmin, folded), x);
  }

  /// min(max(x, 0), size - 1), NaN going to 0.
  Value clampIndex(Value x, Value size) {
    Value zero = cst(0.0), last = sub(size, cst(1.0));
    x = sel(gt(x, zero), x, zero);
    return sel(lt(x, last), x, last);
  }

  /// The source coordinate of grid value g along a dim of `size`, after
  /// rounding (nearest) and the padding mode's clamp / reflection.
  Value coordinate(Value g, Value size) {
    Value one = cst(1.0), two = cst(2.0), s = size;
    Value x = align ? mul(div(add(g, one), two), sub(s, one)) : div(sub(mul(add(g, one), s), one), two);
    if (mode == Mode::Nearest) x = b.create<math::RoundEvenOp>(l, x);
    if (pad == Padding::Border) {
      Value out = b.create<arith::OrIOp>(l, lt(x, lo(size)), gt(x, hi(size)));
      x = sel(out, clampIndex(x, size), x);
    } else if (pad == Padding::Reflection) {
      x = reflect(x, size);
    }
    return x;
  }

  struct Tap {
    Value index;  // i64, always in [0, size)
    Value weight; // ft (null for nearest)
    Value valid;  // i1 (zeros padding only)
  };

  /// Tap `offset` (i64 body scalar; null for nearest) of grid value g.
  Tap tap(Value g, Value offset, Value size) {
    Value x = coordinate(g, size);
    Tap t;
    Value pos = x;
    if (mode != Mode::Nearest) {
      Value x0 = floor(x);
      Value f = sub(x, x0);
      pos = add(x0, b.create<arith::SIToFPOp>(l, ft, offset));
      auto isOffset = [&](int64_t k) {
        return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, offset,
                                       b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(k)));
      };
      Value one = cst(1.0);
      if (mode == Mode::Linear) {
        t.weight = sel(isOffset(0), sub(one, f), f);
      } else {
        // Keys' cubic convolution with A = -0.75, evaluated at the tap's
        // distance d as in the ONNX reference (offsets -1, 0, 1, 2 use
        // d = f + 1, f, 1 - f, 2 - f).
        const double A = -0.75;
        Value d = sel(isOffset(-1), add(f, one), sel(isOffset(0), f, sel(isOffset(1), sub(one, f), sub(cst(2.0), f))));
        Value nearW = add(mul(mul(sub(mul(cst(A + 2), d), cst(A + 3)), d), d), one);
        Value farW = sub(mul(add(mul(sub(mul(cst(A), d), cst(5 * A)), d), cst(8 * A)), d), cst(4 * A));
        Value nearTap = b.create<arith::OrIOp>(l, isOffset(0), isOffset(1));
        t.weight = sel(nearTap, nearW, farW);
      }
    }
    if (pad == Padding::Zeros)
      t.valid =
          b.create<arith::AndIOp>(l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, pos, cst(0.0)),
                                  b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, pos, sub(size, cst(1.0))));
    else if (pad == Padding::Reflection)
      pos = reflect(pos, size);
    t.index = b.create<arith::FPToSIOp>(l, b.getI64Type(), clampIndex(pos, size));
    return t;
  }
};

LogicalResult importGridSample(NodeContext &c) {
  Mode mode = *parseMode(c.attrs.getString("mode", defaultMode(c.opset)));
  Padding pad = *parsePadding(c.attrs.getString("padding_mode", "zeros"));
  bool align = c.attrs.getInt("align_corners", 0) != 0;

  auto xt = c.inputType(0), gt = c.inputType(1);
  Type xe = xt.getElementType(), ge = gt.getElementType();
  if (!isSupportedFloat(xe)) return c.fail("X must be float16, float32 or float64");
  if (!isSupportedFloat(ge)) return c.fail("grid must be float16, float32 or float64");
  int64_t rank = xt.getRank(), k = rank - 2;
  if (k < 1 || k > 3) return c.fail("X must have 1 to 3 spatial dims (rank 3 to 5)");
  // The grid's last dim is k (refined, checked at run time, when it is
  // known only then); every other dim may be known only at run time.
  if (gt.getRank() == rank && gt.isDynamicDim(rank - 1)) {
    SmallVector<int64_t> refined(rank, kDyn);
    refined.back() = k;
    refineInput(c, 1, refined);
    gt = c.inputType(1);
  }
  if (gt.getRank() != rank || gt.getDimSize(rank - 1) != k)
    return c.fail("grid must be [N, " +
                  std::string(k == 1   ? "W_out"
                              : k == 2 ? "H_out, W_out"
                                       : "D_out, H_out, W_out") +
                  ", " + std::to_string(k) + "] for this X");
  int64_t N = xt.getDimSize(0);
  if (N == kDyn)
    N = gt.getDimSize(0);
  else if (!gt.isDynamicDim(0) && gt.getDimSize(0) != N)
    return c.fail("X and grid have different batch sizes");
  int64_t C = xt.getDimSize(1), L = 1, P = 1;
  SmallVector<int64_t> S, O;
  auto times = [](int64_t a, int64_t b) { return a == kDyn || b == kDyn ? kDyn : a * b; };
  for (int64_t d = 0; d < k; ++d) {
    S.push_back(xt.getDimSize(2 + d));
    O.push_back(gt.getDimSize(1 + d));
    L = times(L, S.back());
    P = times(P, O.back());
  }
  if (N == 0 || C == 0 || L == 0 || P == 0) return c.fail("zero-sized X or grid dims are not supported");
  // The same dims as values (read at run time where dynamic; Builders.h).
  BuildContext bc(c.b, c.loc);
  Value x = c.input(0), grid = c.input(1);
  Value Nv = xt.isDynamicDim(0) ? dimOf(bc, grid, 0) : dimOf(bc, x, 0), Cv = dimOf(bc, x, 1);
  Value Lv = dimConstant(bc, 1), Pv = dimConstant(bc, 1);
  SmallVector<Value> Sv;
  for (int64_t d = 0; d < k; ++d) {
    Sv.push_back(dimOf(bc, x, 2 + d));
    auto l = dimMul(bc, Lv, Sv.back()), p = dimMul(bc, Pv, dimOf(bc, grid, 1 + d));
    if (failed(l) || failed(p)) return c.fail(bc.error);
    Lv = *l, Pv = *p;
  }
  bool dynamicSizes = llvm::any_of(S, [](int64_t v) { return v == kDyn; });
  auto view = [&](Value v, ArrayRef<Value> dims) -> FailureOr<Value> {
    auto r = reshapeToDims(bc, v, dims);
    if (failed(r)) return c.fail(bc.error);
    return *r;
  };

  // Computation type of coordinates and weights.
  Type ft = xe.isF64() || ge.isF64() ? (Type)c.b.getF64Type() : (Type)c.b.getF32Type();

  // Grid components, as [N, 1, 1, P]; component j belongs to spatial dim k-1-j.
  // (v4f.slice rather than v4f.gather: its copy kernel handles every element type.)
  SmallVector<Value> comps(k);
  SmallVector<int64_t> compShape(gt.getShape());
  compShape.back() = 1;
  Value one = dimConstant(bc, 1);
  for (int64_t j = 0; j < k; ++j) {
    Value g = sliceLast(c, grid, j, compShape);
    auto v = view(g, {dimOf(bc, g, 0), one, one, Pv});
    if (failed(v)) return failure();
    comps[k - 1 - j] = *v;
  }

  // Tap offsets per dim, [1, 1, T, 1] (dim 0 varies slowest).
  int64_t perDim = mode == Mode::Nearest ? 1 : mode == Mode::Linear ? 2 : 4;
  int64_t first = mode == Mode::Cubic ? -1 : 0;
  int64_t T = 1;
  for (int64_t d = 0; d < k; ++d) T *= perDim;
  SmallVector<Value> ins(comps.begin(), comps.end());
  if (perDim > 1) {
    int64_t stride = T;
    for (int64_t d = 0; d < k; ++d) {
      stride /= perDim;
      SmallVector<int64_t> offs;
      for (int64_t t = 0; t < T; ++t) offs.push_back(first + (t / stride) % perDim);
      ins.push_back(i64Constant(c, {1, 1, T, 1}, offs));
    }
  }
  // Sizes known only at run time are body inputs too ([1] int64 each).
  size_t sizesAt = ins.size();
  if (dynamicSizes) ins.append(Sv.begin(), Sv.end());
  // Size of spatial dim d in a body: float (ft) and int64 scalars.
  auto sizeOf = [&](OpBuilder &b, Location l, ArrayRef<Value> a, int64_t d, bool asFloat) -> Value {
    if (!dynamicSizes)
      return asFloat ? (Value)b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, (double)S[d]))
                     : (Value)b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(S[d]));
    Value v = a[sizesAt + d];
    return asFloat ? (Value)b.create<arith::SIToFPOp>(l, ft, v) : v;
  };
  auto taps = [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
    SampleBody body{b, l, ft, mode, pad, align};
    SmallVector<SampleBody::Tap> out;
    for (int64_t d = 0; d < k; ++d)
      out.push_back(body.tap(convertScalar(b, l, a[d], ft), perDim > 1 ? a[k + d] : Value(), sizeOf(b, l, a, d, true)));
    return out;
  };

  auto index = buildElementwise(c, ins, c.b.getI64Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    auto t = taps(b, l, a);
    // Row-major flat position: ((i0 * S1 + i1) * S2 + i2).
    Value flat;
    for (int64_t d = 0; d < k; ++d) {
      flat = flat ? b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, flat, sizeOf(b, l, a, d, false)), t[d].index)
                  : t[d].index;
    }
    return flat;
  });
  if (failed(index)) return failure();

  Value weight;
  if (mode != Mode::Nearest || pad == Padding::Zeros) {
    auto w = buildElementwise(c, ins, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      auto t = taps(b, l, a);
      Value prod, valid;
      for (auto &tp : t) {
        if (tp.weight) prod = prod ? b.create<arith::MulFOp>(l, prod, tp.weight) : tp.weight;
        if (tp.valid) valid = valid ? b.create<arith::AndIOp>(l, valid, tp.valid) : tp.valid;
      }
      if (!prod) prod = b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, 1.0));
      if (valid)
        prod = b.create<arith::SelectOp>(l, valid, prod, b.create<arith::ConstantOp>(l, b.getFloatAttr(ft, 0.0)));
      return prod;
    });
    if (failed(w)) return failure();
    weight = *w;
  }

  // Gather the taps of every channel.
  auto i64 = c.b.getI64Type();
  Value Tv = dimConstant(bc, T);
  Value expandShape = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({4}, i64), ValueRange{one, Cv, one, one},
                                           c.b.getI64IntegerAttr(0));
  Value idx = c.b.create<ExpandOp>(c.loc, RankedTensorType::get({N, C, T, P}, i64), *index, expandShape);
  auto TP = dimMul(bc, Tv, Pv);
  if (failed(TP)) return c.fail(bc.error);
  auto idxFlat = view(idx, {dimOf(bc, idx, 0), Cv, *TP});
  auto xf = view(x, {dimOf(bc, x, 0), Cv, Lv});
  if (failed(idxFlat) || failed(xf)) return failure();
  Value values = c.b.create<GatherElementsOp>(c.loc, RankedTensorType::get({N, C, times(T, P)}, xe), *xf, *idxFlat,
                                              c.b.getI64IntegerAttr(2));
  Value y = values;
  if (weight) {
    auto v4 = view(values, {dimOf(bc, values, 0), Cv, Tv, Pv});
    if (failed(v4)) return failure();
    values = *v4;
    auto prod = buildElementwise(c, {values, weight}, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return b.create<arith::MulFOp>(l, convertScalar(b, l, a[0], ft), a[1]);
    });
    if (failed(prod)) return failure();
    y = *prod;
  }
  if (T > 1)
    y = c.b.create<ReduceOp>(c.loc, RankedTensorType::get({N, C, P}, ft), y, Value(), c.b.getStringAttr("sum"),
                             c.b.getDenseI64ArrayAttr({2}), c.b.getBoolAttr(false));
  auto converted = convertTensor(c, y, xe);
  if (failed(converted)) return failure();
  SmallVector<Value> outDims = {dimOf(bc, *converted, 0), Cv};
  for (int64_t d = 0; d < k; ++d) outDims.push_back(dimOf(bc, grid, 1 + d));
  auto out = view(*converted, outDims);
  if (failed(out)) return failure();
  c.setOutput(0, *out);
  return success();
}

// ===------------------------------------------------------------------=== //
// AffineGrid
// ===------------------------------------------------------------------=== //

std::string checkAffineGrid(const NodeAttrs &a, int64_t) {
  int64_t align = a.getInt("align_corners", 0);
  if (align != 0 && align != 1) return "align_corners must be 0 or 1";
  return "";
}

/// The normalized base coordinate i of a dim of `size` (np.arange in float64
/// as the ONNX reference builds it).
double baseCoordinate(int64_t i, int64_t size, bool align) {
  if (align) return size == 1 ? -1.0 : -1.0 + (double)i * (2.0 / (double)(size - 1));
  double step = 2.0 / (double)size;
  return -1.0 + step / 2 + (double)i * step;
}

LogicalResult importAffineGrid(NodeContext &c) {
  bool align = c.attrs.getInt("align_corners", 0) != 0;
  auto tt = c.inputType(0), st = c.inputType(1);
  Type te = tt.getElementType();
  if (!isSupportedFloat(te)) return c.fail("theta must be float16, float32 or float64");
  if (!st.getElementType().isInteger(64) || st.getRank() != 1 || st.isDynamicDim(0))
    return c.fail("size must be a 1-D int64 tensor of static length");
  int64_t sizeLen = st.getDimSize(0);
  if (sizeLen != 4 && sizeLen != 5) return c.fail("size must have 4 (2-D) or 5 (3-D) elements");
  int64_t k = sizeLen - 2; // spatial dims
  refineInput(c, 0, {kDyn, k, k + 1});
  tt = c.inputType(0);
  if (tt.getRank() != 3 || tt.getDimSize(1) != k || tt.getDimSize(2) != k + 1)
    return c.fail(k == 2 ? "theta must be [N, 2, 3] for a 4-element size"
                         : "theta must be [N, 3, 4] for a 5-element size");
  int64_t N = tt.getDimSize(0);

  auto sizes = c.constantInts(1);
  if (sizes) {
    // Constant size: constant base grid [prod(spatial), k + 1] times theta^T.
    if ((*sizes)[0] != N && N != kDyn)
      return c.fail("size[0] (" + std::to_string((*sizes)[0]) + ") differs from theta's batch (" + std::to_string(N) +
                    ")");
    SmallVector<int64_t> dims((*sizes).begin() + 2, (*sizes).end());
    int64_t total = 1;
    for (int64_t d : dims) {
      if (d <= 0) return c.fail("the spatial sizes must be positive");
      total *= d;
    }
    if (total > (1 << 24)) return c.fail("the grid is too large");
    if (te.isF32() || te.isF16()) {
      // base rows are (x, y, (z,) 1), x running over the last dim.
      std::vector<float> base;
      base.reserve(total * (k + 1));
      for (int64_t p = 0; p < total; ++p) {
        SmallVector<int64_t> pos(k);
        for (int64_t d = k - 1, r = p; d >= 0; --d) pos[d] = r % dims[d], r /= dims[d];
        for (int64_t d = k - 1; d >= 0; --d) base.push_back((float)baseCoordinate(pos[d], dims[d], align));
        base.push_back(1.f);
      }
      Value baseV = c.constF32({total, k + 1}, base);
      auto theta = convertTensor(c, c.input(0), c.b.getF32Type());
      if (failed(theta)) return failure();
      Value thetaT = c.b.create<TransposeOp>(c.loc, *theta, c.b.getDenseI64ArrayAttr({0, 2, 1}));
      Value grid = c.b.create<MatMulOp>(c.loc, baseV, thetaT, Value(), c.b.getStringAttr("none"),
                                        c.b.getF32FloatAttr(0), c.b.getF32FloatAttr(0));
      SmallVector<int64_t> outShape = {N};
      outShape.append(dims.begin(), dims.end());
      outShape.push_back(k);
      auto out = convertTensor(c, reshapeTo(c, grid, outShape, batchSources(outShape.size())), te);
      if (failed(out)) return failure();
      c.setOutput(0, *out);
      return success();
    }
  }

  // General form: base coordinates per dim from v4f.range over the (maybe
  // run-time) sizes, then sum_j theta[n, i, j] * base_j.
  // Output [N, dims..., k] is computed as [N, dims..., k, k + 1] summed over
  // the last axis.
  Type ft = te.isF64() ? (Type)c.b.getF64Type() : (Type)c.b.getF32Type();
  auto i64 = c.b.getI64Type();
  int64_t outRank = 1 + k + 2;
  SmallVector<Value> ins;
  // theta as [N, 1.., k, k + 1].
  SmallVector<int64_t> thetaShape = {N};
  for (int64_t d = 0; d < k; ++d) thetaShape.push_back(1);
  thetaShape.push_back(k);
  thetaShape.push_back(k + 1);
  ins.push_back(reshapeTo(c, c.input(0), thetaShape, batchSources(thetaShape.size())));
  // Component id j of the homogeneous base vector, broadcast along the last axis.
  SmallVector<int64_t> compShape(outRank, 1), compIds;
  compShape.back() = k + 1;
  for (int64_t j = 0; j <= k; ++j) compIds.push_back(j);
  ins.push_back(i64Constant(c, compShape, compIds));
  // Per spatial dim d: positions [1, .., S_d, .., 1, 1] (i64) and S_d.
  SmallVector<int64_t> dimStatic;
  for (int64_t d = 0; d < k; ++d) {
    int64_t known = sizes ? (*sizes)[2 + d] : kDyn;
    if (sizes && known <= 0) return c.fail("the spatial sizes must be positive");
    dimStatic.push_back(known);
    Value sd = c.b.create<GatherOp>(c.loc, c.input(1), i64Constant(c, {}, {2 + d}), c.b.getI64IntegerAttr(0));
    Value range = c.b.create<RangeOp>(c.loc, RankedTensorType::get({known}, i64), i64Constant(c, {}, {0}), sd,
                                      i64Constant(c, {}, {1}));
    SmallVector<int64_t> posShape(outRank, 1), sources(outRank, -1);
    posShape[1 + d] = known;
    sources[1 + d] = 0;
    ins.push_back(reshapeTo(c, range, posShape, sources));
    // The size as data for the body: a v4f.slice copy ([1], broadcasting), as
    // the v4f.gather kernel reads 4-byte elements only.
    ins.push_back(sliceLast(c, c.input(1), 2 + d, {1}));
  }
  auto prod = buildElementwise(c, ins, ft, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    // Base coordinates in float64 (as the reference's np.arange), then ft.
    Type f64 = b.getF64Type();
    auto cst = [&](double v) -> Value { return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v)); };
    Value comp = a[1];
    Value result = cst(1.0); // component k: the homogeneous 1
    for (int64_t d = 0; d < k; ++d) {
      Value i = b.create<arith::SIToFPOp>(l, f64, a[2 + 2 * d]);
      Value s = b.create<arith::SIToFPOp>(l, f64, a[3 + 2 * d]);
      Value coord;
      if (align) {
        Value step = b.create<arith::DivFOp>(l, cst(2.0), b.create<arith::SubFOp>(l, s, cst(1.0)));
        coord = b.create<arith::AddFOp>(l, cst(-1.0), b.create<arith::MulFOp>(l, i, step));
        Value single = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, s, cst(1.0));
        coord = b.create<arith::SelectOp>(l, single, cst(-1.0), coord);
      } else {
        Value step = b.create<arith::DivFOp>(l, cst(2.0), s);
        Value start = b.create<arith::AddFOp>(l, cst(-1.0), b.create<arith::DivFOp>(l, step, cst(2.0)));
        coord = b.create<arith::AddFOp>(l, start, b.create<arith::MulFOp>(l, i, step));
      }
      // Dim d (0 = outermost) is component k-1-d of the base vector.
      Value isComp = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, comp,
                                             b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(k - 1 - d)));
      result = b.create<arith::SelectOp>(l, isComp, coord, result);
    }
    Value basis = convertScalar(b, l, result, ft);
    return b.create<arith::MulFOp>(l, convertScalar(b, l, a[0], ft), basis);
  });
  if (failed(prod)) return failure();
  SmallVector<int64_t> outShape = {N};
  outShape.append(dimStatic.begin(), dimStatic.end());
  outShape.push_back(k);
  Value grid =
      c.b.create<ReduceOp>(c.loc, RankedTensorType::get(outShape, ft), *prod, Value(), c.b.getStringAttr("sum"),
                           c.b.getDenseI64ArrayAttr({outRank - 1}), c.b.getBoolAttr(false));
  auto out = convertTensor(c, grid, te);
  if (failed(out)) return failure();
  c.setOutput(0, *out);
  return success();
}

} // namespace

void addGridSampleImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["GridSample"] = {16, kMaxOpset, checkGridSample, importGridSample};
  t["AffineGrid"] = {20, kMaxOpset, checkAffineGrid, importAffineGrid};
}

} // namespace v4f
