//===- PoolKernels.cpp - max / average pooling ----------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "RowVectorOps.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;

namespace v4f {

namespace {

/// The max of two float vectors for max pooling, with nsz: max(-0, +0) may
/// be either zero (NaNs still propagate). Without it LLVM orders the zeros
/// with a sign test and two blends around every vmaxps.
Value poolMax(KernelBuilder &kb, Value x, Value y) {
  return kb.b.create<arith::MaximumFOp>(kb.loc, x, y, arith::FastMathFlags::nsz);
}

/// A float 3x3 stride-2 max pool (no dilation, left and top padding at
/// most 1): per output row and chunk of L outputs, the column-wise max of
/// the 3 input rows over the 2L + 2 inputs the chunk reads (two windows of
/// 2L floats, at the chunk's first input column and 2 further), then lane x
/// takes the max of the first window's even and odd lanes and the second's
/// even lanes. Inputs outside the plane read -inf (masked loads and a
/// select). The general kernel, with 8 lanes and 9 loads per window element,
/// was slow on ResNet-50's stem pool (64 x 112 x 112 -> 56 x 56;
/// measurements: bench/results/history.md, "Measurements behind code
/// decisions").
LogicalResult emitMaxPool3x3s2(CPUKernelContext &ctx, Operation *op, const TensorInfo &X, const TensorInfo &result,
                               int64_t padT, int64_t padL, int64_t L) {
  auto &sp = ctx.shapes;
  Reg planes = sp.mul(X.dims[0], X.dims[1]);
  Reg outPlane = sp.mul(result.dims[2], result.dims[3]);
  auto [groups, rowsPerGroup] = ctx.splitRows(planes, sp.mul(outPlane, sp.constant(9)), 16384);
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), vt2 = kb->vec(2 * L);
  Value H = kb->dim(X.dims[2]), W = kb->dim(X.dims[3]);
  Value OH = kb->dim(result.dims[2]), OW = kb->dim(result.dims[3]);
  Value In = kb->binding(1), Out = kb->binding(0);
  Value ninf = kb->cf(-INFINITY, vt2);
  auto i64v2 = VectorType::get({2 * L}, b.getI64Type());
  Value iota2 = kb->iota(2 * L);
  SmallVector<int64_t> even(L), odd(L);
  for (int64_t l = 0; l < L; ++l) even[l] = 2 * l, odd[l] = 2 * l + 1;
  auto maxOf = [&](Value x, Value y) { return poolMax(*kb, x, y); };
  auto [begin, end] = kb->workgroupRange(kb->dim(planes), kb->dim(rowsPerGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value plane) {
    Value src = kb->mul(plane, kb->mul(H, W));
    Value dst = kb->mul(plane, kb->mul(OH, OW));
    kb->forLoop(kb->c(0), OH, kb->c(1), [&](Value oy) {
      Value y0 = kb->sub(kb->mul(oy, kb->c(2)), kb->c(padT));
      kb->forLoop(kb->c(0), OW, kb->c(L), [&](Value ox0) {
        Value c0 = kb->sub(kb->mul(ox0, kb->c(2)), kb->c(padL));
        auto finish = [&](Value win0, Value win1, bool masked) {
          Value v = maxOf(maxOf(b.create<vector::ShuffleOp>(loc, win0, win0, even),
                                b.create<vector::ShuffleOp>(loc, win0, win0, odd)),
                          b.create<vector::ShuffleOp>(loc, win1, win1, even));
          Value at = kb->add(dst, kb->add(kb->mul(oy, OW), ox0));
          if (masked)
            kb->maskedStore(v, Out, at, kb->laneMask(kb->sub(OW, ox0), L));
          else
            kb->store(v, Out, at);
        };
        // With 8 lanes (AVX2), interior chunks (all 3 rows and the 2L + 2
        // columns inside the plane, L whole outputs) take plain loads and a
        // plain store, no masks: the masks' 64-bit lane compares cost AVX2
        // several times AVX-512's time at the same work. AVX-512, whose
        // compares write mask registers, ran slower that way and keeps the
        // masked path (measurements: bench/results/history.md, "Measurements
        // behind code decisions").
        auto interior = [&] {
          return andi(*kb,
                      andi(*kb, kb->cmp(arith::CmpIPredicate::sge, y0, kb->c(0)),
                           kb->cmp(arith::CmpIPredicate::slt, kb->add(y0, kb->c(2)), H)),
                      andi(*kb,
                           andi(*kb, kb->cmp(arith::CmpIPredicate::sge, c0, kb->c(0)),
                                kb->cmp(arith::CmpIPredicate::sle, kb->add(c0, kb->c(2 * L + 2)), W)),
                           kb->cmp(arith::CmpIPredicate::sle, kb->add(ox0, kb->c(L)), OW)));
        };
        auto plain = [&] {
          Value win[2];
          for (int o = 0; o < 2; ++o) {
            Value acc;
            for (int64_t i = 0; i < 3; ++i) {
              Value at = kb->add(src, kb->add(kb->mul(kb->add(y0, kb->c(i)), W), kb->add(c0, kb->c(2 * o))));
              Value v = kb->load(vt2, In, at);
              acc = i == 0 ? v : maxOf(acc, v);
            }
            win[o] = acc;
          }
          finish(win[0], win[1], false);
        };
        auto masked = [&] {
          // Column-wise max of the rows inside the plane, per window.
          Value win[2];
          for (int o = 0; o < 2; ++o) {
            Value cols = b.create<arith::AddIOp>(
                loc, b.create<vector::BroadcastOp>(loc, i64v2, kb->add(c0, kb->c(2 * o))), iota2);
            Value colOk = andi(*kb,
                               b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, cols,
                                                       b.create<vector::BroadcastOp>(loc, i64v2, kb->c(0))),
                               b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, cols,
                                                       b.create<vector::BroadcastOp>(loc, i64v2, W)));
            Value acc = ninf;
            for (int64_t i = 0; i < 3; ++i) {
              Value y = kb->add(y0, kb->c(i));
              Value rowOk = inRange(*kb, y, kb->c(0), H);
              Value mask = andi(*kb, colOk, b.create<vector::BroadcastOp>(loc, colOk.getType(), rowOk));
              Value at = kb->add(src, kb->add(kb->mul(kb->select(rowOk, y, kb->c(0)), W), kb->add(c0, kb->c(2 * o))));
              Value v = b.create<arith::SelectOp>(loc, mask, kb->maskedLoad(vt2, In, at, mask), ninf);
              acc = maxOf(acc, v);
            }
            win[o] = acc;
          }
          finish(win[0], win[1], true);
        };
        if (L >= 16)
          masked();
        else
          kb->ifThenElse(interior(), plain, masked);
      });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

/// A float 2-D max or average pool of a channels-last tensor into a
/// channels-last result (v4f-assign-cpu-layouts; followsDataLayout): per
/// output pixel, the window's rows and columns inside the input are
/// computed once (scalars: [lo, hi) of the window indices, so no element
/// is tested), and per group of G vectors of L channels the window is
/// walked with G accumulators: G adjacent vector loads per window element
/// (the C floats of an input pixel are adjacent), G up to 16 with 16 lanes
/// (AVX-512), 8 otherwise. The average divides by
/// the elements counted: those inside the input, or with count_include_pad
/// those inside the padded input. A channel count that is not a multiple of
/// L (or not known) takes one masked vector per group. The max takes nsz
/// (poolMax: a vmaxps and a NaN check per element). Each of these steps made
/// YOLOv5's SPPF pools (5 x 5 over 256 x 20 x 20) faster than a
/// channels-first border, one vector per window element with a bound check
/// per element, or IEEE maximum (measurements: bench/results/history.md,
/// "Measurements behind code decisions").
LogicalResult emitPoolChannelsLast(CPUKernelContext &ctx, Operation *op, const TensorInfo &X, const TensorInfo &result,
                                   bool isMax, ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> d,
                                   ArrayRef<int64_t> p, bool includePad, int64_t L) {
  auto &sp = ctx.shapes;
  Reg pixels = sp.mul(result.dims[0], sp.mul(result.dims[2], result.dims[3]));
  auto [groups, pixelsPerGroup] = ctx.splitRows(pixels, sp.mul(X.dims[1], sp.constant(k[0] * k[1])));
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L);
  Value C = kb->dim(X.dims[1]), H = kb->dim(X.dims[2]), W = kb->dim(X.dims[3]);
  Value OH = kb->dim(result.dims[2]), OW = kb->dim(result.dims[3]);
  Value In = kb->binding(1), Out = kb->binding(0);
  Value init = kb->cf(isMax ? -INFINITY : 0.f, vt);
  std::optional<int64_t> constC = kb->constDim(X.dims[1]);
  bool ragged = !constC || *constC % L != 0;
  // Vectors per group: up to 16 accumulators with AVX-512's 32 registers,
  // 8 with AVX2's 16.
  int64_t G = 1;
  if (!ragged)
    for (int64_t g : {16, 8, 4, 2})
      if (g <= (L == 16 ? 16 : 8) && (*constC / L) % g == 0) {
        G = g;
        break;
      }
  // [lo, hi) of the window indices i with lower <= start + i * step < upper
  // (i in [0, taps)).
  auto window = [&](Value start, int64_t step, Value lower, Value upper, int64_t taps) {
    Value stepV = kb->c(step);
    Value below = kb->sub(lower, start); // > 0: the first taps fall short
    Value lo = kb->select(kb->cmp(arith::CmpIPredicate::sgt, below, kb->c(0)),
                          kb->div(kb->add(below, kb->c(step - 1)), stepV), kb->c(0));
    Value room = kb->max(kb->sub(upper, start), kb->c(0));
    Value hi = kb->min(kb->div(kb->add(room, kb->c(step - 1)), stepV), kb->c(taps));
    return std::make_pair(lo, kb->max(hi, lo));
  };
  auto [begin, end] = kb->workgroupRange(kb->dim(pixels), kb->dim(pixelsPerGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value pix) {
    Value ox = kb->rem(pix, OW), rest = kb->div(pix, OW);
    Value oy = kb->rem(rest, OH), img = kb->div(rest, OH);
    Value y0 = kb->sub(kb->mul(oy, kb->c(s[0])), kb->c(p[0]));
    Value x0 = kb->sub(kb->mul(ox, kb->c(s[1])), kb->c(p[1]));
    std::pair<Value, Value> is = window(y0, d[0], kb->c(0), H, k[0]);
    std::pair<Value, Value> js = window(x0, d[1], kb->c(0), W, k[1]);
    Value iLo = is.first, iHi = is.second, jLo = js.first, jHi = js.second;
    Value divisor;
    if (!isMax) {
      Value rows = kb->sub(iHi, iLo), cols = kb->sub(jHi, jLo);
      if (includePad) {
        std::pair<Value, Value> ps = window(y0, d[0], kb->c(-p[0]), kb->add(H, kb->c(p[2])), k[0]);
        std::pair<Value, Value> qs = window(x0, d[1], kb->c(-p[1]), kb->add(W, kb->c(p[3])), k[1]);
        rows = kb->sub(ps.second, ps.first);
        cols = kb->sub(qs.second, qs.first);
      }
      Value count = b.create<arith::SIToFPOp>(loc, b.getF32Type(), kb->max(kb->mul(rows, cols), kb->c(1)));
      divisor = kb->splat(count, L);
    }
    Value imgBase = kb->mul(img, kb->mul(H, kb->mul(W, C)));
    Value dst = kb->mul(pix, C);
    kb->forLoop(kb->c(0), C, kb->c(G * L), [&](Value c0) {
      Value mask = ragged ? kb->laneMask(kb->sub(C, c0), L) : Value();
      SmallVector<Value> inits(G, init);
      auto acc = kb->forLoop(iLo, iHi, kb->c(1), inits, [&](Value i, ValueRange a1) -> SmallVector<Value> {
        Value y = kb->add(y0, kb->mul(i, kb->c(d[0])));
        Value rowBase = kb->add(imgBase, kb->add(kb->mul(y, kb->mul(W, C)), c0));
        return kb->forLoop(jLo, jHi, kb->c(1), a1, [&](Value j, ValueRange a2) -> SmallVector<Value> {
          Value at = kb->add(rowBase, kb->mul(kb->add(x0, kb->mul(j, kb->c(d[1]))), C));
          SmallVector<Value> next;
          for (int64_t g = 0; g < G; ++g) {
            Value v = ragged ? kb->maskedLoad(vt, In, at, mask) : kb->load(vt, In, kb->add(at, kb->c(g * L)));
            next.push_back(isMax ? poolMax(*kb, a2[g], v) : addf(*kb, a2[g], v));
          }
          return next;
        });
      });
      for (int64_t g = 0; g < G; ++g) {
        Value v = isMax ? acc[g] : divf(*kb, acc[g], divisor);
        if (ragged)
          kb->maskedStore(v, Out, kb->add(dst, c0), mask);
        else
          kb->store(v, Out, kb->add(dst, kb->add(c0, kb->c(g * L))));
      }
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

} // namespace

LogicalResult emitPool(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result) {
  bool isMax = isa<MaxPoolOp>(op);
  ArrayRef<int64_t> k, s, d, p;
  bool includePad = false;
  if (auto mp = dyn_cast<MaxPoolOp>(op)) {
    k = mp.getKernelShape();
    s = mp.getStrides();
    d = mp.getDilations();
    p = mp.getPads();
  } else {
    auto ap = cast<AvgPoolOp>(op);
    k = ap.getKernelShape();
    s = ap.getStrides();
    d = ap.getDilations();
    p = ap.getPads();
    includePad = ap.getCountIncludePad();
  }
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  // The specialized kernels' lanes: 16 with AVX-512, else 8.
  auto module = op->getParentOfType<ModuleOp>();
  auto target = module ? module->getAttrOfType<CPUTargetAttr>("v4f.target") : CPUTargetAttr();
  const int64_t lanes = target && target.getVectorBits() >= 512 ? 16 : 8;
  if (X.channelsLast) // followsDataLayout; checkLayouts saw the result channels-last too
    return emitPoolChannelsLast(ctx, op, X, result, isMax, k, s, d, p, includePad, lanes);
  if (isMax && X.elementType.isF32() && k.size() == 2 && k[0] == 3 && k[1] == 3 && s[0] == 2 && s[1] == 2 &&
      d[0] == 1 && d[1] == 1 && p[0] <= 1 && p[1] <= 1)
    return emitMaxPool3x3s2(ctx, op, X, result, p[0], p[1], lanes);
  Reg planes = sp.mul(X.dims[0], X.dims[1]);
  Reg outPlane = sp.mul(result.dims[2], result.dims[3]);
  auto [groups, rowsPerGroup] = ctx.splitRows(planes, sp.mul(outPlane, sp.constant(k[0] * k[1])), 16384);
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  auto [begin, end] = kb->workgroupRange(kb->dim(planes), kb->dim(rowsPerGroup));
  Value H = kb->dim(X.dims[2]), W = kb->dim(X.dims[3]);
  Value OH = kb->dim(result.dims[2]), OW = kb->dim(result.dims[3]);
  Value padH = kb->add(H, kb->c(p[2])), padW = kb->add(W, kb->c(p[3]));
  // Vectorized along the output row: L output columns at a time. For each
  // window element (i, j) the L inputs of a chunk are one masked load
  // (stride 1), two masked loads and an even-lane shuffle (stride 2) or a
  // masked gather (other strides); the mask leaves out the padding (never
  // read) and the columns past OW. (A scalar loop was slow on ResNet-50's
  // 3x3 / 2 max pool; measurements: bench/results/history.md, "Measurements
  // behind code decisions".)
  constexpr int64_t L = kRowLanes;
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L);
  // The data: float32, or int8 for a max pool of carried quantized values
  // (v4f-carry-int8); the window counts stay float.
  Type elemT = llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  const bool int8 = elemT.isInteger(8);
  const uint32_t elemBytes = int8 ? 1 : 4;
  Type dt = VectorType::get({L}, elemT);
  auto i64v = VectorType::get({L}, b.getI64Type());
  auto splatI = [&](Value v) -> Value { return b.create<vector::BroadcastOp>(loc, i64v, v); };
  auto splatB = [&](Value v) -> Value {
    return b.create<vector::BroadcastOp>(loc, VectorType::get({L}, b.getI1Type()), v);
  };
  Value iota = kb->iota(L);
  Value Xp = kb->binding(1);
  Value zeroV = kb->cf(0.f, vt), oneV = kb->cf(1.f, vt);
  Value zeroD = b.create<arith::ConstantOp>(loc, dt, b.getZeroAttr(dt));
  Value initV = int8 ? b.create<arith::ConstantOp>(
                            loc, dt, DenseElementsAttr::get(llvm::cast<ShapedType>(dt), b.getI8IntegerAttr(-128)))
                           .getResult()
                     : kb->cf(isMax ? -INFINITY : 0.f, vt);
  auto maxOf = [&](Value x, Value y) -> Value {
    if (int8) return b.create<arith::MaxSIOp>(loc, x, y);
    return poolMax(*kb, x, y);
  };
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  auto ptrVecType = LLVM::LLVMFixedVectorType::get(ptrType, unsigned(L));
  kb->forLoop(begin, end, kb->c(1), [&](Value plane) {
    Value src = kb->mul(plane, kb->mul(H, W));
    Value dst = kb->mul(plane, kb->mul(OH, OW));
    kb->forLoop(kb->c(0), OH, kb->c(1), [&](Value oy) {
      Value y0 = kb->sub(kb->mul(oy, kb->c(s[0])), kb->c(p[0]));
      kb->forLoop(kb->c(0), OW, kb->c(L), [&](Value ox0) {
        Value outMask = kb->laneMask(kb->sub(OW, ox0), L);
        // Input column of each lane's window start.
        Value laneX = b.create<arith::SubIOp>(
            loc, b.create<arith::MulIOp>(loc, b.create<arith::AddIOp>(loc, splatI(ox0), iota), splatI(kb->c(s[1]))),
            splatI(kb->c(p[1])));
        // Interior chunks (every lane's window inside the row, all L
        // columns inside OW) load without masks; the others mask.
        Value xFirst = kb->sub(kb->mul(ox0, kb->c(s[1])), kb->c(p[1]));
        Value xLast = kb->add(kb->add(xFirst, kb->c((L - 1) * s[1])), kb->c((k[1] - 1) * d[1]));
        Value inside = andi(*kb,
                            andi(*kb, kb->cmp(arith::CmpIPredicate::sle, kb->add(ox0, kb->c(L)), OW),
                                 kb->cmp(arith::CmpIPredicate::sge, xFirst, kb->c(0))),
                            kb->cmp(arith::CmpIPredicate::slt, xLast, W));
        auto interior = [&]() -> SmallVector<Value> {
          return kb->forLoop(
              kb->c(0), kb->c(k[0]), kb->c(1), ValueRange{initV, zeroV},
              [&](Value i, ValueRange a1) -> SmallVector<Value> {
                Value y = kb->add(y0, kb->mul(i, kb->c(d[0])));
                Value yOk = inRange(*kb, y, kb->c(0), H);
                Value yCounted = includePad ? inRange(*kb, y, kb->c(-p[0]), padH) : yOk;
                Value rowBase = kb->add(src, kb->mul(kb->select(yOk, y, kb->c(0)), W));
                SmallVector<Value> acc{a1[0], a1[1]};
                for (int64_t j = 0; j < k[1]; ++j) {
                  Value x0 = kb->add(xFirst, kb->c(j * d[1]));
                  Value v;
                  if (s[1] == 1) {
                    v = kb->load(dt, Xp, kb->add(rowBase, x0));
                  } else {
                    // Lanes at stride s: L * s contiguous inputs, lane l from
                    // element l * s (s = 2: two vectors and an even-lane shuffle).
                    SmallVector<int64_t> pick(L);
                    for (int64_t l = 0; l < L; ++l) pick[l] = l * s[1];
                    if (s[1] == 2) {
                      v = b.create<vector::ShuffleOp>(loc, kb->load(dt, Xp, kb->add(rowBase, x0)),
                                                      kb->load(dt, Xp, kb->add(rowBase, kb->add(x0, kb->c(L)))), pick);
                    } else {
                      Value idx = b.create<arith::AddIOp>(loc, splatI(kb->add(rowBase, x0)),
                                                          b.create<arith::MulIOp>(loc, iota, splatI(kb->c(s[1]))));
                      Value ptrs = b.create<LLVM::GEPOp>(loc, ptrVecType, elemT, Xp, ValueRange{idx});
                      Value all = b.create<arith::ConstantOp>(
                          loc, DenseElementsAttr::get(VectorType::get({L}, b.getI1Type()), true));
                      v = b.create<LLVM::masked_gather>(loc, dt, ptrs, all, ValueRange{zeroD}, elemBytes);
                    }
                  }
                  acc[0] = isMax ? maxOf(acc[0], v) : addf(*kb, acc[0], v);
                }
                acc[0] = b.create<arith::SelectOp>(loc, yOk, acc[0], a1[0]);
                acc[1] = addf(*kb, a1[1], b.create<arith::SelectOp>(loc, yCounted, kb->cf(float(k[1]), vt), zeroV));
                return acc;
              });
        };
        auto border = [&]() -> SmallVector<Value> {
          return kb->forLoop(
              kb->c(0), kb->c(k[0]), kb->c(1), ValueRange{initV, zeroV},
              [&](Value i, ValueRange a1) -> SmallVector<Value> {
                Value y = kb->add(y0, kb->mul(i, kb->c(d[0])));
                Value yOk = inRange(*kb, y, kb->c(0), H);
                Value yPad = inRange(*kb, y, kb->c(-p[0]), padH);
                Value rowBase = kb->add(src, kb->mul(kb->select(yOk, y, kb->c(0)), W));
                Value rowPtr = b.create<LLVM::GEPOp>(loc, ptrType, elemT, Xp, ValueRange{rowBase});
                return kb->forLoop(
                    kb->c(0), kb->c(k[1]), kb->c(1), a1, [&](Value j, ValueRange a2) -> SmallVector<Value> {
                      Value jOff = kb->mul(j, kb->c(d[1]));
                      Value xv = b.create<arith::AddIOp>(loc, laneX, splatI(jOff));
                      Value ok =
                          andi(*kb, andi(*kb, splatB(yOk), inRange(*kb, xv, splatI(kb->c(0)), splatI(W))), outMask);
                      Value okPad = andi(
                          *kb, andi(*kb, splatB(yPad), inRange(*kb, xv, splatI(kb->c(-p[1])), splatI(padW))), outMask);
                      // The first input column of the chunk's window element.
                      Value x0 = kb->add(kb->sub(kb->mul(ox0, kb->c(s[1])), kb->c(p[1])), jOff);
                      Value v;
                      if (s[1] == 1) {
                        v = kb->maskedLoad(dt, rowPtr, x0, ok);
                      } else if (s[1] == 2) {
                        // Inputs x0 .. x0 + 2L - 1; lane l takes x0 + 2l.
                        Value lanes2 = b.create<arith::AddIOp>(loc, splatI(x0), iota);
                        auto half = [&](int64_t off) {
                          Value xs = b.create<arith::AddIOp>(loc, lanes2, splatI(kb->c(off)));
                          Value m = andi(*kb, splatB(yOk), inRange(*kb, xs, splatI(kb->c(0)), splatI(W)));
                          return kb->maskedLoad(dt, rowPtr, kb->add(x0, kb->c(off)), m);
                        };
                        SmallVector<int64_t> even(L);
                        for (int64_t l = 0; l < L; ++l) even[l] = 2 * l;
                        v = b.create<vector::ShuffleOp>(loc, half(0), half(L), even);
                      } else {
                        Value idx = b.create<arith::SelectOp>(loc, ok, xv, splatI(kb->c(0)));
                        Value ptrs = b.create<LLVM::GEPOp>(loc, ptrVecType, elemT, rowPtr, ValueRange{idx});
                        v = b.create<LLVM::masked_gather>(loc, dt, ptrs, ok, ValueRange{zeroD}, elemBytes);
                      }
                      Value acc = isMax ? maxOf(a2[0], v) : addf(*kb, a2[0], v);
                      acc = b.create<arith::SelectOp>(loc, ok, acc, a2[0]);
                      Value counted = includePad ? okPad : ok;
                      Value cnt = addf(*kb, a2[1], b.create<arith::SelectOp>(loc, counted, oneV, zeroV));
                      return {acc, cnt};
                    });
              });
        };
        // (Wide windows stay on the masked loop rather than unrolling.)
        SmallVector<Value> outer = k[1] <= 16 ? kb->ifYield(inside, TypeRange{dt, vt}, interior, border) : border();
        Value v = outer[0];
        if (!isMax) v = divf(*kb, v, b.create<arith::MaximumFOp>(loc, outer[1], oneV));
        kb->maskedStore(v, kb->binding(0), kb->add(dst, kb->add(kb->mul(oy, OW), ox0)), outMask);
      });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {result.buffer, X.buffer}, groups, name);
  return success();
}

void registerPoolKernels(CPUKernelRegistry &registry) { registry.addOpKernel<MaxPoolOp, AvgPoolOp>(emitPool); }

} // namespace v4f
