//===- DataDependentKernels.cpp - Unique and NonMaxSuppression -------------===//
//
// Both ops produce results whose length depends on the data. Each runs as a
// single-workgroup dispatch that writes its results (sized for the bound)
// and the actual length into an 8-byte buffer; that length is a shape-program
// DataValue register, so later dispatches and the output dims see it.
//
// unique works on "slices": the elements (without an axis; the input viewed
// as [1, numel, 1]) or the slices along the axis (the input viewed as
// [outer, S, inner]), compared lexicographically in row-major order. All
// passes are O(S^2 * slice length):
//   1. inverse[j] = first occurrence of slice j;
//   2. each first occurrence gets its output position (the number of
//      distinct slices smaller than it when sorted, else the running count)
//      and indices[pos] = j;
//   3. inverse[j] becomes the position of its first occurrence (a search of
//      indices), counts[pos] counts the hits;
//   4. y[.., pos, ..] = x[.., indices[pos], ..].
// Floats compare with NaN above every number and all NaNs equal (-0 == +0).
//
// non_max_suppression follows ONNX's reference: per (batch, class) the
// candidates (score > score_threshold when given) are ranked by descending
// score, lower box index first among equal scores (O(N^2) ranking into a
// scratch buffer), then visited in rank order; a box is kept unless its IoU
// with a box already kept for this class exceeds iou_threshold, until
// max_output_boxes_per_class are kept. IoU is float32 with the reference's
// exact operation order and early-outs.
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

using arith::CmpFPredicate;
using arith::CmpIPredicate;

Value orI(KernelBuilder &kb, Value a, Value b) { return kb.b.create<arith::OrIOp>(kb.loc, a, b); }
Value andI(KernelBuilder &kb, Value a, Value b) { return kb.b.create<arith::AndIOp>(kb.loc, a, b); }
Value notI(KernelBuilder &kb, Value a) {
  return kb.b.create<arith::XOrIOp>(kb.loc, a, kb.b.create<arith::ConstantIntOp>(kb.loc, 1, 1));
}
Value toI64(KernelBuilder &kb, Value i1) { return kb.b.create<arith::ExtUIOp>(kb.loc, kb.b.getI64Type(), i1); }
Value cmpf(KernelBuilder &kb, CmpFPredicate p, Value a, Value b) { return kb.b.create<arith::CmpFOp>(kb.loc, p, a, b); }
Value isNan(KernelBuilder &kb, Value a) { return cmpf(kb, CmpFPredicate::UNO, a, a); }

Reg bytesOf(CPUKernelContext &ctx, const TensorInfo &t) {
  return ctx.shapes.mul(ctx.numel(t), ctx.shapes.constant(elementBytes(t.elementType)));
}

TensorInfo newResult(CPUKernelContext &ctx, Value v, std::vector<Reg> dims) {
  TensorInfo t;
  t.dims = std::move(dims);
  t.elementType = llvm::cast<RankedTensorType>(v.getType()).getElementType();
  t.buffer = ctx.newTransient(bytesOf(ctx, t));
  return t;
}

} // namespace

LogicalResult emitUnique(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         SmallVectorImpl<TensorInfo> &results) {
  auto u = cast<UniqueOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  Reg outer, S, inner;
  std::optional<int64_t> axis = u.getAxis();
  if (axis) {
    outer = sp.product(X.dims, 0, *axis);
    S = X.dims[*axis];
    inner = sp.product(X.dims, *axis + 1, rank);
  } else {
    outer = inner = sp.constant(1);
    S = ctx.numel(X);
  }
  uint32_t countBuf = ctx.newTransient(sp.constant(8));
  Reg U = sp.dataValue(countBuf, 0, S);
  std::vector<Reg> yDims{U};
  if (axis) {
    yDims = X.dims;
    yDims[*axis] = U;
  }
  results.push_back(newResult(ctx, u.getY(), yDims));
  results.push_back(newResult(ctx, u.getIndices(), {U}));
  results.push_back(newResult(ctx, u.getInverseIndices(), {S}));
  results.push_back(newResult(ctx, u.getCounts(), {U}));

  auto kb = ctx.newKernel("unique");
  OpBuilder &b = kb->b;
  Location l = kb->loc;
  auto i64 = b.getI64Type();
  Type scalar = bodyScalarType(X.elementType);
  bool bf16 = X.elementType.isBF16();
  bool isFloat = bf16 || llvm::isa<FloatType>(scalar);
  bool isUnsigned = X.elementType.isUnsignedInteger() || X.elementType.isInteger(1);
  Value Sv = kb->dim(S), In = kb->dim(inner), Out = kb->dim(outer);
  Value E = kb->mul(Out, In);
  enum { kCount, kY, kIndices, kInverse, kCounts, kX };
  // Element e (row-major within the slice) of slice j, as a comparable value.
  auto element = [&](Value j, Value e) -> Value {
    Value o = kb->div(e, In), i = kb->rem(e, In);
    Value v = kb->load(X.elementType, kb->binding(kX), kb->add(kb->mul(kb->add(kb->mul(o, Sv), j), In), i));
    if (bf16) {
      Value w = b.create<arith::ExtUIOp>(l, b.getI32Type(), v);
      w = b.create<arith::ShLIOp>(l, w, b.create<arith::ConstantIntOp>(l, 16, 32));
      v = b.create<arith::BitcastOp>(l, b.getF32Type(), w);
    }
    return v;
  };
  auto less = [&](Value a, Value c) -> Value {
    if (isFloat)
      return orI(*kb, cmpf(*kb, CmpFPredicate::OLT, a, c), andI(*kb, notI(*kb, isNan(*kb, a)), isNan(*kb, c)));
    return kb->cmp(isUnsigned ? CmpIPredicate::ult : CmpIPredicate::slt, a, c);
  };
  // -1, 0 or 1 as slice j is smaller than, equal to or larger than slice k.
  auto compare = [&](Value j, Value k) -> Value {
    return kb->forLoop(kb->c(0), E, kb->c(1), ValueRange{kb->c(0)}, [&](Value e, ValueRange acc) -> SmallVector<Value> {
      Value a = element(j, e), c = element(k, e);
      Value ord = kb->select(less(a, c), kb->c(-1), kb->select(less(c, a), kb->c(1), kb->c(0)));
      return {kb->select(kb->cmp(CmpIPredicate::eq, acc[0], kb->c(0)), ord, acc[0])};
    })[0];
  };
  Value inverse = kb->binding(kInverse), indices = kb->binding(kIndices), counts = kb->binding(kCounts);
  // 1. First occurrences.
  kb->forLoop(kb->c(0), Sv, kb->c(1), [&](Value j) {
    Value first = kb->forLoop(kb->c(0), j, kb->c(1), ValueRange{j}, [&](Value k, ValueRange acc) -> SmallVector<Value> {
      Value open = kb->cmp(CmpIPredicate::eq, acc[0], j);
      Value hit = andI(*kb, open, kb->cmp(CmpIPredicate::eq, compare(k, j), kb->c(0)));
      return {kb->select(hit, k, acc[0])};
    })[0];
    kb->store(first, inverse, j);
  });
  // 2. Output positions of the first occurrences.
  Value total =
      kb->forLoop(kb->c(0), Sv, kb->c(1), ValueRange{kb->c(0)}, [&](Value j, ValueRange acc) -> SmallVector<Value> {
        Value isFirst = kb->cmp(CmpIPredicate::eq, kb->load(i64, inverse, j), j);
        kb->ifThen(isFirst, [&] {
          Value pos = acc[0];
          if (u.getSorted())
            pos = kb->forLoop(kb->c(0), Sv, kb->c(1), ValueRange{kb->c(0)},
                              [&](Value k, ValueRange n) -> SmallVector<Value> {
                                Value kFirst = kb->cmp(CmpIPredicate::eq, kb->load(i64, inverse, k), k);
                                Value smaller = andI(*kb, kFirst, kb->cmp(CmpIPredicate::slt, compare(k, j), kb->c(0)));
                                return {kb->add(n[0], toI64(*kb, smaller))};
                              })[0];
          kb->store(j, indices, pos);
        });
        return {kb->add(acc[0], toI64(*kb, isFirst))};
      })[0];
  // 3. Inverse indices and counts.
  kb->forLoop(kb->c(0), total, kb->c(1), [&](Value p) { kb->store(kb->c(0), counts, p); });
  kb->forLoop(kb->c(0), Sv, kb->c(1), [&](Value j) {
    Value first = kb->load(i64, inverse, j);
    Value pos = kb->forLoop(
        kb->c(0), total, kb->c(1), ValueRange{kb->c(0)}, [&](Value q, ValueRange acc) -> SmallVector<Value> {
          return {kb->select(kb->cmp(CmpIPredicate::eq, kb->load(i64, indices, q), first), q, acc[0])};
        })[0];
    kb->store(kb->add(kb->load(i64, counts, pos), kb->c(1)), counts, pos);
    kb->store(pos, inverse, j);
  });
  // 4. The distinct slices, [outer, total, inner].
  kb->forLoop(kb->c(0), total, kb->c(1), [&](Value p) {
    Value j = kb->load(i64, indices, p);
    kb->forLoop(kb->c(0), Out, kb->c(1), [&](Value o) {
      Value src = kb->mul(kb->add(kb->mul(o, Sv), j), In);
      Value dst = kb->mul(kb->add(kb->mul(o, total), p), In);
      kb->forLoop(kb->c(0), In, kb->c(1), [&](Value i) {
        kb->store(kb->load(X.elementType, kb->binding(kX), kb->add(src, i)), kb->binding(kY), kb->add(dst, i));
      });
    });
  });
  kb->store(total, kb->binding(kCount), kb->c(0));
  kb->finish();
  ctx.addDispatch(*kb, {countBuf, results[0].buffer, results[1].buffer, results[2].buffer, results[3].buffer, X.buffer},
                  sp.constant(1), dispatchName(op));
  return success();
}

LogicalResult emitNonMaxSuppression(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                    SmallVectorImpl<TensorInfo> &results) {
  auto nms = cast<NonMaxSuppressionOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &boxes = operands[0], &scores = operands[1];
  Reg B = boxes.dims[0], N = boxes.dims[1], C = scores.dims[1];
  Reg bound = sp.mul(sp.mul(B, C), N);
  if (operands[2].values && operands[2].values->size() == 1)
    bound = sp.mul(sp.mul(B, C), sp.min(N, sp.max((*operands[2].values)[0], sp.constant(0))));
  uint32_t countBuf = ctx.newTransient(sp.constant(8));
  uint32_t order = ctx.newTransient(sp.mul(N, sp.constant(8)));
  Reg count = sp.dataValue(countBuf, 0, bound);
  results.push_back(newResult(ctx, nms.getSelectedIndices(), {count, sp.constant(3)}));
  bool hasScoreThreshold = bool(nms.getScoreThreshold());
  bool center = nms.getCenterPointBox();

  auto kb = ctx.newKernel("non_max_suppression");
  OpBuilder &b = kb->b;
  Location l = kb->loc;
  auto i64 = b.getI64Type();
  Type f32 = kb->f32();
  enum { kCount, kResult, kBoxes, kScores, kMax, kIou, kOrder, kScore };
  kb->store(kb->c(0), kb->binding(kCount), kb->c(0));
  // The dims must agree at run time.
  Value bad = b.create<arith::ConstantIntOp>(l, 0, 1);
  for (auto [x, y] :
       {std::pair{scores.dims[0], B}, std::pair{scores.dims[2], N}, std::pair{boxes.dims[2], sp.constant(4)}}) {
    if (x == y) continue;
    bad = orI(*kb, bad, kb->cmp(CmpIPredicate::ne, kb->dim(x), kb->dim(y)));
  }
  Value Bv = kb->select(bad, kb->c(0), kb->dim(B));
  Value Nv = kb->dim(N), Cv = kb->dim(C), boundV = kb->dim(bound);
  Value cap = kb->min(kb->max(kb->load(i64, kb->binding(kMax), kb->c(0)), kb->c(0)), Nv);
  Value iouThreshold = kb->load(f32, kb->binding(kIou), kb->c(0));
  Value scoreThreshold = hasScoreThreshold ? kb->load(f32, kb->binding(kScore), kb->c(0)) : Value();
  Value resultBuf = kb->binding(kResult), orderBuf = kb->binding(kOrder);

  // max / min as Python's builtins compute them, and the reference's max_min.
  auto pyMax = [&](Value a, Value c) { return kb->select(cmpf(*kb, CmpFPredicate::OGT, c, a), c, a); };
  auto pyMin = [&](Value a, Value c) { return kb->select(cmpf(*kb, CmpFPredicate::OLT, c, a), c, a); };
  auto sub = [&](Value a, Value c) -> Value { return b.create<arith::SubFOp>(l, a, c); };
  auto add = [&](Value a, Value c) -> Value { return b.create<arith::AddFOp>(l, a, c); };
  auto mul = [&](Value a, Value c) -> Value { return b.create<arith::MulFOp>(l, a, c); };
  auto div = [&](Value a, Value c) -> Value { return b.create<arith::DivFOp>(l, a, c); };
  // Box extents {x_min, x_max, y_min, y_max}.
  auto extents = [&](Value boxBase, Value box) -> std::array<Value, 4> {
    Value at = kb->add(boxBase, kb->mul(box, kb->c(4)));
    Value v[4];
    for (int k = 0; k < 4; ++k) v[k] = kb->load(f32, kb->binding(kBoxes), kb->add(at, kb->c(k)));
    if (center) {
      Value two = kb->cf(2.0f);
      Value wHalf = div(v[2], two), hHalf = div(v[3], two);
      return {sub(v[0], wHalf), add(v[0], wHalf), sub(v[1], hHalf), add(v[1], hHalf)};
    }
    auto maxMin = [&](Value lhs, Value rhs) -> std::pair<Value, Value> {
      Value ge = cmpf(*kb, CmpFPredicate::OGE, lhs, rhs);
      return {kb->select(ge, rhs, lhs), kb->select(ge, lhs, rhs)};
    };
    auto [xMin, xMax] = maxMin(v[1], v[3]);
    auto [yMin, yMax] = maxMin(v[0], v[2]);
    return {xMin, xMax, yMin, yMax};
  };
  // True when box1 (the candidate) is suppressed by box2 (kept).
  auto suppressed = [&](Value boxBase, Value box1, Value box2) -> Value {
    auto e1 = extents(boxBase, box1), e2 = extents(boxBase, box2);
    Value zero = kb->cf(0.0f);
    auto positive = [&](Value v) { return cmpf(*kb, CmpFPredicate::UGT, v, zero); }; // not (v <= 0)
    Value ixMin = pyMax(e1[0], e2[0]), ixMax = pyMin(e1[1], e2[1]);
    Value iyMin = pyMax(e1[2], e2[2]), iyMax = pyMin(e1[3], e2[3]);
    Value ok = andI(*kb, cmpf(*kb, CmpFPredicate::UGT, ixMax, ixMin), cmpf(*kb, CmpFPredicate::UGT, iyMax, iyMin));
    Value inter = mul(sub(ixMax, ixMin), sub(iyMax, iyMin));
    Value area1 = mul(sub(e1[1], e1[0]), sub(e1[3], e1[2]));
    Value area2 = mul(sub(e2[1], e2[0]), sub(e2[3], e2[2]));
    Value uni = sub(add(area1, area2), inter);
    ok = andI(*kb, ok,
              andI(*kb, positive(inter), andI(*kb, positive(area1), andI(*kb, positive(area2), positive(uni)))));
    return andI(*kb, ok, cmpf(*kb, CmpFPredicate::OGT, div(inter, uni), iouThreshold));
  };

  Value lines = kb->mul(Bv, Cv);
  Value total =
      kb->forLoop(kb->c(0), lines, kb->c(1), ValueRange{kb->c(0)}, [&](Value bc, ValueRange acc) -> SmallVector<Value> {
        Value start = acc[0];
        Value batch = kb->div(bc, Cv), cls = kb->rem(bc, Cv);
        Value scoreBase = kb->mul(bc, Nv), boxBase = kb->mul(kb->mul(batch, Nv), kb->c(4));
        auto score = [&](Value i) { return kb->load(f32, kb->binding(kScores), kb->add(scoreBase, i)); };
        auto candidate = [&](Value s) -> Value {
          if (!hasScoreThreshold) return b.create<arith::ConstantIntOp>(l, 1, 1);
          return cmpf(*kb, CmpFPredicate::OGT, s, scoreThreshold);
        };
        // Rank the candidates: better = higher score (NaN lowest), then lower index.
        Value candidates =
            kb->forLoop(kb->c(0), Nv, kb->c(1), ValueRange{kb->c(0)}, [&](Value i, ValueRange n) -> SmallVector<Value> {
              Value si = score(i);
              Value isCandidate = candidate(si);
              kb->ifThen(isCandidate, [&] {
                Value rank = kb->forLoop(
                    kb->c(0), Nv, kb->c(1), ValueRange{kb->c(0)}, [&](Value j, ValueRange r) -> SmallVector<Value> {
                      Value sj = score(j);
                      Value higher = orI(*kb, cmpf(*kb, CmpFPredicate::OGT, sj, si),
                                         andI(*kb, isNan(*kb, si), notI(*kb, isNan(*kb, sj))));
                      Value same =
                          orI(*kb, cmpf(*kb, CmpFPredicate::OEQ, sj, si), andI(*kb, isNan(*kb, si), isNan(*kb, sj)));
                      Value better = orI(*kb, higher, andI(*kb, same, kb->cmp(CmpIPredicate::slt, j, i)));
                      return {kb->add(r[0], toI64(*kb, andI(*kb, candidate(sj), better)))};
                    })[0];
                kb->store(i, orderBuf, rank);
              });
              return {kb->add(n[0], toI64(*kb, isCandidate))};
            })[0];
        // Greedy selection in rank order.
        Value kept = kb->forLoop(
            kb->c(0), candidates, kb->c(1), ValueRange{kb->c(0)}, [&](Value r, ValueRange k) -> SmallVector<Value> {
              Value sel = k[0];
              Value box = kb->load(i64, orderBuf, r);
              Value row = kb->add(start, sel);
              Value room = andI(*kb, kb->cmp(CmpIPredicate::slt, sel, cap), kb->cmp(CmpIPredicate::slt, row, boundV));
              Value hit = kb->forLoop(kb->c(0), kb->select(room, sel, kb->c(0)), kb->c(1),
                                      ValueRange{b.create<arith::ConstantIntOp>(l, 0, 1).getResult()},
                                      [&](Value q, ValueRange s) -> SmallVector<Value> {
                                        Value other = kb->load(i64, resultBuf,
                                                               kb->add(kb->mul(kb->add(start, q), kb->c(3)), kb->c(2)));
                                        return {orI(*kb, s[0], suppressed(boxBase, box, other))};
                                      })[0];
              Value keep = andI(*kb, room, notI(*kb, hit));
              kb->ifThen(keep, [&] {
                Value at = kb->mul(row, kb->c(3));
                kb->store(batch, resultBuf, at);
                kb->store(cls, resultBuf, kb->add(at, kb->c(1)));
                kb->store(box, resultBuf, kb->add(at, kb->c(2)));
              });
              return {kb->add(sel, toI64(*kb, keep))};
            })[0];
        return {kb->add(start, kept)};
      })[0];
  kb->store(total, kb->binding(kCount), kb->c(0));
  kb->finish(b.create<arith::SelectOp>(l, bad, b.create<arith::ConstantIntOp>(l, 1, 32),
                                       b.create<arith::ConstantIntOp>(l, 0, 32)));
  std::vector<uint32_t> bindings{countBuf,           results[0].buffer,  boxes.buffer, scores.buffer,
                                 operands[2].buffer, operands[3].buffer, order};
  if (hasScoreThreshold) bindings.push_back(operands[4].buffer);
  ctx.addDispatch(*kb, std::move(bindings), sp.constant(1), dispatchName(op));
  return success();
}

/// NonZero: one dispatch counts the non-zero elements into an 8-byte buffer,
/// whose value (a DataValue register, bounded by the element count) sizes
/// the result; a second writes the coordinates.
static LogicalResult emitNonZero(CPUKernelContext &ctx, PlanBuilder &pb, Operation *nonZeroOp,
                                 ArrayRef<TensorInfo> operands) {
  auto op = cast<NonZeroOp>(nonZeroOp);
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
  uint32_t countBuf = ctx.newTransient(ctx.shapes.constant(8));
  {
    auto kb = ctx.newKernel("nonzero count");
    auto total = kb->forLoop(
        kb->c(0), kb->dim(n), kb->c(1), ValueRange{kb->c(0)}, [&](Value i, ValueRange acc) -> SmallVector<Value> {
          return {kb->add(acc[0], kb->b.create<arith::ExtUIOp>(kb->loc, kb->b.getI64Type(), nonZero(*kb, i)))};
        });
    kb->store(total[0], kb->binding(0), kb->c(0));
    kb->finish();
    ctx.addDispatch(*kb, {countBuf, X.buffer}, ctx.shapes.constant(1), dispatchName(op) + " count");
  }
  Reg count = ctx.shapes.dataValue(countBuf, 0, n);
  TensorInfo result;
  result.dims = {ctx.shapes.constant(std::max<int64_t>(rank, 1)), count};
  result.elementType = llvm::cast<RankedTensorType>(op.getType()).getElementType();
  result.buffer = ctx.newTransient(pb.bytesOf(result));
  pb.infos[op.getResult()] = result;
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
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, ctx.shapes.constant(1), dispatchName(op));
  return success();
}

/// Unique and NonMaxSuppression create their results' buffers themselves.
template <LogicalResult (*Emit)(CPUKernelContext &, Operation *, ArrayRef<TensorInfo>, SmallVectorImpl<TensorInfo> &)>
static LogicalResult emitWithResults(CPUKernelContext &ctx, PlanBuilder &pb, Operation *op,
                                     ArrayRef<TensorInfo> operands) {
  SmallVector<TensorInfo> results;
  if (failed(Emit(ctx, op, operands, results))) return failure();
  for (auto [r, t] : llvm::zip_equal(op->getResults(), results)) pb.infos[r] = t;
  return success();
}

void registerDataDependentKernels(CPUKernelRegistry &registry) {
  registry.addResultsKernel<NonZeroOp>(emitNonZero);
  registry.addResultsKernel<UniqueOp>(emitWithResults<emitUnique>);
  registry.addResultsKernel<NonMaxSuppressionOp>(emitWithResults<emitNonMaxSuppression>);
}

} // namespace v4f
