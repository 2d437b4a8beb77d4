//===- PlanContext.cpp - buffers and constants of the plan under construction -===//
#include "v4f/Plan/PlanContext.h"

#include <cstring>

namespace v4f {

uint32_t PlanContext::newTransient(Reg sizeBytes) {
  PlanBuffer b;
  b.kind = BufferKind::Transient;
  b.sizeReg = sizeBytes;
  plan.buffers.push_back(b);
  return plan.buffers.size() - 1;
}

uint32_t PlanContext::newConstant(size_t bytes, const std::function<void(uint8_t *)> &fill) {
  size_t offset = (constants.size() + 63) / 64 * 64;
  constants.resize(offset + bytes, 0);
  fill(constants.data() + offset);
  PlanBuffer b;
  b.kind = BufferKind::Constant;
  b.constantOffset = offset;
  b.sizeReg = shapes.constant(bytes);
  plan.buffers.push_back(b);
  return plan.buffers.size() - 1;
}

uint32_t PlanContext::int32Table(const std::vector<int32_t> &values) {
  auto [it, inserted] = int32Tables.try_emplace(values, 0);
  if (inserted)
    it->second = newConstant(values.size() * 4, [&](uint8_t *dst) {
      if (!values.empty()) std::memcpy(dst, values.data(), values.size() * 4);
    });
  return it->second;
}

std::pair<Reg, Reg> PlanContext::splitRows(Reg rows, Reg rowSize, int64_t grain) {
  Reg perGroup =
      shapes.max(shapes.constant(1), shapes.floorDiv(shapes.constant(grain), shapes.max(rowSize, shapes.constant(1))));
  Reg groups = shapes.ceilDiv(rows, perGroup);
  return {groups, perGroup};
}

} // namespace v4f
