//===- ShapeValueKernels.cpp - kernels of ops with value-dependent shapes --===//
//
// Range, GatherElements, Trilu, Fill, Pad, CumSum, Shape, Expand and Slice:
// their extents and offsets are shape-program registers (ShapeValueOps.cpp)
// that the kernels read as push constants.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "v4f/Plan/ShapeValues.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {

LogicalResult emitRange(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  auto &sp = ctx.shapes;
  auto start = valuesOf(op, operands[0], "start"), delta = valuesOf(op, operands[2], "delta");
  if (failed(start) || failed(delta)) return failure();
  Reg n = result.dims[0];
  auto [groups, perGroup] = ctx.splitRows(n, sp.constant(1));
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(n), kb->dim(perGroup));
  Value s0 = kb->dim((*start)[0]), d = kb->dim((*delta)[0]);
  Type t = result.elementType;
  kb->forLoop(begin, end, kb->c(1), [&](Value i) {
    Value v = kb->add(s0, kb->mul(i, d));
    if (!t.isInteger(64)) v = kb->b.create<arith::TruncIOp>(kb->loc, t, v);
    kb->store(v, kb->binding(0), i);
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer}, groups, dispatchName(op));
  return success();
}

LogicalResult emitGatherElements(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                 const TensorInfo &result) {
  auto ge = cast<GatherElementsOp>(op);
  const TensorInfo &D = operands[0], &I = operands[1];
  size_t rank = D.dims.size();
  int64_t axis = ge.getAxis();
  Reg count = ctx.numel(I);
  auto [groups, perGroup] = ctx.splitRows(count, ctx.shapes.constant(1));
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(count), kb->dim(perGroup));
  std::vector<Value> dstr(rank), idims(rank);
  Value running = kb->c(1);
  for (size_t d = rank; d-- > 0;) {
    dstr[d] = running;
    running = kb->mul(running, kb->dim(D.dims[d]));
    idims[d] = kb->dim(I.dims[d]);
  }
  Value extent = kb->dim(D.dims[axis]);
  Type idType = I.elementType, scalar = bodyScalarType(D.elementType);
  Value falseV = kb->b.create<arith::ConstantIntOp>(kb->loc, 0, 1);
  auto bad = kb->forLoop(begin, end, kb->c(1), ValueRange{falseV}, [&](Value e, ValueRange acc) -> SmallVector<Value> {
    Value id = kb->load(idType, kb->binding(2), e);
    if (!idType.isInteger(64)) id = kb->b.create<arith::ExtSIOp>(kb->loc, kb->b.getI64Type(), id);
    id = kb->select(kb->cmp(arith::CmpIPredicate::slt, id, kb->c(0)), kb->add(id, extent), id);
    Value oob = kb->b.create<arith::OrIOp>(kb->loc, kb->cmp(arith::CmpIPredicate::slt, id, kb->c(0)),
                                           kb->cmp(arith::CmpIPredicate::sge, id, extent));
    id = kb->select(oob, kb->c(0), id);
    Value off = kb->c(0), rest = e;
    for (size_t d = rank; d-- > 0;) {
      Value idx = kb->rem(rest, idims[d]);
      rest = kb->div(rest, idims[d]);
      off = kb->add(off, kb->mul((int64_t)d == axis ? id : idx, dstr[d]));
    }
    kb->store(kb->load(scalar, kb->binding(1), off), kb->binding(0), e);
    return {kb->b.create<arith::OrIOp>(kb->loc, acc[0], oob)};
  });
  kb->finish(kb->b.create<arith::SelectOp>(kb->loc, bad[0], kb->b.create<arith::ConstantIntOp>(kb->loc, 1, 32),
                                           kb->b.create<arith::ConstantIntOp>(kb->loc, 0, 32)));
  ctx.addDispatch(*kb, {result.buffer, D.buffer, I.buffer}, groups, dispatchName(op));
  return success();
}

LogicalResult emitTrilu(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  auto &sp = ctx.shapes;
  auto tr = cast<TriluOp>(op);
  const TensorInfo &X = operands[0];
  Reg kReg = sp.constant(0);
  if (tr.getK()) {
    auto k = valuesOf(op, operands[1], "k");
    if (failed(k)) return failure();
    kReg = (*k)[0];
  }
  size_t rank = X.dims.size();
  Reg rows = sp.product(X.dims, 0, rank - 1), cols = X.dims[rank - 1], M = X.dims[rank - 2];
  auto [groups, perGroup] = ctx.splitRows(rows, cols);
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(perGroup));
  Value C = kb->dim(cols), m = kb->dim(M), k = kb->dim(kReg);
  Type scalar = bodyScalarType(X.elementType);
  Value zero = llvm::isa<FloatType>(scalar)
                   ? (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getFloatAttr(scalar, 0.0))
                   : (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getIntegerAttr(scalar, 0));
  bool upper = tr.getUpper();
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value i = kb->rem(row, m);
    kb->forLoop(kb->c(0), C, kb->c(1), [&](Value j) {
      Value at = kb->add(kb->mul(row, C), j);
      Value diff = kb->sub(j, i);
      Value keep = upper ? kb->cmp(arith::CmpIPredicate::sge, diff, k) : kb->cmp(arith::CmpIPredicate::sle, diff, k);
      Value v = kb->load(scalar, kb->binding(1), at);
      kb->store(kb->b.create<arith::SelectOp>(kb->loc, keep, v, zero), kb->binding(0), at);
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, dispatchName(op));
  return success();
}

LogicalResult emitFill(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  auto fill = cast<FillOp>(op);
  Reg n = ctx.numel(result);
  auto [groups, perGroup] = ctx.splitRows(n, ctx.shapes.constant(1));
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(n), kb->dim(perGroup));
  TypedAttr value = fill.getValue();
  Type scalar = bodyScalarType(value.getType());
  if (auto i = llvm::dyn_cast<IntegerAttr>(value)) value = kb->b.getIntegerAttr(scalar, i.getValue());
  Value v = kb->b.create<arith::ConstantOp>(kb->loc, value);
  kb->forLoop(begin, end, kb->c(1), [&](Value i) { kb->store(v, kb->binding(0), i); });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer}, groups, dispatchName(op));
  (void)operands;
  return success();
}

LogicalResult emitPad(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  auto pad = cast<PadOp>(op);
  auto amounts = padAmounts(ctx, pad, operands);
  if (failed(amounts)) return failure();
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  Reg count = ctx.numel(result);
  auto [groups, perGroup] = ctx.splitRows(count, ctx.shapes.constant(1));
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(count), kb->dim(perGroup));
  std::vector<Value> inDims(rank), outDims(rank), strides(rank), padBegin(rank);
  // Channels-last (v4f-assign-cpu-layouts; input and result alike,
  // checkLayouts): the same walk over the stored order N, H, W, C.
  std::vector<size_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = X.channelsLast ? kChannelsLastOrder[d] : d;
  Value running = kb->c(1);
  for (size_t d = rank; d-- > 0;) {
    inDims[d] = kb->dim(X.dims[order[d]]);
    outDims[d] = kb->dim(result.dims[order[d]]);
    padBegin[d] = kb->dim(amounts->first[order[d]]);
    strides[d] = running;
    running = kb->mul(running, inDims[d]);
  }
  Type scalar = bodyScalarType(X.elementType);
  StringRef mode = pad.getMode();
  Value fill;
  if (pad.getConstantValue())
    fill = kb->load(scalar, kb->binding(2), kb->c(0));
  else
    fill = llvm::isa<FloatType>(scalar)
               ? (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getFloatAttr(scalar, 0.0))
               : (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getIntegerAttr(scalar, 0));
  kb->forLoop(begin, end, kb->c(1), [&](Value o) {
    Value rest = o, off = kb->c(0);
    Value inside = kb->b.create<arith::ConstantIntOp>(kb->loc, 1, 1);
    for (size_t d = rank; d-- > 0;) {
      Value idx = kb->rem(rest, outDims[d]);
      rest = kb->div(rest, outDims[d]);
      Value i = kb->sub(idx, padBegin[d]);
      Value D = inDims[d];
      Value lo = kb->cmp(arith::CmpIPredicate::slt, i, kb->c(0));
      Value hi = kb->cmp(arith::CmpIPredicate::sge, i, D);
      Value src;
      if (mode == "edge") {
        src = kb->min(kb->max(i, kb->c(0)), kb->sub(D, kb->c(1)));
      } else if (mode == "wrap") {
        Value safeD = kb->max(D, kb->c(1));
        src = kb->rem(kb->add(kb->rem(i, safeD), safeD), safeD);
      } else if (mode == "reflect") {
        // Mirror without repeating the edge, folded until inside.
        Value period = kb->max(kb->mul(kb->sub(D, kb->c(1)), kb->c(2)), kb->c(1));
        Value m = kb->rem(kb->add(kb->rem(i, period), period), period);
        src = kb->select(kb->cmp(arith::CmpIPredicate::sge, m, D), kb->sub(period, m), m);
      } else {
        inside = kb->b.create<arith::AndIOp>(
            kb->loc, inside,
            kb->b.create<arith::XOrIOp>(kb->loc, kb->b.create<arith::OrIOp>(kb->loc, lo, hi),
                                        kb->b.create<arith::ConstantIntOp>(kb->loc, 1, 1)));
        src = kb->min(kb->max(i, kb->c(0)), kb->max(kb->sub(D, kb->c(1)), kb->c(0)));
      }
      off = kb->add(off, kb->mul(src, strides[d]));
    }
    Value v = kb->load(scalar, kb->binding(1), kb->select(inside, off, kb->c(0)));
    if (mode == "constant") v = kb->b.create<arith::SelectOp>(kb->loc, inside, v, fill);
    kb->store(v, kb->binding(0), o);
  });
  kb->finish();
  std::vector<uint32_t> bindings = {result.buffer, X.buffer};
  if (pad.getConstantValue()) bindings.push_back(operands[2].buffer);
  ctx.addDispatch(*kb, bindings, groups, dispatchName(op));
  return success();
}

LogicalResult emitCumSum(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  auto &sp = ctx.shapes;
  auto cs = cast<CumSumOp>(op);
  auto axisV = valuesOf(op, operands[1], "axis");
  if (failed(axisV)) return failure();
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  Reg zero = sp.constant(0), one = sp.constant(1);
  Reg axis = sp.select(sp.lt((*axisV)[0], zero), sp.add((*axisV)[0], sp.constant(rank)), (*axisV)[0]);
  Reg outer = one, inner = one;
  for (size_t d = 0; d < rank; ++d) {
    outer = sp.mul(outer, sp.select(sp.lt(sp.constant(d), axis), X.dims[d], one));
    inner = sp.mul(inner, sp.select(sp.lt(axis, sp.constant(d)), X.dims[d], one));
  }
  Reg len = pick(sp, X.dims, axis);
  Reg lines = sp.mul(outer, inner);
  auto [groups, perGroup] = ctx.splitRows(lines, len);
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(lines), kb->dim(perGroup));
  Value L = kb->dim(len), I = kb->dim(inner);
  Type scalar = bodyScalarType(X.elementType);
  bool f = llvm::isa<FloatType>(scalar);
  bool product = cs.getProduct();
  Value zeroV = f ? (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getFloatAttr(scalar, product ? 1.0 : 0.0))
                  : (Value)kb->b.create<arith::ConstantOp>(kb->loc, kb->b.getIntegerAttr(scalar, product ? 1 : 0));
  bool exclusive = cs.getExclusive(), reverse = cs.getReverse();
  kb->forLoop(begin, end, kb->c(1), [&](Value line) {
    Value base = kb->add(kb->mul(kb->div(line, I), kb->mul(L, I)), kb->rem(line, I));
    kb->forLoop(kb->c(0), L, kb->c(1), ValueRange{zeroV}, [&](Value j, ValueRange acc) -> SmallVector<Value> {
      Value k = reverse ? kb->sub(kb->sub(L, kb->c(1)), j) : j;
      Value at = kb->add(base, kb->mul(k, I));
      Value x = kb->load(scalar, kb->binding(1), at);
      Value next = product ? (f ? (Value)kb->b.create<arith::MulFOp>(kb->loc, acc[0], x)
                                : (Value)kb->b.create<arith::MulIOp>(kb->loc, acc[0], x))
                           : (f ? (Value)kb->b.create<arith::AddFOp>(kb->loc, acc[0], x)
                                : (Value)kb->b.create<arith::AddIOp>(kb->loc, acc[0], x));
      kb->store(exclusive ? acc[0] : next, kb->binding(0), at);
      return {next};
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, dispatchName(op));
  return success();
}

LogicalResult emitShapeOf(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                          const TensorInfo &result) {
  if (!result.values) return op->emitOpError("its scales must be a graph input or a constant (with static dims)");
  auto kb = ctx.newKernel(dispatchName(op));
  for (size_t k = 0; k < result.values->size(); ++k) kb->store(kb->dim((*result.values)[k]), kb->binding(0), kb->c(k));
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer}, ctx.shapes.constant(1), dispatchName(op));
  (void)operands;
  return success();
}

LogicalResult emitExpand(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  emitStridedCopy(ctx, dispatchName(op), operands[0], result, {}, ctx.shapes.constant(0), /*broadcastSource=*/true);
  return success();
}

LogicalResult emitSlice(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  auto &sp = ctx.shapes;
  auto p = sliceParams(ctx, cast<SliceOp>(op), operands);
  if (failed(p)) return failure();
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  std::vector<Reg> strides(rank);
  Reg natural = sp.constant(1), base = sp.constant(0);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = sp.mul(natural, p->step[d]);
    base = sp.add(base, sp.mul(p->start[d], natural));
    natural = sp.mul(natural, X.dims[d]);
  }
  emitStridedCopy(ctx, dispatchName(op), X, result, strides, base, /*broadcastSource=*/false);
  return success();
}

void registerShapeValueKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<ShapeOp, ScaledSizesOp>(emitShapeOf);
  registry.addOpKernel<ExpandOp>(emitExpand);
  registry.addOpKernel<SliceOp>(emitSlice);
  registry.addOpKernel<RangeOp>(emitRange);
  registry.addOpKernel<FillOp>(emitFill);
  registry.addOpKernel<PadOp>(emitPad);
  registry.addOpKernel<CumSumOp>(emitCumSum);
  registry.addOpKernel<GatherElementsOp>(emitGatherElements);
  registry.addOpKernel<TriluOp>(emitTrilu);
}

} // namespace v4f
