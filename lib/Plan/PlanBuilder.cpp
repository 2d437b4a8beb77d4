//===- PlanBuilder.cpp - graph -> buffers, shape program, region dispatch -===//
//
// Walks func @main in order. Graph inputs and outputs become plan buffers
// and signatures; constants are stored in the 64-byte aligned constants blob
// (unless the host target keeps only packed copies); views alias their
// input's buffer; each v4f.dispatch region goes to the target it is placed
// on. Every dim is a shape-program register, so models with symbolic dims
// get a plan the runtime completes at run time.
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/PlanBuilder.h"
#include "v4f/Plan/ShapeValues.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstring>

#include <cmath>

using namespace mlir;

namespace v4f {

PlanTarget::~PlanTarget() = default;

DType dtypeOf(Type t) {
  if (t.isF32()) return DType::Float32;
  if (t.isF16()) return DType::Float16;
  if (t.isF64()) return DType::Float64;
  if (t.isBF16()) return DType::BFloat16;
  if (llvm::isa<Float8E4M3FNType>(t)) return DType::Float8E4M3FN;
  if (llvm::isa<Float8E4M3FNUZType>(t)) return DType::Float8E4M3FNUZ;
  if (llvm::isa<Float8E5M2Type>(t)) return DType::Float8E5M2;
  if (llvm::isa<Float8E5M2FNUZType>(t)) return DType::Float8E5M2FNUZ;
  if (llvm::isa<Float4E2M1Type>(t)) return DType::Float4E2M1;
  if (llvm::isa<Float8E8M0Type>(t)) return DType::Float8E8M0;
  if (auto i = llvm::dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 2: return u ? DType::UInt2 : DType::Int2;
    case 4: return u ? DType::UInt4 : DType::Int4;
    case 1: return DType::Bool;
    case 8: return u ? DType::UInt8 : DType::Int8;
    case 16: return u ? DType::UInt16 : DType::Int16;
    case 32: return u ? DType::UInt32 : DType::Int32;
    case 64: return u ? DType::UInt64 : DType::Int64;
    default: return DType::Unknown;
    }
  }
  return DType::Unknown;
}

LogicalResult PlanBuilder::addConstant(arith::ConstantOp op) {
  auto attr = llvm::dyn_cast<DenseElementsAttr>(op.getValue());
  auto type = llvm::dyn_cast<RankedTensorType>(op.getType());
  if (!attr || !type || dtypeOf(type.getElementType()) == DType::Unknown)
    return op.emitOpError("constant of this type is not supported by the CPU backend");
  size_t width = elementBytes(type.getElementType());
  size_t count = type.getNumElements();
  size_t bytes = count * width;
  TensorInfo t;
  t.elementType = type.getElementType();
  t.constant = attr;
  for (int64_t d : type.getShape()) t.dims.push_back(sp().constant(d));
  // Small integer (and bool: 0/1) constants may take part in shape
  // computations: their values become registers.
  Type et = type.getElementType();
  if ((et.isSignlessInteger(64) || et.isSignlessInteger(32) || et.isInteger(1)) && count <= 64) {
    t.values.emplace();
    for (const APInt &v : attr.getValues<APInt>())
      t.values->push_back(sp().constant(v.getBitWidth() == 1 ? int64_t(v.getBoolValue()) : v.getSExtValue()));
  }
  // And small float constants holding small integers (a counter's + 1.0).
  if (et.isF32() && count <= 8) {
    std::vector<Reg> regs;
    for (const APFloat &v : attr.getValues<APFloat>()) {
      double d = v.convertToDouble();
      if (d != std::floor(d) || std::fabs(d) > double(1 << 24)) break;
      regs.push_back(sp().constant(int64_t(d)));
    }
    if (regs.size() == count) t.values = std::move(regs);
  }
  // A weight every user packs (v4f-pack-weights) is stored only packed.
  bool onlyPacked = !op->use_empty() && host.storesOnlyPacked(op);
  if (onlyPacked) {
    t.buffer = ~0u;
    infos[op.getResult()] = t;
    return success();
  }
  t.buffer = ctx.newConstant(bytes, [&](uint8_t *dst) {
    if (type.getElementType().isInteger(1)) {
      // MLIR packs i1 as bits; ONNX bool is one byte per element.
      size_t i = 0;
      for (bool v : attr.getValues<bool>()) dst[i++] = v ? 1 : 0;
    } else if (type.getElementType().getIntOrFloatBitWidth() < 8) {
      // [u]int4 / [u]int2: one byte per element holding the extended value.
      bool u = type.getElementType().isUnsignedInteger();
      size_t i = 0;
      for (const APInt &v : attr.getValues<APInt>()) dst[i++] = uint8_t(u ? v.getZExtValue() : v.getSExtValue());
    } else if (bytes) {
      ArrayRef<char> raw = attr.getRawData();
      if (attr.isSplat())
        for (size_t i = 0; i < count; ++i) std::memcpy(dst + i * width, raw.data(), width);
      else
        std::memcpy(dst, raw.data(), bytes);
    }
  });
  infos[op.getResult()] = t;
  return success();
}

FailureOr<std::vector<Reg>> PlanBuilder::resultDims(Operation *op) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  std::vector<Reg> dims;
  for (int64_t d : type.getShape()) dims.push_back(sp().constant(d == ShapedType::kDynamic ? 0 : d));
  if (type.hasStaticShape()) return dims;
  auto rule = dyn_cast<ShapeRuleOpInterface>(op);
  if (!rule) return op->emitOpError("has no shape rule for dynamic dims in the CPU backend");
  SmallVector<SmallVector<Reg>> operandDims;
  for (Value v : op->getOperands()) operandDims.emplace_back(info(v).dims.begin(), info(v).dims.end());
  SmallVector<Reg> ruleDims;
  sp().setLabel(dispatchName(op));
  LogicalResult reified = rule.reifyResultDims(sp(), operandDims, ruleDims);
  sp().setLabel("");
  if (failed(reified)) return failure();
  if ((int64_t)ruleDims.size() != type.getRank())
    return op->emitOpError("shape rule gave ") << ruleDims.size() << " dims for a rank-" << type.getRank() << " result";
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d)) dims[d] = ruleDims[d];
  return dims;
}

LogicalResult PlanBuilder::emitBlockOp(Operation &op) {
  uint32_t first = ctx.plan.dispatches.size();
  LogicalResult r = success();
  if (auto cst = dyn_cast<arith::ConstantOp>(op))
    r = addConstant(cst);
  else if (auto sel = dyn_cast<SelectBranchOp>(op))
    r = emitSelectBranch(sel);
  else if (auto loop = dyn_cast<LoopOp>(op))
    r = emitLoop(loop);
  else if (auto region = dyn_cast<DispatchOp>(op))
    r = emitRegion(region);
  else if (isBufferView(&op))
    r = host.emitOp(*this, &op);
  else if (op.getDialect() && op.getDialect()->getNamespace() == "v4f")
    return op.emitOpError("is not inside a v4f.dispatch region (run v4f-form-dispatch-regions before kernel "
                          "generation)");
  else
    return op.emitOpError("is not supported by the CPU backend");
  if (failed(r)) return failure();
  for (Value v : op.getResults()) noteCond(v);
  ranges[&op] = {first, uint32_t(ctx.plan.dispatches.size())};
  return success();
}

/// Channels-last tensors (v4f-assign-cpu-layouts) reach only the kernels
/// that read them as such: convs (emitConv checks the algorithm), the mean
/// over H and W, elementwise maps (which iterate in the stored order),
/// concats of channels (emitConcat checks the axis), the pools, pads and
/// spatial gathers that store what they read (followsDataLayout) and splits
/// of channels (splitsChannels); only convs, elementwise maps, concats and
/// those store them. Anything else is

FailureOr<TensorInfo> PlanBuilder::resultInfo(Operation *op, ArrayRef<TensorInfo> operands) {
  bool valueDependent = isa<ExpandOp, UnsqueezeOp, SliceOp, RangeOp, FillOp, PadOp>(op) ||
                        (isa<ReshapeOp>(op) && cast<ReshapeOp>(op).getShape());
  auto dims = isa<ReduceOp>(op) ? reduceResultDims(ctx, op, operands)
              : valueDependent  ? valueDependentDims(ctx, op, operands)
                                : resultDims(op);
  if (failed(dims)) return failure();
  TensorInfo result;
  result.dims = *dims;
  result.elementType = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (isa<ReshapeOp>(op)) {
    // A reshape keeps the element count: checked at run time where dims are
    // known only then (a dim an op requires, refined from a dynamic one, or
    // a run-time shape whose inferred dim does not divide the count).
    sp().setLabel(dispatchName(op));
    sp().expect(ctx.numel(result), ctx.numel(operands[0]), "the result's element count differs from the input's");
    sp().setLabel("");
  }
  if (auto softmax = dyn_cast<SoftmaxOp>(op); softmax && softmax.getMask() && operands.size() == 2) {
    // A fused mask must broadcast into the scores (the result has the
    // scores' dims): a dim known only at run time that is 1 in the scores
    // and larger in the mask is refused there, never read past.
    const TensorInfo &x = operands[0], &m = operands[1];
    sp().setLabel(dispatchName(op));
    for (size_t i = 0; i < m.dims.size() && i < x.dims.size(); ++i) {
      auto xd = x.dims[x.dims.size() - m.dims.size() + i];
      sp().expect(sp().broadcast(xd, m.dims[i]), xd, "the mask is larger than the scores it is added to");
    }
    sp().setLabel("");
  }
  result.values = propagateValues(ctx, op, operands, result);
  return result;
}

LogicalResult PlanBuilder::emitRegion(DispatchOp region) {
  SmallVector<Operation *> ops;
  for (Operation &op : region.getBodyOps()) ops.push_back(&op);
  if (auto reason = region->getAttrOfType<StringAttr>("v4f.placement_reason"); reason && cpuNotes && !ops.empty())
    cpuNotes->push_back(dispatchName(ops.front()) + " runs on the CPU: " + reason.str());
  // The target the region is placed on; the host when that target is not
  // built (a region marked "cuda" in a CPU-only compile runs on the CPU).
  auto placement = region->getAttrOfType<StringAttr>("v4f.placement");
  PlanTarget *target = &host;
  for (PlanTarget *t : targets)
    if (placement && t->placement() == placement.getValue()) target = t;
  if (failed(target->emitRegion(*this, region, ops))) return failure();
  auto ret = cast<DispatchReturnOp>(region.getBody().front().getTerminator());
  for (auto [r, v] : llvm::zip_equal(region.getResults(), ret.getValues())) {
    TensorInfo yielded = infos.lookup(v); // a copy: inserting r may rehash
    infos[r] = std::move(yielded);
  }
  return success();
}

LogicalResult PlanBuilder::addInputs(func::FuncOp func) {
  ExecutablePlan &plan = ctx.plan;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    TensorSignature sig;
    auto name = func.getArgAttrOfType<StringAttr>(i, "v4f.name");
    sig.name = name ? name.str() : "input" + std::to_string(i);
    sig.dtype = dtypeOf(type.getElementType());
    if (sig.dtype == DType::Unknown)
      return func.emitError("input '") << sig.name << "' has an unsupported element type";
    auto dimNames = func.getArgAttrOfType<ArrayAttr>(i, "v4f.dim_names");
    // Compile-time bounds of symbolic dims (the importer's --dim NAME=MIN..MAX).
    if (auto lo = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "v4f.dim_min"))
      sig.dimMin.assign(lo.asArrayRef().begin(), lo.asArrayRef().end());
    if (auto hi = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "v4f.dim_max"))
      sig.dimMax.assign(hi.asArrayRef().begin(), hi.asArrayRef().end());
    if ((!sig.dimMin.empty() && (int64_t)sig.dimMin.size() != type.getRank()) ||
        (!sig.dimMax.empty() && (int64_t)sig.dimMax.size() != type.getRank()))
      return func.emitError("input '") << sig.name << "': v4f.dim_min / v4f.dim_max need one entry per dim";
    TensorInfo t;
    t.elementType = type.getElementType();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool dynamic = type.isDynamicDim(d);
      sig.dims.push_back(dynamic ? -1 : type.getDimSize(d));
      std::string dimName;
      if (dynamic && dimNames && d < (int64_t)dimNames.size())
        dimName = llvm::cast<StringAttr>(dimNames[d]).str();
      else if (dynamic)
        dimName = sig.name + "_dim" + std::to_string(d);
      sig.dimNames.push_back(dimName);
      Reg r = dynamic ? sp().inputDim(i, d) : sp().constant(type.getDimSize(d));
      sig.dimRegs.push_back(r);
      t.dims.push_back(r);
    }
    // Dims sharing a symbol name share one register (the runtime checks they agree).
    PlanBuffer b;
    b.kind = BufferKind::Input;
    b.index = i;
    b.sizeReg = bytesOf(t);
    plan.buffers.push_back(b);
    t.buffer = sig.buffer = plan.buffers.size() - 1;
    // Small integer inputs may hold shapes: their values become registers
    // (read by the runtime only when a shape depends on them).
    if ((type.getElementType().isSignlessInteger(64) || type.getElementType().isSignlessInteger(32)) &&
        type.hasStaticShape() && type.getNumElements() <= 64) {
      t.values.emplace();
      for (int64_t k = 0; k < type.getNumElements(); ++k) t.values->push_back(sp().inputValue(i, k));
    }
    infos[arg] = t;
    plan.inputs.push_back(sig);
  }

  return success();
}

LogicalResult PlanBuilder::addOutputs(func::FuncOp func, func::ReturnOp ret) {
  ExecutablePlan &plan = ctx.plan;
  std::vector<bool> claimed(plan.buffers.size(), false);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    TensorInfo t = info(v);
    if (t.channelsLast) return ret.emitOpError("returns a channels-last tensor (outputs are channels-first)");
    TensorSignature sig;
    auto name = func.getResultAttrOfType<StringAttr>(i, "v4f.name");
    sig.name = name ? name.str() : "output" + std::to_string(i);
    sig.dtype = dtypeOf(t.elementType);
    auto type = llvm::cast<RankedTensorType>(v.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      sig.dims.push_back(type.isDynamicDim(d) ? -1 : type.getDimSize(d));
      sig.dimNames.push_back("");
      sig.dimRegs.push_back(t.dims[d]);
    }
    // Name symbolic output dims after the input symbol they equal.
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) continue;
      for (const auto &in : plan.inputs)
        for (size_t k = 0; k < in.dimRegs.size(); ++k)
          if (in.dimRegs[k] == t.dims[d] && sig.dimNames[d].empty()) sig.dimNames[d] = in.dimNames[k];
      if (sig.dimNames[d].empty()) sig.dimNames[d] = sig.name + "_dim" + std::to_string(d);
    }
    PlanBuffer &buf = plan.buffers[t.buffer];
    if (buf.kind == BufferKind::Transient && !claimed[t.buffer]) {
      buf.kind = BufferKind::Output;
      buf.index = i;
      claimed[t.buffer] = true;
      sig.buffer = t.buffer;
    } else {
      PlanBuffer out;
      out.kind = BufferKind::Output;
      out.index = i;
      out.sizeReg = bytesOf(t);
      plan.buffers.push_back(out);
      claimed.push_back(true);
      TensorInfo dst = t;
      dst.buffer = sig.buffer = plan.buffers.size() - 1;
      host.emitCopy(t, dst, "copy to output '" + sig.name + "'");
    }
    plan.outputs.push_back(sig);
  }
  return success();
}

LogicalResult PlanBuilder::build(ModuleOp graph) {
  func = graph.lookupSymbol<func::FuncOp>("main");
  if (!func) return graph.emitError("module has no func @main");
  if (failed(addInputs(func))) return failure();

  func.walk([&](SelectBranchOp sel) { condValues.insert(sel.getCond()); });
  for (BlockArgument arg : func.getArguments()) noteCond(arg);

  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(addOutputs(func, ret))) return failure();
      continue;
    }
    if (failed(emitBlockOp(op))) return failure();
  }

  if (failed(assignGuards(func.getBody().front(), ranges))) return failure();
  WalkResult guarded = func.walk([&](LoopOp loop) {
    return failed(assignGuards(loop.getBody().front(), ranges)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (guarded.wasInterrupted() || host.hasFailed()) return failure();
  ctx.plan.shapeProgram = sp().instructions();
  ctx.plan.shapeLabels = sp().labels();
  if (failed(host.finish(*this))) return failure();
  for (PlanTarget *t : targets)
    if (failed(t->finish(*this))) return failure();
  computeBufferLifetimes(ctx.plan);
  compactShapeProgram(ctx.plan);
  computeStaticArena(ctx.plan);
  return success();
}

} // namespace v4f
