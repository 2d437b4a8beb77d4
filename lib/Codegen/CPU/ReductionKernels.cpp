//===- ReductionKernels.cpp - reduce_mean, softmax, layer_norm, reductions -===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"

#include "v4f/Plan/ShapeValues.h"
#include "RowVectorOps.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace v4f {

namespace {

/// A row [base, base + len) of f32 at `ptr` walked in kRowLanes vectors:
/// `full` columns in whole vectors, then a masked tail.
struct VectorRow {
  KernelBuilder &kb;
  Value ptr, full, tailMask;
  Type vt;
  VectorRow(KernelBuilder &kb, Value ptr, Value len)
      : kb(kb), ptr(ptr), full(kb.mul(kb.div(len, kb.c(kRowLanes)), kb.c(kRowLanes))),
        tailMask(kb.laneMask(kb.sub(len, full), kRowLanes)), vt(kb.vec(kRowLanes)) {}

  /// Reduces map(x) over the row with `kind`: vector partials from
  /// `identity`, the tail's missing lanes taking `identity`.
  Value reduce(Value base, vector::CombiningKind kind, float identity, const std::function<Value(Value)> &map = {}) {
    OpBuilder &b = kb.b;
    Location loc = kb.loc;
    auto f = [&](Value x) { return map ? map(x) : x; };
    auto combine = [&](Value a, Value c) -> Value {
      if (kind == vector::CombiningKind::ADD) return b.create<arith::AddFOp>(loc, a, c);
      if (kind == vector::CombiningKind::MAXNUMF) return b.create<arith::MaxNumFOp>(loc, a, c);
      return b.create<arith::MaximumFOp>(loc, a, c);
    };
    Value init = kb.cf(identity, vt);
    auto acc =
        kb.forLoop(kb.c(0), full, kb.c(kRowLanes), ValueRange{init}, [&](Value j, ValueRange a) -> SmallVector<Value> {
          return {combine(a[0], f(kb.load(vt, ptr, kb.add(base, j))))};
        });
    Value tail =
        b.create<arith::SelectOp>(loc, tailMask, f(kb.maskedLoad(vt, ptr, kb.add(base, full), tailMask)), init);
    return b.create<vector::ReductionOp>(loc, kind, combine(acc[0], tail));
  }
};

/// Mean over the contiguous dims [a0, a1) of `X` into buffer `dst`.
void emitContiguousMean(CPUKernelContext &ctx, const std::string &name, const TensorInfo &X, int64_t a0, int64_t a1,
                        uint32_t dst) {
  auto &sp = ctx.shapes;
  Reg outer = sp.product(X.dims, 0, a0);
  Reg red = sp.product(X.dims, a0, a1);
  Reg inner = sp.product(X.dims, a1, X.dims.size());
  auto [groups, rowsPerGroup] = ctx.splitRows(outer, sp.mul(red, inner));
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(outer), kb->dim(rowsPerGroup));
  Value R = kb->dim(red), I = kb->dim(inner);
  Value scale = divf(*kb, kb->cf(1.f), kb->toF32(kb->max(R, kb->c(1))));
  // Contiguous rows (I = 1: LayerNorm's means, global pooling): 8-lane
  // partial sums and a masked tail; the scalar chain below is bound by the
  // latency of one add per element.
  std::optional<int64_t> staticInner = sp.constValue(inner);
  if (staticInner && *staticInner == 1) {
    VectorRow rowOf(*kb, kb->binding(1), R);
    kb->forLoop(begin, end, kb->c(1), [&](Value o) {
      Value sum = rowOf.reduce(kb->mul(o, R), vector::CombiningKind::ADD, 0.f);
      kb->store(mulf(*kb, sum, scale), kb->binding(0), o);
    });
    kb->finish();
    ctx.addDispatch(*kb, {dst, X.buffer}, groups, name);
    return;
  }
  kb->forLoop(begin, end, kb->c(1), [&](Value o) {
    Value src = kb->mul(o, kb->mul(R, I));
    Value out = kb->mul(o, I);
    kb->forLoop(kb->c(0), I, kb->c(1), [&](Value i) { kb->store(kb->cf(0.f), kb->binding(0), kb->add(out, i)); });
    kb->forLoop(kb->c(0), R, kb->c(1), [&](Value r) {
      Value row = kb->add(src, kb->mul(r, I));
      kb->forLoop(kb->c(0), I, kb->c(1), [&](Value i) {
        Value at = kb->add(out, i);
        Value sum =
            addf(*kb, kb->load(kb->f32(), kb->binding(0), at), kb->load(kb->f32(), kb->binding(1), kb->add(row, i)));
        kb->store(sum, kb->binding(0), at);
      });
    });
    kb->forLoop(kb->c(0), I, kb->c(1), [&](Value i) {
      Value at = kb->add(out, i);
      kb->store(mulf(*kb, kb->load(kb->f32(), kb->binding(0), at), scale), kb->binding(0), at);
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {dst, X.buffer}, groups, name);
}
/// Mean over H and W of a channels-last [N, H, W, C] tensor `X` into the
/// [N, C] buffer `dst` (GlobalAveragePool after channels-last convs): each
/// workgroup row sums 4 vectors of adjacent channels over the pixels, four
/// independent accumulators, masked at the channel tail.
void emitChannelsLastMean(CPUKernelContext &ctx, const std::string &name, const TensorInfo &X, uint32_t dst) {
  auto &sp = ctx.shapes;
  constexpr int64_t kL = kRowLanes, kVecs = 4, kSpan = kL * kVecs;
  Reg P = sp.mul(X.dims[2], X.dims[3]), C = X.dims[1];
  Reg spans = sp.ceilDiv(C, sp.constant(kSpan));
  Reg rows = sp.mul(X.dims[0], spans);
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, sp.mul(P, sp.constant(kSpan)));
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value Pv = kb->dim(P), Cv = kb->dim(C), S = kb->dim(spans);
  Value scale = kb->splat(divf(*kb, kb->cf(1.f), kb->toF32(kb->max(Pv, kb->c(1)))), kL);
  Type vt = kb->vec(kL);
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value n = kb->div(row, S), c0 = kb->mul(kb->rem(row, S), kb->c(kSpan));
    Value base = kb->add(kb->mul(n, kb->mul(Pv, Cv)), c0);
    SmallVector<Value> masks, init;
    for (int64_t v = 0; v < kVecs; ++v) {
      masks.push_back(kb->laneMask(kb->sub(Cv, kb->add(c0, kb->c(v * kL))), kL));
      init.push_back(kb->cf(0.f, vt));
    }
    auto acc = kb->forLoop(kb->c(0), Pv, kb->c(1), init, [&](Value p, ValueRange a) -> SmallVector<Value> {
      Value at = kb->add(base, kb->mul(p, Cv));
      SmallVector<Value> next;
      for (int64_t v = 0; v < kVecs; ++v)
        next.push_back(addf(*kb, a[v], kb->maskedLoad(vt, kb->binding(1), kb->add(at, kb->c(v * kL)), masks[v])));
      return next;
    });
    Value out = kb->add(kb->mul(n, Cv), c0);
    for (int64_t v = 0; v < kVecs; ++v)
      kb->maskedStore(mulf(*kb, acc[v], scale), kb->binding(0), kb->add(out, kb->c(v * kL)), masks[v]);
  });
  kb->finish();
  ctx.addDispatch(*kb, {dst, X.buffer}, groups, name);
}
} // namespace

LogicalResult emitReduceMean(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                             const TensorInfo &result) {
  auto axes = cast<ReduceMeanOp>(op).getAxes();
  const TensorInfo &X = operands[0];
  std::string name = dispatchName(op);
  if (axes.empty()) {
    emitCopy(ctx, X, result, name);
    return success();
  }
  if (X.channelsLast) { // meanReadsChannelsLast: axes {2, 3} of N, C, H, W
    emitChannelsLastMean(ctx, name, X, result.buffer);
    return success();
  }
  // Runs of adjacent axes, reduced last run first; a mean of means over
  // disjoint axis groups equals the mean over their union. Dropping size-1
  // dims does not change the layout, so keepdims only matters for shapes.
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (int64_t a : axes) {
    if (!runs.empty() && runs.back().second == a)
      runs.back().second = a + 1;
    else
      runs.push_back({a, a + 1});
  }
  TensorInfo src = X;
  for (size_t k = runs.size(); k-- > 0;) {
    TensorInfo dst = src;
    for (int64_t d = runs[k].first; d < runs[k].second; ++d) dst.dims[d] = ctx.shapes.constant(1);
    dst.buffer = k == 0 ? result.buffer : ctx.newTransient(ctx.shapes.mul(ctx.numel(dst), ctx.shapes.constant(4)));
    emitContiguousMean(ctx, name, src, runs[k].first, runs[k].second, dst.buffer);
    src = dst;
  }
  return success();
}

LogicalResult emitSoftmax(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                          const TensorInfo &result) {
  int64_t axis = cast<SoftmaxOp>(op).getAxis();
  const TensorInfo &X = operands[0];
  auto &sp = ctx.shapes;
  Reg outer = sp.product(X.dims, 0, axis);
  Reg len = X.dims[axis];
  Reg inner = sp.product(X.dims, axis + 1, X.dims.size());
  Reg rows = sp.mul(outer, inner);
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, len);
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value L = kb->dim(len), I = kb->dim(inner);
  StringRef mode = cast<SoftmaxOp>(op).getMode();
  // Softmax over the last axis (attention scores): vectors of kLanes with
  // vector max / sum accumulators and a masked tail; LLVM does not vectorize
  // the scalar loops below (their float reductions may not be reassociated).
  std::optional<int64_t> staticInner = ctx.shapes.constValue(inner);
  auto softmaxOp = cast<SoftmaxOp>(op);
  const float scale = softmaxOp.getScale().convertToFloat();
  const bool fused = softmaxOp.getMask() || scale != 1.f;
  const bool nanToZero = softmaxOp.getNanToZero();
  if (mode == "softmax" && staticInner && *staticInner == 1) {
    constexpr int64_t kLanes = kRowLanes;
    OpBuilder &b = kb->b;
    Location loc = kb->loc;
    Value Xp = kb->binding(1), Y = kb->binding(0);
    VectorRow rowOf(*kb, Xp, L);
    Type vt = rowOf.vt;
    Value full = rowOf.full, tailMask = rowOf.tailMask;
    Value zero = kb->cf(0.f, vt);
    // The fused scale and additive mask (attention): the mask's strides over
    // the outer dims (broadcast: 0), its stride along the row 1 or 0.
    std::vector<Value> maskStrides;
    Value maskInner;
    if (softmaxOp.getMask()) {
      const TensorInfo &M = operands[1];
      size_t rank = X.dims.size(), mrank = M.dims.size();
      Value running = kb->c(1);
      maskStrides.assign(rank, kb->c(0));
      for (size_t i = mrank; i-- > 0;) {
        Value d = kb->dim(M.dims[i]);
        maskStrides[rank - mrank + i] = kb->select(kb->cmp(arith::CmpIPredicate::eq, d, kb->c(1)), kb->c(0), running);
        running = kb->mul(running, d);
      }
      maskInner = maskStrides[rank - 1];
    }
    Value scaleV = kb->cf(scale, vt);
    kb->forLoop(begin, end, kb->c(1), [&](Value row) {
      Value base = kb->mul(row, L);
      auto at = [&](Value j) { return kb->add(base, j); };
      Value mx;
      if (fused) {
        // Pass 0: y = x * scale + mask into the output row, and its max.
        Value maskBase = kb->c(0);
        if (softmaxOp.getMask()) {
          Value rest = row;
          for (size_t d = X.dims.size() - 1; d-- > 0;) {
            Value extent = kb->dim(X.dims[d]);
            maskBase = kb->add(maskBase, kb->mul(kb->rem(rest, extent), maskStrides[d]));
            rest = kb->div(rest, extent);
          }
        }
        Value Mp = softmaxOp.getMask() ? kb->binding(2) : Value();
        Value innerIsOne = softmaxOp.getMask() ? kb->cmp(arith::CmpIPredicate::eq, maskInner, kb->c(1)) : Value();
        auto pre = [&](Value x, Value j, Value lanes) -> Value {
          Value y = b.create<arith::MulFOp>(loc, x, scaleV);
          if (!Mp) return y;
          // The mask row: contiguous, or one value for the whole row.
          Value m =
              kb->ifYield(
                    innerIsOne, TypeRange{vt},
                    [&]() -> SmallVector<Value> {
                      Value idx = kb->add(maskBase, j);
                      return {lanes ? kb->maskedLoad(vt, Mp, idx, lanes) : kb->load(vt, Mp, idx)};
                    },
                    [&]() -> SmallVector<Value> { return {kb->splat(kb->load(kb->f32(), Mp, maskBase), kLanes)}; })
                  .front();
          return b.create<arith::AddFOp>(loc, y, m);
        };
        Value ninf = kb->cf(-INFINITY, vt);
        auto vmax = kb->forLoop(kb->c(0), full, kb->c(kLanes), ValueRange{ninf},
                                [&](Value j, ValueRange a) -> SmallVector<Value> {
                                  Value y = pre(kb->load(vt, Xp, at(j)), j, Value());
                                  kb->store(y, Y, at(j));
                                  return {b.create<arith::MaxNumFOp>(loc, a[0], y)};
                                });
        Value ty = pre(kb->maskedLoad(vt, Xp, at(full), tailMask), full, tailMask);
        kb->maskedStore(ty, Y, at(full), tailMask);
        ty = b.create<arith::SelectOp>(loc, tailMask, ty, ninf);
        mx = b.create<vector::ReductionOp>(loc, vector::CombiningKind::MAXNUMF,
                                           b.create<arith::MaxNumFOp>(loc, vmax[0], ty));
        Xp = Y; // the passes below read the scaled, masked row
      } else {
        // maxnum (one instruction; maximumf's NaN propagation is several): a
        // NaN in the row still makes every output NaN through exp(NaN - max).
        mx = rowOf.reduce(base, vector::CombiningKind::MAXNUMF, -INFINITY);
      }
      Value mxs = kb->splat(mx, kLanes);
      // exp(x - max), stored, and summed.
      auto vsum = kb->forLoop(
          kb->c(0), full, kb->c(kLanes), ValueRange{zero}, [&](Value j, ValueRange a) -> SmallVector<Value> {
            Value e = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, kb->load(vt, Xp, at(j)), mxs));
            kb->store(e, Y, at(j));
            return {b.create<arith::AddFOp>(loc, a[0], e)};
          });
      Value te =
          b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, kb->maskedLoad(vt, Xp, at(full), tailMask), mxs));
      te = b.create<arith::SelectOp>(loc, tailMask, te, zero);
      kb->maskedStore(te, Y, at(full), tailMask);
      Value sum =
          b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, b.create<arith::AddFOp>(loc, vsum[0], te));
      Value inv = kb->splat(divf(*kb, kb->cf(1.f), sum), kLanes);
      // nan_to_zero: a row is all NaN (a NaN or +inf score, or every score
      // -inf) or has none; its NaNs become 0.
      auto guard = [&](Value y) -> Value {
        if (!nanToZero) return y;
        return b.create<arith::SelectOp>(loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, y, y), zero, y);
      };
      kb->forLoop(kb->c(0), full, kb->c(kLanes), [&](Value j) {
        kb->store(guard(b.create<arith::MulFOp>(loc, kb->load(vt, Y, at(j)), inv)), Y, at(j));
      });
      kb->maskedStore(guard(b.create<arith::MulFOp>(loc, kb->maskedLoad(vt, Y, at(full), tailMask), inv)), Y, at(full),
                      tailMask);
      Xp = kb->binding(1);
    });
    kb->finish();
    std::vector<uint32_t> bindings = {result.buffer, X.buffer};
    if (softmaxOp.getMask()) bindings.push_back(operands[1].buffer);
    ctx.addDispatch(*kb, bindings, groups, name);
    return success();
  }
  if (fused || nanToZero)
    return op->emitOpError("a fused scale / mask / nan_to_zero needs softmax along the last axis");
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value o = kb->div(row, I), i = kb->rem(row, I);
    Value base = kb->add(kb->mul(o, kb->mul(L, I)), i);
    auto at = [&](Value j) { return kb->add(base, kb->mul(j, I)); };
    if (mode == "hardmax") {
      // 1 at the first maximum, 0 elsewhere.
      auto best =
          kb->forLoop(kb->c(0), L, kb->c(1), ValueRange{kb->cf(-INFINITY), kb->c(0)},
                      [&](Value j, ValueRange a) -> SmallVector<Value> {
                        Value x = kb->load(kb->f32(), kb->binding(1), at(j));
                        Value better = kb->b.create<arith::CmpFOp>(kb->loc, arith::CmpFPredicate::OGT, x, a[0]);
                        return {kb->b.create<arith::SelectOp>(kb->loc, better, x, a[0]), kb->select(better, j, a[1])};
                      });
      kb->forLoop(kb->c(0), L, kb->c(1), [&](Value j) {
        Value hit = kb->cmp(arith::CmpIPredicate::eq, j, best[1]);
        kb->store(kb->b.create<arith::SelectOp>(kb->loc, hit, kb->cf(1.f), kb->cf(0.f)), kb->binding(0), at(j));
      });
      return;
    }
    auto mx = kb->forLoop(
        kb->c(0), L, kb->c(1), ValueRange{kb->cf(-INFINITY)}, [&](Value j, ValueRange a) -> SmallVector<Value> {
          return {kb->b.create<arith::MaximumFOp>(kb->loc, a[0], kb->load(kb->f32(), kb->binding(1), at(j)))};
        });
    bool logMode = mode == "log_softmax";
    auto sum =
        kb->forLoop(kb->c(0), L, kb->c(1), ValueRange{kb->cf(0.f)}, [&](Value j, ValueRange a) -> SmallVector<Value> {
          Value e = kb->b.create<math::ExpOp>(kb->loc, subf(*kb, kb->load(kb->f32(), kb->binding(1), at(j)), mx[0]));
          if (!logMode) kb->store(e, kb->binding(0), at(j));
          return {addf(*kb, a[0], e)};
        });
    if (logMode) {
      Value shift = addf(*kb, mx[0], kb->b.create<math::LogOp>(kb->loc, sum[0]));
      kb->forLoop(kb->c(0), L, kb->c(1), [&](Value j) {
        kb->store(subf(*kb, kb->load(kb->f32(), kb->binding(1), at(j)), shift), kb->binding(0), at(j));
      });
      return;
    }
    Value inv = divf(*kb, kb->cf(1.f), sum[0]);
    kb->forLoop(kb->c(0), L, kb->c(1), [&](Value j) {
      kb->store(mulf(*kb, kb->load(kb->f32(), kb->binding(0), at(j)), inv), kb->binding(0), at(j));
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

//===----------------------------------------------------------------------===//
// Generic reductions (v4f.reduce) and arg reductions
//===----------------------------------------------------------------------===//

namespace {

bool isFloatType(Type t) { return llvm::isa<FloatType>(t); }

Value reduceInit(KernelBuilder &kb, StringRef kind, Type elem) {
  OpBuilder &b = kb.b;
  Type t = bodyScalarType(elem);
  bool f = isFloatType(t), u = elem.isUnsignedInteger();
  unsigned w = t.getIntOrFloatBitWidth();
  if (kind == "prod")
    return f ? (Value)b.create<arith::ConstantOp>(kb.loc, b.getFloatAttr(t, 1.0))
             : (Value)b.create<arith::ConstantOp>(kb.loc, b.getIntegerAttr(t, 1));
  if (kind == "max" || kind == "min") {
    bool mx = kind == "max";
    if (f) return b.create<arith::ConstantOp>(kb.loc, b.getFloatAttr(t, mx ? -INFINITY : INFINITY));
    APInt v = u ? (mx ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                : (mx ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w));
    return b.create<arith::ConstantOp>(kb.loc, b.getIntegerAttr(t, v));
  }
  if (kind == "log_sum_exp" || kind == "log_sum" || kind == "l2" || kind == "l1" || kind == "sum_square" ||
      kind == "sum" || kind == "mean")
    return f ? (Value)b.create<arith::ConstantOp>(kb.loc, b.getFloatAttr(t, 0.0))
             : (Value)b.create<arith::ConstantOp>(kb.loc, b.getIntegerAttr(t, 0));
  return {};
}

Value reduceStep(KernelBuilder &kb, StringRef kind, Type elem, Value acc, Value x) {
  OpBuilder &b = kb.b;
  Location l = kb.loc;
  bool f = isFloatType(bodyScalarType(elem)), u = elem.isUnsignedInteger();
  if (kind == "l1") x = f ? (Value)b.create<math::AbsFOp>(l, x) : (u ? x : (Value)b.create<math::AbsIOp>(l, x));
  if (kind == "l2" || kind == "sum_square")
    x = f ? (Value)b.create<arith::MulFOp>(l, x, x) : (Value)b.create<arith::MulIOp>(l, x, x);
  if (kind == "log_sum_exp") x = b.create<math::ExpOp>(l, x);
  if (kind == "max")
    return f   ? (Value)b.create<arith::MaximumFOp>(l, acc, x)
           : u ? (Value)b.create<arith::MaxUIOp>(l, acc, x)
               : (Value)b.create<arith::MaxSIOp>(l, acc, x);
  if (kind == "min")
    return f   ? (Value)b.create<arith::MinimumFOp>(l, acc, x)
           : u ? (Value)b.create<arith::MinUIOp>(l, acc, x)
               : (Value)b.create<arith::MinSIOp>(l, acc, x);
  if (kind == "prod") return f ? (Value)b.create<arith::MulFOp>(l, acc, x) : (Value)b.create<arith::MulIOp>(l, acc, x);
  return f ? (Value)b.create<arith::AddFOp>(l, acc, x) : (Value)b.create<arith::AddIOp>(l, acc, x);
}

Value reduceFinish(KernelBuilder &kb, StringRef kind, Type elem, Value acc, Value count) {
  OpBuilder &b = kb.b;
  Location l = kb.loc;
  Type t = bodyScalarType(elem);
  bool f = isFloatType(t);
  if (kind == "mean") {
    if (f) return b.create<arith::DivFOp>(l, acc, b.create<arith::SIToFPOp>(l, t, count));
    Value n = b.create<arith::TruncIOp>(l, t, kb.max(count, kb.c(1)));
    if (t.getIntOrFloatBitWidth() == 64) n = kb.max(count, kb.c(1));
    return elem.isUnsignedInteger() ? (Value)b.create<arith::DivUIOp>(l, acc, n)
                                    : (Value)b.create<arith::DivSIOp>(l, acc, n);
  }
  if (kind == "l2") return b.create<math::SqrtOp>(l, acc);
  if (kind == "log_sum" || kind == "log_sum_exp") return b.create<math::LogOp>(l, acc);
  return acc;
}

} // namespace

LogicalResult emitReduce(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  auto r = cast<ReduceOp>(op);
  auto flags = reducedFlags(ctx, r, operands);
  if (failed(flags)) return failure();
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  if (r.getAxesTensor()) {
    // Run-time axes must name distinct dims in [-rank, rank): as many dims
    // are flagged as there are axes, or the run fails (an axis out of range
    // or repeated would otherwise reduce fewer dims than the result's rank
    // assumes).
    Reg flagged = sp.constant(0);
    for (Reg f : *flags) flagged = sp.add(flagged, f);
    emitDimsCheck(ctx, {flagged}, {sp.constant(int64_t(operands[1].values->size()))},
                  dispatchName(op) + " axes check (distinct, in range)");
  }
  Reg one = sp.constant(1);
  std::vector<Reg> kept(rank), red(rank);
  for (size_t d = 0; d < rank; ++d) {
    kept[d] = sp.select((*flags)[d], one, X.dims[d]);
    red[d] = sp.select((*flags)[d], X.dims[d], one);
  }
  Reg outCount = sp.product(kept, 0, rank), redCount = sp.product(red, 0, rank);
  auto [groups, rowsPerGroup] = ctx.splitRows(outCount, redCount);
  std::string name = dispatchName(op);
  StringRef kind = r.getKind();
  Type elem = X.elementType;
  Type scalar = bodyScalarType(elem);
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(outCount), kb->dim(rowsPerGroup));
  std::vector<Value> strides(rank), keptV(rank), redV(rank);
  Value running = kb->c(1);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = running;
    running = kb->mul(running, kb->dim(X.dims[d]));
    keptV[d] = kb->dim(kept[d]);
    redV[d] = kb->dim(red[d]);
  }
  Value R = kb->dim(redCount);
  kb->forLoop(begin, end, kb->c(1), [&](Value o) {
    Value base = kb->c(0), rest = o;
    for (size_t d = rank; d-- > 0;) {
      base = kb->add(base, kb->mul(kb->rem(rest, keptV[d]), strides[d]));
      rest = kb->div(rest, keptV[d]);
    }
    auto acc = kb->forLoop(kb->c(0), R, kb->c(1), ValueRange{reduceInit(*kb, kind, elem)},
                           [&](Value q, ValueRange a) -> SmallVector<Value> {
                             Value off = base, rest2 = q;
                             for (size_t d = rank; d-- > 0;) {
                               off = kb->add(off, kb->mul(kb->rem(rest2, redV[d]), strides[d]));
                               rest2 = kb->div(rest2, redV[d]);
                             }
                             return {reduceStep(*kb, kind, elem, a[0], kb->load(scalar, kb->binding(1), off))};
                           });
    kb->store(reduceFinish(*kb, kind, elem, acc[0], R), kb->binding(0), o);
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

LogicalResult emitArgReduce(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                            const TensorInfo &result) {
  auto r = cast<ArgReduceOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  int64_t axis = r.getAxis();
  Reg outer = sp.product(X.dims, 0, axis), len = X.dims[axis];
  Reg inner = sp.product(X.dims, axis + 1, X.dims.size());
  Reg rows = sp.mul(outer, inner);
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, len);
  std::string name = dispatchName(op);
  Type elem = X.elementType, scalar = bodyScalarType(elem);
  bool f = isFloatType(scalar), u = elem.isUnsignedInteger(), isMax = r.getKind() == "max";
  bool last = r.getSelectLastIndex();
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value L = kb->dim(len), I = kb->dim(inner);
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value o = kb->div(row, I), i = kb->rem(row, I);
    Value base = kb->add(kb->mul(o, kb->mul(L, I)), i);
    Value first = kb->load(scalar, kb->binding(1), base);
    auto best = kb->forLoop(
        kb->c(1), L, kb->c(1), ValueRange{first, kb->c(0)}, [&](Value j, ValueRange a) -> SmallVector<Value> {
          Value x = kb->load(scalar, kb->binding(1), kb->add(base, kb->mul(j, I)));
          Value better;
          if (f) {
            auto pred = isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                              : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
            better = kb->b.create<arith::CmpFOp>(kb->loc, pred, x, a[0]);
          } else {
            auto pred = isMax ? (last ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                                      : (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt))
                              : (last ? (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle)
                                      : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt));
            better = kb->b.create<arith::CmpIOp>(kb->loc, pred, x, a[0]);
          }
          return {kb->b.create<arith::SelectOp>(kb->loc, better, x, a[0]), kb->select(better, j, a[1])};
        });
    kb->store(best[1], kb->binding(0), row);
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

LogicalResult emitLayerNorm(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                            const TensorInfo &result) {
  auto ln = cast<LayerNormOp>(op);
  int64_t axis = ln.getAxis();
  const TensorInfo &X = operands[0];
  auto &sp = ctx.shapes;
  Reg rows = sp.product(X.dims, 0, axis);
  Reg len = sp.product(X.dims, axis, X.dims.size());
  int64_t scaleCount = ln.getScale().getType().getNumElements();
  int64_t biasCount = ln.getBias() ? llvm::cast<RankedTensorType>(ln.getBias().getType()).getNumElements() : 0;
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, len);
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value L = kb->dim(len);
  Value invL = divf(*kb, kb->cf(1.f), kb->toF32(kb->max(L, kb->c(1))));
  float eps = ln.getEpsilon().convertToFloat();
  // Rows are contiguous: the two sums run on 8-lane partial sums with a
  // masked tail (a scalar add chain is bound by the add latency), and the
  // normalization pass on vectors too when scale and bias cover the whole
  // row (no broadcast inside it).
  constexpr int64_t kLanes = kRowLanes;
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Value Xp = kb->binding(1);
  VectorRow rowOf(*kb, Xp, L);
  Type vt = rowOf.vt;
  Value full = rowOf.full, tailMask = rowOf.tailMask;
  std::optional<int64_t> staticLen = sp.constValue(len);
  bool vectorAffine = staticLen && scaleCount == *staticLen && (biasCount == 0 || biasCount == *staticLen);
  auto rowSum = [&](Value base, const std::function<Value(Value)> &f) {
    return rowOf.reduce(base, vector::CombiningKind::ADD, 0.f, f);
  };
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value base = kb->mul(row, L);
    Value mean = ln.getRms() ? kb->cf(0.f) : mulf(*kb, rowSum(base, [](Value x) { return x; }), invL);
    Value meanV = kb->splat(mean, kLanes);
    Value sq = rowSum(base, [&](Value x) -> Value {
      Value d = b.create<arith::SubFOp>(loc, x, meanV);
      return b.create<arith::MulFOp>(loc, d, d);
    });
    Value var = mulf(*kb, sq, invL);
    Value rstd = divf(*kb, kb->cf(1.f), kb->b.create<math::SqrtOp>(kb->loc, addf(*kb, var, kb->cf(eps))));
    if (vectorAffine) {
      Value rstdV = kb->splat(rstd, kLanes);
      auto normalize = [&](Value j, Value mask) {
        auto ld = [&](Value ptr, Value idx) {
          return mask ? kb->maskedLoad(vt, ptr, idx, mask) : kb->load(vt, ptr, idx);
        };
        Value y = b.create<arith::MulFOp>(loc, b.create<arith::SubFOp>(loc, ld(Xp, kb->add(base, j)), meanV), rstdV);
        y = b.create<arith::MulFOp>(loc, y, ld(kb->binding(2), j));
        if (biasCount) y = b.create<arith::AddFOp>(loc, y, ld(kb->binding(3), j));
        if (mask)
          kb->maskedStore(y, kb->binding(0), kb->add(base, j), mask);
        else
          kb->store(y, kb->binding(0), kb->add(base, j));
      };
      kb->forLoop(kb->c(0), full, kb->c(kLanes), [&](Value j) { normalize(j, Value()); });
      normalize(full, tailMask);
      return;
    }
    kb->forLoop(kb->c(0), L, kb->c(1), [&](Value j) {
      Value x = kb->load(kb->f32(), kb->binding(1), kb->add(base, j));
      Value y = mulf(*kb, subf(*kb, x, mean), rstd);
      y = mulf(*kb, y, kb->load(kb->f32(), kb->binding(2), kb->rem(j, kb->c(scaleCount))));
      if (biasCount) y = addf(*kb, y, kb->load(kb->f32(), kb->binding(3), kb->rem(j, kb->c(biasCount))));
      kb->store(y, kb->binding(0), kb->add(base, j));
    });
  });
  kb->finish();
  std::vector<uint32_t> bindings = {result.buffer, X.buffer, operands[1].buffer};
  if (biasCount) bindings.push_back(operands[2].buffer);
  ctx.addDispatch(*kb, bindings, groups, name);
  return success();
}

void registerReductionKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<ReduceMeanOp>(emitReduceMean);
  registry.addOpKernel<SoftmaxOp>(emitSoftmax);
  registry.addOpKernel<ReduceOp>(emitReduce);
  registry.addOpKernel<ArgReduceOp>(emitArgReduce);
  registry.addOpKernel<LayerNormOp>(emitLayerNorm);
}

} // namespace v4f
