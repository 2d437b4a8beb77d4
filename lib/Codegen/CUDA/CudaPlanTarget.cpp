//===- CudaPlanTarget.cpp - regions placed on the GPU as plan dispatches ---===//
//
// The CUDA plan target (PlanTarget.h): every region placed on the GPU
// (v4f-assign-placement) becomes one CUDA kernel (generateCudaKernel) over
// the region's external operands and a dispatch of the plan's CUDA
// executable, created with the first such region. Identical kernel sources
// share an entry point. Once the walk is over, transfers are inserted at
// the placement borders and the translation unit is handed out for NVRTC.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Plan/PlanBuilder.h"
#include "v4f/kernel_abi.h"

#include <map>

using namespace mlir;

namespace v4f {
namespace {

class CudaPlanTarget : public PlanTarget {
public:
  explicit CudaPlanTarget(CudaKernels &out) : out(out) {}
  llvm::StringRef placement() const override { return "cuda"; }
  LogicalResult emitRegion(PlanBuilder &pb, DispatchOp region, ArrayRef<Operation *> ops) override;
  LogicalResult finish(PlanBuilder &pb) override;

private:
  CudaKernels &out;
  int cudaExecutable = -1;
  std::string unit; // the kernels so far (the translation unit without its prelude)
  std::vector<std::vector<uint32_t>> interfaces;
  std::map<std::string, uint32_t> kernelsBySource;
};

} // namespace

LogicalResult CudaPlanTarget::emitRegion(PlanBuilder &pb, DispatchOp region, ArrayRef<Operation *> ops) {
  PlanContext &ctx = pb.ctx;
  bool elementwise = ops.size() > 1 || isFusibleElementwise(ops.front());
  SmallVector<Value> externals;
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getParentOp() == region.getOperation()) continue;
      // An elementwise kernel reads each external once; other kernels bind
      // their operands in order (x @ x binds x twice).
      if (elementwise && llvm::is_contained(externals, v)) continue;
      externals.push_back(v);
    }
  auto staticDims = [&](const TensorInfo &t, std::vector<int64_t> &dims) {
    dims.clear();
    for (Reg r : t.dims) {
      auto c = pb.sp().constValue(r);
      if (!c) return false;
      dims.push_back(*c);
    }
    return true;
  };
  SmallVector<CudaTensor> ext;
  for (Value v : externals) {
    CudaTensor t;
    t.elementType = pb.info(v).elementType;
    if (!staticDims(pb.info(v), t.dims))
      return region.emitOpError("placed on the GPU has an operand with run-time dims");
    if (pb.info(v).buffer == ~0u)
      return region.emitOpError("placed on the GPU reads a weight stored only packed for the CPU");
    ext.push_back(std::move(t));
  }
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    for (Value v : op->getOperands()) operands.push_back(pb.info(v));
    auto result = pb.resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = op == ops.back() ? ctx.newTransient(pb.bytesOf(*result)) : ~0u;
    pb.infos[op->getResult(0)] = *result;
  }
  const TensorInfo &last = pb.infos[ops.back()->getResult(0)];
  CudaTensor result;
  result.elementType = last.elementType;
  if (!staticDims(last, result.dims)) return region.emitOpError("placed on the GPU has run-time result dims");
  auto kernel = generateCudaKernel(ops, externals, ext, result, "@V4F_KERNEL@", out.options);
  if (failed(kernel)) return failure();
  if (cudaExecutable < 0) {
    PlanExecutable exe;
    exe.target = ExecutableTarget::Cuda;
    exe.format = ExecutableFormat::CudaModule;
    exe.abiVersion = V4F_KERNEL_ABI_VERSION;
    ctx.plan.executables.push_back(std::move(exe));
    cudaExecutable = int(ctx.plan.executables.size() - 1);
  }
  std::vector<std::string> &entries = ctx.plan.executables[cudaExecutable].entryPoints;
  uint32_t entry;
  if (auto it = kernelsBySource.find(kernel->source); it != kernelsBySource.end()) {
    entry = it->second;
  } else {
    entry = entries.size();
    std::string name = "v4f_cuda_" + std::to_string(entry);
    entries.push_back(name);
    kernelsBySource.emplace(kernel->source, entry);
    std::string source = kernel->source;
    source.replace(source.find("@V4F_KERNEL@"), 12, name);
    unit += source;
    std::vector<uint32_t> iface = {uint32_t(kernel->operands.size()), 0};
    iface.insert(iface.end(), kernel->access.begin(), kernel->access.end());
    interfaces.push_back(std::move(iface));
  }
  PlanDispatch d;
  d.executable = uint32_t(cudaExecutable);
  d.entryPoint = entry;
  for (int operand : kernel->operands)
    d.bindings.push_back(operand < 0 ? last.buffer : pb.info(externals[operand]).buffer);
  d.workgroupCount = {pb.sp().constant(kernel->grid[0]), pb.sp().constant(kernel->grid[1]),
                      pb.sp().constant(kernel->grid[2])};
  d.blockDim = {kernel->block[0], kernel->block[1], kernel->block[2]};
  d.scratchSize = pb.sp().constant(0);
  d.name = dispatchName(ops.front()) + (ops.size() > 1 ? " + " + std::to_string(ops.size() - 1) + " fused" : "");
  d.flops = pb.sp().constant(int64_t(kernel->flops));
  d.precision = kernel->precision;
  d.access = kernel->access;
  ctx.plan.dispatches.push_back(std::move(d));
  return success();
}

LogicalResult CudaPlanTarget::finish(PlanBuilder &pb) {
  if (cudaExecutable < 0) return success();
  ExecutablePlan &plan = pb.ctx.plan;
  // v4f-assign-placement keeps models with If/Loop on the CPU; the only
  // other guards choose between CPU conv algorithms that write the same
  // buffers whole, so the transfers around them hold whichever runs.
  if (!plan.loops.empty())
    return pb.func.emitError("internal compiler error: GPU dispatches in a plan with a run-time loop");
  insertTransfers(plan);
  out.source = cudaPrelude(out.options) + unit;
  out.interfaces = std::move(interfaces);
  return success();
}

std::unique_ptr<PlanTarget> createCudaPlanTarget(CudaKernels &out) { return std::make_unique<CudaPlanTarget>(out); }

} // namespace v4f
