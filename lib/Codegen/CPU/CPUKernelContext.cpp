//===- CPUKernelContext.cpp - CPU kernels and their dispatches -----------===//
//
// The bookkeeping every CPU kernel emitter shares: new kernels (with
// identical bodies emitted once) and their dispatches with push constants
// and scratch.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"

#include <cstring>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AsmState.h"

using namespace mlir;

namespace v4f {

std::unique_ptr<KernelBuilder> CPUKernelContext::newKernel(StringRef) {
  return std::make_unique<KernelBuilder>(kernels, shapes, "v4f_kernel_" + std::to_string(kernelCounter++), 0);
}

void CPUKernelContext::addDispatch(KernelBuilder &kernel, std::vector<uint32_t> bindings, Reg workgroups,
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

uint32_t CPUKernelContext::plainFloatWeight(const TensorInfo &weight, int64_t count) {
  if (weight.buffer != ~0u) return weight.buffer;
  if (!weight.constant) return ~0u;
  auto values = weight.constant.getValues<float>();
  return newConstant(size_t(count) * sizeof(float), [&](uint8_t *out) {
    float *f = reinterpret_cast<float *>(out);
    for (int64_t i = 0; i < count; ++i) f[i] = values[i];
  });
}

} // namespace v4f
