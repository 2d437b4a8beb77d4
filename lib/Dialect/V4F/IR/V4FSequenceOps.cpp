//===- V4FSequenceOps.cpp - verifiers of v4f.attention and v4f.recurrent ---===//
//
// Also the recurrent cells' scalar math (RecurrentMath.h).
//
// The shape rules here (resolveAttentionShape, resolveRecurrentShape) are
// shared with the importer, which reports the same problems at import with
// the ONNX node's name, and with the decomposition passes, which read the
// resolved dims instead of recomputing them.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/IR/RecurrentMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace v4f;

namespace {
std::string str(int64_t v) { return std::to_string(v); }
RankedTensorType rankedOrNull(Value v) { return v ? llvm::cast<RankedTensorType>(v.getType()) : RankedTensorType(); }
bool isAttentionFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }
} // namespace

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

std::string v4f::resolveAttentionShape(RankedTensorType q, RankedTensorType k, RankedTensorType v, RankedTensorType pk,
                                       RankedTensorType pv, RankedTensorType mask, RankedTensorType nonpad,
                                       int64_t qHeads, int64_t kvHeads, AttentionShape &o) {
  // Every dim may be dynamic (kDyn): the checks below compare the dims that
  // are known, and the decomposition reads the others at run time. Two dims
  // "agree" when equal or either is dynamic.
  constexpr int64_t kDyn = ShapedType::kDynamic;
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDyn || b == kDyn; };
  auto either = [](int64_t a, int64_t b) { return a == kDyn ? b : a; };
  auto known = [](int64_t a) { return a != kDyn; };
  Type io = q.getElementType();
  RankedTensorType qkv[] = {q, k, v};
  for (int i = 0; i < 3; ++i)
    if (!isAttentionFloat(qkv[i].getElementType())) return "input " + str(i) + " must be float32, float16 or bfloat16";
  if (k.getElementType() != io || v.getElementType() != io) return "Q, K and V must have the same element type";
  int64_t rank = q.getRank();
  if (k.getRank() != rank || v.getRank() != rank || (rank != 3 && rank != 4))
    return "Q, K and V must all be 3-D (batch, seq, hidden) or all 4-D (batch, heads, seq, head_size)";
  if ((bool)pk != (bool)pv) return "past_key and past_value must be given together";
  if (nonpad && pk) return "nonpad_kv_seqlen cannot be combined with past_key/past_value";
  o = AttentionShape();
  o.rank = rank;
  if (!agree(q.getDimSize(0), k.getDimSize(0)) || !agree(q.getDimSize(0), v.getDimSize(0)))
    return "Q, K and V have different batch sizes";
  o.B = either(either(q.getDimSize(0), k.getDimSize(0)), v.getDimSize(0));
  auto divide = [&](int64_t hidden, int64_t heads) { return known(hidden) ? hidden / heads : kDyn; };
  if (rank == 3) {
    if (qHeads <= 0 || kvHeads <= 0) return "3-D inputs need positive q_num_heads and kv_num_heads";
    o.Hq = qHeads, o.Hkv = kvHeads;
    auto indivisible = [](int64_t hidden, int64_t heads) { return hidden != kDyn && hidden % heads; };
    if (indivisible(q.getDimSize(2), o.Hq) || indivisible(k.getDimSize(2), o.Hkv) ||
        indivisible(v.getDimSize(2), o.Hkv))
      return "hidden sizes must be divisible by the number of heads";
    o.S = q.getDimSize(1);
    o.L = k.getDimSize(1);
    o.D = divide(q.getDimSize(2), o.Hq);
    o.Dv = divide(v.getDimSize(2), o.Hkv);
    if (!agree(divide(k.getDimSize(2), o.Hkv), o.D)) return "Q and K head sizes differ";
    o.D = either(o.D, divide(k.getDimSize(2), o.Hkv));
    if (!agree(v.getDimSize(1), o.L)) return "K and V sequence lengths differ";
    o.L = either(o.L, v.getDimSize(1));
  } else {
    o.Hq = q.getDimSize(1), o.Hkv = either(k.getDimSize(1), v.getDimSize(1));
    o.S = q.getDimSize(2), o.L = k.getDimSize(2);
    o.D = q.getDimSize(3), o.Dv = v.getDimSize(3);
    if (!agree(k.getDimSize(3), o.D)) return "Q and K head sizes differ";
    o.D = either(o.D, k.getDimSize(3));
    if (!agree(v.getDimSize(1), k.getDimSize(1)) || !agree(v.getDimSize(2), o.L))
      return "K and V differ in heads or sequence length";
    o.L = either(o.L, v.getDimSize(2));
  }
  if (o.B == 0 || o.Hq == 0 || o.Hkv == 0 || o.S == 0 || o.L == 0 || o.D == 0 || o.Dv == 0)
    return "zero-sized Q/K/V dims are not supported";
  if (known(o.Hq) && known(o.Hkv) && o.Hq % o.Hkv)
    return "q_num_heads (" + str(o.Hq) + ") must be a multiple of kv_num_heads (" + str(o.Hkv) + ")";
  if (pk) {
    if (pk.getElementType() != io || pv.getElementType() != io)
      return "past_key/past_value must have the element type of Q";
    if (pk.getRank() != 4 || pv.getRank() != 4) return "past_key/past_value must be 4-D";
    o.P = either(pk.getDimSize(2), pv.getDimSize(2));
    if (!agree(pk.getDimSize(0), o.B) || !agree(pk.getDimSize(1), o.Hkv) || !agree(pk.getDimSize(3), o.D))
      return "past_key must be (batch, kv_num_heads, past_seq, head_size)";
    if (!agree(pv.getDimSize(0), o.B) || !agree(pv.getDimSize(1), o.Hkv) ||
        !agree(pv.getDimSize(2), pk.getDimSize(2)) || !agree(pv.getDimSize(3), o.Dv))
      return "past_value must be (batch, kv_num_heads, past_seq, v_head_size)";
    o.B = either(o.B, either(pk.getDimSize(0), pv.getDimSize(0)));
    o.Hkv = either(o.Hkv, either(pk.getDimSize(1), pv.getDimSize(1)));
    o.D = either(o.D, pk.getDimSize(3));
    o.Dv = either(o.Dv, pv.getDimSize(3));
    o.L = o.L == kDyn || o.P == kDyn ? kDyn : o.L + o.P;
  }
  if (mask) {
    Type m = mask.getElementType();
    if (!m.isInteger(1) && !llvm::isa<FloatType>(m))
      return "attn_mask must be bool or float (integer masks are not supported)";
    if (llvm::isa<FloatType>(m) && !m.isF32() && !m.isF16() && !m.isF64() && !m.isBF16())
      return "attn_mask element type is not supported";
    if (mask.getRank() < 1 || mask.getRank() > 4) return "attn_mask must have rank 1 to 4";
    int64_t M = mask.getDimSize(mask.getRank() - 1);
    if (known(M) && known(o.L) && M > o.L)
      return "attn_mask's last dim (" + str(M) + ") exceeds the total sequence length (" + str(o.L) + ")";
    SmallVector<int64_t> padded(mask.getShape()), scores = {o.B, o.Hq, o.S, o.L}, out;
    padded.back() = o.L;
    if (failed(broadcastShapes(scores, padded, out)) ||
        !llvm::all_of(llvm::zip(out, scores), [&](auto p) { return agree(std::get<0>(p), std::get<1>(p)); }))
      return "attn_mask / nonpad_kv_seqlen do not broadcast to (batch, q_num_heads, q_seq, total_seq)";
    // A mask dim other than 1 states the scores' dim it lines up with.
    int64_t *scoreDims[] = {&o.B, &o.Hq, &o.S};
    for (int64_t j = 0, r = mask.getRank(); j + 1 < r; ++j)
      if (int64_t d = mask.getDimSize(j); d != 1 && d != kDyn) *scoreDims[4 - r + j] = either(*scoreDims[4 - r + j], d);
  }
  if (nonpad && (!nonpad.getElementType().isInteger(64) || nonpad.getRank() != 1 || !agree(nonpad.getDimSize(0), o.B)))
    return "nonpad_kv_seqlen must be an int64 tensor of shape (batch_size)";
  if (nonpad) o.B = either(o.B, nonpad.getDimSize(0));
  return "";
}

LogicalResult AttentionOp::verify() {
  AttentionShape s;
  std::string error =
      resolveAttentionShape(rankedOrNull(getQuery()), rankedOrNull(getKey()), rankedOrNull(getValue()),
                            rankedOrNull(getPastKey()), rankedOrNull(getPastValue()), rankedOrNull(getAttnMask()),
                            rankedOrNull(getNonpadKvSeqlen()), getQNumHeads(), getKvNumHeads(), s);
  if (!error.empty()) return emitOpError(error);
  // 4-D inputs whose head counts are known only at run time carry 0.
  auto heads = [](int64_t h) { return h == ShapedType::kDynamic ? 0 : h; };
  if ((int64_t)getQNumHeads() != heads(s.Hq) || (int64_t)getKvNumHeads() != heads(s.Hkv))
    return emitOpError("q_num_heads / kv_num_heads must be the inputs' head counts (")
           << heads(s.Hq) << ", " << heads(s.Hkv) << ", 0 where known only at run time)";
  if (!(getScale().convertToFloat() >= 0.f)) return emitOpError("scale must be positive, or 0 for 1/sqrt(head_size)");
  if (getSoftcap().convertToFloat() < 0.f) return emitOpError("softcap must be non-negative");
  // I64Attr getters return uint64_t: read them as the signed values they hold.
  int64_t mode = getQkMatmulOutputMode(), left = getLeftWindowSize(), right = getRightWindowSize();
  if (mode < 0 || mode > 3) return emitOpError("qk_matmul_output_mode must be 0, 1, 2 or 3");
  if (left < -1 || right < -1) return emitOpError("window sizes must be -1 or non-negative");
  Type io = getQuery().getType().getElementType();
  auto expect = [&](Value r, ArrayRef<int64_t> shape, const char *name) -> LogicalResult {
    auto t = RankedTensorType::get(shape, io);
    if (r.getType() != t) return emitOpError(name) << " must be " << t;
    return success();
  };
  SmallVector<int64_t> y = s.rank == 3 ? SmallVector<int64_t>{s.B, s.S, attentionHidden(s.Hq, s.Dv)}
                                       : SmallVector<int64_t>{s.B, s.Hq, s.S, s.Dv};
  if (failed(expect(getOutput(), y, "output")) ||
      failed(expect(getPresentKey(), {s.B, s.Hkv, s.L, s.D}, "present_key")) ||
      failed(expect(getPresentValue(), {s.B, s.Hkv, s.L, s.Dv}, "present_value")) ||
      failed(expect(getQkMatmulOutput(), {s.B, s.Hq, s.S, s.L}, "qk_matmul_output")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// recurrent
//===----------------------------------------------------------------------===//

bool v4f::recurrentActivationParams(StringRef name, bool &usesAlpha, bool &usesBeta, float &alpha, float &beta) {
  usesAlpha = usesBeta = false;
  alpha = beta = 0.f;
  if (name == "relu" || name == "tanh" || name == "sigmoid" || name == "softsign" || name == "softplus") return true;
  if (name == "affine") return usesAlpha = usesBeta = true, alpha = 1.f, beta = 0.f, true;
  if (name == "leakyrelu") return usesAlpha = true, alpha = 0.01f, true;
  if (name == "thresholdedrelu") return usesAlpha = true, alpha = 1.f, true;
  if (name == "scaledtanh") return usesAlpha = usesBeta = true, alpha = 1.f, beta = 1.f, true;
  if (name == "hardsigmoid") return usesAlpha = usesBeta = true, alpha = 0.2f, beta = 0.5f, true;
  if (name == "elu") return usesAlpha = true, alpha = 1.f, true;
  return false;
}

std::string v4f::resolveRecurrentShape(StringRef cell, StringRef direction, int64_t layout, int64_t hiddenSize,
                                       RankedTensorType x, RankedTensorType w, RankedTensorType r, RankedTensorType b,
                                       RankedTensorType lens, RankedTensorType h0, RankedTensorType c0,
                                       RankedTensorType p, RecurrentShape &o) {
  // The sequence length and the batch may be dynamic (kDyn); the weights,
  // biases, peepholes and the states' other dims must be static. Two dims
  // "agree" when equal or either is dynamic.
  constexpr int64_t kDyn = ShapedType::kDynamic;
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDyn || b == kDyn; };
  auto dimStr = [](int64_t v) { return v == kDyn ? std::string("?") : str(v); };
  bool lstm = cell == "lstm";
  if (cell != "rnn" && cell != "gru" && !lstm) return "cell must be rnn, gru or lstm";
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return "direction must be forward, reverse or bidirectional (got '" + direction.str() + "')";
  if (layout != 0 && layout != 1) return "layout must be 0 or 1";
  if (!lstm && (c0 || p)) return "initial_c and peepholes belong to LSTM only";
  Type io = x.getElementType();
  if (!llvm::isa<FloatType>(io) || io.isF64()) return "X must be float32, float16 or bfloat16";
  const char *names[] = {"W", "R", "B", "P"};
  RankedTensorType weights[] = {w, r, b, p};
  for (int i = 0; i < 4; ++i) {
    if (!weights[i]) continue;
    if (weights[i].getElementType() != io) return std::string(names[i]) + " must have X's element type";
    if (!weights[i].hasStaticShape()) return std::string(names[i]) + " must have a static shape";
  }
  for (auto [t, name] : {std::pair<RankedTensorType, const char *>{h0, "initial_h"}, {c0, "initial_c"}})
    if (t && t.getElementType() != io) return std::string(name) + " must have X's element type";
  if (x.getRank() != 3) return "X must be a 3-D tensor";
  if (x.isDynamicDim(2)) return "X's input size (its last dim) must be static";
  o = RecurrentShape();
  o.dirs = direction == "bidirectional" ? 2 : 1;
  o.gates = cell == "rnn" ? 1 : cell == "gru" ? 3 : 4;
  int64_t D = o.dirs, G = o.gates;
  o.T = x.getDimSize(layout ? 1 : 0), o.B = x.getDimSize(layout ? 0 : 1), o.I = x.getDimSize(2);
  if (w.getRank() != 3 || r.getRank() != 3) return "W and R must be 3-D";
  o.H = r.getDimSize(2);
  int64_t H = o.H;
  if (hiddenSize >= 0 && hiddenSize != H) return "hidden_size (" + str(hiddenSize) + ") disagrees with R's shape";
  if (w.getDimSize(0) != D || r.getDimSize(0) != D)
    return "W and R must have " + str(D) + " direction(s) for direction '" + direction.str() + "'";
  if (w.getDimSize(1) != G * H || w.getDimSize(2) != o.I)
    return "W must be [" + str(D) + ", " + str(G * H) + ", " + str(o.I) + "]";
  if (r.getDimSize(1) != G * H) return "R must be [" + str(D) + ", " + str(G * H) + ", " + str(H) + "]";
  if (o.T == 0 || o.B == 0 || H == 0 || o.I == 0)
    return "zero-sized sequence, batch, input or hidden dims are not supported";
  if (b && (b.getRank() != 2 || b.getDimSize(0) != D || b.getDimSize(1) != 2 * G * H))
    return "B must be [" + str(D) + ", " + str(2 * G * H) + "]";
  // The batch: X's, or the first static one of the states and sequence_lens.
  for (RankedTensorType t : {h0, c0})
    if (t && t.getRank() == 3 && o.B == kDyn) o.B = t.getDimSize(layout ? 0 : 1);
  if (lens && lens.getRank() == 1 && o.B == kDyn) o.B = lens.getDimSize(0);
  if (o.B == 0) return "zero-sized sequence, batch, input or hidden dims are not supported";
  SmallVector<int64_t> state = layout ? SmallVector<int64_t>{o.B, D, H} : SmallVector<int64_t>{D, o.B, H};
  for (auto [t, name] : {std::pair<RankedTensorType, const char *>{h0, "initial_h"}, {c0, "initial_c"}}) {
    if (!t) continue;
    bool fits = t.getRank() == 3;
    for (int64_t d = 0; fits && d < 3; ++d) {
      bool batchDim = d == (layout ? 0 : 1);
      fits = batchDim ? agree(t.getDimSize(d), state[d]) : t.getDimSize(d) == state[d];
    }
    if (!fits)
      return std::string(name) + " must be [" + dimStr(state[0]) + ", " + dimStr(state[1]) + ", " + dimStr(state[2]) +
             "]";
  }
  if (p && (p.getRank() != 2 || p.getDimSize(0) != D || p.getDimSize(1) != 3 * H))
    return "P must be [" + str(D) + ", " + str(3 * H) + "]";
  if (lens) {
    if (!lens.getElementType().isInteger(32) && !lens.getElementType().isInteger(64))
      return "sequence_lens must be int32 or int64";
    if (lens.getRank() != 1 || !agree(lens.getDimSize(0), o.B)) return "sequence_lens must be [" + dimStr(o.B) + "]";
  }
  return "";
}

LogicalResult RecurrentOp::verify() {
  RecurrentShape s;
  std::string error = resolveRecurrentShape(
      getCell(), getDirection(), (int64_t)getLayout(), (int64_t)getHiddenSize(), rankedOrNull(getX()),
      rankedOrNull(getW()), rankedOrNull(getR()), rankedOrNull(getB()), rankedOrNull(getSequenceLens()),
      rankedOrNull(getInitialH()), rankedOrNull(getInitialC()), rankedOrNull(getPeepholes()), s);
  if (!error.empty()) return emitOpError(error);
  size_t perDir = getCell() == "rnn" ? 1 : getCell() == "gru" ? 2 : 3;
  size_t n = perDir * s.dirs;
  if (getActivations().size() != n) return emitOpError("activations must list ") << n << " function(s)";
  if (getActivationAlpha().size() != n || getActivationBeta().size() != n)
    return emitOpError("activation_alpha and activation_beta must hold one value per activation (") << n << ")";
  for (Attribute a : getActivations()) {
    bool ua, ub;
    float alpha, beta;
    if (!recurrentActivationParams(llvm::cast<StringAttr>(a).getValue(), ua, ub, alpha, beta))
      return emitOpError("unknown activation '") << llvm::cast<StringAttr>(a).getValue() << "'";
  }
  if (getClip() && !(getClip()->convertToFloat() > 0.f)) return emitOpError("clip must be positive");
  if (getLinearBeforeReset() && getCell() != "gru") return emitOpError("linear_before_reset is a GRU attribute");
  if (getInputForget() && getCell() != "lstm") return emitOpError("input_forget is an LSTM attribute");
  Type io = getX().getType().getElementType();
  SmallVector<int64_t> y =
      getLayout() ? SmallVector<int64_t>{s.B, s.T, s.dirs, s.H} : SmallVector<int64_t>{s.T, s.dirs, s.B, s.H};
  SmallVector<int64_t> state =
      getLayout() ? SmallVector<int64_t>{s.B, s.dirs, s.H} : SmallVector<int64_t>{s.dirs, s.B, s.H};
  if (getY().getType() != RankedTensorType::get(y, io))
    return emitOpError("y must be ") << RankedTensorType::get(y, io);
  auto stateType = RankedTensorType::get(state, io);
  if (getYH().getType() != stateType) return emitOpError("y_h must be ") << stateType;
  bool lstm = getCell() == "lstm";
  if (lstm != (bool)getYC()) return emitOpError(lstm ? "an LSTM has a y_c result" : "only an LSTM has a y_c result");
  if (getYC() && getYC().getType() != stateType) return emitOpError("y_c must be ") << stateType;
  return success();
}

//===----------------------------------------------------------------------===//
// recurrent cell math (RecurrentMath.h)
//===----------------------------------------------------------------------===//

Value v4f::buildRecurrentActivation(OpBuilder &b, Location l, const RecurrentActivation &act, Value x) {
  const std::string &n = act.name;
  auto fconst = [&](float v) -> Value { return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(v)); };
  Value zero = fconst(0.f), one = fconst(1.f);
  auto mul = [&](Value p, Value q) -> Value { return b.create<arith::MulFOp>(l, p, q); };
  auto add = [&](Value p, Value q) -> Value { return b.create<arith::AddFOp>(l, p, q); };
  auto lt0 = [&](Value v) -> Value { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, v, zero); };
  if (n == "relu") return b.create<arith::MaximumFOp>(l, x, zero);
  if (n == "tanh") return b.create<math::TanhOp>(l, x);
  if (n == "sigmoid")
    return b.create<arith::DivFOp>(l, one, add(one, b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x))));
  if (n == "affine") return add(mul(fconst(act.alpha), x), fconst(act.beta));
  if (n == "leakyrelu") return b.create<arith::SelectOp>(l, lt0(x), mul(fconst(act.alpha), x), x);
  if (n == "thresholdedrelu")
    return b.create<arith::SelectOp>(l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, fconst(act.alpha)), x,
                                     zero);
  if (n == "scaledtanh") return mul(fconst(act.alpha), b.create<math::TanhOp>(l, mul(fconst(act.beta), x)));
  if (n == "hardsigmoid") {
    Value y = add(mul(fconst(act.alpha), x), fconst(act.beta));
    return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, y, zero), one);
  }
  if (n == "elu") return b.create<arith::SelectOp>(l, lt0(x), mul(fconst(act.alpha), b.create<math::ExpM1Op>(l, x)), x);
  if (n == "softsign") return b.create<arith::DivFOp>(l, x, add(one, b.create<math::AbsFOp>(l, x)));
  assert(n == "softplus" && "activation names are checked");
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), without overflow.
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, b.create<math::AbsFOp>(l, x)));
  return add(b.create<arith::MaximumFOp>(l, x, zero), b.create<math::Log1pOp>(l, e));
}

Value v4f::buildRecurrentGate(OpBuilder &b, Location l, std::optional<float> clip, const RecurrentActivation &act,
                              Value x) {
  if (clip) {
    auto fconst = [&](float v) -> Value { return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(v)); };
    x = b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, x, fconst(-*clip)), fconst(*clip));
  }
  return buildRecurrentActivation(b, l, act, x);
}
