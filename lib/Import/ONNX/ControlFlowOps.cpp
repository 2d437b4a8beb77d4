//===- ControlFlowOps.cpp - If, Loop and Scan ------------------------------===//
//
// The subgraphs of If, Loop and Scan are imported node by node (into the
// enclosing function, or into a v4f.loop's region),
// through the ordinary importer table (so every supported op works inside a
// body, with the same checks and errors).
//
//  - If with a constant condition imports only the taken branch. With a
//    run-time condition both branches are imported and each output is a
//    v4f.select_branch on the condition: codegen guards the dispatches each
//    side needs by the condition, so only the taken branch runs, and the
//    sides may differ in shape (same element type). Where they differ in
//    rank, the If's consumers are specialized into each branch
//    (IfSpecialize.cpp).
//  - Loop is unrolled when its trip count M and its conditions fold to
//    constants at import (scan outputs are stacked along a new axis 0). A
//    trip count or initial condition known only at run time makes a
//    v4f.loop (importLoopInPlan) whose body is imported once into its
//    region and which the plan runs as a loop, up to --max-loop-iterations.
//  - Scan is unrolled over the static length of its scan inputs (Scan-8:
//    per batch entry, with sequence_lens constant and full); Scan-9+ over a
//    run-time length becomes a v4f.loop (importScanInPlan).
//
// Each iteration (and each branch) is imported in a fresh binding scope: the
// names a subgraph defines shadow outer names while it is imported and are
// restored afterwards, so bodies may reuse names across iterations and read
// outer-scope values by name.
//
// This file: the subgraph machinery (binding scopes, importing a body,
// synthesized nodes, stacking) and If; Loop and Scan are in LoopScanOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "TensorImport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <unordered_set>

using namespace mlir;

namespace v4f {
namespace controlflow {

namespace {

/// Models whose subgraphs inline more than kMaxInlinedNodes nodes in all are
/// refused; the iteration bound (unrolling, and a Loop run in the plan) is
/// GraphState::maxLoopIterations (v4fc --max-loop-iterations, default 4096).
constexpr int64_t kMaxInlinedNodes = int64_t(1) << 18;

} // namespace

std::optional<Bound> lookup(GraphState &g, const std::string &name) {
  if (auto it = g.constants.find(name); it != g.constants.end()) return Bound{{}, it->second};
  if (auto it = g.values.find(name); it != g.values.end()) {
    Bound b{it->second, {}};
    if (auto op = it->second.getDefiningOp<arith::ConstantOp>())
      b.cst = llvm::dyn_cast<DenseElementsAttr>(op.getValue());
    return b;
  }
  return std::nullopt;
}

void bindName(GraphState &g, const std::string &name, const Bound &b) {
  g.values.erase(name);
  g.constants.erase(name);
  if (b.v)
    g.values[name] = b.v;
  else
    g.constants[name] = b.cst;
}

Value materialize(NodeContext &c, const Bound &b) {
  return b.v ? b.v : c.b.create<arith::ConstantOp>(c.loc, b.cst).getResult();
}

namespace {

/// Shadows the names a subgraph defines for its lifetime, then restores
/// whatever they were bound to outside.
class Scope {
public:
  explicit Scope(GraphState &g) : g(g) {}
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;
  ~Scope() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      g.values.erase(it->name);
      g.constants.erase(it->name);
      if (it->value) g.values[it->name] = *it->value;
      if (it->constant) g.constants[it->name] = *it->constant;
    }
  }
  void shadow(const std::string &name) {
    if (name.empty() || !seen.insert(name).second) return;
    Saved s{name, std::nullopt, std::nullopt};
    if (auto it = g.values.find(name); it != g.values.end()) s.value = it->second;
    if (auto it = g.constants.find(name); it != g.constants.end()) s.constant = it->second;
    saved.push_back(s);
    g.values.erase(name);
    g.constants.erase(name);
  }

private:
  struct Saved {
    std::string name;
    std::optional<Value> value;
    std::optional<DenseElementsAttr> constant;
  };
  GraphState &g;
  std::vector<Saved> saved;
  std::unordered_set<std::string> seen;
};

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? node.op_type() + "#" + std::to_string(index) : node.name();
}

} // namespace

/// Imports `body` with its inputs bound to `inputs`; returns its outputs.
FailureOr<SmallVector<Bound>> importSubgraph(NodeContext &c, const onnx::GraphProto &body, ArrayRef<Bound> inputs,
                                             const std::string &where) {
  if (size_t(body.input_size()) != inputs.size())
    return c.fail(where + ": the subgraph has " + std::to_string(body.input_size()) + " inputs, expected " +
                  std::to_string(inputs.size()));
  GraphState &g = c.g;
  Scope scope(g);
  for (const auto &in : body.input()) scope.shadow(in.name());
  for (const auto &init : body.initializer()) scope.shadow(init.name());
  for (const auto &node : body.node())
    for (const auto &out : node.output()) scope.shadow(out);

  for (const auto &init : body.initializer()) {
    std::string err;
    auto attr = importTensor(g.ctx, init, g.modelDir, err);
    if (!attr) return c.fail(where + ": initializer " + err);
    g.constants[init.name()] = attr;
  }
  for (size_t i = 0; i < inputs.size(); ++i) bindName(g, body.input(int(i)).name(), inputs[i]);

  auto step = [&](const onnx::NodeProto &node, int n) -> LogicalResult {
    std::string label = nodeLabel(node, n);
    for (const auto &in : node.input())
      if (!in.empty() && !g.values.count(in) && !g.constants.count(in))
        return c.fail(where + ": node '" + label + "' (" + node.op_type() + ") reads '" + in +
                      "', which is not defined in the subgraph or an enclosing graph before it");
    if (++g.inlinedNodes > kMaxInlinedNodes)
      return c.fail(where + ": inlining the subgraphs would import more than " + std::to_string(kMaxInlinedNodes) +
                    " nodes; refused");
    Location loc = NameLoc::get(StringAttr::get(&g.ctx, c.node.name() + "/" + label), c.loc);
    std::string err;
    if (failed(importNode(g, node, c.opset, loc, err)))
      return c.fail(where + ": node '" + label + "' (" + node.op_type() + "): " + err);
    return success();
  };
  if (failed(importNodeList(g, body.node(), body.output(), step))) return failure();

  SmallVector<Bound> outs;
  for (const auto &out : body.output()) {
    auto b = lookup(g, out.name());
    if (!b) return c.fail(where + ": subgraph output '" + out.name() + "' is never produced");
    outs.push_back(*b);
  }
  return outs;
}

/// Imports one synthesized node `op` over `ins` (bound to temporary names).
FailureOr<Bound> runNode(NodeContext &c, const std::string &op, ArrayRef<Bound> ins,
                         const std::function<void(onnx::NodeProto &)> &setAttrs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  std::string prefix = "#v4f-cf" + std::to_string(c.g.values.size() + c.g.constants.size()) + "-";
  std::vector<std::string> names;
  for (size_t i = 0; i < ins.size(); ++i) {
    names.push_back(prefix + std::to_string(i));
    bindName(c.g, names.back(), ins[i]);
    n.add_input(names.back());
  }
  std::string out = prefix + "out";
  n.add_output(out);
  if (setAttrs) setAttrs(n);
  std::string err;
  LogicalResult r = importNode(c.g, n, c.opset, c.loc, err);
  std::optional<Bound> res = succeeded(r) ? lookup(c.g, out) : std::nullopt;
  names.push_back(out);
  for (const auto &name : names) {
    c.g.values.erase(name);
    c.g.constants.erase(name);
  }
  if (failed(r)) return c.fail(op + ": " + err);
  if (!res) return c.fail(op + " produced no value");
  return *res;
}

void addIntAttr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

Bound scalarI64(NodeContext &c, int64_t v) {
  auto t = RankedTensorType::get({}, c.b.getI64Type());
  return Bound{{}, DenseElementsAttr::get(t, APInt(64, uint64_t(v), true))};
}

Bound scalarF32(NodeContext &c, float v) {
  return Bound{{}, DenseElementsAttr::get(RankedTensorType::get({}, c.b.getF32Type()), v)};
}

Bound vectorI64(NodeContext &c, ArrayRef<int64_t> v) {
  return Bound{{}, DenseElementsAttr::get(RankedTensorType::get({int64_t(v.size())}, c.b.getI64Type()), v)};
}

Bound scalarBool(NodeContext &c, bool v) {
  auto t = RankedTensorType::get({}, c.b.getI1Type());
  return Bound{{}, DenseElementsAttr::get(t, v)};
}

std::optional<int64_t> constantInt(const Bound &b) {
  if (!b.cst || b.cst.getNumElements() != 1 || !b.cst.getElementType().isInteger()) return std::nullopt;
  APInt v = *b.cst.getValues<APInt>().begin();
  return b.cst.getElementType().getIntOrFloatBitWidth() == 1 ? int64_t(!v.isZero()) : v.getSExtValue();
}

/// `pieces` stacked along a new axis `axis` (in reverse order if `reverse`).
FailureOr<Bound> stack(NodeContext &c, ArrayRef<Bound> pieces, int64_t axis, bool reverse, const std::string &what) {
  if (pieces.empty()) return c.fail(what + ": no iterations ran, so its shape is unknown");
  auto t = llvm::dyn_cast<RankedTensorType>(pieces[0].type());
  if (!t || !t.hasStaticShape()) return c.fail(what + " must have a static shape in every iteration");
  for (const Bound &p : pieces)
    if (p.type() != pieces[0].type())
      return c.fail(what + " changes type across iterations (" + std::to_string(pieces.size()) + " pieces)");
  int64_t rank = t.getRank();
  if (axis < -(rank + 1) || axis > rank) return c.fail(what + ": axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank + 1;
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + axis, 1);
  auto shapeType = RankedTensorType::get({int64_t(shape.size())}, c.b.getI64Type());
  Bound shapeCst{{}, DenseElementsAttr::get(shapeType, ArrayRef<int64_t>(shape))};
  SmallVector<Bound> parts;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Bound &p = pieces[reverse ? pieces.size() - 1 - i : i];
    auto r = runNode(c, "Reshape", {p, shapeCst});
    if (failed(r)) return failure();
    parts.push_back(*r);
  }
  if (parts.size() == 1) return parts[0];
  return runNode(c, "Concat", parts, [&](onnx::NodeProto &n) { addIntAttr(n, "axis", axis); });
}

namespace {

/// Static check of a subgraph: every node is importable at this opset and
/// every input and output is a tensor.
std::string checkSubgraph(const onnx::GraphProto &g, const std::string &attr, int64_t opset) {
  auto notTensor = [](const onnx::ValueInfoProto &vi) {
    return vi.has_type() && vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET && !vi.type().has_tensor_type();
  };
  for (const auto *list : {&g.input(), &g.output()})
    for (const auto &vi : *list)
      if (notTensor(vi))
        return attr + ": '" + vi.name() + "' is not a tensor (sequence, optional and map values are not supported)";
  const auto &importers = opImporters();
  for (int n = 0; n < g.node_size(); ++n) {
    const auto &node = g.node(n);
    std::string where = attr + ": node '" + nodeLabel(node, n) + "' (" + node.op_type() + "): ";
    auto it = importers.find(importerKey(node));
    if (it == importers.end() && !node.domain().empty() && node.domain() != "ai.onnx")
      return where + "operator domain '" + node.domain() + "' is not supported";
    if (it == importers.end()) return where + "operator is not supported";
    if (opset < it->second.minOpset || opset > it->second.maxOpset)
      return where + "opset " + std::to_string(opset) + " is outside the supported range";
    if (std::string why = it->second.check(NodeAttrs(node), opset); !why.empty()) return where + why;
  }
  return "";
}

std::string checkGraphAttrs(const NodeAttrs &a, int64_t opset, std::initializer_list<const char *> names) {
  for (const char *name : names) {
    const auto *g = a.get(name);
    if (!g || g->type() != onnx::AttributeProto::GRAPH)
      return std::string("attribute '") + name + "' (a graph) is required";
    if (std::string why = checkSubgraph(g->g(), name, opset); !why.empty()) return why;
  }
  return "";
}

// If
//===----------------------------------------------------------------------===//

LogicalResult importIf(NodeContext &c) {
  const auto &thenG = c.attrs.get("then_branch")->g();
  const auto &elseG = c.attrs.get("else_branch")->g();
  for (const auto *br : {&thenG, &elseG})
    if (br->output_size() != c.node.output_size())
      return c.fail("a branch has " + std::to_string(br->output_size()) + " outputs, the node " +
                    std::to_string(c.node.output_size()));
  auto cond = lookup(c.g, c.node.input(0));
  if (!cond) return c.fail("cond is not defined");
  auto condType = llvm::dyn_cast<RankedTensorType>(cond->type());
  if (!condType || !condType.hasStaticShape() || condType.getNumElements() != 1)
    return c.fail("cond must be a tensor of one element");

  if (auto k = constantInt(*cond)) {
    auto outs = importSubgraph(c, *k ? thenG : elseG, {}, *k ? "then_branch" : "else_branch");
    if (failed(outs)) return failure();
    for (size_t i = 0; i < outs->size(); ++i)
      if (c.outputUsed(i)) bindName(c.g, c.node.output(int(i)), (*outs)[i]);
    return success();
  }

  // Run-time condition: both branches are imported, each output is a
  // v4f.select_branch; codegen guards every dispatch needed by one side only,
  // so only the taken branch runs and the sides may differ in shape. An If
  // importNodeList synthesized (the consumers of a rank-changing If copied
  // into each branch) may have one side that cannot run: it becomes a
  // run-time error of that side (IfSpecialize.cpp).
  bool specialized = c.g.specialized.count(&c.node) > 0;
  const char *sideName[2] = {"then", "else"};
  std::optional<SmallVector<Bound>> outs[2];
  std::string sideError[2];
  for (int s = 0; s < 2; ++s) {
    OpMark mark = markOps(c.b);
    auto r = importSubgraph(c, s == 0 ? thenG : elseG, {}, std::string(sideName[s]) + "_branch");
    if (succeeded(r)) {
      outs[s] = std::move(*r);
      continue;
    }
    if (!specialized) return failure();
    sideError[s] = "If '" + c.node.name() + "' selects its " + sideName[s] +
                   " branch, which cannot run (with the If's consumers specialized into it): " + c.error;
    c.error.clear();
    eraseSince(c.b, mark);
  }
  auto typeText = [](Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  };
  // Ranks that differ: a plain If asks importNodeList to specialize its
  // consumers; a specialized one keeps the side whose rank the model declares.
  if (outs[0] && outs[1])
    for (size_t i = 0; i < outs[0]->size(); ++i) {
      if (!c.outputUsed(i)) continue;
      auto at = llvm::dyn_cast<RankedTensorType>((*outs[0])[i].type());
      auto bt = llvm::dyn_cast<RankedTensorType>((*outs[1])[i].type());
      if (!at || !bt || at.getElementType() != bt.getElementType())
        return c.fail("output " + std::to_string(i) + " of the branches differs in element type, got " +
                      typeText((*outs[0])[i].type()) + " and " + typeText((*outs[1])[i].type()));
      if (at.getRank() == bt.getRank()) continue;
      std::string why = "output " + std::to_string(i) +
                        " of the branches differs in rank (the condition is known "
                        "only at run time), got " +
                        typeText(at) + " and " + typeText(bt);
      if (!specialized) {
        c.g.rankSplit = true;
        return c.fail(why);
      }
      const auto &declared = thenG.output(int(i)).type();
      if (!declared.has_tensor_type() || !declared.tensor_type().has_shape())
        return c.fail(why + ", and the model declares no rank for '" + c.node.output(int(i)) + "'");
      int64_t rank = declared.tensor_type().shape().dim_size();
      for (int s = 0; s < 2; ++s) {
        int64_t got = (s == 0 ? at : bt).getRank();
        if (got != rank && outs[s] && sideError[s].empty())
          sideError[s] = "If '" + c.node.name() + "' selects its " + sideName[s] + " branch, where '" +
                         c.node.output(int(i)) + "' has rank " + std::to_string(got) + " but the model declares rank " +
                         std::to_string(rank);
      }
    }
  for (int s = 0; s < 2; ++s)
    if (!sideError[s].empty()) outs[s].reset();
  if (!outs[0] && !outs[1]) return c.fail("neither branch can run: " + sideError[0] + "; " + sideError[1]);
  Value condV = materialize(c, *cond);
  StringAttr errors[2];
  for (int s = 0; s < 2; ++s)
    if (!outs[s]) errors[s] = c.b.getStringAttr(sideError[s]);
  const SmallVector<Bound> &thenOuts = outs[0] ? *outs[0] : *outs[1];
  const SmallVector<Bound> &elseOuts = outs[1] ? *outs[1] : *outs[0];
  for (size_t i = 0; i < thenOuts.size(); ++i) {
    if (!c.outputUsed(i)) continue;
    const Bound &a = thenOuts[i], &b = elseOuts[i];
    if (a.cst && a.cst == b.cst && !errors[0] && !errors[1]) {
      bindName(c.g, c.node.output(int(i)), a);
      continue;
    }
    auto at = llvm::cast<RankedTensorType>(a.type()), bt = llvm::cast<RankedTensorType>(b.type());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < at.getRank(); ++d)
      dims.push_back(at.getDimSize(d) == bt.getDimSize(d) ? at.getDimSize(d) : ShapedType::kDynamic);
    auto type = RankedTensorType::get(dims, at.getElementType());
    Value sel =
        c.b.create<SelectBranchOp>(c.loc, type, condV, materialize(c, a), materialize(c, b), errors[0], errors[1]);
    c.setOutput(i, sel);
  }
  return success();
}

} // namespace
} // namespace controlflow

void addControlFlowImporters(std::unordered_map<std::string, OpImporter> &table) {
  using namespace controlflow;
  table["If"] = {1, kMaxOpset,
                 [](const NodeAttrs &a, int64_t opset) {
                   return checkGraphAttrs(a, opset, {"then_branch", "else_branch"});
                 },
                 importIf};
  table["Loop"] = {1, kMaxOpset, [](const NodeAttrs &a, int64_t opset) { return checkGraphAttrs(a, opset, {"body"}); },
                   importLoop};
  table["Scan"] = {8, kMaxOpset,
                   [](const NodeAttrs &a, int64_t opset) -> std::string {
                     if (!a.has("num_scan_inputs")) return "attribute 'num_scan_inputs' is required";
                     return checkGraphAttrs(a, opset, {"body"});
                   },
                   importScan};
}

} // namespace v4f
