//===- LoopScanOps.cpp - ONNX Loop and Scan --------------------------------===//
//
// Loop is unrolled when its trip count M and its conditions fold to
// constants at import (scan outputs are stacked along a new axis 0); a trip
// count or initial condition known only at run time makes a v4f.loop
// (importLoopInPlan) whose body is imported once into its region and which
// the plan runs as a loop, up to --max-loop-iterations. Scan is unrolled over
// the static length of its scan inputs (Scan-8: per batch entry, with
// sequence_lens constant and full); Scan-9+ over a run-time length becomes a
// v4f.loop (importScanInPlan). The subgraph machinery they share with If is
// in ControlFlowOps.cpp (ControlFlow.h).
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "TensorImport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <cmath>
#include <unordered_map>

using namespace mlir;

namespace v4f {
namespace controlflow {

namespace {

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
/// time. Without M (a while loop, as tf2onnx writes them) the condition the
/// body computes alone ends the loop (v4f.loop unbounded): still running
/// after --max-loop-iterations iterations is a run-time error naming the loop.
/// The value of a one-element constant `name` as the body sees it (a
/// Constant node or an initializer of the body, or an outer constant).
std::optional<double> bodyConstant(NodeContext &c, const onnx::GraphProto &body, const std::string &name) {
  DenseElementsAttr attr;
  for (const auto &init : body.initializer())
    if (init.name() == name) {
      std::string err;
      attr = importTensor(c.g.ctx, init, c.g.modelDir, err);
    }
  for (const auto &n : body.node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
      for (const auto &a : n.attribute())
        if (a.name() == "value" && a.has_t()) {
          std::string err;
          attr = importTensor(c.g.ctx, a.t(), c.g.modelDir, err);
        }
  if (!attr)
    if (auto it = c.g.constants.find(name); it != c.g.constants.end()) attr = it->second;
  if (!attr || attr.getNumElements() != 1) return std::nullopt;
  Type et = attr.getElementType();
  if (llvm::isa<FloatType>(et)) return (*attr.getValues<APFloat>().begin()).convertToDouble();
  if (et.isInteger(1)) return std::nullopt;
  if (llvm::isa<IntegerType>(et)) return double((*attr.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

/// Carried value j of a Loop body as an induction variable: the body yields
/// it plus a constant integer step K (through casts, single-element shape
/// ops and additions of constants, as exporters write a counter: paddle2onnx
/// Squeeze(Add(Unsqueeze(Cast(Add(Cast(i), 1))), 0))). Its value in
/// iteration t is then init + K t, which the plan follows from the
/// iteration number (a slice bounded by a counter), where the carried
/// buffer it could not.
std::optional<int64_t> inductionStep(NodeContext &c, const onnx::GraphProto &body, int64_t j) {
  const std::string target = body.input(int(2 + j)).name();
  std::string name = body.output(int(1 + j)).name();
  std::unordered_map<std::string, const onnx::NodeProto *> producer;
  for (const auto &n : body.node())
    for (const auto &o : n.output()) producer[o] = &n;
  double offset = 0;
  for (int steps = 0; steps < 32; ++steps) {
    if (name == target) {
      if (offset != std::floor(offset) || std::fabs(offset) > double(1 << 20)) return std::nullopt;
      return int64_t(offset);
    }
    auto it = producer.find(name);
    if (it == producer.end()) return std::nullopt;
    const onnx::NodeProto &n = *it->second;
    const std::string &op = n.op_type();
    if (n.input_size() < 1) return std::nullopt;
    if (op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Reshape" || op == "Flatten" ||
        op == "Cast") {
      name = n.input(0);
    } else if ((op == "Add" || op == "Sub") && n.input_size() == 2) {
      auto k1 = bodyConstant(c, body, n.input(1));
      auto k0 = op == "Add" ? bodyConstant(c, body, n.input(0)) : std::nullopt;
      if (k1) {
        offset += op == "Add" ? *k1 : -*k1;
        name = n.input(0);
      } else if (k0) {
        offset += *k0;
        name = n.input(1);
      } else {
        return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

LogicalResult importLoopInPlan(NodeContext &c, const onnx::GraphProto &body, int64_t nCarried, int64_t nScan) {
  bool unbounded = !c.hasInput(0);
  Bound trip;
  if (!unbounded) {
    auto m = lookup(c.g, c.node.input(0));
    auto mt = llvm::dyn_cast<RankedTensorType>(m->type());
    if (!mt || !mt.getElementType().isInteger(64) || !mt.hasStaticShape() || mt.getNumElements() != 1)
      return c.fail("the trip count M must be a one-element int64 tensor");
    trip = *m;
    // A constant count beyond the bound with a condition input: a while
    // loop written with M = INT64_MAX.
    if (auto v = constantInt(*m); v && *v > c.g.maxLoopIterations && c.hasInput(1)) unbounded = true;
  }
  if (unbounded) trip = scalarI64(c, c.g.maxLoopIterations + 1);
  if (c.hasInput(1)) {
    auto k = lookup(c.g, c.node.input(1));
    auto kt = k ? llvm::dyn_cast<RankedTensorType>(k->type()) : RankedTensorType();
    if (!kt || !kt.hasStaticShape() || kt.getNumElements() != 1)
      return c.fail("the condition cond must be a one-element tensor");
    if (auto v = constantInt(*k)) {
      if (!*v) trip = scalarI64(c, 0);
    } else {
      auto zero = scalarI64(c, 0);
      auto flat = runNode(
          c, "Reshape",
          {trip, Bound{{}, DenseElementsAttr::get(RankedTensorType::get({0}, c.b.getI64Type()), ArrayRef<int64_t>{})}});
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
    auto flat =
        runNode(c, "Reshape",
                {Bound{tripV, {}},
                 Bound{{}, DenseElementsAttr::get(RankedTensorType::get({0}, c.b.getI64Type()), ArrayRef<int64_t>{})}});
    if (failed(flat)) return failure();
    tripV = materialize(c, *flat);
  }

  // Integer counters the body carries (one element, init + K t).
  SmallVector<std::optional<int64_t>> steps(nCarried);
  for (int64_t j = 0; j < nCarried; ++j) {
    auto t = llvm::dyn_cast<RankedTensorType>(inits[j].getType());
    if (t && t.hasStaticShape() && t.getNumElements() == 1 && t.getElementType().isSignlessInteger() &&
        t.getElementType().getIntOrFloatBitWidth() >= 32)
      steps[j] = inductionStep(c, body, j);
  }
  bool oneIteration = false, bodyCondition = false;
  auto importBody = [&](Value iter, ArrayRef<Value> carried,
                        SmallVectorImpl<Type> &scanTypes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Bound> ins = {Bound{iter, {}}, scalarBool(c, true)};
    for (auto [j, v] : llvm::enumerate(carried)) {
      if (!steps[j]) {
        ins.push_back(Bound{v, {}});
        continue;
      }
      auto t = llvm::cast<RankedTensorType>(inits[j].getType());
      auto iterAs = runNode(c, "Cast", {Bound{iter, {}}}, [&](onnx::NodeProto &n) {
        addIntAttr(n, "to", t.getElementType().isInteger(32) ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64);
      });
      if (failed(iterAs)) return failure();
      Bound k{{},
              DenseElementsAttr::get(RankedTensorType::get({}, t.getElementType()),
                                     APInt(t.getElementType().getIntOrFloatBitWidth(), uint64_t(*steps[j]), true))};
      auto kt = runNode(c, "Mul", {*iterAs, k});
      if (failed(kt)) return failure();
      auto value = runNode(c, "Add", {Bound{inits[j], {}}, *kt});
      if (failed(value)) return failure();
      auto shaped =
          runNode(c, "Reshape",
                  {*value, Bound{{},
                                 DenseElementsAttr::get(RankedTensorType::get({t.getRank()}, c.b.getI64Type()),
                                                        ArrayRef<int64_t>(t.getShape()))}});
      if (failed(shaped)) return failure();
      ins.push_back(*shaped);
    }
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
  if (unbounded) {
    if (!bodyCondition && !oneIteration) {
      loop->erase();
      return c.fail("a Loop without a trip count M whose body's condition is always true never ends");
    }
    // (A body that stops after its first iteration is a one-iteration loop.)
    if (bodyCondition) loop->setUnbounded(true);
  }
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

} // namespace

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
    if (!v)
      runTime = true;
    else
      cond = *v;
  }
  if (runTime) return importLoopInPlan(c, body, nCarried, nScan);
  if (!tripCount && !c.hasInput(1)) return c.fail("Loop without M and without cond never ends");
  // A count beyond the unrolling limit with a condition the body computes
  // (tf2onnx writes while loops with M = INT64_MAX): a loop in the plan.
  if (tripCount && *tripCount > c.g.maxLoopIterations && c.hasInput(1) && cond)
    return importLoopInPlan(c, body, nCarried, nScan);
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
      return c.fail("the loop runs more than " + std::to_string(c.g.maxLoopIterations) +
                    " iterations (unrolling limit)");
    SmallVector<Bound> ins = {scalarI64(c, it), scalarBool(c, cond)};
    ins.append(carried.begin(), carried.end());
    std::string where = "iteration " + std::to_string(it);
    auto outs = importSubgraph(c, body, ins, where);
    if (failed(outs)) return failure();
    if (c.hasInput(1)) {
      // With no cond input the body's condition output is ignored.
      auto k = constantInt((*outs)[0]);
      // A condition known only at run time: the loop runs in the plan
      // instead (what this iteration imported is dead and goes away).
      if (!k) return importLoopInPlan(c, body, nCarried, nScan);
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

namespace {

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
      auto slice =
          runNode(c, "Gather", {xs[j], scalarI64(c, idx)}, [&](onnx::NodeProto &n) { addIntAttr(n, "axis", axes[j]); });
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
      return c.fail("scan input " + std::to_string(j) +
                    " has a dynamic sequence length; Scan is unrolled at import "
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
LogicalResult importScanInPlan(NodeContext &c, const onnx::GraphProto &body, ArrayRef<Bound> states, ArrayRef<Bound> xs,
                               std::vector<int64_t> axes, ArrayRef<int64_t> dirs, ArrayRef<int64_t> outAxes,
                               ArrayRef<int64_t> outDirs) {
  for (size_t j = 0; j < xs.size(); ++j) {
    auto t = llvm::dyn_cast<RankedTensorType>(xs[j].type());
    if (!t) return c.fail("scan input " + std::to_string(j) + " must be a ranked tensor");
    int64_t r = t.getRank();
    if (axes[j] < -r || axes[j] >= r)
      return c.fail("the scan axis of scan input " + std::to_string(j) + " is out of range");
    if (axes[j] < 0) axes[j] += r;
  }
  // T: the first scan input's length (the others must agree at run time:
  // a shorter one fails its Gather's index check).
  auto shape = runNode(c, "Shape", {xs[0]});
  if (failed(shape)) return failure();
  auto length =
      runNode(c, "Gather", {*shape, scalarI64(c, axes[0])}, [&](onnx::NodeProto &n) { addIntAttr(n, "axis", 0); });
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

} // namespace

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

} // namespace controlflow
} // namespace v4f
