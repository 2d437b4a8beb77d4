//===- DecomposeSignal.cpp - v4f.window / v4f.dft -> range, elementwise, matmuls ===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <vector>

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSESIGNAL
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// The window formula over range(0, size), computed in float64 and cast to
/// the result's element type.
LogicalResult decomposeWindow(BuildContext &c, WindowOp op, SmallVectorImpl<Value> &results) {
  Type it = typeOf(op.getSize()).getElementType();
  Type out = typeOf(op.getResult()).getElementType();
  bool periodic = op.getPeriodic();
  auto constScalar = [&](int64_t v) -> Value {
    return c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({}, it), APInt(it.getIntOrFloatBitWidth(), v)));
  };
  Value size = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({}, it), op.getSize(), Value(),
                                     c.b.getDenseI64ArrayAttr({}), c.b.getBoolAttr(false));
  Value n = c.b.create<RangeOp>(c.loc, RankedTensorType::get({ShapedType::kDynamic}, it), constScalar(0), size,
                                constScalar(1));
  StringRef kind = op.getKind();
  auto y = buildElementwise(c, {n, size}, out, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    auto f64 = b.getF64Type();
    auto cst = [&](double v) -> Value { return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v)); };
    Value i = b.create<arith::SIToFPOp>(l, f64, a[0]);
    Value N = b.create<arith::SIToFPOp>(l, f64, a[1]);
    if (!periodic) N = b.create<arith::SubFOp>(l, N, cst(1));
    auto angle = [&](double k) { // k * pi * i / N
      return b.create<arith::DivFOp>(l, b.create<arith::MulFOp>(l, i, cst(k * M_PI)), N);
    };
    Value r;
    if (kind == "hann") {
      Value sn = b.create<math::SinOp>(l, angle(1));
      r = b.create<arith::MulFOp>(l, sn, sn);
    } else if (kind == "hamming") {
      double alpha = 25.0 / 46.0;
      r = b.create<arith::SubFOp>(l, cst(alpha),
                                  b.create<arith::MulFOp>(l, b.create<math::CosOp>(l, angle(2)), cst(1 - alpha)));
    } else {
      r = b.create<arith::AddFOp>(
          l, cst(0.42),
          b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, b.create<math::CosOp>(l, angle(2)), cst(-0.5)),
                                  b.create<arith::MulFOp>(l, b.create<math::CosOp>(l, angle(4)), cst(0.08))));
    }
    return castScalar(b, l, r, f64, out);
  });
  if (failed(y)) return failure();
  results.push_back(*y);
  return success();
}

/// The DFT along the op's axis as real matmuls with constant cos / sin
/// matrices: forward, inverse, one-sided (rfft) and one-sided inverse
/// (irfft), the signal zero-padded or truncated to the length.
LogicalResult decomposeDFT(BuildContext &c, DFTOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  int64_t rank = in.getRank(), comps = in.getDimSize(rank - 1), axis = op.getAxis(), L = op.getLength();
  bool inverse = op.getInverse(), onesided = op.getOnesided();
  int64_t N = in.getDimSize(axis);
  // Frequencies in (K) and samples out; for irfft the input holds K bins.
  int64_t K = onesided && !inverse ? L / 2 + 1 : L;    // forward outputs
  int64_t inLen = inverse && onesided ? L / 2 + 1 : L; // bins read (irfft)
  int64_t outLen = inverse ? L : K;
  auto f32 = c.b.getF32Type();
  // The dims other than the axis may be known only at run time: the rows
  // M are their product (a run-time dim then).
  SmallVector<int64_t> perm;
  SmallVector<Value> others;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) perm.push_back(d), others.push_back(dimOf(c, op.getInput(), d));
  perm.push_back(axis);
  Value Mv = dimConstant(c, 1);
  for (Value o : others) {
    auto m = dimMul(c, Mv, o);
    if (failed(m)) return failure();
    Mv = *m;
  }
  int64_t M = constantDim(Mv).value_or(ShapedType::kDynamic);
  auto parts = splitBy(c, op.getInput(), rank - 1, comps == 2 ? SmallVector<int64_t>{1, 1} : SmallVector<int64_t>{1});
  SmallVector<Value> dataDims;
  for (int64_t d = 0; d < rank - 1; ++d) dataDims.push_back(dimOf(c, op.getInput(), d));
  bool failedView = false;
  auto view = [&](Value v, ArrayRef<Value> dims) -> Value {
    auto r = reshapeToDims(c, v, dims);
    if (failed(r)) {
      failedView = true;
      return v;
    }
    return *r;
  };
  auto toRows = [&](Value v) -> Value { // [..., N, ...] -> [M, inLen] (truncated or zero-padded)
    v = view(transposeBy(c, view(v, dataDims), perm), {Mv, dimConstant(c, N)});
    int64_t want = inverse && onesided ? inLen : L;
    auto i64 = c.b.getI64Type();
    if (want < N) {
      auto cst = [&](ArrayRef<int64_t> x) -> Value {
        return c.b.create<arith::ConstantOp>(
            c.loc, DenseElementsAttr::get(RankedTensorType::get({int64_t(x.size())}, i64), x));
      };
      v = c.b.create<SliceOp>(c.loc, RankedTensorType::get({M, want}, f32), v, cst({0}), cst({want}), cst({1}),
                              Value());
    } else if (want > N) {
      Value pads = c.b.create<arith::ConstantOp>(
          c.loc, DenseElementsAttr::get(RankedTensorType::get({4}, i64), ArrayRef<int64_t>{0, 0, 0, want - N}));
      v = c.b.create<PadOp>(c.loc, RankedTensorType::get({M, want}, f32), v, pads, Value(), Value(),
                            c.b.getStringAttr("constant"));
    }
    return v;
  };
  Value xr = toRows(parts[0]), xi = comps == 2 ? toRows(parts[1]) : Value();
  int64_t rows = inverse && onesided ? inLen : L;
  // cos / sin matrices [rows, outLen]; theta = 2 pi n k / L.
  std::vector<float> cosM(rows * outLen), sinM(rows * outLen);
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t k = 0; k < outLen; ++k) {
      double theta = 2.0 * M_PI * double((n * k) % L) / double(L);
      double w = 1.0;
      if (inverse) {
        w = 1.0 / double(L);
        if (onesided && n != 0 && !(L % 2 == 0 && n == L / 2)) w *= 2.0; // n indexes bins here
      }
      cosM[n * outLen + k] = float(w * std::cos(theta));
      sinM[n * outLen + k] = float(w * std::sin(theta));
    }
  auto matType = RankedTensorType::get({rows, outLen}, f32);
  Value C = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(matType, ArrayRef<float>(cosM)));
  Value S = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(matType, ArrayRef<float>(sinM)));
  auto mm = [&](Value a, Value b) -> Value {
    return c.b.create<MatMulOp>(c.loc, a, b, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                                c.b.getF32FloatAttr(0));
  };
  auto combine = [&](Value a, Value b, bool add) -> Value {
    if (add) return c.b.create<AddOp>(c.loc, a, b);
    return c.b.create<SubOp>(c.loc, a, b);
  };
  // forward: re = xr C + xi S, im = xi C - xr S; inverse: re = xr C - xi S, im = xr S + xi C.
  Value re, im;
  if (!inverse) {
    re = mm(xr, C);
    if (xi) re = combine(re, mm(xi, S), true);
    Value xrS = mm(xr, S);
    im = xi ? combine(mm(xi, C), xrS, false) : (Value)c.b.create<SubOp>(c.loc, constF32(c, {}, {0.f}), xrS);
  } else {
    re = mm(xr, C);
    if (xi) re = combine(re, mm(xi, S), false);
    im = mm(xr, S);
    if (xi) im = combine(im, mm(xi, C), true);
  }
  SmallVector<Value> outDims(others);
  SmallVector<int64_t> inversePerm(perm.size());
  outDims.push_back(dimConstant(c, outLen));
  for (size_t i = 0; i < perm.size(); ++i) inversePerm[perm[i]] = i;
  auto back = [&](Value v) -> Value {
    Value t = transposeBy(c, view(v, outDims), inversePerm);
    SmallVector<Value> dims;
    for (int64_t d = 0; d < typeOf(t).getRank(); ++d) dims.push_back(dimOf(c, t, d));
    dims.push_back(dimConstant(c, 1));
    return view(t, dims);
  };
  Value rOut = back(re);
  if (failedView) return failure();
  if (inverse && onesided) {
    results.push_back(rOut);
    return success();
  }
  Value iOut = back(im);
  if (failedView) return failure();
  SmallVector<int64_t> finalShape(typeOf(rOut).getShape());
  finalShape.back() = 2;
  results.push_back(c.b.create<ConcatOp>(c.loc, RankedTensorType::get(finalShape, f32), ValueRange{rOut, iOut},
                                         c.b.getI64IntegerAttr(rank - 1)));
  return success();
}

/// STFT of a real signal: the frames gathered by indices f * step + k (the
/// frame count from a v4f.range, at run time when the length is), times the
/// window, then matmuls with constant cos / sin matrices [L, bins]:
/// re = frames C, im = -(frames S).
LogicalResult decomposeSTFT(BuildContext &c, STFTOp op, SmallVectorImpl<Value> &results) {
  constexpr int64_t kDyn = ShapedType::kDynamic;
  auto in = typeOf(op.getSignal());
  auto out = typeOf(op.getResult());
  int64_t B = in.getDimSize(0), N = in.getDimSize(1), L = op.getFrameLength(), step = op.getFrameStep();
  int64_t F = out.getDimSize(1), K = out.getDimSize(2);
  Type f32 = c.b.getF32Type(), i64 = c.b.getI64Type();
  auto scalar = RankedTensorType::get({}, i64);
  auto cstScalar = [&](int64_t v) -> Value {
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(scalar, APInt(64, v)));
  };
  // [B, N, 1] -> [B, N], dynamic dims carried in place.
  Value x =
      c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({B, N}, f32), op.getSignal(), Value(),
                            c.b.getDenseI64ArrayAttr({B == kDyn ? 0 : -1, N == kDyn ? 1 : -1}), c.b.getBoolAttr(false));
  // The frame count: static, or (N - L) / step + 1 from the signal's length.
  Value count;
  if (F != kDyn) {
    count = cstScalar(F);
  } else {
    Value n = c.b.create<ShapeOp>(c.loc, RankedTensorType::get({1}, i64), op.getSignal(), c.b.getI64IntegerAttr(1),
                                  c.b.getI64IntegerAttr(2));
    auto frames = buildElementwise(c, {n}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      auto k = [&](int64_t v) -> Value { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
      Value d = b.create<arith::DivSIOp>(l, b.create<arith::SubIOp>(l, a[0], k(L)), k(step));
      return b.create<arith::MaxSIOp>(l, b.create<arith::AddIOp>(l, d, k(1)), k(0));
    });
    if (failed(frames)) return failure();
    count =
        c.b.create<ReshapeOp>(c.loc, scalar, *frames, Value(), c.b.getDenseI64ArrayAttr({}), c.b.getBoolAttr(false));
  }
  Value starts = c.b.create<RangeOp>(c.loc, RankedTensorType::get({F}, i64), cstScalar(0), count, cstScalar(1));
  Value startsCol = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({F, 1}, i64), starts, Value(),
                                          c.b.getDenseI64ArrayAttr({F == kDyn ? 0 : -1, -1}), c.b.getBoolAttr(false));
  std::vector<int64_t> offsets(L);
  for (int64_t k = 0; k < L; ++k) offsets[k] = k;
  Value offs = c.b.create<arith::ConstantOp>(
      c.loc, DenseElementsAttr::get(RankedTensorType::get({1, L}, i64), ArrayRef<int64_t>(offsets)));
  auto idx = buildElementwise(c, {startsCol, offs}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value st = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(step));
    return b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, a[0], st), a[1]);
  });
  if (failed(idx)) return failure();
  Value frames = c.b.create<GatherOp>(c.loc, x, *idx, c.b.getI64IntegerAttr(1)); // [B, F, L]
  if (Value w = op.getWindow()) {
    auto windowed = buildElementwise(c, {frames, w}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return b.create<arith::MulFOp>(l, a[0], a[1]);
    });
    if (failed(windowed)) return failure();
    frames = *windowed;
  }
  std::vector<float> cosM(L * K), sinM(L * K);
  for (int64_t n = 0; n < L; ++n)
    for (int64_t k = 0; k < K; ++k) {
      double theta = 2.0 * M_PI * double((n * k) % L) / double(L);
      cosM[n * K + k] = float(std::cos(theta));
      sinM[n * K + k] = float(-std::sin(theta));
    }
  auto matType = RankedTensorType::get({L, K}, f32);
  auto mm = [&](ArrayRef<float> m) -> Value {
    Value w = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(matType, m));
    return c.b.create<MatMulOp>(c.loc, frames, w, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                                c.b.getF32FloatAttr(0));
  };
  SmallVector<Value> parts;
  for (ArrayRef<float> m : {ArrayRef<float>(cosM), ArrayRef<float>(sinM)}) {
    Value p = mm(m); // [B, F, K]
    SmallVector<int64_t> sources = {B == kDyn ? 0 : -1, F == kDyn ? 1 : -1, -1, -1};
    parts.push_back(c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({B, F, K, 1}, f32), p, Value(),
                                          c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false)));
  }
  results.push_back(c.b.create<ConcatOp>(c.loc, out, parts, c.b.getI64IntegerAttr(3)));
  return success();
}

struct DecomposeSignalPass : v4f::impl::DecomposeSignalBase<DecomposeSignalPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<WindowOp>(getOperation(), decomposeWindow)) ||
        failed(decomposeAll<DFTOp>(getOperation(), decomposeDFT)) ||
        failed(decomposeAll<STFTOp>(getOperation(), decomposeSTFT)))
      signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeSignalPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<WindowOp>>(patterns.getContext(), decomposeWindow);
  patterns.add<DecomposePattern<DFTOp>>(patterns.getContext(), decomposeDFT);
  patterns.add<DecomposePattern<STFTOp>>(patterns.getContext(), decomposeSTFT);
}

std::unique_ptr<Pass> v4f::createDecomposeSignalPass() { return std::make_unique<DecomposeSignalPass>(); }
