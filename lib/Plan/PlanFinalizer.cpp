//===- PlanFinalizer.cpp - liveness and shape-program compaction ----------===//
//
// Target-independent steps run on a complete plan before it is serialized:
// transient-buffer lifetimes from the dispatch order, dropping the
// shape-program registers no part of the plan reads, and the arena size of a
// fully static plan.
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/ExecutablePlan.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

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
      if (buf.firstUse >= loop.begin && buf.firstUse < loop.end && buf.lastUse >= loop.end) buf.firstUse = loop.begin;
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
template <typename Fn>
void forEachPlanRegister(ExecutablePlan &plan, Fn visit) {
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

void computeStaticArena(ExecutablePlan &plan) {
  struct Item {
    uint64_t size;
    uint32_t first, last, buffer;
    uint64_t offset = 0;
  };
  std::vector<Item> items;
  plan.staticArenaBytes = -1;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer &buf = plan.buffers[b];
    if (buf.kind != BufferKind::Transient) continue;
    if (buf.sizeReg >= plan.shapeProgram.size()) return;
    const ShapeInstruction &size = plan.shapeProgram[buf.sizeReg];
    if (size.op != ShapeOpKind::Const || size.imm < 0) return; // known only at run time
    items.push_back({uint64_t(size.imm), buf.firstUse, buf.lastUse, uint32_t(b)});
  }
  // The runtime's order and rule: bigger first (then earlier first use, then
  // buffer index); each at the lowest 64-aligned offset clear of the placed
  // buffers whose lifetimes overlap its own.
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const Item &a = items[x], &b = items[y];
    return std::tie(b.size, a.first, a.buffer) < std::tie(a.size, b.first, b.buffer);
  });
  auto align64 = [](uint64_t v) { return (v + 63) / 64 * 64; };
  uint64_t peak = 0;
  std::vector<const Item *> placed;
  for (size_t p : order) {
    Item &cur = items[p];
    if (cur.size == 0) continue;
    std::vector<const Item *> live;
    for (const Item *o : placed)
      if (!(o->last < cur.first || cur.last < o->first)) live.push_back(o);
    std::sort(live.begin(), live.end(), [](const Item *a, const Item *b) { return a->offset < b->offset; });
    uint64_t at = 0;
    for (const Item *o : live) {
      if (at + cur.size <= o->offset) break;
      at = std::max(at, align64(o->offset + o->size));
    }
    cur.offset = at;
    peak = std::max(peak, align64(at + cur.size));
    placed.push_back(&cur);
  }
  if (peak <= uint64_t(INT64_MAX)) plan.staticArenaBytes = int64_t(peak);
}

} // namespace v4f
