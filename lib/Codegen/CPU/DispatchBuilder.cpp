//===- DispatchBuilder.cpp - graph -> dispatches, buffers, shape program --===//
//
// Walks func @main in order. Every v4f op becomes one or more dispatches (one
// kernel each); reshape aliases its input's buffer; constants are packed into
// the 64-byte aligned constants blob. Every dim is a shape-program register,
// so models with symbolic dims get a plan the runtime completes at run time.
//
//===----------------------------------------------------------------------===//
#include "PlanBuilder.h"
#include "WeightPacking.h"
#include "v4f/kernel_abi.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace v4f {

//===----------------------------------------------------------------------===//
// Plan construction
//===----------------------------------------------------------------------===//

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
  // A weight every user packs (v4f-pack-weights) is stored only packed.
  bool onlyPacked = !op->use_empty() && llvm::all_of(op->getUses(), [](OpOperand &use) {
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
    return op->emitOpError("shape rule gave ") << ruleDims.size() << " dims for a rank-" << type.getRank()
                                               << " result";
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d)) dims[d] = ruleDims[d];
  return dims;
}

LogicalResult PlanBuilder::emitSplit(SplitOp op, ArrayRef<TensorInfo> operands) {
  const TensorInfo &X = operands[0];
  int64_t axis = op.getAxis();
  std::vector<Reg> sizes;
  if (op.getSplit()) {
    if (!operands[1].values)
      return op.emitOpError("its split sizes are computed at run time in a way the CPU backend cannot follow yet");
    sizes = *operands[1].values;
  } else {
    for (int64_t s : op.getSizes()) sizes.push_back(sp().constant(s));
  }
  // Channels-last (splitsChannels; checkLayouts saw the parts marked too):
  // each part is copied in the stored order N, H, W, C_k from the input's
  // pixel rows of C floats, at the part's channel offset.
  const bool channelsLast = X.channelsLast;
  if (channelsLast && (axis != 1 || X.dims.size() != 4))
    return op.emitOpError("splits a channels-last tensor other than along its channels");
  // Strides of X's stored dims, and where the split axis is among them.
  const std::vector<Reg> stored = channelsLast ? channelsLastDims(X.dims) : X.dims;
  const size_t storedAxis = channelsLast ? 3 : size_t(axis);
  std::vector<Reg> strides(stored.size());
  Reg natural = sp().constant(1);
  for (size_t d = stored.size(); d-- > 0;) {
    strides[d] = natural;
    natural = sp().mul(natural, stored[d]);
  }
  Reg offset = sp().constant(0);
  for (auto [k, r] : llvm::enumerate(op.getParts())) {
    TensorInfo part;
    part.dims = X.dims;
    part.dims[axis] = sizes[k];
    part.elementType = X.elementType;
    part.channelsLast = channelsLast;
    part.buffer = ctx.newTransient(bytesOf(part));
    infos[r] = part;
    TensorInfo partStored = part; // iterated in its stored order
    if (channelsLast) partStored.dims = channelsLastDims(part.dims);
    emitStridedCopy(ctx, "split part " + std::to_string(k), X, partStored, strides,
                    sp().mul(offset, strides[storedAxis]), /*broadcastSource=*/false);
    offset = sp().add(offset, sizes[k]);
  }
  return success();
}

LogicalResult PlanBuilder::emitNonZero(NonZeroOp op, ArrayRef<TensorInfo> operands) {
  const TensorInfo &X = operands[0];
  Reg n = ctx.numel(X);
  size_t rank = X.dims.size();
  Type scalar = bodyScalarType(X.elementType);
  auto nonZero = [&](KernelBuilder &kb, Value i) -> Value {
    Value x = kb.load(X.elementType, kb.binding(1), i);
    if (llvm::isa<FloatType>(scalar))
      return kb.b.create<arith::CmpFOp>(kb.loc, arith::CmpFPredicate::UNE, x,
                                        kb.b.create<arith::ConstantOp>(kb.loc, kb.b.getFloatAttr(scalar, 0.0)));
    return kb.b.create<arith::CmpIOp>(kb.loc, arith::CmpIPredicate::ne, x,
                                      kb.b.create<arith::ConstantOp>(kb.loc, kb.b.getIntegerAttr(scalar, 0)));
  };
  uint32_t countBuf = ctx.newTransient(sp().constant(8));
  {
    auto kb = ctx.newKernel("nonzero count");
    auto total = kb->forLoop(kb->c(0), kb->dim(n), kb->c(1), ValueRange{kb->c(0)},
                             [&](Value i, ValueRange acc) -> SmallVector<Value> {
      return {kb->add(acc[0], kb->b.create<arith::ExtUIOp>(kb->loc, kb->b.getI64Type(), nonZero(*kb, i)))};
    });
    kb->store(total[0], kb->binding(0), kb->c(0));
    kb->finish();
    ctx.addDispatch(*kb, {countBuf, X.buffer}, sp().constant(1), dispatchName(op) + " count");
  }
  Reg count = sp().dataValue(countBuf, 0, n);
  TensorInfo result;
  result.dims = {sp().constant(std::max<int64_t>(rank, 1)), count};
  result.elementType = llvm::cast<RankedTensorType>(op.getType()).getElementType();
  result.buffer = ctx.newTransient(bytesOf(result));
  infos[op.getResult()] = result;
  auto kb = ctx.newKernel("nonzero coordinates");
  Value C = kb->dim(count);
  std::vector<Value> dims;
  for (Reg d : X.dims) dims.push_back(kb->dim(d));
  kb->forLoop(kb->c(0), kb->dim(n), kb->c(1), ValueRange{kb->c(0)}, [&](Value i, ValueRange acc) -> SmallVector<Value> {
    Value hit = nonZero(*kb, i);
    kb->ifThen(hit, [&]() {
      // Unravel i into coordinates, last dim fastest.
      Value rest = i;
      for (size_t d = rank; d-- > 0;) {
        kb->store(kb->rem(rest, dims[d]), kb->binding(0), kb->add(kb->mul(kb->c(d), C), acc[0]));
        rest = kb->div(rest, dims[d]);
      }
      if (rank == 0) kb->store(kb->c(0), kb->binding(0), acc[0]);
    });
    return {kb->add(acc[0], kb->b.create<arith::ExtUIOp>(kb->loc, kb->b.getI64Type(), hit))};
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, sp().constant(1), dispatchName(op));
  return success();
}

LogicalResult PlanBuilder::emitTopKOp(TopKOp op, ArrayRef<TensorInfo> operands) {
  const TensorInfo &X = operands[0];
  int64_t axis = op.getAxis();
  Reg k;
  if (!op.getValues().getType().isDynamicDim(axis)) k = sp().constant(op.getValues().getType().getDimSize(axis));
  else if (operands[1].values) k = (*operands[1].values)[0];
  else return op.emitOpError("its k is computed at run time in a way the CPU backend cannot follow yet");
  TensorInfo results[2];
  for (int i = 0; i < 2; ++i) {
    results[i].dims = X.dims;
    results[i].dims[axis] = k;
    for (size_t d = 0; d < X.dims.size(); ++d) {
      auto type = llvm::cast<RankedTensorType>(op->getResult(i).getType());
      if (!type.isDynamicDim(d)) results[i].dims[d] = sp().constant(type.getDimSize(d));
    }
    results[i].elementType = llvm::cast<RankedTensorType>(op->getResult(i).getType()).getElementType();
    results[i].buffer = ctx.newTransient(bytesOf(results[i]));
    infos[op->getResult(i)] = results[i];
  }
  return emitTopK(ctx, op, operands, k, results[0], results[1]);
}

LogicalResult PlanBuilder::emitRecurrentOp(RecurrentOp op, ArrayRef<TensorInfo> operands) {
  const TensorInfo &X = operands[0];
  bool layout = op.getLayout() != 0;
  Reg T = X.dims[layout ? 1 : 0], B = X.dims[layout ? 0 : 1];
  SmallVector<TensorInfo> results;
  for (Value v : op->getResults()) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    TensorInfo t;
    t.elementType = type.getElementType();
    int64_t rank = type.getRank();
    for (int64_t d = 0; d < rank; ++d) {
      bool isT = rank == 4 && d == (layout ? 1 : 0), isB = d == (layout ? 0 : rank - 2);
      t.dims.push_back(!type.isDynamicDim(d) ? sp().constant(type.getDimSize(d)) : isT ? T : isB ? B : Reg());
      if (type.isDynamicDim(d) && !isT && !isB) return op.emitOpError("has an unexpected dynamic result dim");
    }
    t.buffer = ctx.newTransient(bytesOf(t));
    infos[v] = t;
    results.push_back(t);
  }
  return emitRecurrent(ctx, op, operands, results);
}

LogicalResult PlanBuilder::emitBlockOp(Operation &op) {
  uint32_t first = ctx.plan.dispatches.size();
  LogicalResult r = success();
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) r = addConstant(cst);
  else if (auto sel = dyn_cast<SelectBranchOp>(op)) r = emitSelectBranch(sel);
  else if (auto loop = dyn_cast<LoopOp>(op)) r = emitLoop(loop);
  else if (auto region = dyn_cast<DispatchOp>(op)) r = emitRegion(region);
  else if (isBufferView(&op)) r = emitOp(&op);
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

LogicalResult PlanBuilder::emitOp(Operation *op) {
  SmallVector<TensorInfo> operands;
  for (Value v : op->getOperands()) operands.push_back(info(v));
  if (failed(checkLayouts(op, operands))) return failure();
  if (auto split = dyn_cast<SplitOp>(op)) return emitSplit(split, operands);
  if (auto nz = dyn_cast<NonZeroOp>(op)) return emitNonZero(nz, operands);
  if (auto topk = dyn_cast<TopKOp>(op)) return emitTopKOp(topk, operands);
  if (auto rec = dyn_cast<RecurrentOp>(op)) return emitRecurrentOp(rec, operands);
  if (isa<UniqueOp, NonMaxSuppressionOp>(op)) {
    SmallVector<TensorInfo> results;
    if (failed(isa<UniqueOp>(op) ? emitUnique(ctx, op, operands, results)
                                 : emitNonMaxSuppression(ctx, op, operands, results)))
      return failure();
    for (auto [r, t] : llvm::zip_equal(op->getResults(), results)) infos[r] = t;
    return success();
  }
  auto result = resultInfo(op, operands);
  if (failed(result)) return failure();
  result->channelsLast = storesChannelsLast(op);
  if (isa<ReshapeOp, UnsqueezeOp>(op)) {
    // Views: the result shares the input's buffer.
    result->buffer = operands[0].buffer;
    infos[op->getResult(0)] = *result;
    return success();
  }
  result->buffer = ctx.newTransient(bytesOf(*result));
  infos[op->getResult(0)] = *result;
  return emitKernels(op, operands, *result);
}

FailureOr<TensorInfo> PlanBuilder::resultInfo(Operation *op, ArrayRef<TensorInfo> operands) {
  bool valueDependent = isa<ExpandOp, UnsqueezeOp, SliceOp, RangeOp, FillOp, PadOp>(op) ||
                        (isa<ReshapeOp>(op) && cast<ReshapeOp>(op).getShape());
  auto dims = isa<ReduceOp>(op)  ? reduceResultDims(ctx, op, operands)
              : valueDependent ? valueDependentDims(ctx, op, operands)
                               : resultDims(op);
  if (failed(dims)) return failure();
  TensorInfo result;
  result.dims = *dims;
  result.elementType = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  result.values = propagateValues(ctx, op, operands, result);
  return result;
}

LogicalResult PlanBuilder::emitRegion(DispatchOp region) {
  SmallVector<Operation *> ops;
  for (Operation &op : region.getBodyOps()) ops.push_back(&op);
  bool chain = ops.size() > 1 && llvm::all_of(ops, [](Operation *op) { return isFusibleElementwise(op); });
  if (auto reason = region->getAttrOfType<StringAttr>("v4f.placement_reason"); reason && cpuNotes && !ops.empty())
    cpuNotes->push_back(dispatchName(ops.front()) + " runs on the CPU: " + reason.str());
  if (ctx.cuda && isPlacedOnCuda(region)) {
    if (failed(emitCudaRegion(region, ops))) return failure();
  } else if (isAttentionRegion(ops)) {
    auto emit = [&](llvm::function_ref<const TensorInfo &(Value)> infoOf, const TensorInfo &out) {
      return emitAttention(ctx, region, ops, infoOf, out);
    };
    if (failed(emitFusedRegion(ops, emit))) return failure();
  } else if (isChannelScaledConvRegion(ops)) {
    auto emit = [&](llvm::function_ref<const TensorInfo &(Value)> infoOf, const TensorInfo &out) {
      return emitChannelScaledConv(ctx, ops, infoOf, out);
    };
    if (failed(emitFusedRegion(ops, emit))) return failure();
  } else if (isPointwiseDepthwiseRegion(ops)) {
    auto emit = [&](llvm::function_ref<const TensorInfo &(Value)> infoOf, const TensorInfo &out) {
      return emitPointwiseDepthwise(ctx, ops, infoOf, out);
    };
    if (failed(emitFusedRegion(ops, emit))) return failure();
  } else if (isDepthwisePointwiseRegion(ops)) {
    auto emit = [&](llvm::function_ref<const TensorInfo &(Value)> infoOf, const TensorInfo &out) {
      return emitDepthwisePointwise(ctx, ops, infoOf, out);
    };
    if (failed(emitFusedRegion(ops, emit))) return failure();
  } else if (!chain) {
    for (Operation *op : ops)
      if (failed(emitOp(op))) return failure();
  } else if (failed(emitChain(region, ops))) {
    return failure();
  }
  auto ret = cast<DispatchReturnOp>(region.getBody().front().getTerminator());
  for (auto [r, v] : llvm::zip_equal(region.getResults(), ret.getValues())) {
    TensorInfo yielded = infos.lookup(v); // a copy: inserting r may rehash
    infos[r] = std::move(yielded);
  }
  return success();
}

LogicalResult PlanBuilder::emitChain(DispatchOp region, ArrayRef<Operation *> ops) {
  SmallVector<Value> externals;
  SmallVector<TensorInfo> externalInfos;
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    if (storesChannelsLast(op) && op != ops.back())
      return op->emitOpError("only the last op of a fused chain stores its result (channels-last or not)");
    for (Value v : op->getOperands()) {
      operands.push_back(info(v));
      Operation *def = v.getDefiningOp();
      bool internal = def && def->getParentOp() == region.getOperation();
      if (!internal && !llvm::is_contained(externals, v)) {
        externals.push_back(v);
        externalInfos.push_back(info(v));
      }
    }
    auto result = resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = ~0u; // no buffer: the value lives in registers
    infos[op->getResult(0)] = *result;
  }
  TensorInfo &last = infos[ops.back()->getResult(0)];
  last.buffer = ctx.newTransient(bytesOf(last));
  last.channelsLast = storesChannelsLast(ops.back());
  std::string name = dispatchName(ops.front()) + " + " + std::to_string(ops.size() - 1) + " fused";
  return emitElementwiseChain(ctx, ops, externals, externalInfos, last, name);
}

LogicalResult PlanBuilder::emitFusedRegion(ArrayRef<Operation *> ops, const FusedEmitter &emit) {
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    for (Value v : op->getOperands()) operands.push_back(info(v));
    if (storesChannelsLast(op) || llvm::any_of(operands, [](const TensorInfo &t) { return t.channelsLast; }))
      return op->emitOpError("a fused region cannot read or write channels-last tensors");
    auto result = resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = ~0u; // intermediates stay in the kernel's scratch
    infos[op->getResult(0)] = *result;
  }
  TensorInfo &last = infos[ops.back()->getResult(0)];
  last.buffer = ctx.newTransient(bytesOf(last));
  TensorInfo out = last; // a copy: info() may rehash
  return emit([&](Value v) -> const TensorInfo & { return info(v); }, out);
}

LogicalResult PlanBuilder::emitCudaRegion(DispatchOp region, ArrayRef<Operation *> ops) {
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
      auto c = sp().constValue(r);
      if (!c) return false;
      dims.push_back(*c);
    }
    return true;
  };
  SmallVector<CudaTensor> ext;
  for (Value v : externals) {
    CudaTensor t;
    t.elementType = info(v).elementType;
    if (!staticDims(info(v), t.dims))
      return region.emitOpError("placed on the GPU has an operand with run-time dims");
    if (info(v).buffer == ~0u)
      return region.emitOpError("placed on the GPU reads a weight stored only packed for the CPU");
    ext.push_back(std::move(t));
  }
  for (Operation *op : ops) {
    SmallVector<TensorInfo> operands;
    for (Value v : op->getOperands()) operands.push_back(info(v));
    auto result = resultInfo(op, operands);
    if (failed(result)) return failure();
    result->buffer = op == ops.back() ? ctx.newTransient(bytesOf(*result)) : ~0u;
    infos[op->getResult(0)] = *result;
  }
  const TensorInfo &last = infos[ops.back()->getResult(0)];
  CudaTensor result;
  result.elementType = last.elementType;
  if (!staticDims(last, result.dims)) return region.emitOpError("placed on the GPU has run-time result dims");
  auto kernel = generateCudaKernel(ops, externals, ext, result, "@V4F_KERNEL@", *ctx.cuda);
  if (failed(kernel)) return failure();
  if (ctx.cudaExecutable < 0) {
    PlanExecutable exe;
    exe.target = ExecutableTarget::Cuda;
    exe.format = ExecutableFormat::CudaModule;
    exe.abiVersion = V4F_KERNEL_ABI_VERSION;
    ctx.plan.executables.push_back(std::move(exe));
    ctx.cudaExecutable = int(ctx.plan.executables.size() - 1);
  }
  std::vector<std::string> &entries = ctx.plan.executables[ctx.cudaExecutable].entryPoints;
  uint32_t entry;
  if (auto it = ctx.cudaKernelsBySource.find(kernel->source); it != ctx.cudaKernelsBySource.end()) {
    entry = it->second;
  } else {
    entry = entries.size();
    std::string name = "v4f_cuda_" + std::to_string(entry);
    entries.push_back(name);
    ctx.cudaKernelsBySource.emplace(kernel->source, entry);
    std::string source = kernel->source;
    source.replace(source.find("@V4F_KERNEL@"), 12, name);
    ctx.cudaSource += source;
    std::vector<uint32_t> iface = {uint32_t(kernel->operands.size()), 0};
    iface.insert(iface.end(), kernel->access.begin(), kernel->access.end());
    ctx.cudaInterfaces.push_back(std::move(iface));
  }
  PlanDispatch d;
  d.executable = uint32_t(ctx.cudaExecutable);
  d.entryPoint = entry;
  for (int operand : kernel->operands) d.bindings.push_back(operand < 0 ? last.buffer : info(externals[operand]).buffer);
  d.workgroupCount = {sp().constant(kernel->grid[0]), sp().constant(kernel->grid[1]), sp().constant(kernel->grid[2])};
  d.blockDim = {kernel->block[0], kernel->block[1], kernel->block[2]};
  d.scratchSize = sp().constant(0);
  d.name = dispatchName(ops.front()) + (ops.size() > 1 ? " + " + std::to_string(ops.size() - 1) + " fused" : "");
  d.flops = sp().constant(int64_t(kernel->flops));
  d.precision = kernel->precision;
  d.access = kernel->access;
  ctx.plan.dispatches.push_back(std::move(d));
  return success();
}

LogicalResult PlanBuilder::emitKernels(Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  if (isa<ShapeOp, ScaledSizesOp>(op)) return emitShapeOf(ctx, op, operands, result);
  if (isa<ExpandOp>(op)) return emitExpand(ctx, op, operands, result);
  if (isa<SliceOp>(op)) return emitSlice(ctx, op, operands, result);
  if (isa<RangeOp>(op)) return emitRange(ctx, op, operands, result);
  if (isa<FillOp>(op)) return emitFill(ctx, op, operands, result);
  if (isa<PadOp>(op)) return emitPad(ctx, op, operands, result);
  if (isa<CumSumOp>(op)) return emitCumSum(ctx, op, operands, result);
  if (isa<GatherElementsOp>(op)) return emitGatherElements(ctx, op, operands, result);
  if (isa<ScatterElementsOp>(op)) return emitScatterElements(ctx, op, operands, result);
  if (isa<ScatterNDOp>(op)) return emitScatterND(ctx, op, operands, result);
  if (isa<GatherNDOp>(op)) return emitGatherND(ctx, op, operands, result);
  if (isa<TriluOp>(op)) return emitTrilu(ctx, op, operands, result);
  if (isa<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp, HardSigmoidOp, HardSwishOp,
          ElementwiseOp>(op))
    return emitElementwise(ctx, op, operands, result);
  if (isa<ConvOp>(op)) return emitConv(ctx, op, operands, result);
  if (isa<MatMulOp>(op)) return emitMatMul(ctx, op, operands, result);
  if (isa<QuantizedMatMulOp>(op)) return emitQuantizedMatMul(ctx, op, operands, result);
  if (isa<Int4MatMulOp>(op)) return emitInt4MatMul(ctx, op, operands, result);
  if (isa<QuantizedConvOp>(op)) return emitQuantizedConv(ctx, op, operands, result);
  if (isa<IntegerMatMulOp>(op)) return emitIntegerMatMul(ctx, op, operands, result);
  if (isa<MaxPoolOp, AvgPoolOp>(op)) return emitPool(ctx, op, operands, result);
  if (isa<ReduceMeanOp>(op)) return emitReduceMean(ctx, op, operands, result);
  if (isa<SoftmaxOp>(op)) return emitSoftmax(ctx, op, operands, result);
  if (isa<ReduceOp>(op)) return emitReduce(ctx, op, operands, result);
  if (isa<ArgReduceOp>(op)) return emitArgReduce(ctx, op, operands, result);
  if (isa<LayerNormOp>(op)) return emitLayerNorm(ctx, op, operands, result);
  if (isa<TransposeOp>(op)) return emitTranspose(ctx, op, operands, result);
  if (isa<ConcatOp>(op)) return emitConcat(ctx, op, operands, result);
  if (isa<GatherOp>(op)) return emitGather(ctx, op, operands, result);
  return op->emitOpError("is not supported by the CPU backend");
}

LogicalResult buildExecutablePlan(ModuleOp graph, ModuleOp kernels, ExecutablePlan &plan,
                                  std::vector<uint8_t> &constants, CudaKernels *cuda) {
  auto func = graph.lookupSymbol<func::FuncOp>("main");
  if (!func) return graph.emitError("module has no func @main");
  plan.executables.emplace_back();
  DispatchContext ctx(kernels, plan, plan.executables.size() - 1, constants);
  PlanBuilder pb(ctx);
  if (cuda) {
    ctx.cuda = &cuda->options;
    pb.cpuNotes = &cuda->cpuRegions;
  }

  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    TensorSignature sig;
    auto name = func.getArgAttrOfType<StringAttr>(i, "v4f.name");
    sig.name = name ? name.str() : "input" + std::to_string(i);
    sig.dtype = dtypeOf(type.getElementType());
    if (sig.dtype == DType::Unknown) return func.emitError("input '") << sig.name << "' has an unsupported element type";
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
      Reg r = dynamic ? ctx.shapes.inputDim(i, d) : ctx.shapes.constant(type.getDimSize(d));
      sig.dimRegs.push_back(r);
      t.dims.push_back(r);
    }
    // Dims sharing a symbol name share one register (the runtime checks they agree).
    PlanBuffer b;
    b.kind = BufferKind::Input;
    b.index = i;
    b.sizeReg = pb.bytesOf(t);
    plan.buffers.push_back(b);
    t.buffer = sig.buffer = plan.buffers.size() - 1;
    // Small integer inputs may hold shapes: their values become registers
    // (read by the runtime only when a shape depends on them).
    if ((type.getElementType().isSignlessInteger(64) || type.getElementType().isSignlessInteger(32)) &&
        type.hasStaticShape() && type.getNumElements() <= 64) {
      t.values.emplace();
      for (int64_t k = 0; k < type.getNumElements(); ++k) t.values->push_back(ctx.shapes.inputValue(i, k));
    }
    pb.infos[arg] = t;
    plan.inputs.push_back(sig);
  }

  func.walk([&](SelectBranchOp sel) { pb.condValues.insert(sel.getCond()); });
  for (BlockArgument arg : func.getArguments()) pb.noteCond(arg);

  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<bool> claimed(plan.buffers.size(), false);
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        TensorInfo t = pb.info(v);
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
          out.sizeReg = pb.bytesOf(t);
          plan.buffers.push_back(out);
          claimed.push_back(true);
          TensorInfo dst = t;
          dst.buffer = sig.buffer = plan.buffers.size() - 1;
          emitCopy(ctx, t, dst, "copy to output '" + sig.name + "'");
        }
        plan.outputs.push_back(sig);
      }
      continue;
    }
    if (failed(pb.emitBlockOp(op))) return failure();
  }

  if (failed(pb.assignGuards(func.getBody().front(), pb.ranges))) return failure();
  WalkResult guarded = func.walk([&](LoopOp loop) {
    return failed(pb.assignGuards(loop.getBody().front(), pb.ranges)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (guarded.wasInterrupted() || ctx.interfaceFailed) return failure();
  plan.shapeProgram = ctx.shapes.instructions();
  plan.shapeLabels = ctx.shapes.labels();
  if (cuda && ctx.cudaExecutable >= 0) {
    // v4f-assign-placement keeps models with If/Loop on the CPU; the only
    // other guards choose between CPU conv algorithms that write the same
    // buffers whole, so the transfers around them hold whichever runs.
    if (!plan.loops.empty())
      return func.emitError("internal compiler error: GPU dispatches in a plan with a run-time loop");
    insertTransfers(plan);
    cuda->source = cudaPrelude(cuda->options) + ctx.cudaSource;
    cuda->interfaces = std::move(ctx.cudaInterfaces);
  }
  computeBufferLifetimes(plan);
  compactShapeProgram(plan);
  computeStaticArena(plan);
  return success();
}

} // namespace v4f
