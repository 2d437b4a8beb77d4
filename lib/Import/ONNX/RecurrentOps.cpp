//===- RecurrentOps.cpp - ONNX RNN / GRU / LSTM -> v4f.recurrent ----------===//
//
// RNN, GRU and LSTM import whole as v4f.recurrent (v4f-decompose-recurrent
// unrolls it over a static sequence; over a run-time sequence length or
// batch the CPU backend runs it as one time-loop kernel). The importer checks the attributes and operands
// (resolveRecurrentShape, shared with the op's verifier) so that a bad node
// is reported at import with its name, and resolves the activations: lower
// case, listed for every direction, with activation_alpha / activation_beta
// handed out in order to the functions that read them (their defaults
// otherwise).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include <cctype>

using namespace mlir;

namespace v4f {
namespace {

// --- Activations ------------------------------------------------------------

struct Activation {
  std::string name; // lower case
  float alpha = 0.f, beta = 0.f;
};

std::string lowered(std::string s) {
  for (char &ch : s) ch = (char)std::tolower((unsigned char)ch);
  return s;
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
    if (!recurrentActivationParams(act.name, ua, ub, act.alpha, act.beta))
      return "activation function '" + n + "' is not supported";
    if (ua && ia < alphas.size()) act.alpha = alphas[ia++];
    if (ub && ib < betas.size()) act.beta = betas[ib++];
    out.push_back(act);
  }
  return "";
}

// --- Attribute checks ---------------------------------------------------------

enum class Kind { RNN, GRU, LSTM };

Kind kindOf(const std::string &op) { return op == "RNN" ? Kind::RNN : op == "GRU" ? Kind::GRU : Kind::LSTM; }

SmallVector<const char *> defaultActivations(Kind k) {
  if (k == Kind::RNN) return {"Tanh"};
  if (k == Kind::GRU) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

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

LogicalResult importRecurrent(NodeContext &c) {
  Kind kind = kindOf(c.node.op_type());
  const std::string op = c.node.op_type();
  // Input positions: X W R B sequence_lens initial_h [initial_c P] (LSTM).
  const size_t kLens = 4;
  if (!c.hasInput(0) || !c.hasInput(1) || !c.hasInput(2)) return c.fail("X, W and R are required");
  std::string dirName = c.attrs.getString("direction", "forward");
  int64_t D = dirName == "bidirectional" ? 2 : 1;
  int64_t layout = c.attrs.getInt("layout", 0);
  if (c.opset < 14 && c.attrs.has("layout")) return c.fail("layout needs opset 14");
  SmallVector<Activation> acts;
  std::string err = parseActivations(c.attrs, D, defaultActivations(kind), acts);
  if (!err.empty()) return c.fail(err);
  Type io = c.inputType(0).getElementType();
  if (!llvm::isa<FloatType>(io) || io.isF64())
    return c.fail("X must be float32, float16 or bfloat16 (v4f computes " + op +
                  " in float32, which would lose float64 precision)");
  if (kind != Kind::LSTM && c.outputUsed(2)) return c.fail(op + " has only the Y and Y_h outputs");
  bool lstm = kind == Kind::LSTM;
  auto optional = [&](size_t i) { return c.hasInput(i) && (lstm || i < 6) ? c.input(i) : Value(); };
  auto optionalType = [&](size_t i) { return optional(i) ? c.inputType(i) : RankedTensorType(); };
  // X's input size is W's last dim: an X whose last dim is known only at
  // run time (lost through a reshape chain) gets it, checked at run time.
  if (auto xt = c.inputType(0), wt = c.inputType(1);
      xt.getRank() == 3 && xt.isDynamicDim(2) && wt.getRank() == 3 && !wt.isDynamicDim(2))
    refineInput(c, 0, {ShapedType::kDynamic, ShapedType::kDynamic, wt.getDimSize(2)});
  // Likewise the initial states' directions and hidden size (exporters build
  // them with Expand / Tile / Slice at run time): [D, batch, H], layout 1
  // [batch, D, H].
  {
    int64_t H = c.attrs.has("hidden_size") ? c.attrs.getInt("hidden_size", 0) : ShapedType::kDynamic;
    auto rt = c.inputType(2);
    if (H == ShapedType::kDynamic && rt.getRank() == 3 && !rt.isDynamicDim(2)) H = rt.getDimSize(2);
    if (H > 0)
      for (size_t i : {size_t(5), size_t(6)}) {
        if (!c.hasInput(i) || (i == 6 && kind != Kind::LSTM) || c.inputType(i).getRank() != 3) continue;
        SmallVector<int64_t> state = layout ? SmallVector<int64_t>{ShapedType::kDynamic, D, H}
                                            : SmallVector<int64_t>{D, ShapedType::kDynamic, H};
        refineInput(c, i, state);
      }
  }
  RecurrentShape s;
  const char *cell = kind == Kind::RNN ? "rnn" : kind == Kind::GRU ? "gru" : "lstm";
  err = resolveRecurrentShape(cell, dirName, layout, c.attrs.has("hidden_size") ? c.attrs.getInt("hidden_size", 0) : -1,
                              c.inputType(0), c.inputType(1), c.inputType(2), optionalType(3), optionalType(kLens),
                              optionalType(5), optionalType(6), optionalType(7), s);
  if (!err.empty()) return c.fail(err);
  if (c.hasInput(kLens))
    if (auto known = c.constantInts(kLens))
      for (int64_t n : *known)
        if (n < 0 || (!ShapedType::isDynamic(s.T) && n > s.T))
          return c.fail("sequence_lens value " + std::to_string(n) + " is outside [0, " +
                        (ShapedType::isDynamic(s.T) ? std::string("the sequence length") : std::to_string(s.T)) + "]");

  OpBuilder &b = c.b;
  SmallVector<Attribute> names;
  SmallVector<float> alphas, betas;
  for (const Activation &a : acts) {
    names.push_back(b.getStringAttr(a.name));
    alphas.push_back(a.alpha);
    betas.push_back(a.beta);
  }
  SmallVector<int64_t> y = layout ? SmallVector<int64_t>{s.B, s.T, D, s.H} : SmallVector<int64_t>{s.T, D, s.B, s.H};
  SmallVector<int64_t> state = layout ? SmallVector<int64_t>{s.B, D, s.H} : SmallVector<int64_t>{D, s.B, s.H};
  SmallVector<Type> results = {RankedTensorType::get(y, io), RankedTensorType::get(state, io)};
  if (lstm) results.push_back(RankedTensorType::get(state, io));
  auto rec = b.create<RecurrentOp>(c.loc, results, c.input(0), c.input(1), c.input(2), optional(3), optional(kLens),
                                   optional(5), optional(6), optional(7), b.getStringAttr(cell),
                                   b.getStringAttr(dirName), b.getI64IntegerAttr(s.H), b.getI64IntegerAttr(layout),
                                   b.getArrayAttr(names), b.getDenseF32ArrayAttr(alphas), b.getDenseF32ArrayAttr(betas),
                                   c.attrs.has("clip") ? b.getF32FloatAttr(c.attrs.getFloat("clip", 0.f)) : FloatAttr(),
                                   b.getBoolAttr(kind == Kind::GRU && c.attrs.getInt("linear_before_reset", 0) != 0),
                                   b.getBoolAttr(lstm && c.attrs.getInt("input_forget", 0) != 0));
  for (size_t i = 0; i < rec->getNumResults(); ++i)
    if (c.outputUsed(i)) c.setOutput(i, rec->getResult(i));
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
