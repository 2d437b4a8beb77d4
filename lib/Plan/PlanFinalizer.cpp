//===- PlanFinalizer.cpp - liveness and shape-program compaction ----------===//
//
// Target-independent steps run on a complete plan before it is serialized:
// transient-buffer lifetimes from the dispatch order, and dropping the
// shape-program registers no part of the plan reads.
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/ExecutablePlan.h"

#include <algorithm>

namespace v4f {

void computeBufferLifetimes(ExecutablePlan &plan) {
  std::vector<bool> seen(plan.buffers.size(), false);
  for (size_t d = 0; d < plan.dispatches.size(); ++d)
    for (uint32_t b : plan.dispatches[d].bindings) {
      PlanBuffer &buf = plan.buffers[b];
      if (!seen[b]) buf.firstUse = d;
      buf.lastUse = d;
      seen[b] = true;
    }
  // A buffer written before a loop and read inside it is read again by every
  // iteration: it lives to the loop's end (no buffer placed later in the
  // body may reuse its bytes). Buffers first written inside the body are
  // rewritten before they are read in each iteration, and the loop-carried
  // buffers are written before the loop, so their intervals span it.
  for (const PlanLoop &loop : plan.loops)
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      PlanBuffer &buf = plan.buffers[b];
      if (!seen[b]) continue;
      if (buf.firstUse < loop.begin && buf.lastUse >= loop.begin)
        buf.lastUse = std::max<uint32_t>(buf.lastUse, loop.end - 1);
      // Written inside and read after the loop (a scan output, filled one
      // slice per iteration): it lives from the loop's first dispatch.
      if (buf.firstUse >= loop.begin && buf.firstUse < loop.end && buf.lastUse >= loop.end)
        buf.firstUse = loop.begin;
    }
}

namespace {

bool readsInputOnly(ShapeOpKind op) {
  return op == ShapeOpKind::Const || op == ShapeOpKind::InputDim || op == ShapeOpKind::InputValue ||
         op == ShapeOpKind::LoopIndex;
}
/// InputScaledDim, DataValue and LoopCount keep their one register operand in imm.
bool immIsRegister(ShapeOpKind op) {
  return op == ShapeOpKind::InputScaledDim || op == ShapeOpKind::DataValue || op == ShapeOpKind::LoopCount;
}

/// Every register a plan field refers to, through `visit(Reg&)`.
template <typename Fn> void forEachPlanRegister(ExecutablePlan &plan, Fn visit) {
  for (auto *sigs : {&plan.inputs, &plan.outputs})
    for (auto &sig : *sigs)
      for (Reg &r : sig.dimRegs) visit(r);
  for (auto &b : plan.buffers) visit(b.sizeReg);
  for (auto &d : plan.dispatches) {
    for (Reg &r : d.pushConstants) visit(r);
    for (Reg &r : d.workgroupCount) visit(r);
    visit(d.scratchSize);
    if (d.guard) visit(*d.guard);
    if (d.flops) visit(*d.flops);
  }
  for (auto &l : plan.loops) {
    visit(l.tripCount);
    if (l.cond) visit(*l.cond);
  }
}

} // namespace

void compactShapeProgram(ExecutablePlan &plan) {
  std::vector<ShapeInstruction> &instrs = plan.shapeProgram;
  std::vector<bool> used(instrs.size(), false);
  std::vector<Reg> work;
  forEachPlanRegister(plan, [&](Reg &r) { work.push_back(r); });
  while (!work.empty()) {
    Reg r = work.back();
    work.pop_back();
    if (used[r]) continue;
    used[r] = true;
    const ShapeInstruction &i = instrs[r];
    if (readsInputOnly(i.op)) continue;
    if (immIsRegister(i.op)) {
      work.push_back(Reg(i.imm));
      continue;
    }
    work.push_back(i.a);
    work.push_back(i.b);
    if (i.op == ShapeOpKind::Select) work.push_back(Reg(i.imm));
  }
  std::vector<Reg> remap(instrs.size(), ~0u);
  std::vector<ShapeInstruction> kept;
  for (Reg r = 0; r < instrs.size(); ++r) {
    if (!used[r]) continue;
    ShapeInstruction i = instrs[r];
    if (immIsRegister(i.op)) {
      i.imm = remap[Reg(i.imm)];
    } else if (!readsInputOnly(i.op)) {
      i.a = remap[i.a];
      i.b = remap[i.b];
      if (i.op == ShapeOpKind::Select) i.imm = remap[Reg(i.imm)];
    }
    remap[r] = kept.size();
    kept.push_back(i);
  }
  instrs = std::move(kept);
  forEachPlanRegister(plan, [&](Reg &r) { r = remap[r]; });
}

} // namespace v4f
