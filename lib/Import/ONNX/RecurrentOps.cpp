//===- RecurrentOps.cpp - ONNX RNN / GRU / LSTM as compositions of v4f ops -===//
//
// The sequence length is static, so the time loop is unrolled at import:
//
//   X (layout 1: transposed to [seq, batch, input]) times W^T for all steps
//   at once (one matmul, the input-side biases as its fused bias), split
//   into one [batch, gates*hidden] slice per step;
//   per step and direction: H_{t-1} times R^T (matmul), then one
//   v4f.elementwise per new state whose scalar body applies the clip and
//   the activations of the `activations` attribute (with alpha/beta);
//   GRU without linear_before_reset needs a second matmul, (r * H_{t-1}) Rh^T;
//   a reverse direction walks the steps backwards;
//   sequence_lens (constant or run-time) masks the steps at or past a batch
//   entry's length: the state is carried over and Y is 0 there;
//   Y = concat of the per-step states ([seq, dirs, batch, hidden]; layout 1:
//   transposed to [batch, seq, dirs, hidden]), Y_h / Y_c the final states.
//
// Gate order (ONNX): RNN i; GRU z, r, h; LSTM i, o, f, c (peepholes i, o, f).
// Everything is computed in float32 (the v4f matmul is float32-only): other
// float inputs are converted on entry and the outputs converted back.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cctype>

using namespace mlir;

namespace v4f {
namespace {

constexpr int64_t kMaxOpset = 28;

Value matmul(NodeContext &c, Value a, Value b, Value bias = Value()) {
  return c.b.create<MatMulOp>(c.loc, a, b, bias, c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                              c.b.getF32FloatAttr(0));
}

/// Splits `v` along `axis` into `n` equal parts.
SmallVector<Value> splitEven(NodeContext &c, Value v, int64_t axis, int64_t n) {
  SmallVector<int64_t> sizes(n, typeOf(v).getDimSize(axis) / n);
  return splitBy(c, v, axis, sizes);
}

Value concatAlong(NodeContext &c, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  return c.b.create<ConcatOp>(c.loc, ValueRange(parts), c.b.getI64IntegerAttr(axis));
}

/// Converts a float tensor to element type `to`, or returns it.
FailureOr<Value> convertTo(NodeContext &c, Value v, Type to) {
  Type from = typeOf(v).getElementType();
  if (from == to) return v;
  return buildElementwise(c, {v}, to, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return castScalar(b, l, a[0], from, to);
  });
}

Value fconst(OpBuilder &b, Location l, float v) { return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(v)); }

// --- Activations ------------------------------------------------------------

struct Activation {
  std::string name; // lower case
  float alpha = 0.f, beta = 0.f;
};

std::string lowered(std::string s) {
  for (char &ch : s) ch = (char)std::tolower((unsigned char)ch);
  return s;
}

/// Default alpha/beta of an activation and whether it reads them; false for
/// an unknown name.
bool activationParams(const std::string &name, bool &usesAlpha, bool &usesBeta, float &alpha, float &beta) {
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

/// The activations of every direction (`perDir` each, direction-major), with
/// activation_alpha/beta consumed in order by the functions that use them.
std::string parseActivations(const NodeAttrs &a, int64_t dirs, ArrayRef<const char *> defaults,
                             SmallVector<Activation> &out) {
  size_t perDir = defaults.size();
  std::vector<std::string> names;
  if (const auto *attr = a.get("activations")) {
    for (const auto &s : attr->strings()) names.push_back(s);
    if (names.size() == perDir && dirs == 2) names.insert(names.end(), names.begin(), names.end());
    if (names.size() != perDir * dirs)
      return "activations must list " + std::to_string(perDir) + " function(s) per direction (got " +
             std::to_string(attr->strings_size()) + ")";
  } else {
    for (int64_t d = 0; d < dirs; ++d)
      for (const char *n : defaults) names.push_back(n);
  }
  std::vector<float> alphas, betas;
  if (const auto *attr = a.get("activation_alpha")) alphas.assign(attr->floats().begin(), attr->floats().end());
  if (const auto *attr = a.get("activation_beta")) betas.assign(attr->floats().begin(), attr->floats().end());
  size_t ia = 0, ib = 0;
  out.clear();
  for (const std::string &n : names) {
    Activation act;
    act.name = lowered(n);
    bool ua, ub;
    if (!activationParams(act.name, ua, ub, act.alpha, act.beta))
      return "activation function '" + n + "' is not supported";
    if (ua && ia < alphas.size()) act.alpha = alphas[ia++];
    if (ub && ib < betas.size()) act.beta = betas[ib++];
    out.push_back(act);
  }
  return "";
}

/// The scalar activation `act` of a float32 body value.
Value applyActivation(OpBuilder &b, Location l, const Activation &act, Value x) {
  const std::string &n = act.name;
  Value zero = fconst(b, l, 0.f), one = fconst(b, l, 1.f);
  auto mul = [&](Value p, Value q) -> Value { return b.create<arith::MulFOp>(l, p, q); };
  auto add = [&](Value p, Value q) -> Value { return b.create<arith::AddFOp>(l, p, q); };
  auto lt0 = [&](Value v) -> Value { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, v, zero); };
  if (n == "relu") return b.create<arith::MaximumFOp>(l, x, zero);
  if (n == "tanh") return b.create<math::TanhOp>(l, x);
  if (n == "sigmoid") return b.create<arith::DivFOp>(l, one, add(one, b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x))));
  if (n == "affine") return add(mul(fconst(b, l, act.alpha), x), fconst(b, l, act.beta));
  if (n == "leakyrelu") return b.create<arith::SelectOp>(l, lt0(x), mul(fconst(b, l, act.alpha), x), x);
  if (n == "thresholdedrelu")
    return b.create<arith::SelectOp>(l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, fconst(b, l, act.alpha)),
                                     x, zero);
  if (n == "scaledtanh") return mul(fconst(b, l, act.alpha), b.create<math::TanhOp>(l, mul(fconst(b, l, act.beta), x)));
  if (n == "hardsigmoid") {
    Value y = add(mul(fconst(b, l, act.alpha), x), fconst(b, l, act.beta));
    return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, y, zero), one);
  }
  if (n == "elu") return b.create<arith::SelectOp>(l, lt0(x), mul(fconst(b, l, act.alpha), b.create<math::ExpM1Op>(l, x)), x);
  if (n == "softsign") return b.create<arith::DivFOp>(l, x, add(one, b.create<math::AbsFOp>(l, x)));
  assert(n == "softplus" && "activation names are checked");
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), without overflow.
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, b.create<math::AbsFOp>(l, x)));
  return add(b.create<arith::MaximumFOp>(l, x, zero), b.create<math::Log1pOp>(l, e));
}

// --- Attribute checks ---------------------------------------------------------

enum class Kind { RNN, GRU, LSTM };

Kind kindOf(const std::string &op) { return op == "RNN" ? Kind::RNN : op == "GRU" ? Kind::GRU : Kind::LSTM; }

SmallVector<const char *> defaultActivations(Kind k) {
  if (k == Kind::RNN) return {"Tanh"};
  if (k == Kind::GRU) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

int64_t gateCount(Kind k) { return k == Kind::RNN ? 1 : k == Kind::GRU ? 3 : 4; }

std::string checkRecurrent(Kind k, const NodeAttrs &a) {
  std::string dir = a.getString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return "direction must be forward, reverse or bidirectional (got '" + dir + "')";
  int64_t layout = a.getInt("layout", 0);
  if (layout != 0 && layout != 1) return "layout must be 0 or 1";
  if (a.has("hidden_size") && a.getInt("hidden_size", 0) <= 0) return "hidden_size must be positive";
  if (a.has("clip") && !(a.getFloat("clip", 0.f) > 0.f)) return "clip must be positive";
  SmallVector<Activation> acts;
  return parseActivations(a, dir == "bidirectional" ? 2 : 1, defaultActivations(k), acts);
}

// --- Import ----------------------------------------------------------------------

/// Input-side weights and biases of one direction.
struct Direction {
  Value wT;           // [input, G*hidden]
  Value rT;           // [hidden, G*hidden] (GRU without linear_before_reset: the z, r part)
  Value rhT;          // GRU without linear_before_reset: [hidden, hidden]
  Value xBias;        // [G*hidden] or null
  Value hBias;        // GRU with linear_before_reset: [G*hidden] (0, 0, Rbh) or null
  Value h0, c0;       // [batch, hidden]
  Value pi, po, pf;   // LSTM peepholes [hidden] or null
  ArrayRef<Activation> acts;
};

LogicalResult importRecurrent(NodeContext &c) {
  Kind kind = kindOf(c.node.op_type());
  const std::string op = c.node.op_type();
  int64_t G = gateCount(kind);
  // Input positions: X W R B sequence_lens initial_h [initial_c P] (LSTM).
  const size_t kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7;
  if (!c.hasInput(0) || !c.hasInput(1) || !c.hasInput(2)) return c.fail("X, W and R are required");
  std::string dirName = c.attrs.getString("direction", "forward");
  int64_t D = dirName == "bidirectional" ? 2 : 1;
  bool reverse = dirName == "reverse";
  int64_t layout = c.attrs.getInt("layout", 0);
  if (c.opset < 14 && c.attrs.has("layout")) return c.fail("layout needs opset 14");
  SmallVector<Activation> acts;
  std::string err = parseActivations(c.attrs, D, defaultActivations(kind), acts);
  if (!err.empty()) return c.fail(err);
  size_t perDir = defaultActivations(kind).size();
  bool hasClip = c.attrs.has("clip");
  float clip = c.attrs.getFloat("clip", 0.f);
  bool linearBeforeReset = kind == Kind::GRU && c.attrs.getInt("linear_before_reset", 0) != 0;
  bool inputForget = kind == Kind::LSTM && c.attrs.getInt("input_forget", 0) != 0;

  // --- Types and shapes ----------------------------------------------------
  Type io = c.inputType(0).getElementType();
  if (!llvm::isa<FloatType>(io) || io.isF64())
    return c.fail("X must be float32, float16 or bfloat16 (v4f computes " + op +
                  " in float32, which would lose float64 precision)");
  for (size_t i : {(size_t)1, (size_t)2, kB, kH0, kC0, kP}) {
    if (!c.hasInput(i) || (kind != Kind::LSTM && i >= kC0)) continue;
    if (c.inputType(i).getElementType() != io)
      return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) + "') must have X's element type");
    if (!c.inputType(i).hasStaticShape()) return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                                                        "') must have a static shape");
  }
  if (!c.inputType(0).hasStaticShape() || c.inputType(0).getRank() != 3)
    return c.fail("X must be a 3-D tensor of static shape (a dynamic sequence length cannot be unrolled)");
  auto xt = c.inputType(0);
  int64_t T = xt.getDimSize(layout ? 1 : 0), B = xt.getDimSize(layout ? 0 : 1), I = xt.getDimSize(2);
  auto wt = c.inputType(1), rt = c.inputType(2);
  if (wt.getRank() != 3 || rt.getRank() != 3) return c.fail("W and R must be 3-D");
  int64_t H = rt.getDimSize(2);
  if (c.attrs.has("hidden_size") && c.attrs.getInt("hidden_size", 0) != H)
    return c.fail("hidden_size (" + std::to_string(c.attrs.getInt("hidden_size", 0)) + ") disagrees with R's shape");
  if (wt.getDimSize(0) != D || rt.getDimSize(0) != D)
    return c.fail("W and R must have " + std::to_string(D) + " direction(s) for direction '" + dirName + "'");
  if (wt.getDimSize(1) != G * H || wt.getDimSize(2) != I)
    return c.fail("W must be [" + std::to_string(D) + ", " + std::to_string(G * H) + ", " + std::to_string(I) + "]");
  if (rt.getDimSize(1) != G * H)
    return c.fail("R must be [" + std::to_string(D) + ", " + std::to_string(G * H) + ", " + std::to_string(H) + "]");
  if (T == 0 || B == 0 || H == 0 || I == 0) return c.fail("zero-sized sequence, batch, input or hidden dims are not supported");
  if (c.hasInput(kB) && (c.inputType(kB).getRank() != 2 || c.inputType(kB).getDimSize(0) != D ||
                         c.inputType(kB).getDimSize(1) != 2 * G * H))
    return c.fail("B must be [" + std::to_string(D) + ", " + std::to_string(2 * G * H) + "]");
  SmallVector<int64_t> stateShape = layout ? SmallVector<int64_t>{B, D, H} : SmallVector<int64_t>{D, B, H};
  for (size_t i : {kH0, kC0}) {
    if (!c.hasInput(i) || (kind != Kind::LSTM && i == kC0)) continue;
    if (c.inputType(i).getShape() != ArrayRef<int64_t>(stateShape))
      return c.fail(std::string(i == kH0 ? "initial_h" : "initial_c") + " must be [" + std::to_string(stateShape[0]) +
                    ", " + std::to_string(stateShape[1]) + ", " + std::to_string(stateShape[2]) + "]");
  }
  if (kind == Kind::LSTM && c.hasInput(kP) &&
      (c.inputType(kP).getRank() != 2 || c.inputType(kP).getDimSize(0) != D || c.inputType(kP).getDimSize(1) != 3 * H))
    return c.fail("P must be [" + std::to_string(D) + ", " + std::to_string(3 * H) + "]");
  if (kind != Kind::LSTM && c.outputUsed(2)) return c.fail(op + " has only the Y and Y_h outputs");

  // --- sequence_lens -----------------------------------------------------------
  // A [batch, 1] integer tensor when some steps must be masked, else null.
  Value lens;
  if (c.hasInput(kLens)) {
    auto lt = c.inputType(kLens);
    if (!lt.getElementType().isInteger(32) && !lt.getElementType().isInteger(64))
      return c.fail("sequence_lens must be int32 or int64");
    if (lt.getRank() != 1 || lt.getDimSize(0) != B)
      return c.fail("sequence_lens must be [" + std::to_string(B) + "]");
    if (auto known = c.constantInts(kLens)) {
      bool full = true;
      for (int64_t n : *known) {
        if (n < 0 || n > T)
          return c.fail("sequence_lens value " + std::to_string(n) + " is outside [0, " + std::to_string(T) + "]");
        full &= n == T;
      }
      if (!full) lens = reshapeTo(c, c.input(kLens), {B, 1});
    } else {
      // Known only at run time: every step is masked by it.
      lens = reshapeTo(c, c.input(kLens), {B, 1});
    }
  }
  Type lensType = lens ? typeOf(lens).getElementType() : Type();

  // --- Float32 operands, one set per direction ---------------------------------
  Type f32 = c.b.getF32Type();
  auto f32Input = [&](size_t i) -> FailureOr<Value> { return convertTo(c, c.input(i), f32); };
  auto x = f32Input(0);
  if (failed(x)) return failure();
  Value X = layout ? transposeBy(c, *x, {1, 0, 2}) : *x; // [T, B, I]
  auto perDirection = [&](size_t i, ArrayRef<int64_t> shape) -> FailureOr<SmallVector<Value>> {
    auto v = f32Input(i);
    if (failed(v)) return failure();
    Value all = *v;
    if ((i == kH0 || i == kC0) && layout) all = transposeBy(c, all, {1, 0, 2});
    SmallVector<Value> parts;
    for (Value p : splitEven(c, all, 0, D)) parts.push_back(reshapeTo(c, p, shape));
    return parts;
  };
  auto W = perDirection(1, {G * H, I});
  if (failed(W)) return failure();
  auto R = perDirection(2, {G * H, H});
  if (failed(R)) return failure();
  SmallVector<Value> Bs, H0s, C0s, Ps;
  if (c.hasInput(kB)) {
    auto v = perDirection(kB, {2 * G * H});
    if (failed(v)) return failure();
    Bs = *v;
  }
  if (c.hasInput(kH0)) {
    auto v = perDirection(kH0, {B, H});
    if (failed(v)) return failure();
    H0s = *v;
  }
  if (kind == Kind::LSTM && c.hasInput(kC0)) {
    auto v = perDirection(kC0, {B, H});
    if (failed(v)) return failure();
    C0s = *v;
  }
  if (kind == Kind::LSTM && c.hasInput(kP)) {
    auto v = perDirection(kP, {3 * H});
    if (failed(v)) return failure();
    Ps = *v;
  }
  Value zeroState = c.constF32({B, H}, SmallVector<float>(B * H, 0.f));
  SmallVector<Direction> dirs(D);
  for (int64_t d = 0; d < D; ++d) {
    Direction &dir = dirs[d];
    dir.acts = ArrayRef<Activation>(acts).slice(d * perDir, perDir);
    dir.wT = transposeBy(c, (*W)[d], {1, 0});
    if (kind == Kind::GRU && !linearBeforeReset) {
      auto rParts = splitBy(c, (*R)[d], 0, {2 * H, H});
      dir.rT = transposeBy(c, rParts[0], {1, 0});
      dir.rhT = transposeBy(c, rParts[1], {1, 0});
    } else {
      dir.rT = transposeBy(c, (*R)[d], {1, 0});
    }
    if (!Bs.empty()) {
      auto wr = splitBy(c, Bs[d], 0, {G * H, G * H});
      if (linearBeforeReset) {
        // Rbh is added inside r * (H Rh^T + Rbh): it goes to the recurrent matmul.
        auto wb = splitBy(c, wr[0], 0, {2 * H, H}), rb = splitBy(c, wr[1], 0, {2 * H, H});
        dir.xBias = concatAlong(c, {c.b.create<AddOp>(c.loc, wb[0], rb[0]), wb[1]}, 0);
        dir.hBias = concatAlong(c, {c.constF32({2 * H}, SmallVector<float>(2 * H, 0.f)), rb[1]}, 0);
      } else {
        dir.xBias = c.b.create<AddOp>(c.loc, wr[0], wr[1]);
      }
    }
    dir.h0 = H0s.empty() ? zeroState : H0s[d];
    if (kind == Kind::LSTM) {
      dir.c0 = C0s.empty() ? zeroState : C0s[d];
      if (!Ps.empty()) {
        auto p = splitEven(c, Ps[d], 0, 3);
        dir.pi = p[0], dir.po = p[1], dir.pf = p[2];
      }
    }
  }

  // --- The unrolled recurrence -------------------------------------------------
  // Body helpers: clip, then the activation.
  auto activate = [&](OpBuilder &b, Location l, const Activation &act, Value v) -> Value {
    if (hasClip)
      v = b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, v, fconst(b, l, -clip)), fconst(b, l, clip));
    return applyActivation(b, l, act, v);
  };
  // select(t < len, fresh, carried) when steps are masked.
  auto masked = [&](OpBuilder &b, Location l, int64_t t, Value len, Value fresh, Value carried) -> Value {
    Value tv = b.create<arith::ConstantOp>(l, b.getIntegerAttr(lensType, t));
    Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, tv, len);
    return b.create<arith::SelectOp>(l, valid, fresh, carried);
  };
  // ys[t][d]: the output of step t, direction d, shaped [1, 1, B, H].
  SmallVector<SmallVector<Value>> ys(T, SmallVector<Value>(D));
  SmallVector<Value> finalH(D), finalC(D);
  bool wantY = c.outputUsed(0);
  for (int64_t d = 0; d < D; ++d) {
    Direction &dir = dirs[d];
    bool backwards = reverse || d == 1;
    // All input projections at once: [T, B, I] x [I, G*H] (+ input biases).
    Value xw = matmul(c, X, dir.wT, dir.xBias);
    SmallVector<Value> xSteps;
    for (Value p : splitEven(c, xw, 0, T)) xSteps.push_back(reshapeTo(c, p, {B, G * H}));
    Value h = dir.h0, cell = dir.c0;
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = backwards ? T - 1 - s : s;
      Value xs = xSteps[t];
      Value hNew, cNew;
      if (kind == Kind::RNN) {
        SmallVector<Value> ins = {xs, matmul(c, h, dir.rT)};
        if (lens) ins.append({h, lens});
        auto r = buildElementwise(c, ins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
          Value v = activate(b, l, dir.acts[0], b.create<arith::AddFOp>(l, a[0], a[1]));
          return lens ? masked(b, l, t, a[3], v, a[2]) : v;
        });
        if (failed(r)) return failure();
        hNew = *r;
      } else if (kind == Kind::GRU) {
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
        hNew = *r;
      } else {
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
        cNew = *cr;
        // H = f(o + Po * C) * h(C)
        SmallVector<Value> hins = {gs[1], cNew};
        if (peep) hins.push_back(dir.po);
        if (lens) hins.append({h, lens});
        auto hr = buildElementwise(c, hins, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
          Value oPre = a[0];
          if (peep) oPre = b.create<arith::AddFOp>(l, oPre, b.create<arith::MulFOp>(l, a[2], a[1]));
          Value ov = activate(b, l, f, oPre);
          // h is not clipped: the clip bounds gate inputs only.
          Value v = b.create<arith::MulFOp>(l, ov, applyActivation(b, l, hAct, a[1]));
          return lens ? masked(b, l, t, a.back(), v, a[a.size() - 2]) : v;
        });
        if (failed(hr)) return failure();
        hNew = *hr;
      }
      if (wantY) {
        Value yt = hNew;
        if (lens) {
          // Steps past a sequence's length output zeros.
          auto z = buildElementwise(c, {hNew, lens}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
            return masked(b, l, t, a[1], a[0], fconst(b, l, 0.f));
          });
          if (failed(z)) return failure();
          yt = *z;
        }
        ys[t][d] = reshapeTo(c, yt, {1, 1, B, H});
      }
      h = hNew;
      cell = cNew;
    }
    finalH[d] = reshapeTo(c, h, {1, B, H});
    if (kind == Kind::LSTM) finalC[d] = reshapeTo(c, cell, {1, B, H});
  }

  // --- Outputs ---------------------------------------------------------------
  auto emit = [&](size_t i, Value v) -> LogicalResult {
    auto out = convertTo(c, v, io);
    if (failed(out)) return failure();
    c.setOutput(i, *out);
    return success();
  };
  if (wantY) {
    SmallVector<Value> steps;
    for (int64_t t = 0; t < T; ++t) steps.push_back(concatAlong(c, ys[t], 1));
    Value y = concatAlong(c, steps, 0); // [T, D, B, H]
    if (layout) y = transposeBy(c, y, {2, 0, 1, 3});
    if (failed(emit(0, y))) return failure();
  }
  for (size_t i : {(size_t)1, (size_t)2}) {
    if (!c.outputUsed(i)) continue;
    Value s = concatAlong(c, i == 1 ? finalH : finalC, 0); // [D, B, H]
    if (layout) s = transposeBy(c, s, {1, 0, 2});
    if (failed(emit(i, s))) return failure();
  }
  return success();
}

OpImporter recurrentImporter(Kind k) {
  return {7, kMaxOpset, [k](const NodeAttrs &a, int64_t) { return checkRecurrent(k, a); }, importRecurrent};
}

} // namespace

void addRecurrentImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["RNN"] = recurrentImporter(Kind::RNN);
  t["GRU"] = recurrentImporter(Kind::GRU);
  t["LSTM"] = recurrentImporter(Kind::LSTM);
}

} // namespace v4f
