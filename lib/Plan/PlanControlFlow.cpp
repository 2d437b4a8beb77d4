//===- PlanControlFlow.cpp - run-time If and Loop in the plan -------------===//
//
// PlanBuilder's control flow: a v4f.select_branch (an If whose condition is
// known only at run time) runs only the taken side, through guard registers
// on the dispatches each side needs; a v4f.loop runs its body's dispatches
// trip-count times (a PlanLoop).
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/PlanBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace v4f {

void PlanBuilder::noteCond(Value v) {
  if (!condValues.contains(v) || conds.count(v)) return;
  const TensorInfo t = info(v);
  Reg value;
  if (t.values && !t.values->empty()) {
    value = (*t.values)[0];
  } else {
    uint32_t buf = ctx.newTransient(sp().constant(8));
    Operation *def = v.getDefiningOp();
    if (auto region = dyn_cast_or_null<DispatchOp>(def)) def = region.getRoot();
    std::string name = def ? dispatchName(def) : std::string("input");
    host.emitScalarToI64(t, buf, name + " as If condition");
    value = sp().dataValue(buf, 0, sp().constant(1));
  }
  Reg notTaken = sp().eq(value, sp().constant(0));
  conds[v] = Cond{sp().eq(notTaken, sp().constant(0)), notTaken, uint32_t(ctx.plan.dispatches.size())};
}

LogicalResult PlanBuilder::emitSelectBranch(SelectBranchOp op) {
  auto it = conds.find(op.getCond());
  if (it == conds.end()) return op.emitOpError("its condition has no plan register (internal error)");
  const Cond c = it->second;
  const TensorInfo a = info(op.getThenValue()), b = info(op.getElseValue());
  auto type = llvm::cast<RankedTensorType>(op.getType());
  TensorInfo r;
  r.elementType = type.getElementType();
  for (int64_t d = 0; d < type.getRank(); ++d)
    r.dims.push_back(type.isDynamicDim(d) ? sp().select(c.taken, a.dims[d], b.dims[d])
                                          : sp().constant(type.getDimSize(d)));
  if (a.values && b.values && a.values->size() == b.values->size()) {
    r.values.emplace();
    for (size_t k = 0; k < a.values->size(); ++k)
      r.values->push_back(sp().select(c.taken, (*a.values)[k], (*b.values)[k]));
  }
  r.buffer = ctx.newTransient(sp().max(bytesOf(a), bytesOf(b)));
  infos[op.getResult()] = r;
  std::string name = dispatchName(op);
  uint32_t thenIndex = ctx.plan.dispatches.size();
  TensorInfo dst = a;
  dst.buffer = r.buffer;
  host.emitCopy(a, dst, name + " then");
  uint32_t elseIndex = ctx.plan.dispatches.size();
  dst = b;
  dst.buffer = r.buffer;
  host.emitCopy(b, dst, name + " else");
  if (ctx.plan.dispatches.size() != elseIndex + 1 || elseIndex != thenIndex + 1)
    return op.emitOpError("expected one copy dispatch per side (internal error)");
  branchCopies[op] = {thenIndex, elseIndex};
  return success();
}

std::optional<PlanBuilder::Guard> PlanBuilder::andGuard(std::optional<Guard> g, Reg term, uint32_t readyAt) {
  if (!g) return Guard{term, readyAt};
  return Guard{sp().mul(g->reg, term), std::max(g->readyAt, readyAt)};
}

LogicalResult PlanBuilder::assignGuards(Block &body,
                                        const DenseMap<Operation *, std::pair<uint32_t, uint32_t>> &ranges) {
  if (branchCopies.empty()) return success();
  DenseMap<Operation *, std::optional<Guard>> need;
  auto guardOf = [&](Operation *op) -> std::optional<Guard> {
    auto it = need.find(op);
    return it == need.end() ? std::nullopt : it->second;
  };
  for (Operation &op : llvm::reverse(body)) {
    if (isa<func::ReturnOp, LoopYieldOp>(op)) continue;
    std::optional<Guard> g;
    bool always = false, used = false;
    for (Value r : op.getResults())
      for (OpOperand &use : r.getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        if (!user || isa<func::ReturnOp, LoopYieldOp>(user)) {
          always = true;
          continue;
        }
        std::optional<Guard> ug = guardOf(user);
        auto sel = dyn_cast<SelectBranchOp>(user);
        // A side that cannot run has the other side's value as placeholder:
        // needed whichever side is taken, so no condition applies.
        bool bothSides = sel && sel.getThenValue() == sel.getElseValue();
        if (sel && use.getOwner() == user && use.getOperandNumber() > 0 && !bothSides) {
          const Cond &c = conds[sel.getCond()];
          ug = andGuard(ug, use.getOperandNumber() == 1 ? c.taken : c.notTaken, c.readyAt);
        }
        if (!ug)
          always = true;
        else if (!used)
          g = ug;
        else
          g = Guard{sp().max(g->reg, ug->reg), std::max(g->readyAt, ug->readyAt)};
        used = true;
      }
    if (!always && used) need[&op] = g;
  }
  for (auto [op, range] : ranges) {
    std::optional<Guard> g = guardOf(op);
    if (auto it = branchCopies.find(op); it != branchCopies.end()) {
      const Cond &c = conds[cast<SelectBranchOp>(op).getCond()];
      auto sel = cast<SelectBranchOp>(op);
      auto [thenIndex, elseIndex] = it->second;
      for (auto [index, term, error] : {std::tuple{thenIndex, c.taken, sel.getThenError()},
                                        std::tuple{elseIndex, c.notTaken, sel.getElseError()}}) {
        if (error) {
          // A side that cannot run: the run is refused when the condition
          // selects it where the value is needed (under the enclosing guard);
          // the Expect, 0 whenever it passes, guards the placeholder's copy.
          Reg when = g ? sp().mul(g->reg, term) : term;
          ctx.plan.dispatches[index].guard = sp().expect(when, sp().constant(0), error->str());
          continue;
        }
        // An enclosing condition known only later (an If specialized into
        // a branch of another) does not guard the copy: it runs under its
        // own condition only, which costs a copy at most.
        std::optional<Guard> side = andGuard(g && g->readyAt <= index ? g : std::nullopt, term, c.readyAt);
        if (side->readyAt > index)
          return op->emitOpError("its condition is computed after the branch copies (internal error)");
        ctx.plan.dispatches[index].guard = side->reg;
      }
      continue;
    }
    if (!g) continue;
    // A dispatch before its condition is known runs unguarded (only a cost).
    // One the kernel emitter guarded already (a conv planned two ways for
    // a run-time size) runs when both hold.
    for (uint32_t d = range.first; d < range.second; ++d) {
      if (d < g->readyAt) continue;
      std::optional<Reg> &guard = ctx.plan.dispatches[d].guard;
      guard = guard ? sp().mul(*guard, g->reg) : g->reg;
    }
  }
  return success();
}

bool PlanBuilder::variesInLoop(Reg r, uint32_t firstDispatch) {
  const auto &instrs = sp().instructions();
  std::vector<Reg> work = {r};
  DenseSet<Reg> seen;
  while (!work.empty()) {
    Reg x = work.back();
    work.pop_back();
    if (!seen.insert(x).second) continue;
    const ShapeInstruction &i = instrs[x];
    switch (i.op) {
    case ShapeOpKind::LoopIndex: return true;
    case ShapeOpKind::Const:
    case ShapeOpKind::InputDim:
    case ShapeOpKind::InputValue: break;
    case ShapeOpKind::DataValue:
      if (producedAtOrAfter(i.a, firstDispatch)) return true;
      work.push_back(Reg(i.imm));
      break;
    case ShapeOpKind::InputScaledDim: work.push_back(Reg(i.imm)); break;
    default:
      work.push_back(i.a);
      work.push_back(i.b);
      if (i.op == ShapeOpKind::Select) work.push_back(Reg(i.imm));
    }
  }
  return false;
}

bool PlanBuilder::producedAtOrAfter(uint32_t buffer, uint32_t d) {
  for (uint32_t k = 0; k < ctx.plan.dispatches.size(); ++k)
    for (uint32_t b : ctx.plan.dispatches[k].bindings)
      if (b == buffer) return k >= d;
  return true;
}

LogicalResult PlanBuilder::emitLoop(LoopOp op) {
  if (inLoop) return op.emitOpError("inside another run-time loop is not supported yet (loops do not nest)");
  std::string name = dispatchName(op);
  auto &plan = ctx.plan;
  // The trip count: followed by the plan, or read back from its buffer
  // (bounded by max_iterations, which sizes the scan outputs then).
  const TensorInfo trip = info(op.getTripCount());
  Reg tripReg;
  if (trip.values && !trip.values->empty()) {
    tripReg = (*trip.values)[0];
  } else {
    uint32_t buf = ctx.newTransient(sp().constant(8));
    // Clamped to max + 1: the plan refuses a count above the bound
    // before the loop runs (the scan outputs are sized for max + 1).
    host.emitScalarToI64(trip, buf, name + " trip count", op.getMaxIterations() + 1);
    tripReg = sp().dataValue(buf, 0, sp().constant(op.getMaxIterations() + 1));
  }
  tripReg = sp().max(tripReg, sp().constant(0));
  Block &body = op.getBody().front();
  auto yield = cast<LoopYieldOp>(body.getTerminator());
  size_t n = op.getInits().size();
  // With a condition the body computes, it is yielded first.
  ValueRange yielded = yield.getValues();
  if (op.getBodyCondition()) yielded = yielded.drop_front();
  // Carried values live in buffers of their own, filled from the inits.
  SmallVector<TensorInfo> carry;
  for (auto [j, init] : llvm::enumerate(op.getInits())) {
    TensorInfo src = info(init);
    TensorInfo c = src;
    c.values.reset(); // they change from iteration to iteration
    c.buffer = ctx.newTransient(bytesOf(src));
    host.emitCopy(src, c, name + " carried " + std::to_string(j) + " init");
    carry.push_back(c);
    infos[body.getArgument(1 + j)] = c;
  }
  uint32_t loopId = plan.loops.size();
  uint32_t begin = plan.dispatches.size();
  Reg index = sp().loopIndex(loopId);
  {
    TensorInfo iter;
    iter.elementType = IntegerType::get(op.getContext(), 64);
    iter.values = std::vector<Reg>{index};
    iter.buffer = ctx.newTransient(sp().constant(8));
    host.emitWriteRegister(index, iter.buffer, name + " iteration");
    infos[body.getArgument(0)] = iter;
  }
  inLoop = ctx.inRunTimeLoop = true;
  for (Operation &inner : body.without_terminator())
    if (failed(emitBlockOp(inner))) return failure();
  inLoop = ctx.inRunTimeLoop = false;
  // Scan outputs: slice i of iteration i; their shape must not change.
  SmallVector<TensorInfo> scans;
  // Their length: the trip count, or the iterations run when the body's
  // condition can end the loop early (final once the loop ended).
  Reg length = op.getBodyCondition() ? sp().loopCount(loopId, tripReg) : tripReg;
  for (size_t k = n; k < yielded.size(); ++k) {
    TensorInfo s = info(yielded[k]);
    // The slice dims: static from the result type, else the value's
    // (which must then be the same in every iteration).
    auto resultType = llvm::cast<RankedTensorType>(op.getResult(k).getType());
    std::vector<Reg> slice;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (!resultType.isDynamicDim(d + 1)) {
        slice.push_back(sp().constant(resultType.getDimSize(d + 1)));
        continue;
      }
      if (variesInLoop(s.dims[d], begin))
        return op.emitOpError("scan output ")
               << k - n << " dim " << d << " may change from iteration to iteration (not supported)";
      slice.push_back(s.dims[d]);
    }
    host.emitDimsCheck(s.dims, slice, name + " scan " + std::to_string(k - n) + " shape check");
    TensorInfo out;
    out.elementType = s.elementType;
    out.dims = {length};
    out.dims.insert(out.dims.end(), slice.begin(), slice.end());
    TensorInfo planned = out; // sized for the trip count (the bound of the length)
    planned.dims[0] = tripReg;
    out.buffer = ctx.newTransient(bytesOf(planned));
    host.emitCopyAt(s, out.buffer, sp().mul(index, ctx.numel(s)), name + " scan " + std::to_string(k - n));
    scans.push_back(out);
  }
  // The next carried values: checked against the carried shapes; staged
  // through temporaries when one reads another's buffer (a swap).
  SmallVector<TensorInfo> next;
  bool stage = false;
  for (size_t j = 0; j < n; ++j) {
    Value v = yielded[j];
    next.push_back(info(v));
    if (v == body.getArgument(1 + j)) continue;
    for (size_t k = 0; k < n; ++k)
      if (k != j && next.back().buffer == carry[k].buffer) stage = true;
  }
  for (size_t j = 0; j < n; ++j) {
    if (yielded[j] == body.getArgument(1 + j)) continue;
    host.emitDimsCheck(next[j].dims, carry[j].dims, name + " carried " + std::to_string(j) + " shape check");
    if (stage) {
      TensorInfo tmp = next[j];
      tmp.buffer = ctx.newTransient(bytesOf(carry[j]));
      host.emitCopy(next[j], tmp, name + " carried " + std::to_string(j) + " stage");
      next[j] = tmp;
    }
  }
  for (size_t j = 0; j < n; ++j) {
    if (yielded[j] == body.getArgument(1 + j) || next[j].buffer == carry[j].buffer) continue;
    host.emitCopy(next[j], carry[j], name + " carried " + std::to_string(j));
  }
  std::optional<Reg> cond;
  if (op.getBodyCondition()) {
    // Read back after the iteration's last dispatch: 0 ends the loop.
    const TensorInfo c = info(yield.getValues()[0]);
    if (c.values && !c.values->empty()) {
      cond = (*c.values)[0];
    } else {
      uint32_t buf = ctx.newTransient(sp().constant(8));
      host.emitScalarToI64(c, buf, name + " condition");
      cond = sp().dataValue(buf, 0, sp().constant(1));
    }
  }
  uint32_t end = plan.dispatches.size();
  PlanLoop loop;
  loop.cond = cond;
  loop.begin = begin;
  loop.end = end;
  loop.tripCount = tripReg;
  loop.maxIterations = op.getMaxIterations();
  loop.unbounded = op.getUnbounded();
  if (loop.unbounded && !cond) return op.emitOpError("is unbounded but its body computes no condition");
  loop.name = name;
  plan.loops.push_back(loop);
  for (size_t j = 0; j < n; ++j) infos[op.getResult(j)] = carry[j];
  for (size_t k = 0; k < scans.size(); ++k) infos[op.getResult(n + k)] = scans[k];
  return success();
}
} // namespace v4f
