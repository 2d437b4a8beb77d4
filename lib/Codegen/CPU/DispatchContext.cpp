//===- DispatchContext.cpp - kernels, dispatches, buffers of the plan -----===//
//
// The bookkeeping every kernel emitter shares: new kernels (with identical
// bodies emitted once), dispatch registration with their push constants and
// scratch, transient and constant buffers, and the row split of workgroups.
//
//===----------------------------------------------------------------------===//
#include "DispatchContext.h"

#include <cstring>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AsmState.h"

using namespace mlir;

namespace v4f {

std::unique_ptr<KernelBuilder> DispatchContext::newKernel(StringRef) {
  return std::make_unique<KernelBuilder>(kernels, shapes, "v4f_kernel_" + std::to_string(kernelCounter++), 0);
}

void DispatchContext::addDispatch(KernelBuilder &kernel, std::vector<uint32_t> bindings, Reg workgroups,
                                  const std::string &name, std::optional<Reg> scratchBytes) {
  // Kernel ABI 3: entry checks against the sizes of the bound buffers.
  std::vector<Reg> bindingSizes;
  for (uint32_t b : bindings) bindingSizes.push_back(plan.buffers[b].sizeReg);
  if (failed(kernel.sealInterface(bindingSizes))) {
    kernel.func.emitError("internal compiler error: the kernel of dispatch '" + name +
                          "' writes through a pointer that is not one of its " + std::to_string(bindings.size()) +
                          " bindings or its scratch memory");
    interfaceFailed = true;
  }
  std::vector<uint32_t> access;
  if (auto table = kernel.func->getAttrOfType<DenseI32ArrayAttr>("v4f.interface"))
    for (size_t j = 2; j < table.asArrayRef().size(); ++j) access.push_back(uint32_t(table.asArrayRef()[j]));
  // Identical bodies (e.g. repeated conv shapes) share one kernel. The key
  // is the body's exact structure: op names, attributes and types are
  // uniqued in the context (so their pointers identify them) and operands
  // are numbered by definition order.
  std::vector<const void *> key;
  llvm::DenseMap<Value, uintptr_t> numbering;
  auto number = [&](Value v) {
    auto it = numbering.try_emplace(v, numbering.size()).first;
    key.push_back(reinterpret_cast<const void *>(it->second));
  };
  key.push_back(kernel.func.getFunctionType().getAsOpaquePointer());
  for (BlockArgument arg : kernel.func.getArguments()) number(arg);
  kernel.func.getBody().walk([&](Operation *op) {
    key.push_back(op->getName().getAsOpaquePointer());
    key.push_back(op->getPropertiesAsAttribute().getAsOpaquePointer());
    key.push_back(op->getDiscardableAttrDictionary().getAsOpaquePointer());
    key.push_back(reinterpret_cast<const void *>(uintptr_t(op->getNumOperands())));
    for (Value v : op->getOperands()) number(v);
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        key.push_back(reinterpret_cast<const void *>(uintptr_t(block.getNumArguments())));
        for (BlockArgument arg : block.getArguments()) {
          key.push_back(arg.getType().getAsOpaquePointer());
          number(arg);
        }
      }
    for (Value r : op->getResults()) {
      key.push_back(r.getType().getAsOpaquePointer());
      number(r);
    }
  });
  uint32_t index;
  std::vector<std::string> &entryPoints = plan.executables[executable].entryPoints;
  if (auto it = kernelsByBody.find(key); it != kernelsByBody.end()) {
    index = it->second;
    kernel.func.erase();
  } else {
    index = entryPoints.size();
    entryPoints.push_back(kernel.func.getSymName().str());
    kernelsByBody.emplace(std::move(key), index);
  }
  PlanDispatch d;
  d.executable = executable;
  d.entryPoint = index;
  d.bindings = std::move(bindings);
  d.pushConstants = kernel.pushConstants();
  d.workgroupCount = {workgroups};
  d.scratchSize = scratchBytes ? *scratchBytes : shapes.constant(0);
  d.name = name;
  d.access = std::move(access);
  plan.dispatches.push_back(std::move(d));
}

uint32_t DispatchContext::newTransient(Reg sizeBytes) {
  PlanBuffer b;
  b.kind = BufferKind::Transient;
  b.sizeReg = sizeBytes;
  plan.buffers.push_back(b);
  return plan.buffers.size() - 1;
}

uint32_t DispatchContext::newConstant(size_t bytes, const std::function<void(uint8_t *)> &fill) {
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

uint32_t DispatchContext::plainFloatWeight(const TensorInfo &weight, int64_t count) {
  if (weight.buffer != ~0u) return weight.buffer;
  if (!weight.constant) return ~0u;
  auto values = weight.constant.getValues<float>();
  return newConstant(size_t(count) * sizeof(float), [&](uint8_t *out) {
    float *f = reinterpret_cast<float *>(out);
    for (int64_t i = 0; i < count; ++i) f[i] = values[i];
  });
}

uint32_t DispatchContext::int32Table(const std::vector<int32_t> &values) {
  auto [it, inserted] = int32Tables.try_emplace(values, 0);
  if (inserted)
    it->second = newConstant(values.size() * 4, [&](uint8_t *dst) {
      if (!values.empty()) std::memcpy(dst, values.data(), values.size() * 4);
    });
  return it->second;
}

std::pair<Reg, Reg> DispatchContext::splitRows(Reg rows, Reg rowSize, int64_t grain) {
  Reg perGroup = shapes.max(shapes.constant(1), shapes.floorDiv(shapes.constant(grain),
                                                                shapes.max(rowSize, shapes.constant(1))));
  Reg groups = shapes.ceilDiv(rows, perGroup);
  return {groups, perGroup};
}

} // namespace v4f
