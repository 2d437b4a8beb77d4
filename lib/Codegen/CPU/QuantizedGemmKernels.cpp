//===- QuantizedGemmKernels.cpp - v4f.quantized_matmul ----------------------===//
//
// An int8 matmul runs as two dispatches:
//
//  1. "quantize rows": each row r of the float lhs becomes int16 values
//     q[r, k] in [-255, 255] (the int8 value minus its zero point), K padded
//     to an even count with a zero, and the row's scale s_r (dynamic: max|a| /
//     127 per row; static: the calibrated scale);
//  2. the integer GEMM: MR x NR register tiles of int32 accumulators; each step
//     takes one pair of K (k, k+1): the pair (q[r,k], q[r,k+1]) is broadcast
//     as one 32-bit value, the weight pairs of NR columns are loaded as int8
//     and sign-extended to int16, and one pmaddwd per vector multiplies and
//     adds both products into int32 lanes (exact: |q| <= 255, |w| <= 127, so
//     a pair sum is far from overflowing and no 16-bit step saturates). The
//     epilogue converts to float, scales by s_r * w_scale[n], adds the bias
//     and applies the activation.
//
// The weight is packed at compile time (int8, `int8_pairs`): panels of NR
// columns, panel p holding for each K pair kk the 2 x NR bytes
// W[2kk][p*NR + j], W[2kk+1][p*NR + j] interleaved by column j, zero-padded
// to whole panels and an even K. pmaddwd is the SSE2 / AVX2 / AVX-512BW
// instruction of the target's vector width (an LLVM intrinsic); other
// targets get the same arithmetic as generic vector ops.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "QuantizedGemm.h"
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;

namespace v4f {

GemmTilingAttr requireGemmTiling(Operation *op) {
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  return tiling;
}

IntegerIsa integerIsa(Operation *op, int64_t lanes) {
  auto module = op->getParentOfType<ModuleOp>();
  auto target = module ? module->getAttrOfType<CPUTargetAttr>("v4f.target") : CPUTargetAttr();
  IntegerIsa isa;
  isa.vnni = target && target.getVnni() && (lanes == 16 || lanes == 8);
  isa.x86 = target && (target.getIsa() == "sse" || target.getIsa() == "avx2" || target.getIsa() == "avx512");
  return isa;
}

Value splatI32(KernelBuilder &kb, int64_t lanes, int32_t v) {
  auto t = VectorType::get({lanes}, kb.b.getI32Type());
  return kb.b.create<arith::ConstantOp>(kb.loc, t, DenseElementsAttr::get(t, kb.b.getI32IntegerAttr(v)));
}

Value quantizedValue(KernelBuilder &kb, Value x, Value inv, int32_t zp, float qmin, bool vnni) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type t = x.getType();
  Value r = b.create<math::RoundEvenOp>(loc, b.create<arith::MulFOp>(loc, x, inv));
  if (zp) r = b.create<arith::AddFOp>(loc, r, kb.cf(float(zp), t));
  r = b.create<arith::MaxNumFOp>(loc, r, kb.cf(qmin, t));
  r = b.create<arith::MinNumFOp>(loc, r, kb.cf(127.f, t));
  if (vnni) return b.create<arith::AddFOp>(loc, r, kb.cf(128.f, t));
  return zp ? b.create<arith::SubFOp>(loc, r, kb.cf(float(zp), t)).getResult() : r;
}

Value dotU8S8(KernelBuilder &kb, Value acc, Value a, Value b) {
  OpBuilder &builder = kb.b;
  // The 256-bit form is AVX-512 VNNI + VL's or AVX-VNNI's (VEX): LLVM picks
  // the encoding from the target's features.
  int64_t lanes = llvm::cast<VectorType>(acc.getType()).getDimSize(0);
  const char *intrinsic = lanes == 16 ? "llvm.x86.avx512.vpdpbusd.512" : "llvm.x86.avx512.vpdpbusd.256";
  return builder
      .create<LLVM::CallIntrinsicOp>(kb.loc, acc.getType(), builder.getStringAttr(intrinsic), ValueRange{acc, a, b},
                                     LLVM::FastmathFlagsAttr::get(builder.getContext(), LLVM::FastmathFlags::none))
      .getResult(0);
}

Value pairwiseMulAdd(KernelBuilder &kb, Value a, Value b16, int64_t lanes, bool x86) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto resultType = VectorType::get({lanes}, b.getI32Type());
  const char *intrinsic = lanes == 4    ? "llvm.x86.sse2.pmadd.wd"
                          : lanes == 8  ? "llvm.x86.avx2.pmadd.wd"
                          : lanes == 16 ? "llvm.x86.avx512.pmaddw.d.512"
                                        : nullptr;
  if (x86 && intrinsic)
    return b
        .create<LLVM::CallIntrinsicOp>(loc, resultType, b.getStringAttr(intrinsic), ValueRange{a, b16},
                                       LLVM::FastmathFlagsAttr::get(b.getContext(), LLVM::FastmathFlags::none))
        .getResult(0);
  auto wide = VectorType::get({2 * lanes}, b.getI32Type());
  Value prod =
      b.create<arith::MulIOp>(loc, b.create<arith::ExtSIOp>(loc, wide, a), b.create<arith::ExtSIOp>(loc, wide, b16));
  SmallVector<int64_t> even, odd;
  for (int64_t i = 0; i < lanes; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  return b.create<arith::AddIOp>(loc, b.create<vector::ShuffleOp>(loc, prod, prod, even),
                                 b.create<vector::ShuffleOp>(loc, prod, prod, odd));
}

Reg emitGemmBlocks(CPUKernelContext &ctx, KernelBuilder &kb, Reg R, Reg N, int64_t mr, int64_t nr, int64_t mb,
                   int64_t nb, const std::function<void(Value m, Value n, int rows, Value edgeCols)> &tile) {
  auto &sp = ctx.shapes;
  Reg mTiles = sp.ceilDiv(R, sp.constant(mb));
  Reg wantNTiles = sp.ceilDiv(sp.constant(8), sp.max(mTiles, sp.constant(1)));
  Reg nbReg = sp.mul(sp.ceilDiv(sp.ceilDiv(N, wantNTiles), sp.constant(nr)), sp.constant(nr));
  nbReg = sp.min(sp.max(nbReg, sp.constant(nr)), sp.constant(nb));
  Reg nTiles = sp.ceilDiv(N, nbReg);
  Value wg = kb.workgroupId();
  Value mTilesV = kb.dim(mTiles);
  Value Rv = kb.dim(R), Nv = kb.dim(N), nbV = kb.dim(nbReg);
  Value m0 = kb.mul(kb.rem(wg, mTilesV), kb.c(mb));
  Value n0 = kb.mul(kb.div(wg, mTilesV), nbV);
  Value m1 = kb.min(kb.add(m0, kb.c(mb)), Rv);
  Value n1 = kb.min(kb.add(n0, nbV), Nv);
  Value nFull = kb.add(n0, kb.mul(kb.div(kb.sub(n1, n0), kb.c(nr)), kb.c(nr)));
  Value mFull = kb.add(m0, kb.mul(kb.div(kb.sub(m1, m0), kb.c(mr)), kb.c(mr)));
  SmallVector<int64_t> edgeRows;
  for (int64_t r = int64_t(1) << 30; r >= 1; r /= 2)
    if (r < mr) edgeRows.push_back(r);
  auto panel = [&](Value n, Value edgeCols) {
    kb.forLoop(m0, mFull, kb.c(mr), [&](Value m) { tile(m, n, int(mr), edgeCols); });
    Value rest = kb.sub(m1, mFull);
    for (int64_t rows : edgeRows) {
      Value bit = kb.b.create<arith::AndIOp>(kb.loc, rest, kb.c(rows));
      Value before = kb.b.create<arith::AndIOp>(kb.loc, rest, kb.c(~(2 * rows - 1)));
      kb.ifThen(kb.cmp(arith::CmpIPredicate::ne, bit, kb.c(0)),
                [&] { tile(kb.add(mFull, before), n, int(rows), edgeCols); });
    }
  };
  kb.forLoop(n0, nFull, kb.c(nr), [&](Value n) { panel(n, Value()); });
  kb.ifThen(kb.cmp(arith::CmpIPredicate::slt, nFull, n1), [&] { panel(nFull, kb.sub(n1, nFull)); });
  return sp.mul(mTiles, nTiles);
}

void emitTileEpilogue(KernelBuilder &kb, int rows, int64_t vecs, int64_t L, Value m, Value n, Reg N, Value edgeCols,
                      std::optional<unsigned> colBinding, std::optional<unsigned> biasBinding, const std::string &act,
                      float alpha, float beta, const std::function<Value(int r, int64_t v, Value col)> &value) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  SmallVector<Value> masks;
  if (edgeCols)
    for (int64_t v = 0; v < vecs; ++v) masks.push_back(kb.laneMask(kb.sub(edgeCols, kb.c(v * L)), L));
  Type vt = kb.vec(L);
  auto load = [&](Value base, Value idx, int64_t v) {
    return edgeCols ? kb.maskedLoad(vt, base, idx, masks[v]) : kb.load(vt, base, idx);
  };
  Value Nv = kb.dim(N);
  SmallVector<Value> col, bias;
  for (int64_t v = 0; v < vecs; ++v) {
    Value c = kb.add(n, kb.c(v * L));
    col.push_back(colBinding ? load(kb.binding(*colBinding), c, v) : Value());
    if (biasBinding) bias.push_back(load(kb.binding(*biasBinding), c, v));
  }
  for (int r = 0; r < rows; ++r) {
    Value row = kb.add(m, kb.c(r));
    for (int64_t v = 0; v < vecs; ++v) {
      Value f = value(r, v, col[v]);
      if (biasBinding) f = b.create<arith::AddFOp>(loc, f, bias[v]);
      f = applyActivation(kb, f, act, alpha, beta);
      Value idx = kb.add(kb.mul(row, Nv), kb.add(n, kb.c(v * L)));
      if (edgeCols)
        kb.maskedStore(f, kb.binding(0), idx, masks[v]);
      else
        kb.store(f, kb.binding(0), idx);
    }
  }
}

namespace {

/// How far ahead the integer GEMMs prefetch their weight stream: a page,
/// about 30 K steps of a VNNI tile: a shorter distance hides less of the
/// DRAM latency, a longer one gains nothing more (measurements:
/// bench/results/history.md, "Measurements behind code decisions").
constexpr int64_t kWeightPrefetchBytes = 4096;
/// Weights smaller than this stay in cache between runs: no prefetch (and no
/// prefetch code in every tile variant).
constexpr int64_t kWeightPrefetchMinBytes = 256 * 1024;

/// Bytes of the int8_pairs (`step` 2) or int8_quads (`step` 4) packing of a
/// K x N weight in panels of `nr`.
int64_t packedInt8Bytes(int64_t K, int64_t N, int64_t nr, int64_t step) {
  return (N + nr - 1) / nr * nr * ((K + step - 1) / step * step);
}

void packInt8Steps(const int8_t *w, int64_t K, int64_t N, int64_t nr, int64_t step, int8_t *dst) {
  int64_t panels = (N + nr - 1) / nr, steps = (K + step - 1) / step;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t kk = 0; kk < steps; ++kk)
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t h = 0; h < step; ++h) {
          int64_t k = step * kk + h, n = p * nr + j;
          *dst++ = (k < K && n < N) ? w[k * N + n] : 0;
        }
}

struct QGemm {
  std::string name;
  Reg R, N;         // rows (all batch rows of lhs) and columns
  int64_t K, steps; // K and ceil(K / step)
  int64_t step;     // K values per 32-bit lane: 2 (int16 pairs, pmaddwd) or 4 (u8 quads, vpdpbusd)
  bool vnni;        // step 4: activations u8 (q + 128), the sum corrected by (128 + zp) * colsum
  bool prefetch;    // stream the weight with prefetches (a large weight)
  int32_t zeroPoint;
  uint32_t colSumBuf;
  uint32_t cBuf, qBuf, wBuf, wScaleBuf, rowScaleBuf;
  std::optional<uint32_t> biasBuf;
  std::string act;
  float alpha, beta;
  int64_t mr, nr, lanes, mb, nb;
  bool x86;
};

/// v4f.integer_matmul: 8-bit activations already integer (no scales), an
/// exact int32 result.
struct IntegerGemm {
  QGemm g;
  bool lhsUnsigned = false;
  std::optional<uint32_t> lhsZpBuf, rhsZpBuf, rowSumBuf;
};

/// The int32 sums of one MR x NR (or `rows` x NR) register tile at rows
/// [m, m + rows), columns [n, n + NR): vector v of row r at r * vecs + v.
SmallVector<Value> emitQTileSums(KernelBuilder &kb, const QGemm &g, Value m, Value n, int rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t L = g.lanes, vecs = g.nr / g.lanes;
  auto i32v = VectorType::get({L}, b.getI32Type());
  auto i16v = VectorType::get({2 * L}, b.getI16Type());
  auto i8v = VectorType::get({2 * L}, b.getI8Type());
  Value Q = kb.binding(1), W = kb.binding(2);
  // The panel of column n: steps x step x NR bytes per panel.
  Value wBase = kb.mul(kb.div(n, kb.c(g.nr)), kb.c(g.steps * g.step * g.nr));
  SmallVector<Value> rowBase; // in int32 units (one K step: an int16 pair or a u8 quad)
  for (int r = 0; r < rows; ++r) rowBase.push_back(kb.mul(kb.add(m, kb.c(r)), kb.c(g.steps)));
  auto i8quads = VectorType::get({4 * L}, b.getI8Type());
  Value zero = b.create<arith::ConstantOp>(loc, i32v, DenseElementsAttr::get(i32v, b.getI32IntegerAttr(0)));
  SmallVector<Value> init(rows * vecs, zero);
  auto acc = kb.forLoop(kb.c(0), kb.c(g.steps), kb.c(1), init, [&](Value kk, ValueRange a) {
    Value wRow = kb.add(wBase, kb.mul(kk, kb.c(g.step * g.nr)));
    // The weight stream is the GEMM's memory traffic at few rows (a batch-1
    // transformer reads every weight once per run, from DRAM): prefetch it
    // kWeightPrefetchBytes ahead, one request per cache line of this step
    // (measurements: bench/results/history.md, "Measurements behind code
    // decisions").
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    for (int64_t line = 0; g.prefetch && line < g.step * g.nr; line += 64) {
      Value at = kb.add(wRow, kb.c(line + kWeightPrefetchBytes));
      b.create<LLVM::Prefetch>(loc, b.create<LLVM::GEPOp>(loc, ptrType, b.getI8Type(), W, ValueRange{at}), 0u, 3u, 1u);
    }
    SmallVector<Value> bv;
    for (int64_t v = 0; v < vecs; ++v) {
      Value at = kb.add(wRow, kb.c(v * g.step * L));
      if (g.vnni)
        bv.push_back(b.create<vector::BitCastOp>(loc, i32v, kb.load(i8quads, W, at)));
      else
        bv.push_back(b.create<arith::ExtSIOp>(loc, i16v, kb.load(i8v, W, at)));
    }
    SmallVector<Value> next;
    for (int r = 0; r < rows; ++r) {
      Value word = b.create<vector::BroadcastOp>(loc, i32v, kb.load(b.getI32Type(), Q, kb.add(rowBase[r], kk)));
      Value av = g.vnni ? word : b.create<vector::BitCastOp>(loc, i16v, word).getResult();
      for (int64_t v = 0; v < vecs; ++v)
        next.push_back(
            g.vnni
                ? dotU8S8(kb, a[r * vecs + v], av, bv[v])
                : b.create<arith::AddIOp>(loc, a[r * vecs + v], pairwiseMulAdd(kb, av, bv[v], L, g.x86)).getResult());
    }
    return next;
  });
  return SmallVector<Value>(acc.begin(), acc.end());
}

/// One MR x NR (or `rows` x NR) register tile at rows [m, m + rows), columns
/// [n, n + NR), storing only the first `edgeCols` columns when set.
void emitQTile(KernelBuilder &kb, const QGemm &g, Value m, Value n, int rows, Value edgeCols) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t L = g.lanes, vecs = g.nr / g.lanes;
  auto i32v = VectorType::get({L}, b.getI32Type());
  SmallVector<Value> acc = emitQTileSums(kb, g, m, n, rows);
  Value rowScale;
  SmallVector<Value> corrections;
  emitTileEpilogue(kb, rows, vecs, L, m, n, g.N, edgeCols, 3u, g.biasBuf ? std::optional<unsigned>(5) : std::nullopt,
                   g.act, g.alpha, g.beta, [&](int r, int64_t v, Value colScale) -> Value {
                     if (v == 0) rowScale = kb.splat(kb.load(kb.f32(), kb.binding(4), kb.add(m, kb.c(r))), L);
                     Value sum = acc[r * vecs + v];
                     if (g.vnni) {
                       // sum (q - zp) w = sum u w - (128 + zp) colsum(w), u = q + 128.
                       if (corrections.size() <= size_t(v))
                         corrections.push_back(b.create<arith::MulIOp>(
                             loc, kb.load(i32v, kb.binding(g.biasBuf ? 6 : 5), kb.add(n, kb.c(v * L))),
                             b.create<arith::ConstantOp>(
                                 loc, i32v, DenseElementsAttr::get(i32v, b.getI32IntegerAttr(128 + g.zeroPoint)))));
                       sum = b.create<arith::SubIOp>(loc, sum, corrections[v]);
                     }
                     Value f = b.create<arith::SIToFPOp>(loc, kb.vec(L), sum);
                     return b.create<arith::MulFOp>(loc, f, b.create<arith::MulFOp>(loc, rowScale, colScale));
                   });
}

void emitQGemm(CPUKernelContext &ctx, const QGemm &g) {
  auto &sp = ctx.shapes;
  auto kb = ctx.newKernel(g.name);
  Reg groups = emitGemmBlocks(ctx, *kb, g.R, g.N, g.mr, g.nr, g.mb, g.nb,
                              [&](Value m, Value n, int rows, Value edge) { emitQTile(*kb, g, m, n, rows, edge); });
  kb->finish();
  std::vector<uint32_t> bindings = {g.cBuf, g.qBuf, g.wBuf, g.wScaleBuf, g.rowScaleBuf};
  if (g.biasBuf) bindings.push_back(*g.biasBuf);
  if (g.vnni) bindings.push_back(g.colSumBuf);
  ctx.addDispatch(*kb, bindings, groups, g.name);
  ctx.plan.dispatches.back().precision = "int8";
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * g.K), sp.mul(g.R, g.N));
}

/// The lhs zero point as i32 (0 when absent), from binding `slot`.
Value lhsZeroPoint(KernelBuilder &kb, const IntegerGemm &ig, std::optional<unsigned> slot) {
  if (!slot) return kb.b.create<arith::ConstantIntOp>(kb.loc, 0, 32);
  Value z = kb.load(kb.b.getI8Type(), kb.binding(*slot), kb.c(0));
  if (ig.lhsUnsigned) return kb.b.create<arith::ExtUIOp>(kb.loc, kb.b.getI32Type(), z);
  return kb.b.create<arith::ExtSIOp>(kb.loc, kb.b.getI32Type(), z);
}

/// Dispatch 1 of v4f.integer_matmul, "pack rows": each lhs row into the
/// GEMM's row format (VNNI: the u8 bytes, int8 ones + 128; otherwise int16
/// a - zp), zero-padded to whole K steps, and with a weight zero point each
/// row's sum of a - zp.
void emitPackIntegerRows(CPUKernelContext &ctx, const IntegerGemm &ig, uint32_t srcBuf) {
  const QGemm &g = ig.g;
  const int64_t L = g.lanes, rowValues = g.steps * g.step;
  auto [groups, perGroup] = ctx.splitRows(g.R, ctx.shapes.constant(g.K), 16384);
  auto kb = ctx.newKernel(g.name + " pack rows");
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  std::vector<uint32_t> bindings = {g.qBuf, srcBuf};
  std::optional<unsigned> zpSlot, sumSlot;
  if (ig.lhsZpBuf) zpSlot = unsigned(bindings.size()), bindings.push_back(*ig.lhsZpBuf);
  if (ig.rowSumBuf) sumSlot = unsigned(bindings.size()), bindings.push_back(*ig.rowSumBuf);
  Value Q = kb->binding(0), src = kb->binding(1);
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  Type qElem = g.vnni ? i8 : i16;
  auto i8v = VectorType::get({L}, i8), i32v = VectorType::get({L}, i32), qv = VectorType::get({L}, qElem);
  Value zp = lhsZeroPoint(*kb, ig, zpSlot);
  Value zpV = b.create<vector::BroadcastOp>(loc, i32v, zp);
  auto widen = [&](Value x, Type t) -> Value {
    if (ig.lhsUnsigned) return b.create<arith::ExtUIOp>(loc, t, x);
    return b.create<arith::ExtSIOp>(loc, t, x);
  };
  // The stored value: the byte (+ 128 for int8 with VNNI) or int16 a - zp.
  auto stored = [&](Value x, Type t, Value zpT) -> Value {
    if (g.vnni) {
      if (ig.lhsUnsigned) return x;
      Value flip = llvm::isa<VectorType>(t)
                       ? b.create<arith::ConstantOp>(
                              loc, t, DenseElementsAttr::get(llvm::cast<ShapedType>(t), b.getI8IntegerAttr(-128)))
                             .getResult()
                       : b.create<arith::ConstantIntOp>(loc, -128, 8).getResult();
      return b.create<arith::XOrIOp>(loc, x, flip);
    }
    return b.create<arith::TruncIOp>(loc, t, b.create<arith::SubIOp>(loc, widen(x, zpT.getType()), zpT));
  };
  const int64_t kFull = g.K / L * L;
  auto [begin, end] = kb->workgroupRange(kb->dim(g.R), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value r) {
    Value a0 = kb->mul(r, kb->c(g.K)), q0 = kb->mul(r, kb->c(rowValues));
    Value zeroV = splatI32(*kb, L, 0);
    auto vsum = kb->forLoop(kb->c(0), kb->c(kFull), kb->c(L), {zeroV}, [&](Value k, ValueRange acc) {
      Value x = kb->load(i8v, src, kb->add(a0, k));
      kb->store(stored(x, qv, zpV), Q, kb->add(q0, k));
      if (!sumSlot) return SmallVector<Value>{acc[0]};
      return SmallVector<Value>{
          b.create<arith::AddIOp>(loc, acc[0], b.create<arith::SubIOp>(loc, widen(x, i32v), zpV))};
    });
    Value sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, vsum[0]);
    auto tail = kb->forLoop(kb->c(kFull), kb->c(g.K), kb->c(1), {sum}, [&](Value k, ValueRange acc) {
      Value x = kb->load(i8, src, kb->add(a0, k));
      kb->store(stored(x, qElem, zp), Q, kb->add(q0, k));
      return SmallVector<Value>{b.create<arith::AddIOp>(loc, acc[0], b.create<arith::SubIOp>(loc, widen(x, i32), zp))};
    });
    for (int64_t k = g.K; k < rowValues; ++k)
      kb->store(b.create<arith::ConstantIntOp>(loc, 0, qElem.getIntOrFloatBitWidth()), Q, kb->add(q0, kb->c(k)));
    if (sumSlot) kb->store(tail[0], kb->binding(*sumSlot), r);
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, g.name + " pack rows");
  ctx.plan.dispatches.back().precision = "int8";
}

/// Dispatch 2 of v4f.integer_matmul: the integer GEMM storing the exact
/// int32 sums, corrected for the VNNI offset (zU * colsum: zU the lhs zero
/// point, + 128 for int8) and the weight zero points (zw[n] * rowsum).
void emitIntegerGemm(CPUKernelContext &ctx, const IntegerGemm &ig) {
  const QGemm &g = ig.g;
  auto &sp = ctx.shapes;
  auto kb = ctx.newKernel(g.name);
  std::vector<uint32_t> bindings = {g.cBuf, g.qBuf, g.wBuf};
  std::optional<unsigned> colSumSlot, zpSlot, rowSumSlot, rhsZpSlot;
  if (g.vnni) colSumSlot = unsigned(bindings.size()), bindings.push_back(g.colSumBuf);
  if (ig.lhsZpBuf) zpSlot = unsigned(bindings.size()), bindings.push_back(*ig.lhsZpBuf);
  if (ig.rhsZpBuf) {
    rowSumSlot = unsigned(bindings.size()), bindings.push_back(*ig.rowSumBuf);
    rhsZpSlot = unsigned(bindings.size()), bindings.push_back(*ig.rhsZpBuf);
  }
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  const int64_t L = g.lanes, vecs = g.nr / g.lanes;
  auto i32v = VectorType::get({L}, b.getI32Type());
  Reg groups = emitGemmBlocks(ctx, *kb, g.R, g.N, g.mr, g.nr, g.mb, g.nb, [&](Value m, Value n, int rows, Value edge) {
    SmallVector<Value> acc = emitQTileSums(*kb, g, m, n, rows);
    SmallVector<Value> masks, colCorr, rhsZp;
    for (int64_t v = 0; v < vecs; ++v) {
      Value c = kb->add(n, kb->c(v * L));
      if (edge) masks.push_back(kb->laneMask(kb->sub(edge, kb->c(v * L)), L));
      if (colSumSlot) {
        Value zU = lhsZeroPoint(*kb, ig, zpSlot);
        if (!ig.lhsUnsigned) zU = b.create<arith::AddIOp>(loc, zU, b.create<arith::ConstantIntOp>(loc, 128, 32));
        // Column sums are padded to whole panels: a full load.
        colCorr.push_back(b.create<arith::MulIOp>(loc, kb->load(i32v, kb->binding(*colSumSlot), c),
                                                  b.create<vector::BroadcastOp>(loc, i32v, zU)));
      }
      if (rhsZpSlot)
        rhsZp.push_back(edge ? kb->maskedLoad(i32v, kb->binding(*rhsZpSlot), c, masks[v])
                             : kb->load(i32v, kb->binding(*rhsZpSlot), c));
    }
    Value Nv = kb->dim(g.N);
    for (int r = 0; r < rows; ++r) {
      Value row = kb->add(m, kb->c(r));
      Value rowSum =
          rowSumSlot ? b.create<vector::BroadcastOp>(loc, i32v, kb->load(b.getI32Type(), kb->binding(*rowSumSlot), row))
                           .getResult()
                     : Value();
      for (int64_t v = 0; v < vecs; ++v) {
        Value y = acc[r * vecs + v];
        if (colSumSlot) y = b.create<arith::SubIOp>(loc, y, colCorr[v]);
        if (rhsZpSlot) y = b.create<arith::SubIOp>(loc, y, b.create<arith::MulIOp>(loc, rowSum, rhsZp[v]));
        Value idx = kb->add(kb->mul(row, Nv), kb->add(n, kb->c(v * L)));
        if (edge)
          kb->maskedStore(y, kb->binding(0), idx, masks[v]);
        else
          kb->store(y, kb->binding(0), idx);
      }
    }
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, g.name);
  ctx.plan.dispatches.back().precision = "int8";
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * g.K), sp.mul(g.R, g.N));
}

} // namespace

/// The "quantize rows" dispatch} // namespace

/// The "quantize rows" dispatch: rows of `src` (float, K each) -> int16
/// values minus the zero point into `qBuf` (rows of `rowValues`, zero-padded
/// past K) and each row's scale into `scaleBuf`; with `vnni`, u8 values q +
/// 128 (the zero point kept) instead of int16.
/// Static quantization: `staticScale` and zero point `staticZp`; dynamic when
/// `staticScale` is unset.
void emitQuantizeRows(CPUKernelContext &ctx, std::optional<float> staticScale, int32_t staticZp,
                      const std::string &name, Reg rows, int64_t K, int64_t rowValues, bool vnni, int64_t L,
                      uint32_t srcBuf, uint32_t qBuf, uint32_t scaleBuf) {
  bool dynamic = !staticScale;
  int64_t zp = dynamic ? 0 : staticZp;
  float qmin = dynamic ? -127.f : -128.f;
  auto [groups, perGroup] = ctx.splitRows(rows, ctx.shapes.constant(K), 16384);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Value src = kb->binding(1), Q = kb->binding(0), S = kb->binding(2);
  Type vt = kb->vec(L);
  auto i32v = VectorType::get({L}, b.getI32Type());
  Type qElem = vnni ? b.getI8Type() : b.getI16Type();
  auto qv = VectorType::get({L}, qElem);
  int64_t kFull = K / L * L;
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value r) {
    Value a0 = kb->mul(r, kb->c(K)), q0 = kb->mul(r, kb->c(rowValues));
    Value scale;
    if (dynamic) {
      auto vmax = kb->forLoop(kb->c(0), kb->c(kFull), kb->c(L), {kb->cf(0.f, vt)}, [&](Value k, ValueRange acc) {
        Value v = b.create<math::AbsFOp>(loc, kb->load(vt, src, kb->add(a0, k)));
        return SmallVector<Value>{b.create<arith::MaxNumFOp>(loc, acc[0], v)};
      });
      Value m = b.create<vector::ReductionOp>(loc, vector::CombiningKind::MAXNUMF, vmax[0]);
      auto tail = kb->forLoop(kb->c(kFull), kb->c(K), kb->c(1), {m}, [&](Value k, ValueRange acc) {
        Value v = b.create<math::AbsFOp>(loc, kb->load(kb->f32(), src, kb->add(a0, k)));
        return SmallVector<Value>{b.create<arith::MaxNumFOp>(loc, acc[0], v)};
      });
      Value mx = tail[0];
      Value positive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, mx, kb->cf(0.f));
      scale = b.create<arith::SelectOp>(loc, positive, b.create<arith::DivFOp>(loc, mx, kb->cf(127.f)), kb->cf(1.f));
    } else {
      scale = kb->cf(*staticScale);
    }
    kb->store(scale, S, r);
    Value inv = b.create<arith::DivFOp>(loc, kb->cf(1.f), scale);
    // q = clamp(roundeven(a / s) + zp, qmin, 127) - zp (NaN -> qmin); with
    // vnni the stored byte is clamp(...) + 128 instead.
    auto splatIf = [&](Value scalar, Type ft) { return llvm::isa<VectorType>(ft) ? kb->splat(scalar, L) : scalar; };
    auto quantize = [&](Value a, Type ft) { return quantizedValue(*kb, a, splatIf(inv, ft), int32_t(zp), qmin, vnni); };
    kb->forLoop(kb->c(0), kb->c(kFull), kb->c(L), [&](Value k) {
      Value x = quantize(kb->load(vt, src, kb->add(a0, k)), vt);
      Value q = b.create<arith::TruncIOp>(loc, qv, b.create<arith::FPToSIOp>(loc, i32v, x));
      kb->store(q, Q, kb->add(q0, k));
    });
    kb->forLoop(kb->c(kFull), kb->c(K), kb->c(1), [&](Value k) {
      Value x = quantize(kb->load(kb->f32(), src, kb->add(a0, k)), kb->f32());
      Value q = b.create<arith::TruncIOp>(loc, qElem, b.create<arith::FPToSIOp>(loc, b.getI32Type(), x));
      kb->store(q, Q, kb->add(q0, k));
    });
    for (int64_t k = K; k < rowValues; ++k)
      kb->store(b.create<arith::ConstantIntOp>(loc, 0, qElem.getIntOrFloatBitWidth()), Q, kb->add(q0, kb->c(k)));
  });
  kb->finish();
  ctx.addDispatch(*kb, {qBuf, srcBuf, scaleBuf}, groups, name);
  ctx.plan.dispatches.back().precision = "int8";
}

uint32_t CPUKernelContext::packedInt8Weight(const TensorInfo &weight, int64_t K, int64_t N, int64_t nr, int64_t step) {
  auto key = std::make_tuple(weight.constant.getAsOpaquePointer(), int(100 + step), nr);
  auto it = packedByWeight.find(key);
  if (it != packedByWeight.end()) return it->second;
  std::vector<int8_t> values = int8Values(weight.constant);
  uint32_t buffer = newConstant(size_t(packedInt8Bytes(K, N, nr, step)), [&](uint8_t *dst) {
    packInt8Steps(values.data(), K, N, nr, step, reinterpret_cast<int8_t *>(dst));
  });
  packedByWeight[key] = buffer;
  return buffer;
}

/// What the int8 matmul and v4f.integer_matmul share: the integer GEMM of
/// lhs `A` ([..., K]) by the constant int8 weight `W` ([K, N]) for the
/// target's instruction (tiles, packed weight, VNNI column sums, the inner
/// dim check); the caller fills in its activation side and epilogue.
static QGemm integerGemm(CPUKernelContext &ctx, Operation *op, GemmTilingAttr tiling, const TensorInfo &A,
                         const TensorInfo &W, ArrayRef<int64_t> wShape, const TensorInfo &result) {
  auto &sp = ctx.shapes;
  QGemm g;
  g.name = dispatchName(op);
  g.K = wShape[0];
  IntegerIsa isa = integerIsa(op, tiling.getLanes());
  g.vnni = isa.vnni;
  g.x86 = isa.x86;
  g.step = g.vnni ? 4 : 2;
  g.steps = (g.K + g.step - 1) / g.step;
  g.zeroPoint = 0;
  g.N = sp.constant(wShape[1]);
  g.R = sp.product(A.dims, 0, A.dims.size() - 1);
  emitDimsCheck(ctx, {A.dims.back()}, {sp.constant(g.K)}, g.name + " inner dim check");
  g.mr = tiling.getMr();
  g.nr = tiling.getNr();
  g.lanes = tiling.getLanes();
  g.mb = tiling.getMb();
  g.nb = tiling.getNb();
  g.cBuf = result.buffer;
  g.wBuf = ctx.packedInt8Weight(W, g.K, wShape[1], g.nr, g.step);
  g.prefetch = g.K * wShape[1] >= kWeightPrefetchMinBytes;
  if (g.vnni) {
    // Column sums of the int8 weight, padded to whole panels.
    int64_t N = wShape[1], padded = (N + g.nr - 1) / g.nr * g.nr;
    std::vector<int32_t> sums(size_t(padded), 0);
    std::vector<int8_t> q = int8Values(W.constant);
    for (size_t i = 0; i < q.size(); ++i) sums[i % size_t(N)] += q[i];
    g.colSumBuf =
        ctx.newConstant(sums.size() * 4, [&](uint8_t *dst) { std::memcpy(dst, sums.data(), sums.size() * 4); });
  }
  return g;
}

LogicalResult emitQuantizedMatMul(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                  const TensorInfo &result) {
  auto qmm = cast<QuantizedMatMulOp>(op);
  auto &sp = ctx.shapes;
  auto tiling = requireGemmTiling(op);
  if (!tiling) return failure();
  const TensorInfo &A = operands[0], &W = operands[1], &WS = operands[2];
  if (!W.constant || !WS.constant || WS.buffer == ~0u)
    return op->emitOpError("needs a constant int8 weight and constant scales");
  auto wShape = qmm.getRhs().getType().getShape();
  QGemm g = integerGemm(ctx, op, tiling, A, W, wShape, result);
  g.zeroPoint = qmm.getActQuant() == "static" ? int32_t(qmm.getActZeroPoint()) : 0;
  g.wScaleBuf = WS.buffer;
  if (qmm.getBias()) g.biasBuf = operands[3].buffer;
  g.act = qmm.getActivation().str();
  g.alpha = qmm.getActAlpha().convertToFloat();
  g.beta = qmm.getActBeta().convertToFloat();
  g.qBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4 * g.steps)));
  g.rowScaleBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4)));
  std::optional<float> staticScale;
  if (qmm.getActQuant() == "static") staticScale = qmm.getActScale().convertToFloat();
  emitQuantizeRows(ctx, staticScale, g.zeroPoint, g.name + " quantize rows", g.R, g.K, g.steps * g.step, g.vnni,
                   g.lanes, A.buffer, g.qBuf, g.rowScaleBuf);
  emitQGemm(ctx, g);
  return success();
}

LogicalResult emitIntegerMatMul(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                const TensorInfo &result) {
  auto im = cast<IntegerMatMulOp>(op);
  auto &sp = ctx.shapes;
  auto tiling = requireGemmTiling(op);
  if (!tiling) return failure();
  const TensorInfo &A = operands[0], &W = operands[1];
  if (!W.constant) return op->emitOpError("needs a constant int8 weight");
  auto wShape = im.getRhs().getType().getShape();
  IntegerGemm ig;
  ig.g = integerGemm(ctx, op, tiling, A, W, wShape, result);
  QGemm &g = ig.g;
  ig.lhsUnsigned = im.getLhs().getType().getElementType().isUnsignedInteger();
  size_t next = 2;
  if (im.getLhsZeroPoint()) ig.lhsZpBuf = operands[next++].buffer;
  if (im.getRhsZeroPoint()) {
    ig.rhsZpBuf = operands[next++].buffer;
    ig.rowSumBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4)));
  }
  g.qBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4 * g.steps)));
  emitPackIntegerRows(ctx, ig, A.buffer);
  emitIntegerGemm(ctx, ig);
  return success();
}

void registerQuantizedGemmKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<QuantizedMatMulOp>(emitQuantizedMatMul);
  registry.addOpKernel<IntegerMatMulOp>(emitIntegerMatMul);
}

} // namespace v4f
