//===- Transfers.cpp - copies at the borders of CPU and GPU placement -----===//
//
// A plan whose dispatches run on two devices (the host CPU and a CUDA GPU)
// moves data between them only where a dispatch on one side reads what the
// other side wrote. This walks the dispatches in order, tracking on which
// side each buffer's current contents are valid, and inserts a transfer
// dispatch (no kernel: the runtime copies the buffer) wherever a dispatch
// needs a buffer its side does not hold.
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/ExecutablePlan.h"
#include "v4f/kernel_abi.h"

namespace v4f {

namespace {

constexpr uint8_t kHost = 1, kDevice = 2;

Reg constantRegister(ExecutablePlan &plan, int64_t value) {
  for (size_t r = 0; r < plan.shapeProgram.size(); ++r)
    if (plan.shapeProgram[r].op == ShapeOpKind::Const && plan.shapeProgram[r].imm == value) return Reg(r);
  ShapeInstruction c;
  c.op = ShapeOpKind::Const;
  c.imm = value;
  plan.shapeProgram.push_back(c);
  return Reg(plan.shapeProgram.size() - 1);
}

} // namespace

unsigned insertTransfers(ExecutablePlan &plan) {
  int cuda = -1;
  for (size_t e = 0; e < plan.executables.size(); ++e)
    if (plan.executables[e].target == ExecutableTarget::Cuda) cuda = int(e);
  if (cuda < 0) return 0;
  Reg one = constantRegister(plan, 1), zero = constantRegister(plan, 0);
  std::vector<uint8_t> valid(plan.buffers.size(), 0), written(plan.buffers.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].kind == BufferKind::Input) valid[b] = kHost;
    if (plan.buffers[b].kind == BufferKind::Constant) valid[b] = kHost | kDevice;
  }
  auto transfer = [&](uint32_t buffer, uint8_t to, const std::string &why) {
    PlanDispatch t;
    t.executable = uint32_t(cuda);
    t.entryPoint = 0;
    t.bindings = {buffer};
    t.workgroupCount = {one};
    t.scratchSize = zero;
    t.transfer = to == kDevice ? PlanDispatch::Transfer::ToDevice : PlanDispatch::Transfer::ToHost;
    t.name =
        std::string(to == kDevice ? "to device" : "to host") + " (buffer " + std::to_string(buffer) + ") for " + why;
    t.access = {V4F_BINDING_READ | V4F_BINDING_WRITE};
    return t;
  };
  std::vector<PlanDispatch> out;
  unsigned inserted = 0;
  for (PlanDispatch &d : plan.dispatches) {
    uint8_t side = plan.executables[d.executable].target == ExecutableTarget::Cuda ? kDevice : kHost;
    for (size_t j = 0; j < d.bindings.size(); ++j) {
      uint32_t b = d.bindings[j];
      uint32_t access = j < d.access.size() ? d.access[j] : (V4F_BINDING_READ | V4F_BINDING_WRITE);
      bool reads = access & V4F_BINDING_READ;
      // A write after the other side wrote may be partial: bring the rest over.
      bool partial = (access & V4F_BINDING_WRITE) && (written[b] & ~side);
      if ((reads || partial) && valid[b] && !(valid[b] & side)) {
        out.push_back(transfer(b, side, "'" + d.name + "'"));
        valid[b] |= side;
        ++inserted;
      }
    }
    for (size_t j = 0; j < d.bindings.size(); ++j) {
      uint32_t access = j < d.access.size() ? d.access[j] : (V4F_BINDING_READ | V4F_BINDING_WRITE);
      if (access & V4F_BINDING_WRITE) {
        valid[d.bindings[j]] = side;
        written[d.bindings[j]] |= side;
      }
    }
    out.push_back(std::move(d));
  }
  for (const TensorSignature &o : plan.outputs)
    if (valid[o.buffer] && !(valid[o.buffer] & kHost)) {
      out.push_back(transfer(o.buffer, kHost, "output '" + o.name + "'"));
      valid[o.buffer] |= kHost;
      ++inserted;
    }
  plan.dispatches = std::move(out);
  return inserted;
}

} // namespace v4f
