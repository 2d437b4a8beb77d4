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
//    sides may differ in shape (same rank and element type).
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
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <unordered_set>

using namespace mlir;

namespace v4f {
namespace {

/// Models whose subgraphs inline more than kMaxInlinedNodes nodes in all are
/// refused; the iteration bound (unrolling, and a Loop run in the plan) is
/// GraphState::maxLoopIterations (v4fc --max-loop-iterations, default 4096).
constexpr int64_t kMaxInlinedNodes = int64_t(1) << 18;

/// A named value: a constant (kept foldable) or an SSA value.
struct Bound {
  Value v;
  DenseElementsAttr cst;
  Type type() const { return cst ? Type(cst.getType()) : v.getType(); }
};

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
  if (b.v) g.values[name] = b.v;
  else g.constants[name] = b.cst;
}

Value materialize(NodeContext &c, const Bound &b) {
  return b.v ? b.v : c.b.create<arith::ConstantOp>(c.loc, b.cst).getResult();
}

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

  for (int n = 0; n < body.node_size(); ++n) {
    const auto &node = body.node(n);
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
  }

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
                         const std::function<void(onnx::NodeProto &)> &setAttrs = {}) {
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
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return where + "operator domain '" + node.domain() + "' is not supported";
    auto it = importers.find(node.op_type());
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
    if (!g || g->type() != onnx::AttributeProto::GRAPH) return std::string("attribute '") + name + "' (a graph) is required";
    if (std::string why = checkSubgraph(g->g(), name, opset); !why.empty()) return why;
  }
  return "";
}

//===----------------------------------------------------------------------===//
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
  // so only the taken branch runs and the sides may differ in shape.
  auto thenOuts = importSubgraph(c, thenG, {}, "then_branch");
  if (failed(thenOuts)) return failure();
  auto elseOuts = importSubgraph(c, elseG, {}, "else_branch");
  if (failed(elseOuts)) return failure();
  Value condV = materialize(c, *cond);
  for (size_t i = 0; i < thenOuts->size(); ++i) {
    if (!c.outputUsed(i)) continue;
    const Bound &a = (*thenOuts)[i], &b = (*elseOuts)[i];
    if (a.cst && a.cst == b.cst) {
      bindName(c.g, c.node.output(int(i)), a);
      continue;
    }
    auto at = llvm::dyn_cast<RankedTensorType>(a.type()), bt = llvm::dyn_cast<RankedTensorType>(b.type());
    if (!at || !bt || at.getRank() != bt.getRank() || at.getElementType() != bt.getElementType()) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << a.type() << " and " << b.type();
      bool sameRank = at && bt && at.getRank() == bt.getRank();
      return c.fail("output " + std::to_string(i) + " of the branches " +
                    (sameRank ? "differs in element type" : "differs in rank") +
                    " (the condition is known only at run time, so the branches may differ in dims only), got " +
                    os.str());
    }
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < at.getRank(); ++d)
      dims.push_back(at.getDimSize(d) == bt.getDimSize(d) ? at.getDimSize(d) : ShapedType::kDynamic);
    auto type = RankedTensorType::get(dims, at.getElementType());
    Value sel = c.b.create<SelectBranchOp>(c.loc, type, condV, materialize(c, a), materialize(c, b));
    c.setOutput(i, sel);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

/// `slice` stacked along a new axis 0 of run-time length: dims static where
/// the value's type or the ONNX-declared shape `declared` says so (the plan
/// checks them at run time).
FailureOr<RankedTensorType> stackedType(NodeContext &c, Value slice, const onnx::ValueInfoProto *declared,
                                        const std::string &what) {
  auto t = llvm::dyn_cast<RankedTensorType>(slice.getType());
  if (!t) return c.fail(what + " must be a ranked tensor");
  SmallVector<int64_t> dims = {ShapedType::kDynamic};
  dims.append(t.getShape().begin(), t.getShape().end());
  if (declared && declared->type().tensor_type().has_shape() &&
      declared->type().tensor_type().shape().dim_size() == t.getRank())
    for (int64_t d = 0; d < t.getRank(); ++d) {
      const auto &dim = declared->type().tensor_type().shape().dim(int(d));
      if (!dim.has_dim_value() || dim.dim_value() <= 0) continue;
      if (!ShapedType::isDynamic(dims[1 + d]) && dims[1 + d] != dim.dim_value())
        return c.fail(what + " is declared with dim " + std::to_string(d) + " = " + std::to_string(dim.dim_value()) +
                      " but computes " + std::to_string(dims[1 + d]));
      dims[1 + d] = dim.dim_value();
    }
  return RankedTensorType::get(dims, t.getElementType());
}

/// The values a v4f.loop body yields: body outputs `first`.. (the carried
/// ones, then the scan slices, whose stacked types go to scanTypes).
FailureOr<SmallVector<Value>> yieldBodyOutputs(NodeContext &c, const onnx::GraphProto &body, ArrayRef<Bound> outs,
                                               size_t first, size_t nCarried, SmallVectorImpl<Type> &scanTypes) {
  SmallVector<Value> yielded;
  for (size_t i = first; i < outs.size(); ++i) {
    Value v = materialize(c, outs[i]);
    if (i - first >= nCarried) {
      auto t = stackedType(c, v, &body.output(int(i)), "body output " + std::to_string(i));
      if (failed(t)) return failure();
      scanTypes.push_back(*t);
    }
    yielded.push_back(v);
  }
  return yielded;
}

/// Builds a v4f.loop running `trip` (a scalar int64 tensor) times over the
/// carried `inits`. `importBody(iter, carried, scanTypes)` imports the body
/// at the start of the region and returns the yielded values (the next
/// carried values, then one slice per scan output, whose stacked types it
/// appends to scanTypes). When `bodyCondition` ends up true, the first
/// yielded value is the condition the body computes.
using LoopBodyFn = llvm::function_ref<FailureOr<SmallVector<Value>>(Value, ArrayRef<Value>, SmallVectorImpl<Type> &)>;
FailureOr<LoopOp> buildPlanLoop(NodeContext &c, Value trip, ArrayRef<Value> inits, LoopBodyFn importBody,
                                bool *bodyCondition = nullptr) {
  auto loop = c.b.create<LoopOp>(c.loc, TypeRange(), trip, inits, c.b.getI64IntegerAttr(c.g.maxLoopIterations),
                                 c.b.getBoolAttr(false));
  Block *block = new Block();
  loop.getBody().push_back(block);
  block->addArgument(RankedTensorType::get({}, c.b.getI64Type()), c.loc);
  SmallVector<Value> carried;
  SmallVector<Type> resultTypes;
  for (Value v : inits) {
    carried.push_back(block->addArgument(v.getType(), c.loc));
    resultTypes.push_back(v.getType());
  }
  {
    OpBuilder::InsertionGuard guard(c.b);
    c.b.setInsertionPointToStart(block);
    SmallVector<Type> scanTypes;
    auto yielded = importBody(block->getArgument(0), carried, scanTypes);
    if (failed(yielded)) {
      loop->erase();
      return failure();
    }
    c.b.create<LoopYieldOp>(c.loc, *yielded);
    resultTypes.append(scanTypes.begin(), scanTypes.end());
  }
  // Created without results (their types come from the body): recreate it.
  OpBuilder::InsertionGuard guard(c.b);
  c.b.setInsertionPoint(loop);
  auto typed = c.b.create<LoopOp>(c.loc, resultTypes, loop.getTripCount(), loop.getInits(), loop.getMaxIterationsAttr(),
                                  c.b.getBoolAttr(bodyCondition && *bodyCondition));
  typed.getBody().takeBody(loop.getBody());
  loop->erase();
  if (failed(mlir::verify(typed))) return c.fail("the run-time loop does not verify (see the diagnostic above)");
  return typed;
}

/// A Loop whose trip count or initial condition is known only at run time
/// becomes a v4f.loop (run as a loop in the plan, not unrolled). The body
/// runs only while the condition holds, so its condition input is bound to
/// true; a condition it computes that folds to a constant means "the trip
/// count decides" (true) or "one iteration at most" (false), and one computed
/// from data is read back after every iteration (v4f.loop body_condition).
/// The trip count is `cond ? M : 0`, bounded by --max-loop-iterations at run
/// time.
LogicalResult importLoopInPlan(NodeContext &c, const onnx::GraphProto &body, int64_t nCarried, int64_t nScan) {
  if (!c.hasInput(0))
    return c.fail("a Loop without a trip count M whose condition is known only at run time has no bound on its "
                  "iterations; it is not supported");
  auto m = lookup(c.g, c.node.input(0));
  auto mt = llvm::dyn_cast<RankedTensorType>(m->type());
  if (!mt || !mt.getElementType().isInteger(64) || !mt.hasStaticShape() || mt.getNumElements() != 1)
    return c.fail("the trip count M must be a one-element int64 tensor");
  Bound trip = *m;
  if (c.hasInput(1)) {
    auto k = lookup(c.g, c.node.input(1));
    auto kt = k ? llvm::dyn_cast<RankedTensorType>(k->type()) : RankedTensorType();
    if (!kt || !kt.hasStaticShape() || kt.getNumElements() != 1)
      return c.fail("the condition cond must be a one-element tensor");
    if (auto v = constantInt(*k)) {
      if (!*v) trip = scalarI64(c, 0);
    } else {
      auto zero = scalarI64(c, 0);
      auto flat = runNode(c, "Reshape", {trip, Bound{{}, DenseElementsAttr::get(
                                                            RankedTensorType::get({0}, c.b.getI64Type()),
                                                            ArrayRef<int64_t>{})}});
      if (failed(flat)) return failure();
      auto sel = runNode(c, "Where", {*k, *flat, zero});
      if (failed(sel)) return failure();
      trip = *sel;
    }
  }
  SmallVector<Value> inits;
  for (int64_t i = 0; i < nCarried; ++i) {
    auto v = lookup(c.g, c.node.input(int(2 + i)));
    if (!v) return c.fail("loop-carried input " + std::to_string(i) + " is not defined");
    inits.push_back(materialize(c, *v));
  }
  Value tripV = materialize(c, trip);
  auto tt = llvm::cast<RankedTensorType>(tripV.getType());
  if (tt.getRank() != 0) {
    auto flat = runNode(c, "Reshape", {Bound{tripV, {}}, Bound{{}, DenseElementsAttr::get(
                                                                    RankedTensorType::get({0}, c.b.getI64Type()),
                                                                    ArrayRef<int64_t>{})}});
    if (failed(flat)) return failure();
    tripV = materialize(c, *flat);
  }

  bool oneIteration = false, bodyCondition = false;
  auto importBody = [&](Value iter, ArrayRef<Value> carried,
                        SmallVectorImpl<Type> &scanTypes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Bound> ins = {Bound{iter, {}}, scalarBool(c, true)};
    for (Value v : carried) ins.push_back(Bound{v, {}});
    auto outs = importSubgraph(c, body, ins, "body");
    if (failed(outs)) return failure();
    auto k = constantInt((*outs)[0]);
    oneIteration = k && !*k;
    auto yielded = yieldBodyOutputs(c, body, *outs, 1, nCarried, scanTypes);
    if (failed(yielded) || k) return yielded;
    // A condition computed from data: yielded first, read after every iteration.
    auto kt = llvm::dyn_cast<RankedTensorType>((*outs)[0].type());
    if (!kt || !kt.hasStaticShape() || kt.getNumElements() != 1)
      return c.fail("the loop condition the body computes must be a one-element tensor");
    bodyCondition = true;
    yielded->insert(yielded->begin(), materialize(c, (*outs)[0]));
    return yielded;
  };
  auto loop = buildPlanLoop(c, tripV, inits, importBody, &bodyCondition);
  if (failed(loop)) return failure();
  if (oneIteration) {
    // The body stops the loop after its first iteration.
    OpBuilder::InsertionGuard guard(c.b);
    c.b.setInsertionPoint(*loop);
    auto one = runNode(c, "Min", {Bound{tripV, {}}, scalarI64(c, 1)});
    if (failed(one)) return failure();
    (*loop)->setOperand(0, materialize(c, *one));
  }
  for (int64_t i = 0; i < nCarried + nScan; ++i)
    if (c.outputUsed(i)) bindName(c.g, c.node.output(int(i)), Bound{loop->getResult(i), {}});
  return success();
}

LogicalResult importLoop(NodeContext &c) {
  const auto &body = c.attrs.get("body")->g();
  int64_t nCarried = int64_t(c.numInputs()) - 2;
  if (nCarried < 0) return c.fail("Loop needs the inputs M and cond (either may be empty)");
  int64_t nScan = body.output_size() - 1 - nCarried;
  if (body.input_size() != 2 + nCarried || nScan < 0)
    return c.fail("the body must have 2 + " + std::to_string(nCarried) + " inputs and at least 1 + " +
                  std::to_string(nCarried) + " outputs");
  std::optional<int64_t> tripCount;
  bool runTime = false;
  if (c.hasInput(0)) {
    auto m = lookup(c.g, c.node.input(0));
    if (!m) return c.fail("the trip count M is not defined");
    if (!(tripCount = constantInt(*m))) runTime = true;
  }
  bool cond = true;
  if (c.hasInput(1)) {
    auto k = lookup(c.g, c.node.input(1));
    std::optional<int64_t> v = k ? constantInt(*k) : std::nullopt;
    if (!v) runTime = true;
    else cond = *v;
  }
  if (runTime) return importLoopInPlan(c, body, nCarried, nScan);
  if (!tripCount && !c.hasInput(1))
    return c.fail("Loop without M and without cond never ends");
  if (tripCount && *tripCount > c.g.maxLoopIterations)
    return c.fail("trip count " + std::to_string(*tripCount) + " exceeds the unrolling limit of " +
                  std::to_string(c.g.maxLoopIterations));

  SmallVector<Bound> carried;
  for (int64_t i = 0; i < nCarried; ++i) {
    auto v = lookup(c.g, c.node.input(int(2 + i)));
    if (!v) return c.fail("loop-carried input " + std::to_string(i) + " is not defined");
    carried.push_back(*v);
  }
  std::vector<SmallVector<Bound>> scans(nScan);
  for (int64_t it = 0; cond && (!tripCount || it < *tripCount); ++it) {
    if (it >= c.g.maxLoopIterations)
      return c.fail("the loop runs more than " + std::to_string(c.g.maxLoopIterations) + " iterations (unrolling limit)");
    SmallVector<Bound> ins = {scalarI64(c, it), scalarBool(c, cond)};
    ins.append(carried.begin(), carried.end());
    std::string where = "iteration " + std::to_string(it);
    auto outs = importSubgraph(c, body, ins, where);
    if (failed(outs)) return failure();
    if (c.hasInput(1)) {
      // With no cond input the body's condition output is ignored.
      auto k = constantInt((*outs)[0]);
      if (!k)
        return c.fail(where + ": the loop condition computed by the body is known only at run time; Loop is "
                      "unrolled at import, so it must fold to a constant");
      cond = *k;
    }
    for (int64_t i = 0; i < nCarried; ++i) carried[i] = (*outs)[1 + i];
    for (int64_t k = 0; k < nScan; ++k) scans[k].push_back((*outs)[1 + nCarried + k]);
  }
  for (int64_t i = 0; i < nCarried; ++i)
    if (c.outputUsed(i)) bindName(c.g, c.node.output(int(i)), carried[i]);
  for (int64_t k = 0; k < nScan; ++k) {
    if (!c.outputUsed(nCarried + k)) continue;
    auto s = stack(c, scans[k], 0, false, "scan output " + std::to_string(k));
    if (failed(s)) return failure();
    bindName(c.g, c.node.output(int(nCarried + k)), *s);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

/// The unrolled scan loop: `length` iterations of `body` over the states and
/// the slices of `xs` along `axes` (last slice first where `dirs` is set).
/// Returns the final states followed by one list of pieces per scan output.
FailureOr<std::pair<SmallVector<Bound>, std::vector<SmallVector<Bound>>>>
unrollScan(NodeContext &c, const onnx::GraphProto &body, SmallVector<Bound> states, ArrayRef<Bound> xs,
           ArrayRef<int64_t> axes, ArrayRef<int64_t> dirs, int64_t length, int64_t k, const std::string &where) {
  std::vector<SmallVector<Bound>> scans(k);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Bound> ins(states.begin(), states.end());
    for (size_t j = 0; j < xs.size(); ++j) {
      int64_t idx = dirs[j] ? length - 1 - t : t;
      auto slice = runNode(c, "Gather", {xs[j], scalarI64(c, idx)},
                           [&](onnx::NodeProto &n) { addIntAttr(n, "axis", axes[j]); });
      if (failed(slice)) return failure();
      ins.push_back(*slice);
    }
    auto outs = importSubgraph(c, body, ins, where + "iteration " + std::to_string(t));
    if (failed(outs)) return failure();
    for (size_t i = 0; i < states.size(); ++i) states[i] = (*outs)[i];
    for (int64_t j = 0; j < k; ++j) scans[j].push_back((*outs)[states.size() + j]);
  }
  return std::make_pair(states, scans);
}

/// The common static length of the scan inputs along `axes` (normalized in place).
FailureOr<int64_t> scanLength(NodeContext &c, ArrayRef<Bound> xs, std::vector<int64_t> &axes) {
  int64_t length = -1;
  for (size_t j = 0; j < xs.size(); ++j) {
    auto t = llvm::dyn_cast<RankedTensorType>(xs[j].type());
    if (!t) return c.fail("scan input " + std::to_string(j) + " must be a ranked tensor");
    int64_t r = t.getRank(), axis = axes[j];
    if (axis < -r || axis >= r) return c.fail("the scan axis of scan input " + std::to_string(j) + " is out of range");
    if (axis < 0) axis += r;
    axes[j] = axis;
    int64_t len = t.getDimSize(axis);
    if (ShapedType::isDynamic(len))
      return c.fail("scan input " + std::to_string(j) + " has a dynamic sequence length; Scan is unrolled at import "
                    "and needs a static one");
    if (length >= 0 && len != length) return c.fail("the scan inputs have different sequence lengths");
    length = len;
  }
  if (length > c.g.maxLoopIterations)
    return c.fail("sequence length " + std::to_string(length) + " exceeds the unrolling limit of " +
                  std::to_string(c.g.maxLoopIterations));
  return length;
}

/// Scan-9+ over a sequence length known only at run time: a v4f.loop whose
/// trip count is the first scan input's length along its axis; each
/// iteration gathers slice t (T - 1 - t for a reverse input) of every scan
/// input. Scan outputs come out stacked along axis 0 and are then reversed
/// (a reverse output direction) and moved to their output axis.
LogicalResult importScanInPlan(NodeContext &c, const onnx::GraphProto &body, ArrayRef<Bound> states,
                               ArrayRef<Bound> xs, std::vector<int64_t> axes, ArrayRef<int64_t> dirs,
                               ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirs) {
  for (size_t j = 0; j < xs.size(); ++j) {
    auto t = llvm::dyn_cast<RankedTensorType>(xs[j].type());
    if (!t) return c.fail("scan input " + std::to_string(j) + " must be a ranked tensor");
    int64_t r = t.getRank();
    if (axes[j] < -r || axes[j] >= r) return c.fail("the scan axis of scan input " + std::to_string(j) + " is out of range");
    if (axes[j] < 0) axes[j] += r;
  }
  // T: the first scan input's length (the others must agree at run time:
  // a shorter one fails its Gather's index check).
  auto shape = runNode(c, "Shape", {xs[0]});
  if (failed(shape)) return failure();
  auto length = runNode(c, "Gather", {*shape, scalarI64(c, axes[0])}, [&](onnx::NodeProto &n) { addIntAttr(n, "axis", 0); });
  if (failed(length)) return failure();
  Value trip = materialize(c, *length);
  SmallVector<Value> inits;
  for (const Bound &b : states) inits.push_back(materialize(c, b));
  size_t nState = states.size();
  auto last = runNode(c, "Sub", {Bound{trip, {}}, scalarI64(c, 1)}); // T - 1, for reverse inputs
  if (failed(last)) return failure();
  auto importBody = [&](Value iter, ArrayRef<Value> carried,
                        SmallVectorImpl<Type> &scanTypes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Bound> ins;
    for (Value v : carried) ins.push_back(Bound{v, {}});
    for (size_t j = 0; j < xs.size(); ++j) {
      Bound index{iter, {}};
      if (dirs[j]) {
        auto rev = runNode(c, "Sub", {*last, index});
        if (failed(rev)) return failure();
        index = *rev;
      }
      auto slice = runNode(c, "Gather", {xs[j], index}, [&](onnx::NodeProto &n) { addIntAttr(n, "axis", axes[j]); });
      if (failed(slice)) return failure();
      ins.push_back(*slice);
    }
    auto outs = importSubgraph(c, body, ins, "body");
    if (failed(outs)) return failure();
    return yieldBodyOutputs(c, body, *outs, 0, nState, scanTypes);
  };
  auto loop = buildPlanLoop(c, trip, inits, importBody);
  if (failed(loop)) return failure();
  for (size_t i = 0; i < nState; ++i)
    if (c.outputUsed(i)) bindName(c.g, c.node.output(int(i)), Bound{loop->getResult(i), {}});
  for (size_t j = 0; j + nState < loop->getNumResults(); ++j) {
    if (!c.outputUsed(nState + j)) continue;
    Bound out{loop->getResult(nState + j), {}};
    int64_t rank = llvm::cast<RankedTensorType>(out.type()).getRank();
    if (outDirs[j]) {
      auto i64s = [&](int64_t v) {
        return Bound{{}, DenseElementsAttr::get(RankedTensorType::get({1}, c.b.getI64Type()), ArrayRef<int64_t>{v})};
      };
      auto rev = runNode(c, "Slice", {out, i64s(-1), i64s(INT64_MIN), i64s(0), i64s(-1)});
      if (failed(rev)) return failure();
      out = *rev;
    }
    int64_t axis = outAxes[j] < 0 ? outAxes[j] + rank : outAxes[j];
    if (axis < 0 || axis >= rank) return c.fail("scan_output_axes entry " + std::to_string(j) + " is out of range");
    if (axis != 0) {
      // Axis 0 moves to `axis`.
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = axis + 1; d < rank; ++d) perm.push_back(d);
      auto moved = runNode(c, "Transpose", {out}, [&](onnx::NodeProto &n) {
        auto *a = n.add_attribute();
        a->set_name("perm");
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t p : perm) a->add_ints(p);
      });
      if (failed(moved)) return failure();
      out = *moved;
    }
    bindName(c.g, c.node.output(int(nState + j)), out);
  }
  return success();
}

/// Scan-8: an optional sequence_lens input, then states and scan inputs that
/// all carry a leading batch axis (the sequence axis is 1). Each batch entry
/// is unrolled on its own and the results are stacked along axis 0.
LogicalResult importScan8(NodeContext &c, const onnx::GraphProto &body, int64_t m) {
  int64_t nState = int64_t(c.numInputs()) - 1 - m;
  if (m <= 0 || nState < 0) return c.fail("num_scan_inputs must be in [1, number of inputs - 1]");
  int64_t k = body.output_size() - nState;
  if (body.input_size() != nState + m || k < 0)
    return c.fail("the body must have " + std::to_string(nState + m) + " inputs and at least " +
                  std::to_string(nState) + " outputs");
  auto dirs = c.attrs.getInts("directions", std::vector<int64_t>(m, 0));
  if (int64_t(dirs.size()) != m) return c.fail("directions needs num_scan_inputs entries");
  SmallVector<Bound> states, xs;
  for (int64_t i = 0; i < nState + m; ++i) {
    if (!c.hasInput(1 + i)) return c.fail("input " + std::to_string(1 + i) + " is empty");
    auto v = lookup(c.g, c.node.input(int(1 + i)));
    if (!v) return c.fail("input " + std::to_string(1 + i) + " is not defined");
    auto t = llvm::dyn_cast<RankedTensorType>(v->type());
    if (!t || t.getRank() < (i < nState ? 1 : 2) || t.isDynamicDim(0))
      return c.fail("input " + std::to_string(1 + i) + " needs a static batch axis" +
                    (i < nState ? "" : " and a sequence axis"));
    (i < nState ? states : xs).push_back(*v);
  }
  std::vector<int64_t> seqAxes(m, 1);
  auto length = scanLength(c, xs, seqAxes);
  if (failed(length)) return failure();
  int64_t batch = llvm::cast<RankedTensorType>((m ? xs[0] : states[0]).type()).getDimSize(0);
  for (const auto *list : {&states, &xs})
    for (const Bound &v : *list)
      if (llvm::cast<RankedTensorType>(v.type()).getDimSize(0) != batch)
        return c.fail("the inputs have different batch sizes");
  if (c.hasInput(0)) {
    auto lens = lookup(c.g, c.node.input(0));
    if (!lens || !lens->cst || !lens->cst.getElementType().isInteger())
      return c.fail("sequence_lens is known only at run time; Scan is unrolled at import and needs every sequence "
                    "at its full length");
    for (const APInt &v : lens->cst.getValues<APInt>())
      if (v.getSExtValue() != *length) return c.fail("sequence_lens shorter than the sequence axis is not supported");
  }
  std::vector<int64_t> axes(m, 0);
  std::vector<SmallVector<Bound>> stateOuts(nState), scanOuts(k);
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Bound> bStates, bXs;
    for (const auto &[list, out] : {std::pair{&states, &bStates}, std::pair{&xs, &bXs}})
      for (const Bound &v : *list) {
        auto s = runNode(c, "Gather", {v, scalarI64(c, b)}, [](onnx::NodeProto &n) { addIntAttr(n, "axis", 0); });
        if (failed(s)) return failure();
        out->push_back(*s);
      }
    auto r = unrollScan(c, body, bStates, bXs, axes, dirs, *length, k, "batch " + std::to_string(b) + ", ");
    if (failed(r)) return failure();
    for (int64_t i = 0; i < nState; ++i) stateOuts[i].push_back(r->first[i]);
    for (int64_t j = 0; j < k; ++j) {
      auto s = stack(c, r->second[j], 0, false, "scan output " + std::to_string(j));
      if (failed(s)) return failure();
      scanOuts[j].push_back(*s);
    }
  }
  for (int64_t i = 0; i < nState + k; ++i) {
    if (!c.outputUsed(i)) continue;
    auto s = stack(c, i < nState ? stateOuts[i] : scanOuts[i - nState], 0, false, "output " + std::to_string(i));
    if (failed(s)) return failure();
    bindName(c.g, c.node.output(int(i)), *s);
  }
  return success();
}

LogicalResult importScan(NodeContext &c) {
  const auto &body = c.attrs.get("body")->g();
  int64_t m = c.attrs.getInt("num_scan_inputs", 0);
  if (c.opset < 9) return importScan8(c, body, m);
  int64_t nState = int64_t(c.numInputs()) - m;
  if (m <= 0 || nState < 0) return c.fail("num_scan_inputs must be in [1, number of inputs]");
  int64_t k = body.output_size() - nState;
  if (body.input_size() != nState + m || k < 0)
    return c.fail("the body must have " + std::to_string(nState + m) + " inputs and at least " +
                  std::to_string(nState) + " outputs");
  auto inAxes = c.attrs.getInts("scan_input_axes", std::vector<int64_t>(m, 0));
  auto inDirs = c.attrs.getInts("scan_input_directions", std::vector<int64_t>(m, 0));
  auto outAxes = c.attrs.getInts("scan_output_axes", std::vector<int64_t>(k, 0));
  auto outDirs = c.attrs.getInts("scan_output_directions", std::vector<int64_t>(k, 0));
  if (int64_t(inAxes.size()) != m || int64_t(inDirs.size()) != m || int64_t(outAxes.size()) != k ||
      int64_t(outDirs.size()) != k)
    return c.fail("scan_input_axes/directions need num_scan_inputs entries and scan_output_axes/directions one per "
                  "scan output");

  SmallVector<Bound> states, xs;
  for (int64_t i = 0; i < nState + m; ++i) {
    if (!c.hasInput(i)) return c.fail("input " + std::to_string(i) + " is empty");
    auto v = lookup(c.g, c.node.input(int(i)));
    if (!v) return c.fail("input " + std::to_string(i) + " is not defined");
    (i < nState ? states : xs).push_back(*v);
  }
  bool dynamicLength = false;
  for (size_t j = 0; j < xs.size(); ++j)
    if (auto t = llvm::dyn_cast<RankedTensorType>(xs[j].type())) {
      int64_t axis = inAxes[j] < 0 ? inAxes[j] + t.getRank() : inAxes[j];
      if (axis >= 0 && axis < t.getRank() && t.isDynamicDim(axis)) dynamicLength = true;
    }
  if (dynamicLength) return importScanInPlan(c, body, states, xs, inAxes, inDirs, outAxes, outDirs);
  auto length = scanLength(c, xs, inAxes);
  if (failed(length)) return failure();
  auto r = unrollScan(c, body, states, xs, inAxes, inDirs, *length, k, "");
  if (failed(r)) return failure();
  for (int64_t i = 0; i < nState; ++i)
    if (c.outputUsed(i)) bindName(c.g, c.node.output(int(i)), r->first[i]);
  for (int64_t j = 0; j < k; ++j) {
    if (!c.outputUsed(nState + j)) continue;
    auto s = stack(c, r->second[j], outAxes[j], outDirs[j] != 0, "scan output " + std::to_string(j));
    if (failed(s)) return failure();
    bindName(c.g, c.node.output(int(nState + j)), *s);
  }
  return success();
}

} // namespace

void addControlFlowImporters(std::unordered_map<std::string, OpImporter> &table) {
  table["If"] = {1, kMaxOpset,
                 [](const NodeAttrs &a, int64_t opset) { return checkGraphAttrs(a, opset, {"then_branch", "else_branch"}); },
                 importIf};
  table["Loop"] = {1, kMaxOpset,
                   [](const NodeAttrs &a, int64_t opset) { return checkGraphAttrs(a, opset, {"body"}); }, importLoop};
  table["Scan"] = {8, kMaxOpset,
                   [](const NodeAttrs &a, int64_t opset) -> std::string {
                     if (!a.has("num_scan_inputs")) return "attribute 'num_scan_inputs' is required";
                     return checkGraphAttrs(a, opset, {"body"});
                   },
                   importScan};
}

} // namespace v4f
