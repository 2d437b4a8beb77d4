//===- DecomposeAttention.cpp - v4f.attention -> matmuls, softmax, elementwise ===//
//
// v4f.attention becomes
//
//   3-D inputs: reshape [B, S, H*D] -> [B, S, H, D], transpose -> [B, H, S, D]
//   past_key/past_value: concat along the sequence axis (= present_key/value)
//   Q * sqrt(scale), K * sqrt(scale) (as the spec suggests), transpose K
//   matmul -> [B, Hq, S, L] (grouped-query attention: Q viewed as
//             [B, Hkv, Hq/Hkv, S, D] against K as [B, Hkv, 1, D, L], so the
//             KV heads broadcast instead of being copied)
//   optional softcap: c * tanh(x / c)
//   + bias: one v4f.elementwise over the attn_mask (padded with -inf / false
//           up to L), the query positions, the key positions and
//           nonpad_kv_seqlen, giving 0 where a key is attended and -inf where
//           causality, the sliding window, the padding or a boolean mask
//           forbid it (a float mask is added as is); evaluated at compile
//           time when it depends on constants only
//   softmax over the keys, then rows whose bias is all -inf are zeroed
//           (skipped when a constant bias has no such row)
//   matmul with V, and for 3-D inputs transpose/reshape back to [B, S, Hq*Dv].
//
// Everything is computed in float32 (the v4f matmul is float32-only):
// float16 / bfloat16 inputs are widened on entry and outputs narrowed on exit.
//
//===----------------------------------------------------------------------===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEATTENTION
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

RankedTensorType typeOrNull(Value v) { return v ? typeOf(v) : RankedTensorType(); }

Value constantOf(BuildContext &c, DenseElementsAttr attr) { return c.b.create<arith::ConstantOp>(c.loc, attr); }

constexpr int64_t kDyn = ShapedType::kDynamic;

/// `v` reshaped to `shape`, where sources[i] >= 0 takes result dim i from
/// input dim sources[i] (static or dynamic: batch and sequence lengths may
/// be either) and the other entries are static.
Value view(BuildContext &c, Value v, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  auto t = typeOf(v);
  SmallVector<int64_t> out(shape), src(sources);
  for (size_t i = 0; i < out.size(); ++i) {
    if (src[i] < 0) continue;
    out[i] = t.getDimSize(src[i]);
    if (!t.isDynamicDim(src[i])) src[i] = -1;
  }
  return reshapeTo(c, v, out, src);
}

/// Dim `axis` of `v` as a 0-D int64 tensor (read at run time when dynamic).
Value dimScalar(BuildContext &c, Value v, int64_t axis) {
  auto t = typeOf(v);
  auto i64 = c.b.getI64Type();
  if (!t.isDynamicDim(axis))
    return constantOf(c, DenseElementsAttr::get(RankedTensorType::get({}, i64), t.getDimSize(axis)));
  Value one = c.b.create<ShapeOp>(c.loc, RankedTensorType::get({1}, i64), v, c.b.getI64IntegerAttr(axis),
                                  c.b.getI64IntegerAttr(axis + 1));
  return reshapeTo(c, one, {});
}

/// [0, 1, ..., n - 1] + offset (0-D int64 tensors) as a 1-D int64 tensor.
FailureOr<Value> positions(BuildContext &c, Value n, Value offset) {
  auto i64 = c.b.getI64Type();
  auto scalar = [&](int64_t x) { return constantOf(c, DenseElementsAttr::get(RankedTensorType::get({}, i64), x)); };
  Value r = c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), scalar(0), n, scalar(1));
  if (!offset) return r;
  return buildElementwise(c, {r, offset}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::AddIOp>(l, a[0], a[1]);
  });
}

Value matmul(BuildContext &c, Value a, Value b) {
  return c.b.create<MatMulOp>(c.loc, a, b, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                              c.b.getF32FloatAttr(0));
}

/// The attn_mask padded along its last dim to the total length of
/// `presentKey` (false / -inf), bfloat16 widened to float32 first; null
/// without a mask.
FailureOr<Value> paddedMask(BuildContext &c, AttentionOp op, int64_t L, Value presentKey) {
  Value mask = op.getAttnMask();
  if (!mask) return Value();
  if (typeOf(mask).getElementType().isBF16()) { // bfloat16 is storage-only
    auto wide = convertElementType(c, mask, c.b.getF32Type());
    if (failed(wide)) return failure();
    mask = *wide;
  }
  auto mt = typeOf(mask);
  Type maskElt = mt.getElementType();
  int64_t last = mt.getRank() - 1, M = mt.getDimSize(last);
  if (M == L && L != kDyn) return mask;
  auto fillOf = [&](RankedTensorType t) {
    return maskElt.isInteger(1)
               ? DenseElementsAttr::get(t, false)
               : DenseElementsAttr::get(t, APFloat::getInf(llvm::cast<FloatType>(maskElt).getFloatSemantics(),
                                                           /*Negative=*/true));
  };
  if (M != kDyn && L != kDyn) {
    SmallVector<int64_t> padShape(mt.getShape());
    padShape.back() = L - M;
    return (Value)c.b.create<ConcatOp>(
        c.loc, ValueRange{mask, constantOf(c, fillOf(RankedTensorType::get(padShape, maskElt)))},
        c.b.getI64IntegerAttr(last));
  }
  // A length known only at run time: pad the last dim by L - M there.
  auto extra = dimSub(c, dimOf(c, presentKey, 2), dimOf(c, mask, last));
  if (failed(extra)) return failure();
  auto i64 = c.b.getI64Type();
  Value pads = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({2}, i64), ValueRange{dimConstant(c, 0), *extra},
                                    c.b.getI64IntegerAttr(0));
  Value axes = dimConstant(c, last);
  Value fill = constantOf(c, fillOf(RankedTensorType::get({}, maskElt)));
  SmallVector<int64_t> shape(mt.getShape());
  shape.back() = L;
  return (Value)c.b.create<PadOp>(c.loc, RankedTensorType::get(shape, maskElt), mask, pads, fill, axes,
                                  c.b.getStringAttr("constant"));
}

/// The additive bias of the scores (0 where a key is attended, -inf where
/// it is not, plus a float mask), or null when nothing masks.
FailureOr<Value> buildBias(BuildContext &c, AttentionOp op, const AttentionShape &s, Value presentKey) {
  auto maskOr = paddedMask(c, op, s.L, presentKey);
  if (failed(maskOr)) return failure();
  Value mask = *maskOr;
  Type maskElt = mask ? typeOf(mask).getElementType() : Type();
  Value nonpad = op.getNonpadKvSeqlen() ? view(c, op.getNonpadKvSeqlen(), {0, 1, 1, 1}, {0, -1, -1, -1}) : Value();
  bool causal = op.getIsCausal();
  int64_t left = op.getLeftWindowSize(), right = op.getRightWindowSize();
  bool positional = causal || left >= 0 || right >= 0;
  if (!mask && !positional && !nonpad) return Value();

  // Inputs of the bias elementwise, in this order when present: the mask, the
  // query positions [S, 1], the key positions [1, L], nonpad_kv_seqlen [B, 1, 1, 1].
  SmallVector<Value> ins;
  int maskAt = -1, posAt = -1, keyAt = -1, nonpadAt = -1;
  if (mask) maskAt = ins.size(), ins.push_back(mask);
  auto i64 = c.b.getI64Type();
  // Static lengths give constant positions (and a bias evaluated below);
  // dynamic ones a v4f.range over the lengths read at run time.
  bool dynamic = s.S == kDyn || s.L == kDyn || s.P == kDyn;
  int64_t seqAxis = s.rank == 3 ? 1 : 2;
  if (positional) {
    // Query i sits at position i + offset: offset = past length, or
    // nonpad_kv_seqlen[b] - S with an external cache (added in the body).
    posAt = ins.size();
    if (!dynamic) {
      SmallVector<int64_t> pos;
      for (int64_t i = 0; i < s.S; ++i) pos.push_back(i + (nonpad ? -s.S : s.P));
      ins.push_back(
          constantOf(c, DenseElementsAttr::get(RankedTensorType::get({s.S, 1}, i64), ArrayRef<int64_t>(pos))));
    } else {
      Value S = dimScalar(c, op.getQuery(), seqAxis), offset;
      if (nonpad) {
        auto neg = buildElementwise(c, {S}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
          return b.create<arith::SubIOp>(l, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)), a[0]);
        });
        if (failed(neg)) return failure();
        offset = *neg;
      } else if (op.getPastKey()) {
        offset = dimScalar(c, op.getPastKey(), 2);
      }
      auto pos = positions(c, S, offset);
      if (failed(pos)) return failure();
      ins.push_back(view(c, *pos, {0, 1}, {0, -1}));
    }
  }
  if (positional || nonpad) {
    keyAt = ins.size();
    if (!dynamic) {
      SmallVector<int64_t> keys;
      for (int64_t j = 0; j < s.L; ++j) keys.push_back(j);
      ins.push_back(
          constantOf(c, DenseElementsAttr::get(RankedTensorType::get({1, s.L}, i64), ArrayRef<int64_t>(keys))));
    } else {
      auto keys = positions(c, dimScalar(c, presentKey, 2), Value());
      if (failed(keys)) return failure();
      ins.push_back(view(c, *keys, {1, 0}, {-1, 0}));
    }
  }
  if (nonpad) nonpadAt = ins.size(), ins.push_back(nonpad);
  auto built = buildElementwise(c, ins, c.b.getF32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.f));
    Value ninf = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(-INFINITY));
    Value allowed;
    auto allow = [&](Value cond) { allowed = allowed ? b.create<arith::AndIOp>(l, allowed, cond) : cond; };
    Value m = zero;
    if (maskAt >= 0) {
      Value mv = a[maskAt];
      if (maskElt.isInteger(1))
        allow(mv);
      else if (maskElt.isF32())
        m = mv;
      else if (maskElt.getIntOrFloatBitWidth() < 32)
        m = b.create<arith::ExtFOp>(l, b.getF32Type(), mv);
      else
        m = b.create<arith::TruncFOp>(l, b.getF32Type(), mv);
    }
    if (positional) {
      Value p = a[posAt], j = a[keyAt];
      if (nonpadAt >= 0) p = b.create<arith::AddIOp>(l, p, a[nonpadAt]);
      if (causal) allow(b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sle, j, p));
      Value d = b.create<arith::SubIOp>(l, p, j);
      if (left >= 0)
        allow(b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sle, d,
                                      b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(left))));
      if (right >= 0)
        allow(b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, d,
                                      b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(-right))));
    }
    if (nonpadAt >= 0) allow(b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, a[keyAt], a[nonpadAt]));
    if (!allowed) return m;
    Value add = b.create<arith::SelectOp>(l, allowed, zero, ninf);
    return maskAt >= 0 && !maskElt.isInteger(1) ? (Value)b.create<arith::AddFOp>(l, m, add) : add;
  });
  if (failed(built)) return failure();
  // A bias over constants only (causality, windows) becomes a constant here,
  // so that the guard below can see whether a row may be empty; the
  // elementwise left behind is dead and goes with the next canonicalization.
  if (auto ew = built->getDefiningOp<ElementwiseOp>())
    if (auto folded = foldedValue(ew)) return constantOf(c, *folded);
  return *built;
}

/// softmax(scores) with the rows whose bias is -inf everywhere zeroed (the
/// softmax of such a row would be NaN): they attend nothing.
FailureOr<Value> guardedSoftmax(BuildContext &c, AttentionOp op, Value scores, Value bias) {
  // softmax_precision: the softmax runs in float32, at least as precise as
  // float16/bfloat16; a float64 request is computed in float32 too.
  Value probs = c.b.create<SoftmaxOp>(c.loc, scores, Value(), c.b.getI64IntegerAttr(3), c.b.getStringAttr("softmax"),
                                      c.b.getF32FloatAttr(1.f), c.b.getBoolAttr(false));
  if (!bias) return probs;
  auto bt = typeOf(bias);
  // A causal mask alone (offset >= 0) always allows key 0.
  bool mayBeEmpty =
      op.getAttnMask() || op.getNonpadKvSeqlen() || op.getLeftWindowSize() >= 0 || op.getRightWindowSize() >= 0;
  if (auto cst = bias.getDefiningOp<arith::ConstantOp>()) {
    auto attr = llvm::cast<DenseElementsAttr>(cst.getValue());
    int64_t cols = bt.getDimSize(bt.getRank() - 1), n = 0;
    mayBeEmpty = false;
    bool rowEmpty = true;
    for (const APFloat &x : attr.getValues<APFloat>()) {
      rowEmpty &= x.isInfinity() && x.isNegative();
      if (++n % cols == 0) {
        mayBeEmpty |= rowEmpty;
        rowEmpty = true;
      }
    }
  }
  if (!mayBeEmpty) return probs;
  Type f32 = c.b.getF32Type();
  SmallVector<int64_t> rowShape(bt.getShape());
  rowShape.back() = 1;
  Value rowMax =
      c.b.create<ReduceOp>(c.loc, RankedTensorType::get(rowShape, f32), bias, Value(), c.b.getStringAttr("max"),
                           c.b.getDenseI64ArrayAttr({bt.getRank() - 1}), c.b.getBoolAttr(true));
  return buildElementwise(c, {probs, rowMax}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value ninf = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(-INFINITY));
    Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.f));
    Value empty = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[1], ninf);
    return b.create<arith::SelectOp>(l, empty, zero, a[0]);
  });
}

LogicalResult decomposeAttention(BuildContext &c, AttentionOp op, SmallVectorImpl<Value> &results) {
  AttentionShape s;
  std::string error =
      resolveAttentionShape(typeOf(op.getQuery()), typeOf(op.getKey()), typeOf(op.getValue()),
                            typeOrNull(op.getPastKey()), typeOrNull(op.getPastValue()), typeOrNull(op.getAttnMask()),
                            typeOrNull(op.getNonpadKvSeqlen()), op.getQNumHeads(), op.getKvNumHeads(), s);
  if (!error.empty()) return c.fail(error);
  Type io = typeOf(op.getQuery()).getElementType(), f32 = c.b.getF32Type();

  // --- Heads and the KV cache ------------------------------------------------
  // Head counts and sizes are dims (Builders.h): constants when known, read
  // or computed at run time otherwise; the reshapes below check at run time
  // that they divide what they split.
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value Hq, Hkv, D, Dv;
  auto split = [&](Value x, Value heads, Value &size) -> FailureOr<Value> {
    auto sz = dimDiv(c, dimOf(c, x, 2), heads);
    if (failed(sz)) return failure();
    size = *sz;
    auto viewed = reshapeToDims(c, x, {dimOf(c, x, 0), dimOf(c, x, 1), heads, size});
    if (failed(viewed)) return failure();
    return transposeBy(c, *viewed, {0, 2, 1, 3});
  };
  if (s.rank == 3) {
    Hq = dimConstant(c, s.Hq), Hkv = dimConstant(c, s.Hkv);
    Value Dk;
    auto q4 = split(q, Hq, D), k4 = split(k, Hkv, Dk), v4 = split(v, Hkv, Dv);
    if (failed(q4) || failed(k4) || failed(v4)) return failure();
    q = *q4, k = *k4, v = *v4;
  } else {
    Hq = dimOf(c, q, 1), Hkv = dimOf(c, k, 1), D = dimOf(c, q, 3), Dv = dimOf(c, v, 3);
  }
  auto repsOr = dimDiv(c, Hq, Hkv);
  if (failed(repsOr)) return failure();
  Value reps = *repsOr;
  bool grouped = constantDim(reps) != 1;
  if (op.getPastKey()) {
    k = c.b.create<ConcatOp>(c.loc, ValueRange{op.getPastKey(), k}, c.b.getI64IntegerAttr(2));
    v = c.b.create<ConcatOp>(c.loc, ValueRange{op.getPastValue(), v}, c.b.getI64IntegerAttr(2));
  }
  Value presentKey = k, presentValue = v;
  for (Value *x : {&q, &k, &v}) {
    auto wide = convertElementType(c, *x, f32);
    if (failed(wide)) return failure();
    *x = *wide;
  }

  // --- Scores ------------------------------------------------------------------
  float scale = op.getScale().convertToFloat();
  if (scale == 0.f) {
    // The default 1/sqrt(head_size) of a head size known only at run time:
    // Q and K are each scaled by its square root, head_size^(-1/4).
    auto root = buildElementwise(c, {D}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value d = b.create<math::SqrtOp>(l, b.create<arith::SIToFPOp>(l, b.getF32Type(), a[0]));
      Value one = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.f));
      return b.create<arith::DivFOp>(l, one, b.create<math::SqrtOp>(l, d));
    });
    if (failed(root)) return failure();
    q = c.b.create<MulOp>(c.loc, q, *root);
    k = c.b.create<MulOp>(c.loc, k, *root);
  } else if (float rootScale = (float)std::sqrt((double)scale); rootScale != 1.f) {
    q = c.b.create<MulOp>(c.loc, q, constF32(c, {}, {rootScale}));
    k = c.b.create<MulOp>(c.loc, k, constF32(c, {}, {rootScale}));
  }
  Value kT = transposeBy(c, k, {0, 1, 3, 2});
  // Grouped-query attention: Q viewed as [B, Hkv, reps, S, D] against K as
  // [B, Hkv, 1, D, L], so the KV heads broadcast instead of being copied.
  auto group = [&](Value x, ArrayRef<Value> middle) -> FailureOr<Value> {
    SmallVector<Value> dims = {dimOf(c, x, 0)};
    dims.append(middle.begin(), middle.end());
    dims.append({dimOf(c, x, 2), dimOf(c, x, 3)});
    return reshapeToDims(c, x, dims);
  };
  auto ungroup = [&](Value x) -> FailureOr<Value> {
    return reshapeToDims(c, x, {dimOf(c, x, 0), Hq, dimOf(c, x, 3), dimOf(c, x, 4)});
  };
  Value one = dimConstant(c, 1), qk;
  if (!grouped) {
    qk = matmul(c, q, kT);
  } else {
    auto q5 = group(q, {Hkv, reps}), k5 = group(kT, {Hkv, one});
    if (failed(q5) || failed(k5)) return failure();
    auto flat = ungroup(matmul(c, *q5, *k5));
    if (failed(flat)) return failure();
    qk = *flat;
  }
  // The scores with every dim the op knows (the batch may be known from
  // nonpad_kv_seqlen or the mask only), so that they and not the bias give
  // the shape of the sum below.
  auto known = reshapeToType(c, qk, RankedTensorType::get({s.B, s.Hq, s.S, s.L}, f32), /*exact=*/false);
  if (failed(known)) return failure();
  qk = *known;
  Value raw = qk;
  float softcap = op.getSoftcap().convertToFloat();
  if (softcap > 0.f) {
    auto capped = buildElementwise(c, {qk}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value cap = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(softcap));
      Value t = b.create<math::TanhOp>(l, b.create<arith::DivFOp>(l, a[0], cap));
      return b.create<arith::MulFOp>(l, t, cap);
    });
    if (failed(capped)) return failure();
    qk = *capped;
  }
  Value softcapped = qk;
  auto bias = buildBias(c, op, s, presentKey);
  if (failed(bias)) return failure();
  Value scores = *bias ? (Value)c.b.create<AddOp>(c.loc, qk, *bias) : qk;
  auto probs = guardedSoftmax(c, op, scores, *bias);
  if (failed(probs)) return failure();

  // --- Output ------------------------------------------------------------------
  Value y;
  if (!grouped) {
    y = matmul(c, *probs, v);
  } else {
    auto p5 = group(*probs, {Hkv, reps}), v5 = group(v, {Hkv, one});
    if (failed(p5) || failed(v5)) return failure();
    auto flat = ungroup(matmul(c, *p5, *v5));
    if (failed(flat)) return failure();
    y = *flat;
  }
  if (s.rank == 3) {
    Value t = transposeBy(c, y, {0, 2, 1, 3});
    auto hidden = dimMul(c, Hq, Dv);
    if (failed(hidden)) return failure();
    auto merged = reshapeToDims(c, t, {dimOf(c, t, 0), dimOf(c, t, 1), *hidden});
    if (failed(merged)) return failure();
    y = *merged;
  }
  int64_t mode = op.getQkMatmulOutputMode();
  Value qkOut = mode == 0 ? raw : mode == 1 ? softcapped : mode == 2 ? scores : *probs;
  Value outs[] = {y, presentKey, presentValue, qkOut};
  for (auto [out, want] : llvm::zip(outs, op->getResultTypes())) {
    auto narrowed = convertElementType(c, out, io);
    if (failed(narrowed)) return failure();
    auto typed = reshapeToType(c, *narrowed, llvm::cast<RankedTensorType>(want));
    if (failed(typed)) return failure();
    results.push_back(*typed);
  }
  return success();
}

struct DecomposeAttentionPass : v4f::impl::DecomposeAttentionBase<DecomposeAttentionPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<AttentionOp>(getOperation(), decomposeAttention))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<AttentionOp>>(patterns.getContext(), decomposeAttention);
}

std::unique_ptr<Pass> v4f::createDecomposeAttentionPass() { return std::make_unique<DecomposeAttentionPass>(); }
