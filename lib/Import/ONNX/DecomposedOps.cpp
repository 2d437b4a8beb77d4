//===- DecomposedOps.cpp - ONNX ops imported as compositions of v4f ops ---===//
//
// DepthToSpace / SpaceToDepth (reshape, transpose, reshape), GlobalMaxPool
// (max reduction), InstanceNormalization and MeanVarianceNormalization
// (mean/variance reductions and elementwise ops).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {

FailureOr<MomentValues> meanAndVariance(NodeContext &c, ArrayRef<int64_t> axes) {
  return meanAndVariance(c, c.input(0), axes);
}

FailureOr<MomentValues> meanAndVariance(NodeContext &c, Value x, ArrayRef<int64_t> axes) {
  auto in = llvm::cast<RankedTensorType>(x.getType());
  Type f = in.getElementType();
  SmallVector<int64_t> reduced(in.getShape());
  for (int64_t a : axes) reduced[a] = 1;
  auto rtype = RankedTensorType::get(reduced, f);
  auto mean = [&](Value v) -> Value {
    return c.b.create<ReduceOp>(c.loc, rtype, v, Value(), c.b.getStringAttr("mean"), c.b.getDenseI64ArrayAttr(axes),
                                c.b.getBoolAttr(true));
  };
  Value mu = mean(x);
  auto dev = buildElementwise(c, {x, mu}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::SubFOp>(l, a[0], a[1]);
  });
  if (failed(dev)) return failure();
  auto sq = buildElementwise(c, {*dev}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  return MomentValues{mu, *dev, mean(*sq)};
}

namespace {

LogicalResult importDepthSpace(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() != 4 || !in.hasStaticShape()) return c.fail("input must be a static 4-D tensor");
  int64_t bs = c.attrs.getInt("blocksize", 0);
  if (bs <= 0) return c.fail("blocksize must be positive");
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  Value x = c.input(0), t;
  if (c.node.op_type() == "DepthToSpace") {
    if (C % (bs * bs)) return c.fail("channels must be divisible by blocksize^2");
    bool crd = c.attrs.getString("mode", "DCR") == "CRD";
    int64_t Co = C / (bs * bs);
    if (crd) {
      x = reshapeTo(c, x, {N, Co, bs, bs, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 4, 2, 5, 3}));
    } else {
      x = reshapeTo(c, x, {N, bs, bs, Co, H, W});
      t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 4, 1, 5, 2}));
    }
    c.setOutput(0, reshapeTo(c, t, {N, Co, H * bs, W * bs}));
    return success();
  }
  if (H % bs || W % bs) return c.fail("height and width must be divisible by blocksize");
  x = reshapeTo(c, x, {N, C, H / bs, bs, W / bs, bs});
  // DCR (default): channel = (bh * bs + bw) * C + c; CRD: c * bs * bs + bh * bs + bw.
  if (c.attrs.getString("mode", "DCR") == "CRD")
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 1, 3, 5, 2, 4}));
  else
    t = c.b.create<TransposeOp>(c.loc, x, c.b.getDenseI64ArrayAttr({0, 3, 5, 1, 2, 4}));
  c.setOutput(0, reshapeTo(c, t, {N, C * bs * bs, H / bs, W / bs}));
  return success();
}

LogicalResult importGlobalMaxPool(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes, shape = {in.getDimSize(0), in.getDimSize(1)};
  for (int64_t i = 2; i < in.getRank(); ++i) {
    axes.push_back(i);
    shape.push_back(1);
  }
  c.setOutput(0, c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), Value(),
                                      c.b.getStringAttr("max"), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(true)));
  return success();
}

/// (x - mean) / sqrt(var + eps) over `axes` (kept as 1), then optional
/// per-channel scale and bias (shaped [C]).
LogicalResult normalizeOver(NodeContext &c, ArrayRef<int64_t> axes, float eps, Value scale, Value bias) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f)) return c.fail("input must be a float type");
  auto stats = meanAndVariance(c, axes);
  if (failed(stats)) return failure();
  Value dev = stats->deviation, var = stats->variance;
  // Per-channel parameters broadcast as [C, 1, ..., 1].
  SmallVector<Value> ins = {dev, var};
  SmallVector<int64_t> chan(in.getRank() - 1, 1);
  if (scale) {
    chan[0] = llvm::cast<RankedTensorType>(scale.getType()).getDimSize(0);
    ins.push_back(reshapeTo(c, scale, chan));
    ins.push_back(reshapeTo(c, bias, chan));
  }
  auto y = buildElementwise(c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value e = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, eps));
    Value r = b.create<arith::DivFOp>(l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
    if (a.size() > 2) r = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, r, a[2]), a[3]);
    return r;
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

LogicalResult importInstanceNorm(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < in.getRank(); ++i) axes.push_back(i);
  return normalizeOver(c, axes, c.attrs.getFloat("epsilon", 1e-5f), c.input(1), c.input(2));
}

LogicalResult importMVN(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : c.attrs.getInts("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank) return c.fail("axis out of range");
    axes.push_back(a < 0 ? a + rank : a);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return normalizeOver(c, axes, 1e-9f, Value(), Value());
}

LogicalResult importEyeLike(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() != 2 || !in.hasStaticShape()) return c.fail("input must be a static 2-D tensor");
  Type et = in.getElementType();
  if (c.attrs.has("dtype")) {
    et = importElementType(c.g.ctx, int32_t(c.attrs.getInt("dtype", 1)));
    if (!et || isStorageOnlyType(et)) return c.fail("unsupported dtype");
  }
  int64_t rows = in.getDimSize(0), cols = in.getDimSize(1), k = c.attrs.getInt("k", 0);
  auto type = RankedTensorType::get({rows, cols}, et);
  std::vector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      bool one = j - i == k;
      if (llvm::isa<FloatType>(et))
        values.push_back(FloatAttr::get(et, one ? 1.0 : 0.0));
      else
        values.push_back(IntegerAttr::get(et, one ? 1 : 0));
    }
  c.setConstantOutput(0, DenseElementsAttr::get(type, values));
  return success();
}

LogicalResult importLpNormalization(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f)) return c.fail("input must be a float type");
  int64_t rank = in.getRank(), axis = c.attrs.getInt("axis", -1), p = c.attrs.getInt("p", 2);
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  if (p != 1 && p != 2) return c.fail("p must be 1 or 2");
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] = 1;
  Value norm = c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, f), c.input(0), Value(),
                                    c.b.getStringAttr(p == 1 ? "l1" : "l2"), c.b.getDenseI64ArrayAttr({axis}),
                                    c.b.getBoolAttr(true));
  auto y = buildElementwise(c, {c.input(0), norm}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    // A zero norm leaves the zeros as they are (ONNX's reference divides by 1).
    Value zero = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, 0.0));
    Value one = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, 1.0));
    Value isZero = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[1], zero);
    return b.create<arith::DivFOp>(l, a[0], b.create<arith::SelectOp>(l, isZero, one, a[1]));
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

/// GroupNormalization: statistics over each group of C / num_groups channels
/// (and all spatial positions), then a per-channel (opset 21) or per-group
/// (opset 18) scale and bias.
LogicalResult importGroupNorm(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!f.isF32()) return c.fail("input must be float32");
  int64_t rank = in.getRank(), groups = c.attrs.getInt("num_groups", 0);
  if (rank < 3) return c.fail("input must have rank >= 3");
  for (int64_t i = 1; i < rank; ++i)
    if (in.isDynamicDim(i)) return c.fail("channel and spatial dims must be static");
  int64_t C = in.getDimSize(1), spatial = 1;
  for (int64_t i = 2; i < rank; ++i) spatial *= in.getDimSize(i);
  if (groups <= 0 || C % groups) return c.fail("num_groups must divide the channel count");
  Value grouped =
      c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({in.getDimSize(0), groups, C / groups * spatial}, f),
                            c.input(0), Value(), c.b.getDenseI64ArrayAttr({0, -1, -1}), c.b.getBoolAttr(false));
  auto stats = meanAndVariance(c, grouped, {2});
  if (failed(stats)) return failure();
  float eps = c.attrs.getFloat("epsilon", 1e-5f);
  int64_t paramSize = c.inputType(1).getNumElements();
  bool perGroup = paramSize == groups && (c.opset < 21 || groups == C);
  if (!perGroup && paramSize != C) return c.fail("scale and bias must have C (or num_groups) elements");
  SmallVector<Value> ins = {stats->deviation, stats->variance};
  if (perGroup) {
    ins.push_back(reshapeTo(c, c.input(1), {groups, 1}));
    ins.push_back(reshapeTo(c, c.input(2), {groups, 1}));
  }
  auto norm = buildElementwise(c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value e = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(eps));
    Value r = b.create<arith::DivFOp>(l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
    if (a.size() > 2) r = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, r, a[2]), a[3]);
    return r;
  });
  if (failed(norm)) return failure();
  SmallVector<int64_t> sources;
  for (int64_t i = 0; i < rank; ++i) sources.push_back(i == 0 ? 0 : -1);
  Value y = c.b.create<ReshapeOp>(c.loc, in, *norm, Value(), c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
  if (!perGroup) {
    SmallVector<int64_t> chan(rank - 1, 1);
    chan[0] = C;
    auto out = buildElementwise(c, {y, reshapeTo(c, c.input(1), chan), reshapeTo(c, c.input(2), chan)}, f,
                                [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                                  return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
                                });
    if (failed(out)) return failure();
    y = *out;
  }
  c.setOutput(0, y);
  return success();
}

/// LRN: x / (bias + alpha / size * sum of x^2 over a window of channels)^beta;
/// the channel-window sum is an average pool (counting padding) over
/// [N, 1, C, rest] times the window size.
LogicalResult importLRN(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!f.isF32()) return c.fail("input must be float32");
  int64_t rank = in.getRank(), size = c.attrs.getInt("size", 0);
  if (rank < 3) return c.fail("input must have rank >= 3");
  if (size <= 0) return c.fail("size must be positive");
  for (int64_t i = 1; i < rank; ++i)
    if (in.isDynamicDim(i)) return c.fail("channel and spatial dims must be static");
  int64_t C = in.getDimSize(1), rest = 1;
  for (int64_t i = 2; i < rank; ++i) rest *= in.getDimSize(i);
  float alpha = c.attrs.getFloat("alpha", 1e-4f), beta = c.attrs.getFloat("beta", 0.75f),
        bias = c.attrs.getFloat("bias", 1.0f);
  auto sq = buildElementwise(c, {c.input(0)}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  Value s4 = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({in.getDimSize(0), 1, C, rest}, f), *sq, Value(),
                                   c.b.getDenseI64ArrayAttr({0, -1, -1, -1}), c.b.getBoolAttr(false));
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value avg = c.b.create<AvgPoolOp>(c.loc, s4, c.b.getDenseI64ArrayAttr({size, 1}), c.b.getDenseI64ArrayAttr({1, 1}),
                                    c.b.getDenseI64ArrayAttr({1, 1}), c.b.getDenseI64ArrayAttr({before, 0, after, 0}),
                                    c.b.getBoolAttr(false), c.b.getBoolAttr(true));
  SmallVector<int64_t> sources;
  for (int64_t i = 0; i < rank; ++i) sources.push_back(i == 0 ? 0 : -1);
  Value sum = c.b.create<ReshapeOp>(c.loc, in, avg, Value(), c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
  auto y = buildElementwise(c, {c.input(0), sum}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    // avg * size = window sum, so alpha / size * sum = alpha * avg.
    Value d = b.create<arith::AddFOp>(
        l, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(bias)),
        b.create<arith::MulFOp>(l, a[1], b.create<arith::ConstantOp>(l, b.getF32FloatAttr(alpha))));
    return b.create<arith::DivFOp>(
        l, a[0], b.create<math::PowFOp>(l, d, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(beta))));
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

/// RotaryEmbedding: the first rotary_embedding_dim features of each head are
/// rotated pairwise (halves, or adjacent pairs when interleaved) by the
/// cos/sin of the position (gathered by position_ids when given).
LogicalResult importRotaryEmbedding(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f) || isStorageOnlyType(f)) return c.fail("input must be float32, float16 or float64");
  if (!in.hasStaticShape()) return c.fail("input must have a static shape");
  int64_t rank = in.getRank(), heads = c.attrs.getInt("num_heads", 0);
  Value x = c.input(0);
  int64_t B = in.getDimSize(0), S, H, D;
  if (rank == 4) {
    H = in.getDimSize(1), S = in.getDimSize(2), D = in.getDimSize(3);
    x = transposeBy(c, x, {0, 2, 1, 3});
  } else if (rank == 3) {
    if (heads <= 0 || in.getDimSize(2) % heads) return c.fail("3-D input needs num_heads dividing the hidden size");
    S = in.getDimSize(1), H = heads, D = in.getDimSize(2) / heads;
    x = reshapeTo(c, x, {B, S, H, D});
  } else {
    return c.fail("input must be 3-D or 4-D");
  }
  int64_t R = c.attrs.getInt("rotary_embedding_dim", 0);
  if (R == 0) R = D;
  if (R < 2 || R > D || R % 2) return c.fail("rotary_embedding_dim must be even and at most the head size");
  bool interleaved = c.attrs.getInt("interleaved", 0) != 0;
  auto caches = [&](size_t i) -> FailureOr<Value> {
    Value cache = c.input(i);
    auto ct = c.inputType(i);
    if (ct.getElementType() != f) return c.fail("cos_cache and sin_cache must have the input's element type");
    if (c.hasInput(3)) {
      if (ct.getRank() != 2) return c.fail("with position_ids the caches must be 2-D [max_position, dim/2]");
      cache = c.b.create<GatherOp>(c.loc, cache, c.input(3), c.b.getI64IntegerAttr(0));
    }
    auto t = typeOf(cache);
    if (t.getRank() != 3 || t.getDimSize(0) != B || t.getDimSize(1) != S || t.getDimSize(2) != R / 2)
      return c.fail("the caches must give [batch, sequence, rotary_embedding_dim / 2]");
    return interleaved ? reshapeTo(c, cache, {B, S, 1, R / 2, 1}) : reshapeTo(c, cache, {B, S, 1, R / 2});
  };
  auto cosV = caches(1), sinV = caches(2);
  if (failed(cosV) || failed(sinV)) return failure();
  auto parts = splitBy(c, x, 3, R < D ? SmallVector<int64_t>{R, D - R} : SmallVector<int64_t>{D});
  Value rot = parts[0];
  SmallVector<Value> halves;
  if (interleaved)
    halves = splitBy(c, reshapeTo(c, rot, {B, S, H, R / 2, 2}), 4, {1, 1});
  else
    halves = splitBy(c, rot, 3, {R / 2, R / 2});
  auto combine = [&](bool real) {
    return buildElementwise(c, {halves[0], halves[1], *cosV, *sinV}, f,
                            [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                              if (real)
                                return b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, a[2], a[0]),
                                                               b.create<arith::MulFOp>(l, a[3], a[1]));
                              return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[3], a[0]),
                                                             b.create<arith::MulFOp>(l, a[2], a[1]));
                            });
  };
  auto re = combine(true), im = combine(false);
  if (failed(re) || failed(im)) return failure();
  int64_t catAxis = interleaved ? 4 : 3;
  auto reT = typeOf(*re);
  SmallVector<int64_t> catShape(reT.getShape());
  catShape[catAxis] *= 2;
  Value rotated = c.b.create<ConcatOp>(c.loc, RankedTensorType::get(catShape, f), ValueRange{*re, *im},
                                       c.b.getI64IntegerAttr(catAxis));
  if (interleaved) rotated = reshapeTo(c, rotated, {B, S, H, R});
  Value y = rotated;
  if (R < D)
    y = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({B, S, H, D}, f), ValueRange{rotated, parts[1]},
                             c.b.getI64IntegerAttr(3));
  c.setOutput(0, rank == 4 ? transposeBy(c, y, {0, 2, 1, 3}) : reshapeTo(c, y, in.getShape()));
  return success();
}

/// Hann / Hamming / Blackman windows of a run-time length: the formula over
/// range(0, size), computed in float64 and cast to output_datatype.
LogicalResult importWindow(NodeContext &c) {
  auto st = c.inputType(0);
  Type it = st.getElementType();
  if (st.getNumElements() != 1 || !(it.isSignlessInteger(32) || it.isSignlessInteger(64)))
    return c.fail("size must be an int32 or int64 scalar");
  Type out = importElementType(c.g.ctx, int32_t(c.attrs.getInt("output_datatype", 1)));
  if (!out || !out.isIntOrFloat() || isStorageOnlyType(out)) return c.fail("unsupported output_datatype");
  bool periodic = c.attrs.getInt("periodic", 1) != 0;
  auto scalarOf = [&](Value v) -> Value {
    return c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({}, it), v, Value(), c.b.getDenseI64ArrayAttr({}),
                                 c.b.getBoolAttr(false));
  };
  auto constScalar = [&](int64_t v) -> Value {
    return c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({}, it), APInt(it.getIntOrFloatBitWidth(), v)));
  };
  Value size = scalarOf(c.input(0));
  Value n = c.b.create<RangeOp>(c.loc, RankedTensorType::get({ShapedType::kDynamic}, it), constScalar(0), size,
                                constScalar(1));
  std::string op = c.node.op_type();
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
    if (op == "HannWindow") {
      Value sn = b.create<math::SinOp>(l, angle(1));
      r = b.create<arith::MulFOp>(l, sn, sn);
    } else if (op == "HammingWindow") {
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
  c.setOutput(0, *y);
  return success();
}

/// DFT along a constant axis as real matmuls with constant cos/sin matrices:
/// forward, inverse, one-sided (rfft) and one-sided inverse (irfft), with
/// dft_length padding or truncating the signal.
LogicalResult importDFT(NodeContext &c) {
  auto in = c.inputType(0);
  if (!in.getElementType().isF32()) return c.fail("input must be float32");
  if (!in.hasStaticShape()) return c.fail("input must have a static shape");
  int64_t rank = in.getRank(), comps = in.getDimSize(rank - 1);
  if (rank < 2 || (comps != 1 && comps != 2)) return c.fail("the last dim must be 1 (real) or 2 (complex)");
  int64_t axis;
  if (c.opset >= 20) {
    axis = -2;
    if (c.hasInput(2)) {
      auto a = c.constantInts(2);
      if (!a || a->size() != 1) return c.fail("axis must be a constant (a run-time axis is not supported)");
      axis = (*a)[0];
    }
  } else {
    axis = c.attrs.getInt("axis", 1);
  }
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  if (axis == rank - 1) return c.fail("axis cannot be the complex dim");
  bool inverse = c.attrs.getInt("inverse", 0) != 0, onesided = c.attrs.getInt("onesided", 0) != 0;
  if (onesided && !inverse && comps != 1) return c.fail("a one-sided forward DFT needs a real input");
  int64_t N = in.getDimSize(axis), L;
  if (c.hasInput(1)) {
    auto l = c.constantInts(1);
    if (!l || l->size() != 1 || (*l)[0] <= 0) return c.fail("dft_length must be a positive constant");
    L = (*l)[0];
  } else {
    L = inverse && onesided ? 2 * (N - 1) : N;
  }
  if (L <= 0) return c.fail("the DFT length must be positive");
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
  auto parts = splitBy(c, c.input(0), rank - 1, comps == 2 ? SmallVector<int64_t>{1, 1} : SmallVector<int64_t>{1});
  SmallVector<int64_t> dataShape(in.getShape().drop_back());
  auto toRows = [&](Value v) -> Value { // [..., N, ...] -> [M, inLen] (truncated or zero-padded)
    v = reshapeTo(c, transposeBy(c, reshapeTo(c, v, dataShape), perm), {M, N});
    int64_t want = inverse && onesided ? inLen : L;
    if (want < N) {
      auto i64 = c.b.getI64Type();
      auto cst = [&](ArrayRef<int64_t> x) -> Value {
        return c.b.create<arith::ConstantOp>(
            c.loc, DenseElementsAttr::get(RankedTensorType::get({int64_t(x.size())}, i64), x));
      };
      v = c.b.create<SliceOp>(c.loc, RankedTensorType::get({M, want}, f32), v, cst({0}), cst({want}), cst({1}),
                              Value());
    } else if (want > N) {
      auto i64 = c.b.getI64Type();
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
    c.setOutput(0, rOut);
    return success();
  }
  Value iOut = back(im);
  SmallVector<int64_t> finalShape(typeOf(rOut).getShape());
  finalShape.back() = 2;
  c.setOutput(0, c.b.create<ConcatOp>(c.loc, RankedTensorType::get(finalShape, f32), ValueRange{rOut, iOut},
                                      c.b.getI64IntegerAttr(rank - 1)));
  return success();
}

} // namespace

void addDecomposedImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["DepthToSpace"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["SpaceToDepth"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["GlobalMaxPool"] = {1, kMaxOpset, noCheck, importGlobalMaxPool};
  t["InstanceNormalization"] = {6, kMaxOpset, noCheck, importInstanceNorm};
  t["MeanVarianceNormalization"] = {9, kMaxOpset, noCheck, importMVN};
  t["EyeLike"] = {9, kMaxOpset, noCheck, importEyeLike};
  t["LpNormalization"] = {1, kMaxOpset, noCheck, importLpNormalization};
  t["GroupNormalization"] = {18, kMaxOpset, noCheck, importGroupNorm};
  t["LRN"] = {1, kMaxOpset, noCheck, importLRN};
  t["RotaryEmbedding"] = {23, kMaxOpset, noCheck, importRotaryEmbedding};
  t["HannWindow"] = {17, kMaxOpset, noCheck, importWindow};
  t["DFT"] = {17, kMaxOpset, noCheck, importDFT};
  t["HammingWindow"] = {17, kMaxOpset, noCheck, importWindow};
  t["BlackmanWindow"] = {17, kMaxOpset, noCheck, importWindow};
}

} // namespace v4f
