//===- IndexingKernels.cpp - scatter, GatherND and TopK kernels -----------===//
//
// scatter_elements / scatter_nd: the result is first a copy of data (one
// strided-map dispatch), then a second dispatch writes the updates into it.
// Updates are applied in index order wherever two of them can meet, so
// duplicate indices give the same result as a sequential loop:
//   - scatter_elements: two updates can only meet when they differ in the
//     axis coordinate alone, so workgroups split the lines along the axis;
//   - scatter_nd: any two index tuples can meet, so workgroups split the
//     elements of the addressed slice and each walks every tuple in order.
// gather_nd copies one slice per index tuple (rows split across workgroups).
// top_k keeps, per line along the axis, a sorted run of the best k elements
// in the outputs themselves (insertion; stable, so ties keep index order).
//
// Out-of-range indices and operand dims that disagree at run time make the
// kernel return V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE without touching memory
// outside the buffers.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"

#include "v4f/Plan/PlanBuilder.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace v4f {
namespace {

Value i1Const(KernelBuilder &kb, bool v) { return kb.b.create<arith::ConstantIntOp>(kb.loc, v ? 1 : 0, 1); }
Value orI(KernelBuilder &kb, Value a, Value b) { return kb.b.create<arith::OrIOp>(kb.loc, a, b); }
Value andI(KernelBuilder &kb, Value a, Value b) { return kb.b.create<arith::AndIOp>(kb.loc, a, b); }
Value notI(KernelBuilder &kb, Value a) { return kb.b.create<arith::XOrIOp>(kb.loc, a, i1Const(kb, true)); }

Value status(KernelBuilder &kb, Value bad) {
  return kb.b.create<arith::SelectOp>(kb.loc, bad, kb.b.create<arith::ConstantIntOp>(kb.loc, 1, 32),
                                      kb.b.create<arith::ConstantIntOp>(kb.loc, 0, 32));
}

/// True when any pair of dims differs at run time (pairs equal at compile
/// time emit nothing).
Value dimsDiffer(KernelBuilder &kb, ShapeProgramBuilder &sp, ArrayRef<Reg> a, ArrayRef<Reg> b) {
  Value bad = i1Const(kb, false);
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    if (x == y) continue;
    auto cx = sp.constValue(x), cy = sp.constValue(y);
    if (cx && cy && *cx == *cy) continue;
    bad = orI(kb, bad, kb.cmp(arith::CmpIPredicate::ne, kb.dim(x), kb.dim(y)));
  }
  return bad;
}

/// Loads index `at` of an int32/int64 buffer as i64, wraps a negative value
/// by `extent`, and returns {index clamped to 0 when out of range, out of range}.
std::pair<Value, Value> loadIndex(KernelBuilder &kb, Type idType, Value base, Value at, Value extent) {
  Value id = kb.load(idType, base, at);
  if (!idType.isInteger(64)) id = kb.b.create<arith::ExtSIOp>(kb.loc, kb.b.getI64Type(), id);
  id = kb.select(kb.cmp(arith::CmpIPredicate::slt, id, kb.c(0)), kb.add(id, extent), id);
  Value oob = orI(kb, kb.cmp(arith::CmpIPredicate::slt, id, kb.c(0)), kb.cmp(arith::CmpIPredicate::sge, id, extent));
  return {kb.select(oob, kb.c(0), id), oob};
}

/// The scatter reduction of the element already there and the update.
Value combine(KernelBuilder &kb, StringRef reduction, Type element, Value old, Value update) {
  OpBuilder &b = kb.b;
  Location l = kb.loc;
  if (reduction == "none") return update;
  if (llvm::isa<FloatType>(element)) {
    if (reduction == "add") return b.create<arith::AddFOp>(l, old, update);
    if (reduction == "mul") return b.create<arith::MulFOp>(l, old, update);
    if (reduction == "max") return b.create<arith::MaximumFOp>(l, old, update);
    return b.create<arith::MinimumFOp>(l, old, update);
  }
  bool u = element.isUnsignedInteger();
  if (reduction == "add") return b.create<arith::AddIOp>(l, old, update);
  if (reduction == "mul") return b.create<arith::MulIOp>(l, old, update);
  if (reduction == "max")
    return u ? (Value)b.create<arith::MaxUIOp>(l, old, update) : b.create<arith::MaxSIOp>(l, old, update);
  return u ? (Value)b.create<arith::MinUIOp>(l, old, update) : b.create<arith::MinSIOp>(l, old, update);
}

/// Row-major strides of `dims` as kernel values.
std::vector<Value> strides(KernelBuilder &kb, ArrayRef<Reg> dims) {
  std::vector<Value> s(dims.size());
  Value running = kb.c(1);
  for (size_t d = dims.size(); d-- > 0;) {
    s[d] = running;
    running = kb.mul(running, kb.dim(dims[d]));
  }
  return s;
}

} // namespace

LogicalResult emitScatterElements(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                  const TensorInfo &result) {
  auto se = cast<ScatterElementsOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &D = operands[0], &I = operands[1], &U = operands[2];
  std::string name = dispatchName(op);
  emitCopy(ctx, D, result, name + " (copy)");
  size_t rank = D.dims.size();
  int64_t axis = se.getAxis();
  Reg lines = sp.constant(1);
  for (size_t d = 0; d < rank; ++d)
    if ((int64_t)d != axis) lines = sp.mul(lines, I.dims[d]);
  auto [groups, perGroup] = ctx.splitRows(lines, I.dims[axis]);
  auto kb = ctx.newKernel(name);
  Value mismatch = dimsDiffer(*kb, sp, I.dims, U.dims);
  auto [begin, rawEnd] = kb->workgroupRange(kb->dim(lines), kb->dim(perGroup));
  Value end = kb->select(mismatch, begin, rawEnd);
  std::vector<Value> dstr = strides(*kb, D.dims), istr = strides(*kb, I.dims);
  Value extent = kb->dim(D.dims[axis]), len = kb->dim(I.dims[axis]);
  Type scalar = bodyScalarType(D.elementType);
  StringRef reduction = se.getReduction();
  auto bad =
      kb->forLoop(begin, end, kb->c(1), ValueRange{mismatch}, [&](Value line, ValueRange acc) -> SmallVector<Value> {
        // Decompose the line over the non-axis dims of indices.
        Value rest = line, dBase = kb->c(0), iBase = kb->c(0), outside = i1Const(*kb, false);
        for (size_t d = rank; d-- > 0;) {
          if ((int64_t)d == axis) continue;
          Value extentD = kb->dim(I.dims[d]);
          Value idx = kb->rem(rest, extentD);
          rest = kb->div(rest, extentD);
          outside = orI(*kb, outside, kb->cmp(arith::CmpIPredicate::sge, idx, kb->dim(D.dims[d])));
          dBase = kb->add(dBase, kb->mul(idx, dstr[d]));
          iBase = kb->add(iBase, kb->mul(idx, istr[d]));
        }
        auto lineBad = kb->forLoop(
            kb->c(0), len, kb->c(1), ValueRange{outside}, [&](Value t, ValueRange inner) -> SmallVector<Value> {
              Value at = kb->add(iBase, kb->mul(t, istr[axis]));
              auto [id, oob] = loadIndex(*kb, I.elementType, kb->binding(1), at, extent);
              Value skip = orI(*kb, oob, outside);
              kb->ifThen(notI(*kb, skip), [&] {
                Value off = kb->add(dBase, kb->mul(id, dstr[axis]));
                Value update = kb->load(scalar, kb->binding(2), at);
                Value v = reduction == "none"
                              ? update
                              : combine(*kb, reduction, D.elementType, kb->load(scalar, kb->binding(0), off), update);
                kb->store(v, kb->binding(0), off);
              });
              return {orI(*kb, inner[0], skip)};
            });
        return {orI(*kb, acc[0], lineBad[0])};
      });
  kb->finish(status(*kb, bad[0]));
  ctx.addDispatch(*kb, {result.buffer, I.buffer, U.buffer}, groups, name);
  return success();
}

LogicalResult emitScatterND(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                            const TensorInfo &result) {
  auto sn = cast<ScatterNDOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &D = operands[0], &I = operands[1], &U = operands[2];
  std::string name = dispatchName(op);
  emitCopy(ctx, D, result, name + " (copy)");
  size_t irank = I.dims.size();
  int64_t q = *sp.constValue(I.dims[irank - 1]);
  Reg tuples = sp.product(I.dims, 0, irank - 1);
  Reg inner = sp.product(D.dims, q, D.dims.size());
  std::vector<Reg> expected(I.dims.begin(), I.dims.end() - 1);
  expected.insert(expected.end(), D.dims.begin() + q, D.dims.end());
  // Workgroups own parts of the slice; each applies every tuple in order.
  auto [groups, perGroup] = ctx.splitRows(inner, tuples);
  auto kb = ctx.newKernel(name);
  Value mismatch = dimsDiffer(*kb, sp, U.dims, expected);
  auto [begin, end] = kb->workgroupRange(kb->dim(inner), kb->dim(perGroup));
  std::vector<Value> dstr = strides(*kb, D.dims);
  Value n = kb->select(mismatch, kb->c(0), kb->dim(tuples)), S = kb->dim(inner);
  Type scalar = bodyScalarType(D.elementType);
  StringRef reduction = sn.getReduction();
  auto bad =
      kb->forLoop(kb->c(0), n, kb->c(1), ValueRange{mismatch}, [&](Value t, ValueRange acc) -> SmallVector<Value> {
        Value off = kb->c(0), oob = i1Const(*kb, false);
        for (int64_t j = 0; j < q; ++j) {
          auto [id, o] = loadIndex(*kb, I.elementType, kb->binding(1), kb->add(kb->mul(t, kb->c(q)), kb->c(j)),
                                   kb->dim(D.dims[j]));
          off = kb->add(off, kb->mul(id, dstr[j]));
          oob = orI(*kb, oob, o);
        }
        kb->ifThen(notI(*kb, oob), [&] {
          Value src = kb->mul(t, S);
          kb->forLoop(begin, end, kb->c(1), [&](Value e) {
            Value at = kb->add(off, e);
            Value update = kb->load(scalar, kb->binding(2), kb->add(src, e));
            Value v = reduction == "none"
                          ? update
                          : combine(*kb, reduction, D.elementType, kb->load(scalar, kb->binding(0), at), update);
            kb->store(v, kb->binding(0), at);
          });
        });
        return {orI(*kb, acc[0], oob)};
      });
  kb->finish(status(*kb, bad[0]));
  ctx.addDispatch(*kb, {result.buffer, I.buffer, U.buffer}, groups, name);
  return success();
}

LogicalResult emitGatherND(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                           const TensorInfo &result) {
  auto gn = cast<GatherNDOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &D = operands[0], &I = operands[1];
  std::string name = dispatchName(op);
  size_t irank = I.dims.size();
  int64_t b = gn.getBatchDims(), q = *sp.constValue(I.dims[irank - 1]);
  Reg rows = sp.product(I.dims, 0, irank - 1);            // batches * tuples per batch
  Reg perBatch = sp.product(I.dims, b, irank - 1);        // tuples per batch
  Reg batchStride = sp.product(D.dims, b, D.dims.size()); // data elements per batch
  Reg inner = sp.product(D.dims, b + q, D.dims.size());   // elements per slice
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, inner);
  auto kb = ctx.newKernel(name);
  Value mismatch = dimsDiffer(*kb, sp, ArrayRef<Reg>(D.dims).take_front(b), ArrayRef<Reg>(I.dims).take_front(b));
  auto [begin, rawEnd] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value end = kb->select(mismatch, begin, rawEnd);
  std::vector<Value> dstr = strides(*kb, D.dims);
  Value perB = kb->dim(perBatch), bStride = kb->dim(batchStride), S = kb->dim(inner);
  Type scalar = bodyScalarType(D.elementType);
  auto bad =
      kb->forLoop(begin, end, kb->c(1), ValueRange{mismatch}, [&](Value row, ValueRange acc) -> SmallVector<Value> {
        Value off = kb->mul(kb->div(row, perB), bStride), oob = i1Const(*kb, false);
        for (int64_t j = 0; j < q; ++j) {
          auto [id, o] = loadIndex(*kb, I.elementType, kb->binding(2), kb->add(kb->mul(row, kb->c(q)), kb->c(j)),
                                   kb->dim(D.dims[b + j]));
          off = kb->add(off, kb->mul(id, dstr[b + j]));
          oob = orI(*kb, oob, o);
        }
        Value dst = kb->mul(row, S);
        kb->forLoop(kb->c(0), S, kb->c(1), [&](Value e) {
          kb->store(kb->load(scalar, kb->binding(1), kb->add(off, e)), kb->binding(0), kb->add(dst, e));
        });
        return {orI(*kb, acc[0], oob)};
      });
  kb->finish(status(*kb, bad[0]));
  ctx.addDispatch(*kb, {result.buffer, D.buffer, I.buffer}, groups, name);
  return success();
}

LogicalResult emitTopK(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, Reg k,
                       const TensorInfo &values, const TensorInfo &indices) {
  auto topk = cast<TopKOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  std::string name = dispatchName(op);
  int64_t axis = topk.getAxis();
  size_t rank = X.dims.size();
  Reg outer = sp.product(X.dims, 0, axis), inner = sp.product(X.dims, axis + 1, rank);
  Reg lines = sp.mul(outer, inner);
  auto [groups, perGroup] = ctx.splitRows(lines, X.dims[axis]);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location l = kb->loc;
  Value L = kb->dim(X.dims[axis]), K = kb->dim(k), In = kb->dim(inner);
  Value bad = orI(*kb, kb->cmp(arith::CmpIPredicate::slt, K, kb->c(0)), kb->cmp(arith::CmpIPredicate::sgt, K, L));
  Value empty = orI(*kb, bad, kb->cmp(arith::CmpIPredicate::eq, K, kb->c(0)));
  auto [begin, rawEnd] = kb->workgroupRange(kb->dim(lines), kb->dim(perGroup));
  Value end = kb->select(empty, begin, rawEnd);
  Type scalar = bodyScalarType(X.elementType);
  bool largest = topk.getLargest();
  // better(a, b): a comes before b (NaN counts as the largest value).
  auto better = [&](Value a, Value c) -> Value {
    if (llvm::isa<FloatType>(scalar)) {
      auto nan = [&](Value v) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v); };
      auto num = [&](Value v) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ORD, v, v); };
      if (largest)
        return orI(*kb, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, a, c), andI(*kb, nan(a), num(c)));
      return orI(*kb, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, a, c), andI(*kb, num(a), nan(c)));
    }
    bool u = X.elementType.isUnsignedInteger();
    auto p = largest ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                     : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
    return b.create<arith::CmpIOp>(l, p, a, c);
  };
  auto i64 = b.getI64Type();
  kb->forLoop(begin, end, kb->c(1), [&](Value line) {
    Value o = kb->div(line, In), r = kb->rem(line, In);
    Value inBase = kb->add(kb->mul(o, kb->mul(L, In)), r);
    Value outBase = kb->add(kb->mul(o, kb->mul(K, In)), r);
    auto outAt = [&](Value p) { return kb->add(outBase, kb->mul(p, In)); };
    kb->forLoop(kb->c(0), L, kb->c(1), ValueRange{kb->c(0)}, [&](Value i, ValueRange acc) -> SmallVector<Value> {
      Value count = acc[0];
      Value x = kb->load(scalar, kb->binding(2), kb->add(inBase, kb->mul(i, In)));
      Value last = kb->sub(K, kb->c(1));
      Value admit = orI(*kb, kb->cmp(arith::CmpIPredicate::slt, count, K),
                        better(x, kb->load(scalar, kb->binding(0), outAt(last))));
      kb->ifThen(admit, [&] {
        // Shift worse entries down one slot, then insert x.
        Value start = kb->min(count, last);
        auto loop = b.create<scf::WhileOp>(l, TypeRange{i64}, ValueRange{start});
        {
          OpBuilder::InsertionGuard guard(b);
          Block *before = b.createBlock(&loop.getBefore(), {}, {i64}, {l});
          Value p = before->getArgument(0);
          Value prev = kb->max(kb->sub(p, kb->c(1)), kb->c(0));
          Value go = andI(*kb, kb->cmp(arith::CmpIPredicate::sgt, p, kb->c(0)),
                          better(x, kb->load(scalar, kb->binding(0), outAt(prev))));
          b.create<scf::ConditionOp>(l, go, ValueRange{p});
        }
        {
          OpBuilder::InsertionGuard guard(b);
          Block *after = b.createBlock(&loop.getAfter(), {}, {i64}, {l});
          Value p = after->getArgument(0);
          Value prev = kb->sub(p, kb->c(1));
          kb->store(kb->load(scalar, kb->binding(0), outAt(prev)), kb->binding(0), outAt(p));
          kb->store(kb->load(i64, kb->binding(1), outAt(prev)), kb->binding(1), outAt(p));
          b.create<scf::YieldOp>(l, ValueRange{prev});
        }
        b.setInsertionPointAfter(loop);
        Value p = loop.getResult(0);
        kb->store(x, kb->binding(0), outAt(p));
        kb->store(i, kb->binding(1), outAt(p));
      });
      return {kb->min(kb->add(count, kb->c(1)), K)};
    });
  });
  kb->finish(status(*kb, bad));
  ctx.addDispatch(*kb, {values.buffer, indices.buffer, X.buffer}, groups, name);
  return success();
}

/// TopK: both results have the input's dims with the axis dim = k's value.
static LogicalResult emitTopKOp(CPUKernelContext &ctx, PlanBuilder &pb, Operation *topkOp,
                                ArrayRef<TensorInfo> operands) {
  auto op = cast<TopKOp>(topkOp);
  const TensorInfo &X = operands[0];
  int64_t axis = op.getAxis();
  Reg k;
  if (!op.getValues().getType().isDynamicDim(axis))
    k = ctx.shapes.constant(op.getValues().getType().getDimSize(axis));
  else if (operands[1].values)
    k = (*operands[1].values)[0];
  else
    return op.emitOpError("its k is computed at run time in a way the CPU backend cannot follow yet");
  TensorInfo results[2];
  for (int i = 0; i < 2; ++i) {
    results[i].dims = X.dims;
    results[i].dims[axis] = k;
    for (size_t d = 0; d < X.dims.size(); ++d) {
      auto type = llvm::cast<RankedTensorType>(op->getResult(i).getType());
      if (!type.isDynamicDim(d)) results[i].dims[d] = ctx.shapes.constant(type.getDimSize(d));
    }
    results[i].elementType = llvm::cast<RankedTensorType>(op->getResult(i).getType()).getElementType();
    results[i].buffer = ctx.newTransient(pb.bytesOf(results[i]));
    pb.infos[op->getResult(i)] = results[i];
  }
  return emitTopK(ctx, op, operands, k, results[0], results[1]);
}

void registerIndexingKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<ScatterElementsOp>(emitScatterElements);
  registry.addOpKernel<ScatterNDOp>(emitScatterND);
  registry.addOpKernel<GatherNDOp>(emitGatherND);
  registry.addResultsKernel<TopKOp>(emitTopKOp);
}

} // namespace v4f
