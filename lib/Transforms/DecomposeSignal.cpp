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
  SmallVector<int64_t> perm, others;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) perm.push_back(d), others.push_back(in.getDimSize(d));
  perm.push_back(axis);
  int64_t M = 1;
  for (int64_t o : others) M *= o;
  auto parts = splitBy(c, op.getInput(), rank - 1, comps == 2 ? SmallVector<int64_t>{1, 1} : SmallVector<int64_t>{1});
  SmallVector<int64_t> dataShape(in.getShape().drop_back());
  auto toRows = [&](Value v) -> Value { // [..., N, ...] -> [M, inLen] (truncated or zero-padded)
    v = reshapeTo(c, transposeBy(c, reshapeTo(c, v, dataShape), perm), {M, N});
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
    im = xi ? combine(mm(xi, C), xrS, false)
            : (Value)c.b.create<SubOp>(
                  c.loc, c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(typeOf(xrS), 0.0f)), xrS);
  } else {
    re = mm(xr, C);
    if (xi) re = combine(re, mm(xi, S), false);
    im = mm(xr, S);
    if (xi) im = combine(im, mm(xi, C), true);
  }
  SmallVector<int64_t> outShape(others), inversePerm(perm.size());
  outShape.push_back(outLen);
  for (size_t i = 0; i < perm.size(); ++i) inversePerm[perm[i]] = i;
  auto back = [&](Value v) -> Value {
    Value t = transposeBy(c, reshapeTo(c, v, outShape), inversePerm);
    SmallVector<int64_t> s(typeOf(t).getShape());
    s.push_back(1);
    return reshapeTo(c, t, s);
  };
  Value rOut = back(re);
  if (inverse && onesided) {
    results.push_back(rOut);
    return success();
  }
  Value iOut = back(im);
  SmallVector<int64_t> finalShape(typeOf(rOut).getShape());
  finalShape.back() = 2;
  results.push_back(c.b.create<ConcatOp>(c.loc, RankedTensorType::get(finalShape, f32), ValueRange{rOut, iOut},
                                         c.b.getI64IntegerAttr(rank - 1)));
  return success();
}

struct DecomposeSignalPass : v4f::impl::DecomposeSignalBase<DecomposeSignalPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<WindowOp>(getOperation(), decomposeWindow)) ||
        failed(decomposeAll<DFTOp>(getOperation(), decomposeDFT)))
      signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeSignalPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<WindowOp>>(patterns.getContext(), decomposeWindow);
  patterns.add<DecomposePattern<DFTOp>>(patterns.getContext(), decomposeDFT);
}

std::unique_ptr<Pass> v4f::createDecomposeSignalPass() { return std::make_unique<DecomposeSignalPass>(); }
