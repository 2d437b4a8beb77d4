//===- Int4GemmKernels.cpp - v4f.int4_matmul --------------------------------===//
//
// Block-wise int4 weights (groups of `group_size` K rows per column, a float
// scale each, optionally a zero point), two per byte in the artifact:
//
//  - weight-only (float activations): one dispatch unpacking the nibbles in
//    its inner loop to float and accumulating with FMAs;
//  - w4a8 (`int8_activations`): the activations quantized per row at run
//    time ("quantize rows", as the int8 matmul), then an integer GEMM that
//    unpacks each K step's nibbles to bytes (VNNI: u8 x s8 quads,
//    vpdpbusd) or int16 pairs (pmaddwd), sums a group in int32 and scales
//    it into a float accumulator per group.
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;

namespace v4f {

namespace {

/// v4f.int4_matmul as one dispatch. Panels of NR = 2L columns; for every k
/// the panel holds L bytes, byte i = column i (low nibble) and column L + i
/// (high nibble) of row k, two's complement. A K step loads the L bytes,
/// sign-extends them to int32 lanes, takes the nibbles with shifts ((v << 28)
/// >> 28 and v >> 4, arithmetic), converts to float and multiplies by the
/// group's scales (loaded once per group; stored [panel][group][NR]), then
/// one FMA per row and vector. Memory-bound at batch 1: it reads 1/8 of the
/// float weight's bytes.
struct I4Gemm {
  std::string name;
  Reg R, N;
  int64_t K, group, groups;
  uint32_t cBuf, aBuf, wBuf, sBuf;
  std::optional<uint32_t> zBuf; // zero points as floats, packed like the scales
  std::optional<uint32_t> biasBuf;
  std::string act;
  float alpha, beta;
  int64_t mr, lanes, mb, nb;
};

void emitI4Tile(KernelBuilder &kb, const I4Gemm &g, Value m, Value n, int rows, Value edgeCols) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t L = g.lanes, NR = 2 * L;
  auto i32v = VectorType::get({L}, b.getI32Type());
  auto i8v = VectorType::get({L}, b.getI8Type());
  Type vt = kb.vec(L);
  Value A = kb.binding(1), W = kb.binding(2), S = kb.binding(3);
  Value Z = g.zBuf ? kb.binding(g.biasBuf ? 5 : 4) : Value();
  Value panel = kb.div(n, kb.c(NR));
  Value wBase = kb.mul(panel, kb.c(g.K * L));
  Value sBase = kb.mul(panel, kb.c(g.groups * NR));
  SmallVector<Value> rowBase;
  for (int r = 0; r < rows; ++r) rowBase.push_back(kb.mul(kb.add(m, kb.c(r)), kb.c(g.K)));
  Value c28 = splatI32(kb, L, 28), c4 = splatI32(kb, L, 4);
  // Few rows (batch-1 decoding): the int4 values are multiplied as they are
  // into U accumulator sets per group (U K steps in flight, so the FMA
  // latency does not bound the loop), and each group's sum is scaled once.
  // More rows: the weight vectors are scaled once per K step and shared by
  // the rows' FMAs (registers allow no second accumulator set).
  const bool perGroupScale = rows <= 2;
  const int U = perGroupScale ? 4 : 1;
  const int sets = rows * 2;
  // z0, z1: the group's zero points (asymmetric groups), subtracted from the
  // int4 values before they are multiplied; with the scales s0, s1 they are
  // -z s instead, added by the scaling FMA.
  auto step = [&](Value k, ValueRange a, int u, Value s0, Value s1, Value z0, Value z1, SmallVector<Value> &next) {
    Value v = b.create<arith::ExtSIOp>(loc, i32v, kb.load(i8v, W, kb.add(wBase, kb.mul(k, kb.c(L)))));
    Value w0 =
        b.create<arith::SIToFPOp>(loc, vt, b.create<arith::ShRSIOp>(loc, b.create<arith::ShLIOp>(loc, v, c28), c28));
    Value w1 = b.create<arith::SIToFPOp>(loc, vt, b.create<arith::ShRSIOp>(loc, v, c4));
    if (s0 && z0) { // (q - z) s as q s + (-z s): one FMA
      w0 = b.create<vector::FMAOp>(loc, w0, s0, z0);
      w1 = b.create<vector::FMAOp>(loc, w1, s1, z1);
    } else if (s0) {
      w0 = b.create<arith::MulFOp>(loc, w0, s0);
      w1 = b.create<arith::MulFOp>(loc, w1, s1);
    } else if (z0) {
      w0 = b.create<arith::SubFOp>(loc, w0, z0);
      w1 = b.create<arith::SubFOp>(loc, w1, z1);
    }
    for (int r = 0; r < rows; ++r) {
      Value av = kb.splat(kb.load(kb.f32(), A, kb.add(rowBase[r], k)), L);
      next[u * sets + 2 * r] = b.create<vector::FMAOp>(loc, av, w0, a[u * sets + 2 * r]);
      next[u * sets + 2 * r + 1] = b.create<vector::FMAOp>(loc, av, w1, a[u * sets + 2 * r + 1]);
    }
  };
  Value zero = kb.cf(0.f, vt);
  auto acc = kb.forLoop(kb.c(0), kb.c(g.groups), kb.c(1), SmallVector<Value>(sets, zero), [&](Value grp, ValueRange a) {
    Value sRow = kb.add(sBase, kb.mul(grp, kb.c(NR)));
    Value s0 = kb.load(vt, S, sRow), s1 = kb.load(vt, S, kb.add(sRow, kb.c(L)));
    Value z0 = Z ? kb.load(vt, Z, sRow) : Value(), z1 = Z ? kb.load(vt, Z, kb.add(sRow, kb.c(L))) : Value();
    // -z s, for the scaled step's FMA.
    Value nzs0 = Z ? b.create<arith::NegFOp>(loc, b.create<arith::MulFOp>(loc, z0, s0)).getResult() : Value();
    Value nzs1 = Z ? b.create<arith::NegFOp>(loc, b.create<arith::MulFOp>(loc, z1, s1)).getResult() : Value();
    Value k0 = kb.mul(grp, kb.c(g.group));
    Value k1 = kb.min(kb.add(k0, kb.c(g.group)), kb.c(g.K));
    if (!perGroupScale)
      return kb.forLoop(k0, k1, kb.c(1), a, [&](Value k, ValueRange a2) {
        SmallVector<Value> next(a2.begin(), a2.end());
        step(k, a2, 0, s0, s1, nzs0, nzs1, next);
        return next;
      });
    Value kU = kb.add(k0, kb.mul(kb.div(kb.sub(k1, k0), kb.c(U)), kb.c(U)));
    auto unrolled = kb.forLoop(k0, kU, kb.c(U), SmallVector<Value>(sets * U, zero), [&](Value k, ValueRange a2) {
      SmallVector<Value> next(a2.begin(), a2.end());
      for (int u = 0; u < U; ++u) step(kb.add(k, kb.c(u)), a2, u, Value(), Value(), z0, z1, next);
      return next;
    });
    auto sums = kb.forLoop(kU, k1, kb.c(1), unrolled, [&](Value k, ValueRange a2) {
      SmallVector<Value> next(a2.begin(), a2.end());
      step(k, a2, 0, Value(), Value(), z0, z1, next);
      return next;
    });
    SmallVector<Value> next;
    for (int i = 0; i < sets; ++i) {
      Value sum = sums[i];
      for (int u = 1; u < U; ++u) sum = b.create<arith::AddFOp>(loc, sum, sums[u * sets + i]);
      next.push_back(b.create<vector::FMAOp>(loc, sum, i % 2 ? s1 : s0, a[i]));
    }
    return next;
  });
  emitTileEpilogue(kb, rows, 2, L, m, n, g.N, edgeCols, std::nullopt,
                   g.biasBuf ? std::optional<unsigned>(4) : std::nullopt, g.act, g.alpha, g.beta,
                   [&](int r, int64_t v, Value) { return acc[2 * r + v]; });
}

/// Packs the int4 values `q` ([K, N], one per byte) two per byte, as
/// emitI4Tile reads them.
void packInt4Weights(ArrayRef<int8_t> q, int64_t K, int64_t N, int64_t L, uint8_t *dst) {
  int64_t NR = 2 * L, panels = (N + NR - 1) / NR;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t i = 0; i < L; ++i) {
        int64_t n0 = p * NR + i, n1 = n0 + L;
        uint8_t lo = n0 < N ? uint8_t(q[k * N + n0]) & 0xF : 0, hi = n1 < N ? uint8_t(q[k * N + n1]) & 0xF : 0;
        *dst++ = uint8_t(lo | (hi << 4));
      }
}

/// Packs the group scales ([groups, N]) as [panel][group][2L], zero-padded.
void packInt4Scales(ArrayRef<float> scales, int64_t N, int64_t groups, int64_t L, float *dst) {
  int64_t NR = 2 * L, panels = (N + NR - 1) / NR;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t grp = 0; grp < groups; ++grp)
      for (int64_t j = 0; j < NR; ++j) {
        int64_t n = p * NR + j;
        *dst++ = n < N ? scales[grp * N + n] : 0.f;
      }
}

/// w4a8: the int4 weight packed per panel of NR = 2L columns and K step
/// (STEP = 4 with VNNI, else 2): column j's STEP values of the step, biased
/// by 8 ([0, 15]), as STEP / 2 bytes in K order, low nibble first (padding
/// past K or N: 8, i.e. 0).
void packW4A8Weights(ArrayRef<int8_t> q, int64_t K, int64_t N, int64_t nr, int64_t step, uint8_t *dst) {
  int64_t panels = (N + nr - 1) / nr, steps = (K + step - 1) / step;
  auto value = [&](int64_t k, int64_t n) { return uint8_t((k < K && n < N ? q[k * N + n] : 0) + 8); };
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t kk = 0; kk < steps; ++kk)
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t h = 0; h < step; h += 2) {
          int64_t k = kk * step + h, n = p * nr + j;
          *dst++ = uint8_t(value(k, n) | (value(k + 1, n) << 4));
        }
}

struct W4A8Gemm {
  std::string name;
  Reg R, N;
  int64_t K, group, groups, step, steps, lanes, mr, mb, nb;
  bool vnni, x86;
  uint32_t cBuf, qBuf, wBuf, sBuf, rowScaleBuf;
  std::optional<uint32_t> biasBuf, corrBuf;
  std::string act;
  float alpha, beta;
};

/// One tile: rows [m, m + rows) x the NR = 2L columns from n. Per group:
/// int32 sums over its K steps (each step: the panel's STEP / 2 bytes per
/// column unpacked to bytes or int16 pairs, minus the bias 8, times the
/// row's broadcast quad / pair), then acc += float(sum) * group scale.
/// Epilogue: (acc - VNNI correction[n]) * row scale, bias, activation.
void emitW4A8Tile(KernelBuilder &kb, const W4A8Gemm &g, Value m, Value n, int rows, Value edgeCols) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t L = g.lanes, NR = 2 * L, vecs = 2;
  auto i32v = VectorType::get({L}, b.getI32Type());
  auto i16v = VectorType::get({2 * L}, b.getI16Type());
  auto i8v = VectorType::get({4 * L}, b.getI8Type());
  Type vt = kb.vec(L);
  Value Q = kb.binding(1), W = kb.binding(2), S = kb.binding(3);
  int64_t stepBytes = NR * g.step / 2; // one K step of a panel
  Value panel = kb.div(n, kb.c(NR));
  Value wBase = kb.mul(panel, kb.c(g.steps * stepBytes));
  Value sBase = kb.mul(panel, kb.c(g.groups * NR));
  SmallVector<Value> rowBase;
  for (int r = 0; r < rows; ++r) rowBase.push_back(kb.mul(kb.add(m, kb.c(r)), kb.c(g.steps)));
  auto splat32 = [&](int32_t v) { return splatI32(kb, L, v); };
  // The weights of vector v at step kk, as the dot product's operand.
  auto weights = [&](Value kk, int64_t v) -> Value {
    Value at = kb.add(wBase, kb.add(kb.mul(kk, kb.c(stepBytes)), kb.c(v * L * g.step / 2)));
    if (g.vnni) {
      // 2 bytes per column -> 4 bytes: nibble i to byte i.
      auto u16 = VectorType::get({2 * L}, b.getI16Type());
      Value x = b.create<arith::ExtUIOp>(loc, u16, kb.load(VectorType::get({2 * L}, b.getI8Type()), W, at));
      auto c16 = [&](int16_t c) {
        return b.create<arith::ConstantOp>(loc, u16, DenseElementsAttr::get(u16, b.getI16IntegerAttr(c)));
      };
      Value lo = b.create<arith::AndIOp>(loc, x, c16(0x000F));
      Value hi = b.create<arith::AndIOp>(loc, b.create<arith::ShLIOp>(loc, x, c16(4)), c16(0x0F00));
      Value bytes = b.create<vector::BitCastOp>(loc, i8v, b.create<arith::OrIOp>(loc, lo, hi));
      bytes = b.create<arith::SubIOp>(
          loc, bytes, b.create<arith::ConstantOp>(loc, i8v, DenseElementsAttr::get(i8v, b.getI8IntegerAttr(8))));
      return b.create<vector::BitCastOp>(loc, i32v, bytes);
    }
    // 1 byte per column -> an int16 pair: low nibble, high nibble.
    Value x = b.create<arith::ExtUIOp>(loc, i32v, kb.load(VectorType::get({L}, b.getI8Type()), W, at));
    Value pair = b.create<arith::OrIOp>(
        loc, b.create<arith::AndIOp>(loc, x, splat32(0xF)),
        b.create<arith::ShLIOp>(loc, b.create<arith::AndIOp>(loc, x, splat32(0xF0)), splat32(12)));
    Value pairs = b.create<vector::BitCastOp>(loc, i16v, pair);
    return b.create<arith::SubIOp>(
        loc, pairs, b.create<arith::ConstantOp>(loc, i16v, DenseElementsAttr::get(i16v, b.getI16IntegerAttr(8))));
  };
  Value zeroF = kb.cf(0.f, vt), zeroI = splat32(0);
  int64_t stepsPerGroup = g.group / g.step;
  auto acc = kb.forLoop(
      kb.c(0), kb.c(g.groups), kb.c(1), SmallVector<Value>(rows * vecs, zeroF), [&](Value grp, ValueRange accF) {
        Value kk0 = kb.mul(grp, kb.c(stepsPerGroup));
        Value kk1 = kb.min(kb.add(kk0, kb.c(stepsPerGroup)), kb.c(g.steps));
        auto sums = kb.forLoop(kk0, kk1, kb.c(1), SmallVector<Value>(rows * vecs, zeroI), [&](Value kk, ValueRange a) {
          Value wv[2] = {weights(kk, 0), weights(kk, 1)};
          SmallVector<Value> next;
          for (int r = 0; r < rows; ++r) {
            Value word = b.create<vector::BroadcastOp>(loc, i32v, kb.load(b.getI32Type(), Q, kb.add(rowBase[r], kk)));
            for (int64_t v = 0; v < vecs; ++v) {
              if (g.vnni)
                next.push_back(dotU8S8(kb, a[r * vecs + v], word, wv[v]));
              else
                next.push_back(b.create<arith::AddIOp>(
                    loc, a[r * vecs + v],
                    pairwiseMulAdd(kb, b.create<vector::BitCastOp>(loc, i16v, word), wv[v], L, g.x86)));
            }
          }
          return next;
        });
        Value sRow = kb.add(sBase, kb.mul(grp, kb.c(NR)));
        Value s[2] = {kb.load(vt, S, sRow), kb.load(vt, S, kb.add(sRow, kb.c(L)))};
        SmallVector<Value> next;
        for (int r = 0; r < rows; ++r)
          for (int64_t v = 0; v < vecs; ++v)
            next.push_back(b.create<vector::FMAOp>(loc, b.create<arith::SIToFPOp>(loc, vt, sums[r * vecs + v]), s[v],
                                                   accF[r * vecs + v]));
        return next;
      });
  Value rowScale;
  unsigned slot = 5;
  std::optional<unsigned> biasSlot, corrSlot;
  if (g.biasBuf) biasSlot = slot++;
  if (g.corrBuf) corrSlot = slot++;
  emitTileEpilogue(kb, rows, vecs, L, m, n, g.N, edgeCols, corrSlot, biasSlot, g.act, g.alpha, g.beta,
                   [&](int r, int64_t v, Value corr) -> Value {
                     if (v == 0) rowScale = kb.splat(kb.load(kb.f32(), kb.binding(4), kb.add(m, kb.c(r))), L);
                     Value f = acc[r * vecs + v];
                     if (corr) f = b.create<arith::SubFOp>(loc, f, corr);
                     return b.create<arith::MulFOp>(loc, f, rowScale);
                   });
}

LogicalResult emitW4A8(CPUKernelContext &ctx, Int4MatMulOp op, const TensorInfo &A, ArrayRef<int8_t> q,
                       ArrayRef<float> scales, std::optional<uint32_t> biasBuf, const TensorInfo &result,
                       GemmTilingAttr tiling) {
  auto &sp = ctx.shapes;
  auto wShape = op.getRhs().getType().getShape();
  W4A8Gemm g;
  g.name = dispatchName(op);
  g.K = wShape[0];
  int64_t N = wShape[1];
  g.N = sp.constant(N);
  g.R = sp.product(A.dims, 0, A.dims.size() - 1);
  g.group = op.getGroupSize();
  g.groups = (g.K + g.group - 1) / g.group;
  g.lanes = tiling.getLanes();
  IntegerIsa isa = integerIsa(op, g.lanes);
  g.vnni = isa.vnni;
  g.x86 = isa.x86;
  g.step = g.vnni ? 4 : 2;
  g.steps = (g.K + g.step - 1) / g.step;
  // Registers: an int32 and a float accumulator per row and vector.
  g.mr = std::min<int64_t>(tiling.getMr(), g.lanes >= 16 ? 4 : 2);
  g.mb = std::max<int64_t>(g.mr, tiling.getMb() / g.mr * g.mr);
  int64_t NR = 2 * g.lanes, panels = (N + NR - 1) / NR;
  g.nb = std::max<int64_t>(NR, tiling.getNb() / NR * NR);
  g.wBuf = ctx.newConstant(size_t(panels * g.steps * NR * g.step / 2),
                           [&](uint8_t *dst) { packW4A8Weights(q, g.K, N, NR, g.step, dst); });
  g.sBuf = ctx.newConstant(size_t(panels * g.groups * NR) * 4, [&](uint8_t *dst) {
    packInt4Scales(scales, N, g.groups, g.lanes, reinterpret_cast<float *>(dst));
  });
  if (g.vnni) {
    // u = q + 128: sum_k u w = sum_k q w + 128 sum_k w per group; scaled by
    // the group scales and summed over the groups, a float per column.
    std::vector<float> corr(size_t(panels * NR), 0.f);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        int64_t sum = 0;
        for (int64_t k = grp * g.group; k < std::min(g.K, (grp + 1) * g.group); ++k) sum += q[k * N + n];
        corr[n] += float(128 * sum) * scales[grp * N + n];
      }
    g.corrBuf = ctx.newConstant(corr.size() * 4, [&](uint8_t *dst) { std::memcpy(dst, corr.data(), corr.size() * 4); });
  }
  g.cBuf = result.buffer;
  g.biasBuf = biasBuf;
  g.act = op.getActivation().str();
  g.alpha = op.getActAlpha().convertToFloat();
  g.beta = op.getActBeta().convertToFloat();
  g.qBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4 * g.steps)));
  g.rowScaleBuf = ctx.newTransient(sp.mul(g.R, sp.constant(4)));
  emitQuantizeRows(ctx, std::nullopt, 0, g.name + " quantize rows", g.R, g.K, g.steps * g.step, g.vnni, g.lanes,
                   A.buffer, g.qBuf, g.rowScaleBuf);
  auto kb = ctx.newKernel(g.name);
  Reg groups = emitGemmBlocks(ctx, *kb, g.R, g.N, g.mr, NR, g.mb, g.nb,
                              [&](Value m, Value n, int rows, Value edge) { emitW4A8Tile(*kb, g, m, n, rows, edge); });
  kb->finish();
  std::vector<uint32_t> bindings = {g.cBuf, g.qBuf, g.wBuf, g.sBuf, g.rowScaleBuf};
  if (g.biasBuf) bindings.push_back(*g.biasBuf);
  if (g.corrBuf) bindings.push_back(*g.corrBuf);
  ctx.addDispatch(*kb, bindings, groups, g.name);
  ctx.plan.dispatches.back().precision = "w4a8";
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * g.K), sp.mul(g.R, g.N));
  return success();
}

} // namespace

LogicalResult emitInt4MatMul(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                             const TensorInfo &result) {
  auto i4 = cast<Int4MatMulOp>(op);
  auto &sp = ctx.shapes;
  auto tiling = requireGemmTiling(op);
  if (!tiling) return failure();
  const TensorInfo &A = operands[0], &W = operands[1], &WS = operands[2];
  if (!W.constant || !WS.constant) return op->emitOpError("needs a constant int4 weight and constant scales");
  auto wShape = i4.getRhs().getType().getShape();
  I4Gemm g;
  g.name = dispatchName(op);
  g.K = wShape[0];
  g.group = i4.getGroupSize();
  g.groups = (g.K + g.group - 1) / g.group;
  int64_t N = wShape[1];
  g.N = sp.constant(N);
  g.R = sp.product(A.dims, 0, A.dims.size() - 1);
  emitDimsCheck(ctx, {A.dims.back()}, {sp.constant(g.K)}, g.name + " inner dim check");
  g.lanes = tiling.getLanes();
  // Registers: 2 accumulators per row, 2 weight and 2 scale vectors.
  g.mr = std::min<int64_t>(tiling.getMr(), g.lanes >= 16 ? 8 : 4);
  g.mb = std::max<int64_t>(g.mr, tiling.getMb() / g.mr * g.mr);
  g.nb = std::max<int64_t>(2 * g.lanes, tiling.getNb() / (2 * g.lanes) * (2 * g.lanes));
  std::vector<int8_t> q = int8Values(W.constant);
  for (int8_t v : q)
    if (v < -8 || v > 7) return op->emitOpError("int4 weight value ") << int(v) << " is outside [-8, 7]";
  std::vector<float> scales = floatValues(WS.constant);
  if (i4.getInt8Activations()) {
    std::optional<uint32_t> bias;
    if (i4.getBias()) bias = operands[3].buffer;
    return emitW4A8(ctx, i4, A, q, scales, bias, result, tiling);
  }
  int64_t NR = 2 * g.lanes, panels = (N + NR - 1) / NR;
  if (Value zp = i4.getRhsZeroPoint()) {
    DenseElementsAttr zAttr;
    if (!matchPattern(zp, m_Constant(&zAttr))) return op->emitOpError("needs constant int4 zero points");
    std::vector<int8_t> z8 = int8Values(zAttr);
    std::vector<float> zf(z8.begin(), z8.end());
    g.zBuf = ctx.newConstant(size_t(panels * g.groups * NR) * 4, [&](uint8_t *dst) {
      packInt4Scales(zf, N, g.groups, g.lanes, reinterpret_cast<float *>(dst));
    });
  }
  g.wBuf =
      ctx.newConstant(size_t(panels * g.K * g.lanes), [&](uint8_t *dst) { packInt4Weights(q, g.K, N, g.lanes, dst); });
  g.sBuf = ctx.newConstant(size_t(panels * g.groups * NR) * 4, [&](uint8_t *dst) {
    packInt4Scales(scales, N, g.groups, g.lanes, reinterpret_cast<float *>(dst));
  });
  g.cBuf = result.buffer;
  g.aBuf = A.buffer;
  if (i4.getBias()) g.biasBuf = operands[i4.getRhsZeroPoint() ? 4 : 3].buffer;
  g.act = i4.getActivation().str();
  g.alpha = i4.getActAlpha().convertToFloat();
  g.beta = i4.getActBeta().convertToFloat();
  auto kb = ctx.newKernel(g.name);
  Reg groups = emitGemmBlocks(ctx, *kb, g.R, g.N, g.mr, NR, g.mb, g.nb,
                              [&](Value m, Value n, int rows, Value edge) { emitI4Tile(*kb, g, m, n, rows, edge); });
  kb->finish();
  std::vector<uint32_t> bindings = {g.cBuf, g.aBuf, g.wBuf, g.sBuf};
  if (g.biasBuf) bindings.push_back(*g.biasBuf);
  if (g.zBuf) bindings.push_back(*g.zBuf);
  ctx.addDispatch(*kb, bindings, groups, g.name);
  ctx.plan.dispatches.back().precision = "int4";
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * g.K), sp.mul(g.R, g.N));
  return success();
}

void registerInt4GemmKernels(CPUKernelRegistry &registry) { registry.addOpKernel<Int4MatMulOp>(emitInt4MatMul); }

} // namespace v4f
