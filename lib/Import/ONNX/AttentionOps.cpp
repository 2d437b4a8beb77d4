//===- AttentionOps.cpp - ONNX Attention as a composition of v4f ops ------===//
//
// Attention (opset 23+) imports as
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
//           forbid it (a float mask is added as is)
//   softmax over the keys, then rows whose bias is all -inf are zeroed
//   matmul with V, and for 3-D inputs transpose/reshape back to [B, S, Hq*Dv].
//
// Everything is computed in float32 (the v4f matmul is float32-only):
// float16 inputs are widened on entry and outputs narrowed on exit.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

constexpr int64_t kMaxOpset = 28;

/// Converts a float tensor to element type `to` (extf / truncf), or returns it.
FailureOr<Value> convertFloat(NodeContext &c, Value v, Type to) {
  Type from = typeOf(v).getElementType();
  if (from == to) return v;
  return buildElementwise(c, {v}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return castScalar(b, l, a[0], from, to);
  });
}

Value constantOf(NodeContext &c, DenseElementsAttr attr) { return c.b.create<arith::ConstantOp>(c.loc, attr); }

std::string checkAttention(const NodeAttrs &a, int64_t) {
  int64_t mode = a.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return "qk_matmul_output_mode must be 0, 1, 2 or 3 (got " + std::to_string(mode) + ")";
  for (const char *name : {"left_window_size", "right_window_size"})
    if (a.getInt(name, -1) < -1) return std::string(name) + " must be -1 or non-negative";
  if (a.has("softmax_precision")) {
    int64_t p = a.getInt("softmax_precision", 0);
    if (p != onnx::TensorProto::FLOAT && p != onnx::TensorProto::FLOAT16 && p != onnx::TensorProto::DOUBLE &&
        p != onnx::TensorProto::BFLOAT16)
      return "softmax_precision must be a floating-point type";
  }
  for (const char *name : {"q_num_heads", "kv_num_heads"})
    if (a.has(name) && a.getInt(name, 0) <= 0) return std::string(name) + " must be positive";
  return "";
}

LogicalResult importAttention(NodeContext &c) {
  // --- Types and shapes ----------------------------------------------------
  if (!c.hasInput(0) || !c.hasInput(1) || !c.hasInput(2)) return c.fail("Q, K and V are required");
  Type io = c.inputType(0).getElementType();
  for (int i = 0; i < 3; ++i) {
    Type t = c.inputType(i).getElementType();
    if (!t.isF32() && !t.isF16() && !t.isBF16())
      return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                    "') must be float32, float16 or bfloat16 (v4f computes Attention with its float32-only matmul)");
    if (!c.inputType(i).hasStaticShape()) return c.fail("Q, K and V must have static shapes");
  }
  if (c.inputType(1).getElementType() != io || c.inputType(2).getElementType() != io)
    return c.fail("Q, K and V must have the same element type");
  int64_t rank = c.inputType(0).getRank();
  if (c.inputType(1).getRank() != rank || c.inputType(2).getRank() != rank || (rank != 3 && rank != 4))
    return c.fail("Q, K and V must all be 3-D (batch, seq, hidden) or all 4-D (batch, heads, seq, head_size)");
  bool hasPast = c.hasInput(4) || c.hasInput(5);
  if (hasPast && !(c.hasInput(4) && c.hasInput(5))) return c.fail("past_key and past_value must be given together");
  bool hasNonpad = c.hasInput(6);
  if (hasNonpad && hasPast) return c.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value");

  Value q = c.input(0), k = c.input(1), v = c.input(2);
  auto qt = c.inputType(0), kt = c.inputType(1), vt = c.inputType(2);
  int64_t B = qt.getDimSize(0);
  if (kt.getDimSize(0) != B || vt.getDimSize(0) != B) return c.fail("Q, K and V have different batch sizes");
  int64_t Hq, Hkv, S, L, D, Dv;
  if (rank == 3) {
    if (!c.attrs.has("q_num_heads") || !c.attrs.has("kv_num_heads"))
      return c.fail("3-D inputs need the q_num_heads and kv_num_heads attributes");
    Hq = c.attrs.getInt("q_num_heads", 1);
    Hkv = c.attrs.getInt("kv_num_heads", 1);
    if (qt.getDimSize(2) % Hq || kt.getDimSize(2) % Hkv || vt.getDimSize(2) % Hkv)
      return c.fail("hidden sizes must be divisible by the number of heads");
    S = qt.getDimSize(1);
    L = kt.getDimSize(1);
    D = qt.getDimSize(2) / Hq;
    Dv = vt.getDimSize(2) / Hkv;
    if (kt.getDimSize(2) / Hkv != D) return c.fail("Q and K head sizes differ");
    if (vt.getDimSize(1) != L) return c.fail("K and V sequence lengths differ");
    q = transposeBy(c, reshapeTo(c, q, {B, S, Hq, D}), {0, 2, 1, 3});
    k = transposeBy(c, reshapeTo(c, k, {B, L, Hkv, D}), {0, 2, 1, 3});
    v = transposeBy(c, reshapeTo(c, v, {B, L, Hkv, Dv}), {0, 2, 1, 3});
  } else {
    Hq = qt.getDimSize(1);
    Hkv = kt.getDimSize(1);
    S = qt.getDimSize(2);
    L = kt.getDimSize(2);
    D = qt.getDimSize(3);
    Dv = vt.getDimSize(3);
    if (kt.getDimSize(3) != D) return c.fail("Q and K head sizes differ");
    if (vt.getDimSize(1) != Hkv || vt.getDimSize(2) != L) return c.fail("K and V differ in heads or sequence length");
  }
  if (B == 0 || Hq == 0 || Hkv == 0 || S == 0 || L == 0 || D == 0 || Dv == 0)
    return c.fail("zero-sized Q/K/V dims are not supported");
  if (Hq % Hkv) return c.fail("q_num_heads (" + std::to_string(Hq) + ") must be a multiple of kv_num_heads (" +
                              std::to_string(Hkv) + ")");
  int64_t reps = Hq / Hkv;

  // --- KV cache ------------------------------------------------------------
  int64_t P = 0;
  if (hasPast) {
    auto pk = c.inputType(4), pv = c.inputType(5);
    if (pk.getElementType() != io || pv.getElementType() != io)
      return c.fail("past_key/past_value must have the element type of Q");
    if (!pk.hasStaticShape() || !pv.hasStaticShape() || pk.getRank() != 4 || pv.getRank() != 4)
      return c.fail("past_key/past_value must be static 4-D tensors");
    P = pk.getDimSize(2);
    if (pk.getDimSize(0) != B || pk.getDimSize(1) != Hkv || pk.getDimSize(3) != D)
      return c.fail("past_key must be (batch, kv_num_heads, past_seq, head_size)");
    if (pv.getDimSize(0) != B || pv.getDimSize(1) != Hkv || pv.getDimSize(2) != P || pv.getDimSize(3) != Dv)
      return c.fail("past_value must be (batch, kv_num_heads, past_seq, v_head_size)");
    k = c.b.create<ConcatOp>(c.loc, ValueRange{c.input(4), k}, c.b.getI64IntegerAttr(2));
    v = c.b.create<ConcatOp>(c.loc, ValueRange{c.input(5), v}, c.b.getI64IntegerAttr(2));
    L += P;
  }
  // Without a cache the present outputs are K and V in (batch, heads, seq, size) form.
  if (c.outputUsed(1)) c.setOutput(1, k);
  if (c.outputUsed(2)) c.setOutput(2, v);

  Type f32 = c.b.getF32Type();
  auto qf = convertFloat(c, q, f32);
  if (failed(qf)) return failure();
  auto kf = convertFloat(c, k, f32);
  if (failed(kf)) return failure();
  auto vf = convertFloat(c, v, f32);
  if (failed(vf)) return failure();
  q = *qf, k = *kf, v = *vf;

  // --- Scores --------------------------------------------------------------
  double scale = c.attrs.has("scale") ? (double)c.attrs.getFloat("scale", 1.f) : 1.0 / std::sqrt((double)D);
  if (!(scale > 0)) return c.fail("scale must be positive (both Q and K are scaled by its square root)");
  float rootScale = (float)std::sqrt(scale);
  if (rootScale != 1.f) {
    q = c.b.create<MulOp>(c.loc, q, c.constF32({}, {rootScale}));
    k = c.b.create<MulOp>(c.loc, k, c.constF32({}, {rootScale}));
  }
  Value kT = transposeBy(c, k, {0, 1, 3, 2});
  auto matmul = [&](Value a, Value b) -> Value {
    return c.b.create<MatMulOp>(c.loc, a, b, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                                c.b.getF32FloatAttr(0));
  };
  Value qk;
  if (reps == 1) {
    qk = matmul(q, kT);
  } else {
    Value q5 = reshapeTo(c, q, {B, Hkv, reps, S, D});
    Value k5 = reshapeTo(c, kT, {B, Hkv, 1, D, L});
    qk = reshapeTo(c, matmul(q5, k5), {B, Hq, S, L});
  }
  Value raw = qk;
  float softcap = c.attrs.getFloat("softcap", 0.f);
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

  // --- Bias ----------------------------------------------------------------
  // Inputs of the bias elementwise, in this order when present: the mask, the
  // query positions [S, 1], the key positions [1, L], nonpad_kv_seqlen [B, 1, 1, 1].
  bool causal = c.attrs.getInt("is_causal", 0) != 0;
  int64_t left = c.attrs.getInt("left_window_size", -1), right = c.attrs.getInt("right_window_size", -1);
  bool window = left >= 0 || right >= 0;
  Value mask;
  Type maskElt;
  if (c.hasInput(3)) {
    mask = c.input(3);
    if (typeOf(mask).getElementType().isBF16()) { // bfloat16 is storage-only: widen it first
      auto wide = convertFloat(c, mask, c.b.getF32Type());
      if (failed(wide)) return failure();
      mask = *wide;
    }
    auto mt = typeOf(mask);
    maskElt = mt.getElementType();
    if (!maskElt.isInteger(1) && !llvm::isa<FloatType>(maskElt))
      return c.fail("attn_mask must be bool or float (integer masks are not supported)");
    if (llvm::isa<FloatType>(maskElt) && !maskElt.isF32() && !maskElt.isF16() && !maskElt.isF64())
      return c.fail("attn_mask element type is not supported");
    if (!mt.hasStaticShape() || mt.getRank() < 1 || mt.getRank() > 4)
      return c.fail("attn_mask must be a static tensor of rank 1 to 4");
    int64_t M = mt.getDimSize(mt.getRank() - 1);
    if (M > L) return c.fail("attn_mask's last dim (" + std::to_string(M) + ") exceeds the total sequence length (" +
                             std::to_string(L) + ")");
    if (M < L) {
      SmallVector<int64_t> padShape(mt.getShape());
      padShape.back() = L - M;
      auto padType = RankedTensorType::get(padShape, maskElt);
      DenseElementsAttr fill =
          maskElt.isInteger(1)
              ? DenseElementsAttr::get(padType, false)
              : DenseElementsAttr::get(padType, APFloat::getInf(llvm::cast<FloatType>(maskElt).getFloatSemantics(),
                                                                /*Negative=*/true));
      mask = c.b.create<ConcatOp>(c.loc, ValueRange{mask, constantOf(c, fill)}, c.b.getI64IntegerAttr(mt.getRank() - 1));
    }
  }
  Value nonpad;
  if (hasNonpad) {
    auto nt = c.inputType(6);
    if (!nt.getElementType().isInteger(64) || nt.getRank() != 1 || nt.getDimSize(0) != B)
      return c.fail("nonpad_kv_seqlen must be an int64 tensor of shape (batch_size)");
    nonpad = reshapeTo(c, c.input(6), {B, 1, 1, 1});
  }
  bool positional = causal || window;
  Value bias;
  if (mask || positional || nonpad) {
    SmallVector<Value> ins;
    int maskAt = -1, posAt = -1, keyAt = -1, nonpadAt = -1;
    if (mask) maskAt = ins.size(), ins.push_back(mask);
    auto i64 = c.b.getI64Type();
    if (positional) {
      // Query i sits at position i + offset: offset = past length, or
      // nonpad_kv_seqlen[b] - S with an external cache (added in the body).
      SmallVector<int64_t> pos;
      for (int64_t i = 0; i < S; ++i) pos.push_back(i + (nonpad ? -S : P));
      posAt = ins.size();
      ins.push_back(constantOf(c, DenseElementsAttr::get(RankedTensorType::get({S, 1}, i64), ArrayRef<int64_t>(pos))));
    }
    if (positional || nonpad) {
      SmallVector<int64_t> keys;
      for (int64_t j = 0; j < L; ++j) keys.push_back(j);
      keyAt = ins.size();
      ins.push_back(constantOf(c, DenseElementsAttr::get(RankedTensorType::get({1, L}, i64), ArrayRef<int64_t>(keys))));
    }
    if (nonpad) nonpadAt = ins.size(), ins.push_back(nonpad);
    auto built = buildElementwise(c, ins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.f));
      Value ninf = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(-INFINITY));
      Value allowed;
      auto allow = [&](Value cond) { allowed = allowed ? b.create<arith::AndIOp>(l, allowed, cond) : cond; };
      Value m = zero;
      if (maskAt >= 0) {
        Value mv = a[maskAt];
        if (maskElt.isInteger(1)) allow(mv);
        else if (maskElt.isF32()) m = mv;
        else if (maskElt.getIntOrFloatBitWidth() < 32) m = b.create<arith::ExtFOp>(l, b.getF32Type(), mv);
        else m = b.create<arith::TruncFOp>(l, b.getF32Type(), mv);
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
    bias = *built;
    if (auto folded = foldElementwise(bias)) bias = constantOf(c, *folded);
  }
  if (bias) {
    SmallVector<int64_t> shape;
    if (failed(broadcastShapes(typeOf(qk).getShape(), typeOf(bias).getShape(), shape)) ||
        ArrayRef<int64_t>(shape) != typeOf(qk).getShape())
      return c.fail("attn_mask / nonpad_kv_seqlen do not broadcast to (batch, q_num_heads, q_seq, total_seq)");
  }
  Value scores = bias ? (Value)c.b.create<AddOp>(c.loc, qk, bias) : qk;

  // --- Softmax and the fully-masked-row guard -----------------------------
  // softmax_precision: the softmax runs in float32, at least as precise as
  // float16/bfloat16; a float64 request is computed in float32 too.
  Value probs = c.b.create<SoftmaxOp>(c.loc, scores, c.b.getI64IntegerAttr(3), c.b.getStringAttr("softmax"));
  if (bias) {
    // A row whose bias is -inf everywhere attends nothing: its probabilities
    // are 0 (the softmax of such a row would be NaN).
    auto bt = typeOf(bias);
    // A causal mask alone (offset >= 0) always allows key 0.
    bool mayBeEmpty = mask || nonpad || window;
    if (auto cst = bias.getDefiningOp<arith::ConstantOp>()) {
      auto attr = llvm::cast<DenseElementsAttr>(cst.getValue());
      int64_t cols = bt.getDimSize(bt.getRank() - 1), n = 0;
      mayBeEmpty = false;
      bool rowEmpty = true;
      assert(cols > 0 && "L > 0 was checked");
      for (const APFloat &x : attr.getValues<APFloat>()) {
        rowEmpty &= x.isInfinity() && x.isNegative();
        if (++n % cols == 0) {
          mayBeEmpty |= rowEmpty;
          rowEmpty = true;
        }
      }
    }
    if (mayBeEmpty) {
      SmallVector<int64_t> rowShape(bt.getShape());
      rowShape.back() = 1;
      Value rowMax = c.b.create<ReduceOp>(c.loc, RankedTensorType::get(rowShape, f32), bias, Value(),
                                          c.b.getStringAttr("max"), c.b.getDenseI64ArrayAttr({bt.getRank() - 1}),
                                          c.b.getBoolAttr(true));
      auto guarded = buildElementwise(c, {probs, rowMax}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value ninf = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(-INFINITY));
        Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.f));
        Value empty = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[1], ninf);
        return b.create<arith::SelectOp>(l, empty, zero, a[0]);
      });
      if (failed(guarded)) return failure();
      probs = *guarded;
    }
  }

  // --- Output --------------------------------------------------------------
  Value y;
  if (reps == 1) {
    y = matmul(probs, v);
  } else {
    Value p5 = reshapeTo(c, probs, {B, Hkv, reps, S, L});
    Value v5 = reshapeTo(c, v, {B, Hkv, 1, L, Dv});
    y = reshapeTo(c, matmul(p5, v5), {B, Hq, S, Dv});
  }
  if (rank == 3) y = reshapeTo(c, transposeBy(c, y, {0, 2, 1, 3}), {B, S, Hq * Dv});
  auto yOut = convertFloat(c, y, io);
  if (failed(yOut)) return failure();
  c.setOutput(0, *yOut);

  if (c.outputUsed(3)) {
    int64_t mode = c.attrs.getInt("qk_matmul_output_mode", 0);
    Value qkOut = mode == 0 ? raw : mode == 1 ? softcapped : mode == 2 ? scores : probs;
    auto converted = convertFloat(c, qkOut, io);
    if (failed(converted)) return failure();
    c.setOutput(3, *converted);
  }
  return success();
}

} // namespace

void addAttentionImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Attention"] = {23, kMaxOpset, checkAttention, importAttention};
}

} // namespace v4f
