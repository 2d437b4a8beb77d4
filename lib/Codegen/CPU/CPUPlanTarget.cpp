//===- CPUPlanTarget.cpp - regions placed on the CPU, and the plan's own work -===//
//
// A region with a `v4f.fused_kernel` kind (recorded by the fusion pass that
// merged it) becomes that kind's registered kernel; a region of several
// elementwise ops one chain kernel; any other region the registered kernels
// of each op in order.
//
//===----------------------------------------------------------------------===//
#include "CPUPlanTarget.h"
#include "WeightPacking.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

using namespace mlir;

namespace v4f {

static uint32_t appendCPUExecutable(PlanContext &pc) {
  pc.plan.executables.emplace_back();
  return pc.plan.executables.size() - 1;
}

CPUPlanTarget::CPUPlanTarget(PlanContext &pc, ModuleOp kernels) : ctx(pc, kernels, appendCPUExecutable(pc)) {}

bool CPUPlanTarget::storesOnlyPacked(arith::ConstantOp op) {
  return llvm::all_of(op->getUses(), [](OpOperand &use) {
    // The int8 weight of a quantized matmul is always packed, and so are the
    // int4 weight and its group scales.
    if (auto i4 = dyn_cast<Int4MatMulOp>(use.getOwner()))
      return use.getOperandNumber() == 1 || use.getOperandNumber() == 2 || use.get() == i4.getRhsZeroPoint();
    // A quantized conv's weight and scales become its own constants.
    if (isa<QuantizedConvOp>(use.getOwner())) return use.getOperandNumber() == 1 || use.getOperandNumber() == 2;
    if (auto im = dyn_cast<IntegerMatMulOp>(use.getOwner())) return use.get() == im.getRhs();
    // A Winograd conv's weight is stored transformed (WinogradConvKernels.cpp).
    if (isa<ConvOp>(use.getOwner()) && use.getOperandNumber() == 1 && winogradTileOf(use.getOwner())) return true;
    return use.getOperandNumber() == 1 && (packingOf(use.getOwner()) || isa<QuantizedMatMulOp>(use.getOwner()));
  });
}

/// Channels-last tensors (v4f-assign-cpu-layouts) reach only the kernels
/// that read them as such: convs (emitConv checks the algorithm), the mean
/// over H and W, elementwise maps (which iterate in the stored order),
/// concats of channels (emitConcat checks the axis), the pools, pads and
/// spatial gathers that store what they read (followsDataLayout) and splits
/// of channels (splitsChannels); only convs, elementwise maps, concats and
/// those store them. Anything else is
/// a pass bug, reported instead of computing with misread elements.
static LogicalResult checkLayouts(Operation *op, ArrayRef<TensorInfo> operands) {
  bool reads = llvm::any_of(operands, [](const TensorInfo &t) { return t.channelsLast; });
  if (followsDataLayout(op) || splitsChannels(op)) {
    if (operands[0].channelsLast != storesChannelsLast(op))
      return op->emitOpError("stores its result in another layout than it reads its data in, which its kernel cannot");
    return success();
  }
  if (reads && !isa<ConvOp, ConcatOp>(op) && !meanReadsChannelsLast(op) && !isFusibleElementwise(op))
    return op->emitOpError("reads a channels-last tensor, which its kernel cannot");
  if (storesChannelsLast(op) && !isa<ConvOp, ConcatOp>(op) && !isFusibleElementwise(op))
    return op->emitOpError("is marked to store its result channels-last, which its kernel cannot");
  return success();
}

LogicalResult CPUPlanTarget::emitOp(PlanBuilder &pb, Operation *op) {
  SmallVector<TensorInfo> operands;
  for (Value v : op->getOperands()) operands.push_back(pb.info(v));
  if (failed(checkLayouts(op, operands))) return failure();
  if (ResultsKernelFn emit = cpuKernels().resultsKernel(op)) return emit(ctx, pb, op, operands);
  auto result = pb.resultInfo(op, operands);
  if (failed(result)) return failure();
  result->channelsLast = storesChannelsLast(op);
  if (isBufferView(op)) {
    // Views: the result shares the input's buffer.
    result->buffer = operands[0].buffer;
    pb.infos[op->getResult(0)] = *result;
    return success();
  }
  result->buffer = ctx.newTransient(pb.bytesOf(*result));
  pb.infos[op->getResult(0)] = *result;
  OpKernelFn emit = cpuKernels().opKernel(op);
  if (!emit) return op->emitOpError("is not supported by the CPU backend");
  return emit(ctx, op, operands, *result);
}

LogicalResult CPUPlanTarget::emitRegion(PlanBuilder &pb, DispatchOp region, ArrayRef<Operation *> ops) {
  if (auto kind = region->getAttrOfType<StringAttr>(kFusedKernelAttr)) {
    RegionKernelFn emit = cpuKernels().regionKernel(kind.getValue());
    if (!emit)
      return region.emitOpError("is a fused '")
             << kind.getValue() << "' region, which the CPU backend has no kernel for";
    return emitFusedRegion(pb, region, ops, emit);
  }
  bool chain = ops.size() > 1 && llvm::all_of(ops, [](Operation *op) { return isFusibleElementwise(op); });
  if (chain) return emitChain(pb, region, ops);
  for (Operation *op : ops)
    if (failed(emitOp(pb, op))) return failure();
  return success();
}

LogicalResult CPUPlanTarget::emitChain(PlanBuilder &pb, DispatchOp region, ArrayRef<Operation *> ops) {
  SmallVector<Value> externals;
  SmallVector<TensorInfo> externalInfos;
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    if (storesChannelsLast(op) && op != ops.back())
      return op->emitOpError("only the last op of a fused chain stores its result (channels-last or not)");
    for (Value v : op->getOperands()) {
      operands.push_back(pb.info(v));
      Operation *def = v.getDefiningOp();
      bool internal = def && def->getParentOp() == region.getOperation();
      if (!internal && !llvm::is_contained(externals, v)) {
        externals.push_back(v);
        externalInfos.push_back(pb.info(v));
      }
    }
    auto result = pb.resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = ~0u; // no buffer: the value lives in registers
    pb.infos[op->getResult(0)] = *result;
  }
  TensorInfo &last = pb.infos[ops.back()->getResult(0)];
  last.buffer = ctx.newTransient(pb.bytesOf(last));
  last.channelsLast = storesChannelsLast(ops.back());
  std::string name = dispatchName(ops.front()) + " + " + std::to_string(ops.size() - 1) + " fused";
  return emitElementwiseChain(ctx, ops, externals, externalInfos, last, name);
}

LogicalResult CPUPlanTarget::emitFusedRegion(PlanBuilder &pb, DispatchOp region, ArrayRef<Operation *> ops,
                                             RegionKernelFn emit) {
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    for (Value v : op->getOperands()) operands.push_back(pb.info(v));
    if (storesChannelsLast(op) || llvm::any_of(operands, [](const TensorInfo &t) { return t.channelsLast; }))
      return op->emitOpError("a fused region cannot read or write channels-last tensors");
    auto result = pb.resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = ~0u; // intermediates stay in the kernel's scratch
    pb.infos[op->getResult(0)] = *result;
  }
  TensorInfo &last = pb.infos[ops.back()->getResult(0)];
  last.buffer = ctx.newTransient(pb.bytesOf(last));
  TensorInfo out = last; // a copy: info() may rehash
  return emit(
      ctx, region, ops, [&](Value v) -> const TensorInfo & { return pb.info(v); }, out);
}

void CPUPlanTarget::emitCopy(const TensorInfo &src, const TensorInfo &dst, const std::string &name) {
  v4f::emitCopy(ctx, src, dst, name);
}

void CPUPlanTarget::emitCopyAt(const TensorInfo &src, uint32_t dstBuffer, Reg dstBase, const std::string &name) {
  v4f::emitCopyAt(ctx, src, dstBuffer, dstBase, name);
}

void CPUPlanTarget::emitWriteRegister(Reg value, uint32_t buffer, const std::string &name) {
  v4f::emitWriteRegister(ctx, value, buffer, name);
}

bool CPUPlanTarget::emitDimsCheck(const std::vector<Reg> &a, const std::vector<Reg> &b, const std::string &name) {
  return v4f::emitDimsCheck(ctx, a, b, name);
}

void CPUPlanTarget::emitScalarToI64(const TensorInfo &src, uint32_t buffer, const std::string &name,
                                    std::optional<int64_t> clampAbove) {
  v4f::emitScalarToI64(ctx, src, buffer, name, clampAbove);
}

std::unique_ptr<HostPlanTarget> createCPUPlanTarget(PlanContext &pc, ModuleOp kernels) {
  return std::make_unique<CPUPlanTarget>(pc, kernels);
}

} // namespace v4f
