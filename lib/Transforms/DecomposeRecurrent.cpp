//===- DecomposeRecurrent.cpp - v4f.recurrent unrolled into matmuls and elementwise ops ===//
//
// When the sequence length and batch are static, the time loop is unrolled
// (a run-time length or batch keeps the op whole, in float32, for the CPU
// backend's time-loop kernel, lib/Codegen/CPU/RecurrentKernels.cpp):
//
//   X (layout 1: transposed to [seq, batch, input]) times W^T for all steps
//   at once (one matmul, the input-side biases as its fused bias), split
//   into one [batch, gates*hidden] slice per step;
//   per step and direction: H_{t-1} times R^T (matmul), then one
//   v4f.elementwise per new state whose scalar body applies the clip and
//   the activations (with alpha/beta);
//   GRU without linear_before_reset needs a second matmul, (r * H_{t-1}) Rh^T;
//   a reverse direction walks the steps backwards;
//   sequence_lens (unless a constant equal to the sequence length
//   everywhere) masks the steps at or past a batch entry's length: the
//   state is carried over and Y is 0 there;
//   Y = concat of the per-step states ([seq, dirs, batch, hidden]; layout 1:
//   transposed to [batch, seq, dirs, hidden]), Y_h / Y_c the final states.
//
// Gate order (ONNX): RNN i; GRU z, r, h; LSTM i, o, f, c (peepholes i, o, f).
// Everything is computed in float32 (the v4f matmul is float32-only): other
// float inputs are converted on entry and the outputs converted back.
//
//===----------------------------------------------------------------------===//
#include "DecomposeDriver.h"
#include "v4f/Dialect/V4F/IR/RecurrentMath.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSERECURRENT
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

RankedTensorType typeOrNull(Value v) { return v ? typeOf(v) : RankedTensorType(); }

Value matmul(BuildContext &c, Value a, Value b, Value bias = Value()) {
  return c.b.create<MatMulOp>(c.loc, a, b, bias, c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                              c.b.getF32FloatAttr(0));
}

/// Splits `v` along `axis` into `n` equal parts.
SmallVector<Value> splitEven(BuildContext &c, Value v, int64_t axis, int64_t n) {
  SmallVector<int64_t> sizes(n, typeOf(v).getDimSize(axis) / n);
  return splitBy(c, v, axis, sizes);
}

Value concatAlong(BuildContext &c, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  return c.b.create<ConcatOp>(c.loc, ValueRange(parts), c.b.getI64IntegerAttr(axis));
}

Value fconst(OpBuilder &b, Location l, float v) { return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(v)); }

using Activation = RecurrentActivation;

enum class Kind { RNN, GRU, LSTM };

/// Input-side weights and biases of one direction.
struct Direction {
  Value wT;         // [input, G*hidden]
  Value rT;         // [hidden, G*hidden] (GRU without linear_before_reset: the z, r part)
  Value rhT;        // GRU without linear_before_reset: [hidden, hidden]
  Value xBias;      // [G*hidden] or null
  Value hBias;      // GRU with linear_before_reset: [G*hidden] (0, 0, Rbh) or null
  Value h0, c0;     // [batch, hidden]
  Value pi, po, pf; // LSTM peepholes [hidden] or null
  ArrayRef<Activation> acts;
};

/// The operands of every direction in float32, split per direction and
/// transposed for the matmuls; GRU's R split into its z, r and h parts.
LogicalResult prepareDirections(BuildContext &c, RecurrentOp op, Kind kind, const RecurrentShape &s,
                                ArrayRef<Activation> acts, SmallVectorImpl<Direction> &dirs) {
  int64_t D = s.dirs, G = s.gates, H = s.H, B = s.B, I = s.I;
  bool layout = op.getLayout() != 0, linearBeforeReset = op.getLinearBeforeReset();
  Type f32 = c.b.getF32Type();
  auto perDirection = [&](Value in, ArrayRef<int64_t> shape, bool state) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> parts;
    if (!in) return parts;
    auto v = convertElementType(c, in, f32);
    if (failed(v)) return failure();
    Value all = *v;
    if (state && layout) all = transposeBy(c, all, {1, 0, 2});
    for (Value p : splitEven(c, all, 0, D)) parts.push_back(reshapeTo(c, p, shape));
    return parts;
  };
  auto W = perDirection(op.getW(), {G * H, I}, false);
  auto R = perDirection(op.getR(), {G * H, H}, false);
  auto Bs = perDirection(op.getB(), {2 * G * H}, false);
  auto H0s = perDirection(op.getInitialH(), {B, H}, true);
  auto C0s = perDirection(op.getInitialC(), {B, H}, true);
  auto Ps = perDirection(op.getPeepholes(), {3 * H}, false);
  if (failed(W) || failed(R) || failed(Bs) || failed(H0s) || failed(C0s) || failed(Ps)) return failure();
  size_t perDir = acts.size() / D;
  Value zeroState = constF32(c, {B, H}, SmallVector<float>(B * H, 0.f));
  dirs.assign(D, Direction());
  for (int64_t d = 0; d < D; ++d) {
    Direction &dir = dirs[d];
    dir.acts = acts.slice(d * perDir, perDir);
    dir.wT = transposeBy(c, (*W)[d], {1, 0});
    if (kind == Kind::GRU && !linearBeforeReset) {
      auto rParts = splitBy(c, (*R)[d], 0, {2 * H, H});
      dir.rT = transposeBy(c, rParts[0], {1, 0});
      dir.rhT = transposeBy(c, rParts[1], {1, 0});
    } else {
      dir.rT = transposeBy(c, (*R)[d], {1, 0});
    }
    if (!Bs->empty()) {
      auto wr = splitBy(c, (*Bs)[d], 0, {G * H, G * H});
      if (linearBeforeReset) {
        // Rbh is added inside r * (H Rh^T + Rbh): it goes to the recurrent matmul.
        auto wb = splitBy(c, wr[0], 0, {2 * H, H}), rb = splitBy(c, wr[1], 0, {2 * H, H});
        dir.xBias = concatAlong(c, {c.b.create<AddOp>(c.loc, wb[0], rb[0]), wb[1]}, 0);
        dir.hBias = concatAlong(c, {constF32(c, {2 * H}, SmallVector<float>(2 * H, 0.f)), rb[1]}, 0);
      } else {
        dir.xBias = c.b.create<AddOp>(c.loc, wr[0], wr[1]);
      }
    }
    dir.h0 = H0s->empty() ? zeroState : (*H0s)[d];
    if (kind == Kind::LSTM) {
      dir.c0 = C0s->empty() ? zeroState : (*C0s)[d];
      if (!Ps->empty()) {
        auto p = splitEven(c, (*Ps)[d], 0, 3);
        dir.pi = p[0], dir.po = p[1], dir.pf = p[2];
      }
    }
  }
  return success();
}

/// Builds the unrolled steps of one recurrent layer: per step, the state
/// matmuls and one v4f.elementwise per new state.
class StepBuilder {
public:
  struct Step {
    Value h, c; // the new states (c: LSTM only)
  };

  StepBuilder(BuildContext &c, RecurrentOp op, Value lens)
      : c(c), lens(lens), lensType(lens ? typeOf(lens).getElementType() : Type()), f32(c.b.getF32Type()),
        hasClip((bool)op.getClip()), clip(hasClip ? op.getClip()->convertToFloat() : 0.f),
        linearBeforeReset(op.getLinearBeforeReset()), inputForget(op.getInputForget()) {}

  /// Step t of direction `dir` from the input projection `xs` ([B, G*H])
  /// and the previous states h (and cell, LSTM).
  FailureOr<Step> rnn(const Direction &dir, int64_t t, Value xs, Value h) {
    SmallVector<Value> ins = {xs, matmul(c, h, dir.rT)};
    if (lens) ins.append({h, lens});
    auto r = buildElementwise(c, ins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value v = activate(b, l, dir.acts[0], b.create<arith::AddFOp>(l, a[0], a[1]));
      return lens ? masked(b, l, t, a[3], v, a[2]) : v;
    });
    if (failed(r)) return failure();
    return Step{*r, Value()};
  }

  FailureOr<Step> gru(const Direction &dir, int64_t t, Value xs, Value h) {
    auto xg = splitEven(c, xs, 1, 3); // z, r, h
    const Activation &f = dir.acts[0], &g = dir.acts[1];
    auto gate = [&](OpBuilder &b, Location l, Value p, Value q) {
      return activate(b, l, f, b.create<arith::AddFOp>(l, p, q));
    };
    SmallVector<Value> ins;
    if (linearBeforeReset) {
      auto hg = splitEven(c, matmul(c, h, dir.rT, dir.hBias), 1, 3);
      ins = {xg[0], hg[0], xg[1], hg[1], xg[2], hg[2], h};
    } else {
      auto hg = splitEven(c, matmul(c, h, dir.rT), 1, 2);
      // r * H_{t-1}, then its product with Rh^T.
      auto rh = buildElementwise(c, {xg[1], hg[1], h}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        return b.create<arith::MulFOp>(l, gate(b, l, a[0], a[1]), a[2]);
      });
      if (failed(rh)) return failure();
      ins = {xg[0], hg[0], xg[2], matmul(c, *rh, dir.rhT), h};
    }
    if (lens) ins.push_back(lens);
    auto r = buildElementwise(c, ins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value z = gate(b, l, a[0], a[1]), pre, prev;
      if (linearBeforeReset) {
        Value rg = gate(b, l, a[2], a[3]);
        pre = b.create<arith::AddFOp>(l, a[4], b.create<arith::MulFOp>(l, rg, a[5]));
        prev = a[6];
      } else {
        pre = b.create<arith::AddFOp>(l, a[2], a[3]);
        prev = a[4];
      }
      Value hh = activate(b, l, g, pre);
      // (1 - z) * h + z * H_{t-1}
      Value one = fconst(b, l, 1.f);
      Value v = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, one, z), hh),
                                        b.create<arith::MulFOp>(l, z, prev));
      return lens ? masked(b, l, t, a.back(), v, prev) : v;
    });
    if (failed(r)) return failure();
    return Step{*r, Value()};
  }

  FailureOr<Step> lstm(const Direction &dir, int64_t t, Value xs, Value h, Value cell) {
    Value gates = c.b.create<AddOp>(c.loc, xs, matmul(c, h, dir.rT));
    auto gs = splitEven(c, gates, 1, 4); // i, o, f, c
    const Activation &f = dir.acts[0], &g = dir.acts[1], &hAct = dir.acts[2];
    bool peep = (bool)dir.pi;
    // C = f * C_{t-1} + i * g(c)
    SmallVector<Value> ins = {gs[0], gs[2], gs[3], cell};
    if (peep) ins.append({dir.pi, dir.pf});
    if (lens) ins.push_back(lens);
    auto cr = buildElementwise(c, ins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value prev = a[3], iPre = a[0], fPre = a[1];
      if (peep) {
        iPre = b.create<arith::AddFOp>(l, iPre, b.create<arith::MulFOp>(l, a[4], prev));
        fPre = b.create<arith::AddFOp>(l, fPre, b.create<arith::MulFOp>(l, a[5], prev));
      }
      Value iv = activate(b, l, f, iPre);
      Value fv = inputForget ? (Value)b.create<arith::SubFOp>(l, fconst(b, l, 1.f), iv) : activate(b, l, f, fPre);
      Value cv = activate(b, l, g, a[2]);
      Value v = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, fv, prev), b.create<arith::MulFOp>(l, iv, cv));
      return lens ? masked(b, l, t, a.back(), v, prev) : v;
    });
    if (failed(cr)) return failure();
    Value cNew = *cr;
    // H = f(o + Po * C) * h(C)
    SmallVector<Value> hins = {gs[1], cNew};
    if (peep) hins.push_back(dir.po);
    if (lens) hins.append({h, lens});
    auto hr = buildElementwise(c, hins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value oPre = a[0];
      if (peep) oPre = b.create<arith::AddFOp>(l, oPre, b.create<arith::MulFOp>(l, a[2], a[1]));
      Value ov = activate(b, l, f, oPre);
      // h is not clipped: the clip bounds gate inputs only.
      Value v = b.create<arith::MulFOp>(l, ov, buildRecurrentActivation(b, l, hAct, a[1]));
      return lens ? masked(b, l, t, a.back(), v, a[a.size() - 2]) : v;
    });
    if (failed(hr)) return failure();
    return Step{*hr, cNew};
  }

  /// The Y entry of step t: the new state, 0 past a sequence's length.
  FailureOr<Value> output(int64_t t, Value hNew) {
    if (!lens) return hNew;
    return buildElementwise(c, {hNew, lens}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return masked(b, l, t, a[1], a[0], fconst(b, l, 0.f));
    });
  }

private:
  /// Body helpers: clip, then the activation.
  Value activate(OpBuilder &b, Location l, const Activation &act, Value v) {
    return buildRecurrentGate(b, l, hasClip ? std::optional<float>(clip) : std::nullopt, act, v);
  }
  /// select(t < len, fresh, carried) when steps are masked.
  Value masked(OpBuilder &b, Location l, int64_t t, Value len, Value fresh, Value carried) {
    Value tv = b.create<arith::ConstantOp>(l, b.getIntegerAttr(lensType, t));
    Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, tv, len);
    return b.create<arith::SelectOp>(l, valid, fresh, carried);
  }

  BuildContext &c;
  Value lens; // [B, 1] integers, or null when no step is masked
  Type lensType, f32;
  bool hasClip;
  float clip;
  bool linearBeforeReset, inputForget;
};

/// A run-time sequence length or batch cannot be unrolled: the op stays
/// whole for the backend's time-loop kernel.
bool staysWhole(RecurrentOp op) {
  auto x = typeOf(op.getX());
  return !x.hasStaticShape() || (op.getInitialH() && !typeOf(op.getInitialH()).hasStaticShape()) ||
         (op.getSequenceLens() && !typeOf(op.getSequenceLens()).hasStaticShape());
}

/// A whole op over float16 / bfloat16 becomes the same op over float32
/// between conversions (the kernel computes in float32).
LogicalResult widenToF32(BuildContext &c, RecurrentOp op, SmallVectorImpl<Value> &results) {
  Type f32 = c.b.getF32Type(), io = typeOf(op.getX()).getElementType();
  IRMapping map;
  for (Value v : op->getOperands()) {
    if (!llvm::isa<FloatType>(typeOf(v).getElementType())) continue; // sequence_lens
    auto w = convertElementType(c, v, f32);
    if (failed(w)) return failure();
    map.map(v, *w);
  }
  Operation *wide = c.b.clone(*op, map);
  for (Value r : wide->getResults()) r.setType(typeOf(r).clone(f32));
  for (Value r : wide->getResults()) {
    auto back = convertElementType(c, r, io);
    if (failed(back)) return failure();
    results.push_back(*back);
  }
  return success();
}

LogicalResult decomposeRecurrent(BuildContext &c, RecurrentOp op, SmallVectorImpl<Value> &results) {
  if (staysWhole(op)) {
    if (typeOf(op.getX()).getElementType().isF32()) return c.fail("a whole recurrent op stays (no decomposition)");
    return widenToF32(c, op, results);
  }
  RecurrentShape s;
  std::string error = resolveRecurrentShape(
      op.getCell(), op.getDirection(), op.getLayout(), op.getHiddenSize(), typeOf(op.getX()), typeOf(op.getW()),
      typeOf(op.getR()), typeOrNull(op.getB()), typeOrNull(op.getSequenceLens()), typeOrNull(op.getInitialH()),
      typeOrNull(op.getInitialC()), typeOrNull(op.getPeepholes()), s);
  if (!error.empty()) return c.fail(error);
  Kind kind = op.getCell() == "rnn" ? Kind::RNN : op.getCell() == "gru" ? Kind::GRU : Kind::LSTM;
  int64_t T = s.T, B = s.B, H = s.H, D = s.dirs, G = s.gates;
  bool layout = op.getLayout() != 0, reverse = op.getDirection() == "reverse";
  Type io = typeOf(op.getX()).getElementType(), f32 = c.b.getF32Type();
  SmallVector<Activation> acts;
  for (auto [name, alpha, beta] : llvm::zip(op.getActivations(), op.getActivationAlpha(), op.getActivationBeta()))
    acts.push_back({llvm::cast<StringAttr>(name).getValue().str(), alpha, beta});

  // --- sequence_lens: a [batch, 1] integer tensor when some steps must be masked.
  Value lens;
  if (Value given = op.getSequenceLens()) {
    DenseIntElementsAttr known;
    bool full = matchPattern(given, m_Constant(&known)) &&
                llvm::all_of(known.getValues<APInt>(), [&](const APInt &n) { return n.getSExtValue() == T; });
    if (!full) lens = reshapeTo(c, given, {B, 1});
  }

  auto x = convertElementType(c, op.getX(), f32);
  if (failed(x)) return failure();
  Value X = layout ? transposeBy(c, *x, {1, 0, 2}) : *x; // [T, B, I]
  SmallVector<Direction> dirs;
  if (failed(prepareDirections(c, op, kind, s, acts, dirs))) return failure();

  // --- The unrolled recurrence -------------------------------------------------
  StepBuilder steps(c, op, lens);
  // ys[t][d]: the output of step t, direction d, shaped [1, 1, B, H].
  SmallVector<SmallVector<Value>> ys(T, SmallVector<Value>(D));
  SmallVector<Value> finalH(D), finalC(D);
  for (int64_t d = 0; d < D; ++d) {
    Direction &dir = dirs[d];
    bool backwards = reverse || d == 1;
    // All input projections at once: [T, B, I] x [I, G*H] (+ input biases).
    Value xw = matmul(c, X, dir.wT, dir.xBias);
    SmallVector<Value> xSteps;
    for (Value p : splitEven(c, xw, 0, T)) xSteps.push_back(reshapeTo(c, p, {B, G * H}));
    Value h = dir.h0, cell = dir.c0;
    for (int64_t i = 0; i < T; ++i) {
      int64_t t = backwards ? T - 1 - i : i;
      FailureOr<StepBuilder::Step> step = kind == Kind::RNN   ? steps.rnn(dir, t, xSteps[t], h)
                                          : kind == Kind::GRU ? steps.gru(dir, t, xSteps[t], h)
                                                              : steps.lstm(dir, t, xSteps[t], h, cell);
      if (failed(step)) return failure();
      auto yt = steps.output(t, step->h);
      if (failed(yt)) return failure();
      ys[t][d] = reshapeTo(c, *yt, {1, 1, B, H});
      h = step->h;
      cell = step->c;
    }
    finalH[d] = reshapeTo(c, h, {1, B, H});
    if (kind == Kind::LSTM) finalC[d] = reshapeTo(c, cell, {1, B, H});
  }

  // --- Outputs ---------------------------------------------------------------
  // Every result is built; the ones nobody uses are dead and go with the
  // next canonicalization.
  auto emit = [&](Value v) -> LogicalResult {
    auto out = convertElementType(c, v, io);
    if (failed(out)) return failure();
    results.push_back(*out);
    return success();
  };
  SmallVector<Value> perStep;
  for (int64_t t = 0; t < T; ++t) perStep.push_back(concatAlong(c, ys[t], 1));
  Value y = concatAlong(c, perStep, 0); // [T, D, B, H]
  if (layout) y = transposeBy(c, y, {2, 0, 1, 3});
  if (failed(emit(y))) return failure();
  for (int i = 1; i <= (kind == Kind::LSTM ? 2 : 1); ++i) {
    Value state = concatAlong(c, i == 1 ? finalH : finalC, 0); // [D, B, H]
    if (layout) state = transposeBy(c, state, {1, 0, 2});
    if (failed(emit(state))) return failure();
  }
  return success();
}

struct DecomposeRecurrentPass : v4f::impl::DecomposeRecurrentBase<DecomposeRecurrentPass> {
  void runOnOperation() override {
    auto keep = [](RecurrentOp op) { return staysWhole(op) && typeOf(op.getX()).getElementType().isF32(); };
    if (failed(decomposeAll<RecurrentOp>(getOperation(), decomposeRecurrent, keep))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeRecurrentPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<RecurrentOp>>(patterns.getContext(), decomposeRecurrent);
}

std::unique_ptr<Pass> v4f::createDecomposeRecurrentPass() { return std::make_unique<DecomposeRecurrentPass>(); }
