//===- GemmKernels.cpp - matmul and convolution (im2col + GEMM) -----------===//
//
// One GEMM emitter serves MatMul and Conv: C[M,N] = A[M,K] * B[K,N] per batch,
// with a fused epilogue (bias per row or column, residual, activation).
// Workgroups own MB x NB output tiles; inside, an MR x NR register tile of
// vector<LANESxf32> accumulators runs the K loop with FMAs; the column edge
// is one lane-masked tile, row edges are tiles of the powers of two below
// MR, and K runs in equal blocks of at most KC. A constant weight is
// read from its compile-time panels (v4f-pack-weights, WeightPacking.h). A
// conv's B (the im2col matrix) is either materialized by an im2col dispatch
// or, for convs with many column blocks, packed by each workgroup one K
// block at a time into its scratch (GemmSpec::packB). The
// sizes come from the op's `v4f.tiling` (#v4f.gemm_tiling), chosen for the
// target by v4f-select-cpu-strategy (e.g. 6x16 of 8 lanes for AVX2, 8x32 of
// 16 lanes for AVX-512).
//
//===----------------------------------------------------------------------===//
#include "DispatchContext.h"
#include "v4f/Codegen/CPUCodegen.h"
#include "WeightPacking.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {
namespace {


enum class BiasMode { None, PerRow, PerColumn };

/// How far ahead a tile prefetches its packed B stream: 4 KB; and the
/// smallest B (bytes per matrix) worth it: a smaller one stays in cache from
/// one run to the next, and each prefetch is code in every tile variant.
constexpr int64_t kPrefetchFloats = 1024;
constexpr int64_t kPrefetchMinBytes = 256 * 1024;

struct GemmSpec {
  std::string name;
  Reg batches, M, N, K;
  uint32_t aBuf, bBuf, cBuf;
  std::optional<uint32_t> biasBuf, residualBuf;
  BiasMode biasMode = BiasMode::None;
  std::string act = "none";
  float alpha = 0, beta = 0;
  int64_t mr = 0, nr = 0, lanes = 0, mb = 0, nb = 0, kc = 0; // from #v4f.gemm_tiling
  /// A / B are the weight's a_panels / b_panels (v4f-pack-weights).
  bool aPacked = false, bPacked = false;
  /// Prefetch the packed B stream (set by emitGemm for a large packed B).
  bool prefetchB = false;
  /// Element offsets of A, B, C (and bias) for batch `b`, built in-kernel.
  std::function<Value(KernelBuilder &, Value)> aOffset, bOffset, cOffset, biasOffset;
  /// Set when B is not in memory but packed by each workgroup, one K block
  /// at a time, into its scratch (a conv's im2col, never materialized):
  /// packB(kb, batch, k0, k1, n0, n1) writes rows [k0, k1) x columns
  /// [n0, n1) of B as panels of (k1 - k0) x NR, the last zero-padded.
  /// Workgroups then own all M rows of NB columns.
  std::function<void(KernelBuilder &, Value, Value, Value, Value, Value)> packB;
  /// A buffer packB reads (bound after the bias and residual).
  std::optional<uint32_t> extraBuf;
  /// Output channels in vector lanes (a conv with v4f.conv_algorithm =
  /// "channel_lanes"; the GEMM is C^T = X^T W^T): A is unpacked with element
  /// (r, k) at aOff + r + k * aKStride (an activation matrix [K, P] read
  /// down its columns), C is stored transposed — element (r, col) at
  /// cOff + col * cColStride + r, one masked scatter per vector, once; the
  /// partial sums of earlier K blocks stay in the worker's scratch (MB x NB
  /// floats, the workgroup's tile). (Workgroups owning all rows instead, each
  /// streaming only its slice of the weight, ran ResNet-50 2-4 % slower.)
  std::optional<int64_t> aKStride, cColStride;
};

struct TileState {
  Value aOff, bOff, cOff, biasOff, K, N;
  Value n0; // packB: the first column the scratch panels hold
  Value m0; // the workgroup's first row (transposed C: its scratch tile's origin)
};

/// The K block [k0, k1) a tile accumulates: the first starts from zero,
/// later ones from the partial sums in C; only the last applies the
/// epilogue.
struct KBlock {
  Value k0, k1, first, last;
};

/// One register tile: rows [m, m + rows) by the NR columns from n, or by the
/// first `edgeCols` of them (the column edge: lane-masked loads of an
/// unpacked B, masked stores; packed B panels are zero-padded instead).
void emitTile(KernelBuilder &kb, const GemmSpec &s, const TileState &t, const KBlock &kblk, Value m, Value n,
              int rows, Value edgeCols) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t kLanes = s.lanes;
  const int vecs = int(s.nr / kLanes);
  Type vt = kb.vec(kLanes);
  SmallVector<Value> masks;
  if (edgeCols)
    for (int v = 0; v < vecs; ++v) masks.push_back(kb.laneMask(kb.sub(edgeCols, kb.c(v * kLanes)), kLanes));
  auto load = [&](Value base, Value idx, int v) {
    return edgeCols ? kb.maskedLoad(vt, base, idx, masks[v]) : kb.load(vt, base, idx);
  };
  Value C = kb.binding(0);
  auto cIndex = [&](int r, int v) {
    return kb.add(t.cOff, kb.add(kb.mul(kb.add(m, kb.c(r)), t.N), kb.add(n, kb.c(v * kLanes))));
  };
  SmallVector<Type> accTypes(rows * vecs, vt);
  const bool transposedC = s.cColStride.has_value();
  // Transposed C: partial sums at (row - m0, col - n0) of the scratch tile.
  auto partialIndex = [&](int r, int v) {
    return kb.add(kb.mul(kb.add(kb.sub(m, t.m0), kb.c(r)), kb.c(s.nb)), kb.add(kb.sub(n, t.n0), kb.c(v * kLanes)));
  };
  SmallVector<Value> init = transposedC ? kb.ifYield(
      kblk.first, accTypes, [&] { return SmallVector<Value>(rows * vecs, kb.cf(0.f, vt)); },
      [&] {
        SmallVector<Value> partial;
        for (int r = 0; r < rows; ++r)
          for (int v = 0; v < vecs; ++v) partial.push_back(kb.load(vt, kb.scratch(), partialIndex(r, v)));
        return partial;
      }) : kb.ifYield(
      kblk.first, accTypes, [&] { return SmallVector<Value>(rows * vecs, kb.cf(0.f, vt)); },
      [&] {
        SmallVector<Value> partial;
        for (int r = 0; r < rows; ++r)
          for (int v = 0; v < vecs; ++v) partial.push_back(load(C, cIndex(r, v), v));
        return partial;
      });
  Value A = kb.binding(1), B = s.packB ? kb.scratch() : kb.binding(2);
  // Element k of row r is at rowBase[r] + k * aStep: rows of A, or the
  // row's lane of its a_panel (WeightPacking.h).
  SmallVector<Value> rowBase;
  Value aStep = kb.c(s.aKStride ? *s.aKStride : s.aPacked ? s.mr : 1);
  for (int r = 0; r < rows; ++r) {
    Value row = kb.add(m, kb.c(r));
    if (s.aKStride) {
      rowBase.push_back(kb.add(t.aOff, row));
    } else if (s.aPacked) {
      Value panel = kb.div(row, kb.c(s.mr));
      rowBase.push_back(kb.add(t.aOff, kb.add(kb.mul(panel, kb.mul(t.K, kb.c(s.mr))), kb.rem(row, kb.c(s.mr)))));
    } else {
      rowBase.push_back(kb.add(t.aOff, kb.mul(row, t.K)));
    }
  }
  // Row k of the tile's B columns is at bBase + k * bStep.
  Value bBase = s.bPacked ? kb.add(t.bOff, kb.mul(kb.div(n, kb.c(s.nr)), kb.mul(t.K, kb.c(s.nr))))
                          : kb.add(t.bOff, n);
  if (s.packB) // this K block's panels in scratch: (k1 - k0) x NR each, from column n0
    bBase = kb.sub(kb.mul(kb.div(kb.sub(n, t.n0), kb.c(s.nr)), kb.mul(kb.sub(kblk.k1, kblk.k0), kb.c(s.nr))),
                   kb.mul(kblk.k0, kb.c(s.nr)));
  Value bStep = s.bPacked ? kb.c(s.nr) : t.N;
  bool maskB = edgeCols && !s.bPacked;
  auto acc = kb.forLoop(kblk.k0, kblk.k1, kb.c(1), init, [&](Value k, ValueRange a) -> SmallVector<Value> {
    Value bRow = kb.add(bBase, kb.mul(k, bStep));
    // A packed B in memory (a constant weight's panels, a materialized
    // im2col) is one sequential stream per panel: prefetch it a page ahead,
    // as the integer GEMMs do (a batch-1 transformer reads its weights from
    // DRAM once per run).
    // (BERT-base s16 fp32: 47 -> 35 ms at 1 thread, 25 -> 19 ms at 2; 16 KB
    // ahead gains less.)
    if (s.prefetchB) {
      auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
      for (int64_t line = 0; line < s.nr; line += 16) {
        Value at = kb.add(bRow, kb.c(line + kPrefetchFloats));
        b.create<LLVM::Prefetch>(loc, b.create<LLVM::GEPOp>(loc, ptrType, kb.f32(), B, ValueRange{at}), 0u, 3u, 1u);
      }
    }
    SmallVector<Value> bv;
    for (int v = 0; v < vecs; ++v) {
      Value idx = kb.add(bRow, kb.c(v * kLanes));
      bv.push_back(maskB ? kb.maskedLoad(vt, B, idx, masks[v]) : kb.load(vt, B, idx));
    }
    SmallVector<Value> next;
    for (int r = 0; r < rows; ++r) {
      Value av = kb.splat(kb.load(kb.f32(), A, kb.add(rowBase[r], kb.mul(k, aStep))), kLanes);
      for (int v = 0; v < vecs; ++v) next.push_back(b.create<vector::FMAOp>(loc, av, bv[v], a[r * vecs + v]));
    }
    return next;
  });
  auto store = [&](Value val, Value idx, int v) {
    if (edgeCols)
      kb.maskedStore(val, C, idx, masks[v]);
    else
      kb.store(val, C, idx);
  };
  auto storePartial = [&] {
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < vecs; ++v) store(acc[r * vecs + v], cIndex(r, v), v);
  };
  if (transposedC) {
   auto storeTransposed = [&] {
    // Lane j of vector v of row r is C[cOff + (n + v*L + j) * stride + m + r]:
    // 32-bit lane offsets from one base pointer (constant: static stride).
    auto i32v = VectorType::get({kLanes}, b.getI32Type());
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto ptrVecType = LLVM::LLVMFixedVectorType::get(ptrType, unsigned(kLanes));
    Value allLanes = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(VectorType::get({kLanes}, b.getI1Type()), true));
    SmallVector<Value> laneOffsets;
    for (int v = 0; v < vecs; ++v) {
      SmallVector<int32_t> offs(kLanes);
      for (int64_t j = 0; j < kLanes; ++j) offs[j] = int32_t((v * kLanes + j) * *s.cColStride);
      laneOffsets.push_back(b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(i32v, ArrayRef<int32_t>(offs))));
    }
    Value colBase = kb.add(t.cOff, kb.mul(n, kb.c(*s.cColStride)));
    for (int r = 0; r < rows; ++r) {
      Value at = kb.add(colBase, kb.add(m, kb.c(r)));
      for (int v = 0; v < vecs; ++v) {
        Value mask = edgeCols ? masks[v] : allLanes;
        auto ptrsIn = [&](Value base) {
          Value row = b.create<LLVM::GEPOp>(loc, ptrType, kb.f32(), base, ValueRange{at});
          return b.create<LLVM::GEPOp>(loc, ptrVecType, kb.f32(), row, ValueRange{laneOffsets[v]}).getResult();
        };
        Value val = acc[r * vecs + v];
        if (s.biasMode == BiasMode::PerColumn)
          val = b.create<arith::AddFOp>(loc, val, load(kb.binding(3), kb.add(t.biasOff, kb.add(n, kb.c(v * kLanes))), v));
        if (s.residualBuf) {
          Value residual = b.create<LLVM::masked_gather>(loc, vt, ptrsIn(kb.binding(s.biasBuf ? 4 : 3)), mask,
                                                         ValueRange{kb.cf(0.f, vt)}, uint32_t(4));
          val = b.create<arith::AddFOp>(loc, val, residual);
        }
        b.create<LLVM::masked_scatter>(loc, applyActivation(kb, val, s.act, s.alpha, s.beta), ptrsIn(C), mask,
                                       b.getI32IntegerAttr(4));
      }
    }
   };
    kb.ifThenElse(kblk.last, storeTransposed, [&] {
      for (int r = 0; r < rows; ++r)
        for (int v = 0; v < vecs; ++v) kb.store(acc[r * vecs + v], kb.scratch(), partialIndex(r, v));
    });
    return;
  }
  auto storeFinal = [&] {
    for (int r = 0; r < rows; ++r) {
      Value row = kb.add(m, kb.c(r));
      Value rowBias;
      if (s.biasMode == BiasMode::PerRow)
        rowBias = kb.splat(kb.load(kb.f32(), kb.binding(3), kb.add(t.biasOff, row)), kLanes);
      for (int v = 0; v < vecs; ++v) {
        Value col = kb.add(n, kb.c(v * kLanes));
        Value val = acc[r * vecs + v];
        if (s.biasMode == BiasMode::PerRow) val = b.create<arith::AddFOp>(loc, val, rowBias);
        if (s.biasMode == BiasMode::PerColumn)
          val = b.create<arith::AddFOp>(loc, val, load(kb.binding(3), kb.add(t.biasOff, col), v));
        Value cIdx = cIndex(r, v);
        // The residual is never C's buffer (their lifetimes overlap at this
        // dispatch), so partial sums in C leave it intact.
        if (s.residualBuf) {
          unsigned slot = s.biasBuf ? 4 : 3;
          val = b.create<arith::AddFOp>(loc, val, load(kb.binding(slot), cIdx, v));
        }
        store(applyActivation(kb, val, s.act, s.alpha, s.beta), cIdx, v);
      }
    }
  };
  kb.ifThenElse(kblk.last, storeFinal, storePartial);
}

void emitGemm(DispatchContext &ctx, const GemmSpec &spec) {
  auto &sp = ctx.shapes;
  GemmSpec s = spec;
  if (s.bPacked && !s.packB) {
    std::optional<int64_t> K = sp.constValue(s.K), N = sp.constValue(s.N);
    s.prefetchB = !K || !N || *K * *N * 4 >= kPrefetchMinBytes;
  }
  const int64_t kMR = s.mr, kNR = s.nr, kMB = s.mb, kNB = s.nb, kKC = s.kc;
  // packB: one row block of all M rows per workgroup.
  const bool allRows = bool(s.packB);
  Reg mTiles = allRows ? sp.constant(1) : sp.ceilDiv(s.M, sp.constant(kMB));
  // Columns per workgroup: NB, or fewer (a multiple of NR) when the GEMM
  // would otherwise have fewer than kMinWorkgroups workgroups. A BERT
  // matmul of M = 16 rows and N = 768 made 3 workgroups of 256 columns,
  // which two threads split 2 : 1. Only GEMMs with few row blocks are
  // split: every column block of a conv re-reads its weight rows (ResNet's
  // stage-4 K = 4608 rows of A per row block), so more is not free.
  constexpr int64_t kMinWorkgroups = 8;
  Reg wantNTiles = sp.ceilDiv(sp.constant(kMinWorkgroups), sp.max(sp.mul(s.batches, mTiles), sp.constant(1)));
  Reg nbReg = sp.mul(sp.ceilDiv(sp.ceilDiv(s.N, wantNTiles), sp.constant(kNR)), sp.constant(kNR));
  nbReg = sp.min(sp.max(nbReg, sp.constant(kNR)), sp.constant(kNB));
  // Channels in lanes with one row block (ResNet stage 4: 49 pixel rows):
  // every workgroup re-reads the whole activation matrix, so only
  // kMinWorkgroups / 2 of them (the stage-4 3x3 conv alone, 512 channels:
  // 1.94 ms in 8 workgroups, 1.77 ms in 2). With several row blocks every
  // row block re-reads its columns' weights instead, and the split above
  // stays (stage 3 at 2 threads: 0.9 -> 1.1 ms with NB columns).
  std::optional<int64_t> rowBlocks = sp.constValue(mTiles);
  if (s.cColStride && rowBlocks && *rowBlocks == 1) {
    Reg wantCL = sp.ceilDiv(sp.constant(kMinWorkgroups / 2), sp.max(s.batches, sp.constant(1)));
    nbReg = sp.mul(sp.ceilDiv(sp.ceilDiv(s.N, wantCL), sp.constant(kNR)), sp.constant(kNR));
    nbReg = sp.min(sp.max(nbReg, sp.constant(kNR)), sp.constant(kNB));
  }
  if (s.packB) nbReg = sp.constant(kNB);
  Reg nTiles = sp.ceilDiv(s.N, nbReg);
  Reg tiles = sp.mul(mTiles, nTiles);
  Reg groups = sp.mul(s.batches, tiles);
  auto kb = ctx.newKernel(s.name);
  Value wg = kb->workgroupId();
  Value tilesV = kb->dim(tiles);
  Value batch = kb->div(wg, tilesV);
  Value tile = kb->rem(wg, tilesV);
  Value M = kb->dim(s.M), N = kb->dim(s.N);
  // Consecutive workgroups share a column block of B (row blocks vary
  // fastest): the NB columns of B stay in cache while MB-row blocks of A,
  // the smaller operand per workgroup, stream past them.
  Value mTilesV = kb->dim(mTiles);
  Value m0 = allRows ? kb->c(0) : kb->mul(kb->rem(tile, mTilesV), kb->c(kMB));
  Value nb = kb->dim(nbReg);
  Value n0 = kb->mul(kb->div(tile, mTilesV), nb);
  Value m1 = allRows ? M : kb->min(kb->add(m0, kb->c(kMB)), M);
  Value n1 = kb->min(kb->add(n0, nb), N);
  TileState t;
  t.K = kb->dim(s.K);
  t.N = N;
  t.aOff = s.aOffset(*kb, batch);
  t.bOff = s.bOffset(*kb, batch);
  t.cOff = s.cOffset(*kb, batch);
  t.biasOff = s.biasOffset ? s.biasOffset(*kb, batch) : kb->c(0);
  t.n0 = n0;
  t.m0 = m0;
  Value nFull = kb->add(n0, kb->mul(kb->div(kb->sub(n1, n0), kb->c(kNR)), kb->c(kNR)));
  // K blocks of equal size (at most KC, a multiple of 8 where K allows):
  // a fixed KC would leave a short last block (K = 1040: 4 x 256 + 16) whose
  // C round trip costs more than its FMAs. A K of 0 still runs one (empty)
  // block, which writes the epilogue of 0.
  Value kEnd = kb->max(t.K, kb->c(1));
  Value kBlocks = kb->div(kb->add(kEnd, kb->c(kKC - 1)), kb->c(kKC));
  Value kStep = kb->div(kb->add(kEnd, kb->sub(kBlocks, kb->c(1))), kBlocks);
  kStep = kb->min(kb->mul(kb->div(kb->add(kStep, kb->c(7)), kb->c(8)), kb->c(8)), kb->c(kKC));
  // The rows past the last whole MR tile run as tiles of the powers of two
  // below MR (a remainder of 5 as 4 + 1), never as MR single-row tiles,
  // which load 3 values per 2 FMAs.
  SmallVector<int64_t> edgeRows;
  for (int64_t r = int64_t(1) << 30; r >= 1; r /= 2)
    if (r < kMR) edgeRows.push_back(r);
  // K blocks outermost: a KC x NR slice of B stays in L1 while the row
  // tiles pass over it. Within a block, column panels outside and row
  // tiles inside.
  kb->forLoop(kb->c(0), kEnd, kStep, [&](Value k0) {
    KBlock blk;
    blk.k0 = k0;
    blk.k1 = kb->min(kb->add(k0, kStep), t.K);
    blk.first = kb->cmp(arith::CmpIPredicate::eq, k0, kb->c(0));
    blk.last = kb->cmp(arith::CmpIPredicate::sge, kb->add(k0, kStep), t.K);
    // Rows [m0, m1) of the workgroup's columns for this K block.
    auto rowBlock = [&](Value m0, Value m1) {
      Value mFull = kb->add(m0, kb->mul(kb->div(kb->sub(m1, m0), kb->c(kMR)), kb->c(kMR)));
      auto panel = [&](Value n, Value edgeCols) {
        kb->forLoop(m0, mFull, kb->c(kMR), [&](Value m) { emitTile(*kb, s, t, blk, m, n, kMR, edgeCols); });
        Value rest = kb->sub(m1, mFull);
        for (int64_t rows : edgeRows) {
          // Tile `rows` covers bit `rows` of the remainder, after the larger
          // tiles' rows.
          Value bit = kb->b.create<arith::AndIOp>(kb->loc, rest, kb->c(rows));
          Value before = kb->b.create<arith::AndIOp>(kb->loc, rest, kb->c(~(2 * rows - 1)));
          kb->ifThen(kb->cmp(arith::CmpIPredicate::ne, bit, kb->c(0)), [&] {
            emitTile(*kb, s, t, blk, kb->add(mFull, before), n, int(rows), edgeCols);
          });
        }
      };
      kb->forLoop(n0, nFull, kb->c(kNR), [&](Value n) { panel(n, Value()); });
      kb->ifThen(kb->cmp(arith::CmpIPredicate::slt, nFull, n1), [&] { panel(nFull, kb->sub(n1, nFull)); });
    };
    if (!s.packB) return rowBlock(m0, m1);
    // Pack this K block of the workgroup's columns once, then run every
    // MB-row block of M over it (the packed block stays in L2, each MB x KC
    // block of A in L2 while a KC x NR panel of B is in L1).
    s.packB(*kb, batch, blk.k0, blk.k1, n0, n1);
    kb->forLoop(m0, m1, kb->c(kMB), [&](Value mb0) { rowBlock(mb0, kb->min(kb->add(mb0, kb->c(kMB)), m1)); });
  });
  kb->finish();
  std::vector<uint32_t> bindings = {s.cBuf, s.aBuf, s.bBuf};
  if (s.biasBuf) bindings.push_back(*s.biasBuf);
  if (s.residualBuf) bindings.push_back(*s.residualBuf);
  if (s.extraBuf) bindings.push_back(*s.extraBuf);
  std::optional<Reg> scratch;
  if (s.packB) scratch = sp.constant(kKC * kNB * 4);
  if (s.cColStride) scratch = sp.constant(kMB * kNB * 4);
  ctx.addDispatch(*kb, bindings, groups, s.name, scratch);
  ctx.plan.dispatches.back().flops =
      sp.mul(sp.constant(2), sp.mul(sp.mul(s.batches, s.M), sp.mul(s.N, s.K)));
}


/// Reads the op's #v4f.gemm_tiling into `s`.
LogicalResult readTiling(Operation *op, GemmSpec &s) {
  auto tiling = op->getAttrOfType<GemmTilingAttr>("v4f.tiling");
  if (!tiling)
    return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  s.mr = tiling.getMr();
  s.nr = tiling.getNr();
  s.lanes = tiling.getLanes();
  s.mb = tiling.getMb();
  s.nb = tiling.getNb();
  s.kc = tiling.getKc();
  return success();
}

} // namespace

LogicalResult emitMatMul(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  auto mm = cast<MatMulOp>(op);
  auto &sp = ctx.shapes;
  const TensorInfo &A = operands[0], &B = operands[1];
  size_t rank = result.dims.size(), batchRank = rank - 2;
  GemmSpec s;
  if (failed(readTiling(op, s))) return failure();
  s.name = dispatchName(op);
  s.M = result.dims[rank - 2];
  s.N = result.dims[rank - 1];
  s.K = A.dims[A.dims.size() - 1];
  // The inner dims must agree; two that are only known at run time are
  // checked first (the GEMM would read past B otherwise).
  if (A.dims.size() >= 2 && B.dims.size() >= 2)
    emitDimsCheck(ctx, {s.K}, {B.dims[B.dims.size() - 2]}, s.name + " inner dim check");
  std::vector<Reg> batchDims(result.dims.begin(), result.dims.begin() + batchRank);
  s.batches = sp.product(batchDims, 0, batchRank);
  s.aBuf = A.buffer;
  s.bBuf = B.buffer;
  s.cBuf = result.buffer;
  Reg bMat = sp.mul(B.dims[B.dims.size() - 2], B.dims[B.dims.size() - 1]);
  if (auto packing = packingOf(op); packing && B.constant) {
    auto bShape = llvm::cast<RankedTensorType>(mm.getRhs().getType()).getShape();
    int64_t Kc = bShape[bShape.size() - 2], Nc = bShape[bShape.size() - 1], matrices = 1;
    for (size_t i = 0; i + 2 < bShape.size(); ++i) matrices *= bShape[i];
    s.bBuf = ctx.packedWeight(B, *packing, matrices, Kc, Nc);
    s.bPacked = true;
    bMat = sp.constant(packedMatrixFloats(Nc, Kc, packing->panel));
  }
  if (mm.getBias()) {
    s.biasBuf = operands[2].buffer;
    s.biasMode = BiasMode::PerColumn;
  }
  s.act = mm.getActivation().str();
  s.alpha = mm.getActAlpha().convertToFloat();
  s.beta = mm.getActBeta().convertToFloat();
  Reg aMat = sp.mul(A.dims[A.dims.size() - 2], A.dims[A.dims.size() - 1]);
  Reg cMat = sp.mul(s.M, s.N);
  std::vector<Reg> aBatch(A.dims.begin(), A.dims.end() - 2), bBatch(B.dims.begin(), B.dims.end() - 2);
  // Offset of a broadcast operand: decompose b over the result batch dims.
  auto offsetFor = [batchDims, batchRank](std::vector<Reg> opBatch, Reg mat) {
    return [=](KernelBuilder &kb, Value b) {
      Value off = kb.c(0), stride = kb.dim(mat), rest = b;
      for (size_t i = batchRank; i-- > 0;) {
        Value extent = kb.dim(batchDims[i]);
        Value idx = kb.rem(rest, extent);
        rest = kb.div(rest, extent);
        size_t shift = batchRank - opBatch.size();
        if (i < shift) continue;
        Value d = kb.dim(opBatch[i - shift]);
        Value eff = kb.select(kb.cmp(arith::CmpIPredicate::eq, d, kb.c(1)), kb.c(0), idx);
        off = kb.add(off, kb.mul(eff, stride));
        stride = kb.mul(stride, d);
      }
      return off;
    };
  };
  s.aOffset = offsetFor(aBatch, aMat);
  s.bOffset = offsetFor(bBatch, bMat);
  s.cOffset = [cMat](KernelBuilder &kb, Value b) { return kb.mul(b, kb.dim(cMat)); };
  emitGemm(ctx, s);
  return success();
}

LogicalResult emitConv(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                       const TensorInfo &result) {
  auto conv = cast<ConvOp>(op);
  auto algorithm = op->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
  if (algorithm && algorithm == "depthwise") return emitDepthwiseConv(ctx, op, operands, result);
  const bool channelLanes = algorithm && algorithm == "channel_lanes";
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0], &W = operands[1];
  auto wShape = conv.getWeight().getType().getShape();
  int64_t G = conv.getGroups(), OC = wShape[0], Cg = wShape[1], KH = wShape[2], KW = wShape[3];
  int64_t OCg = OC / G, Kdim = Cg * KH * KW;
  auto strides = conv.getStrides(), dil = conv.getDilations(), pads = conv.getPads();
  Reg Nb = X.dims[0], H = X.dims[2], Wd = X.dims[3], OH = result.dims[2], OW = result.dims[3];
  Reg HW = sp.mul(H, Wd), P = sp.mul(OH, OW);
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1 &&
                   llvm::all_of(pads, [](int64_t p) { return p == 0; });
  GemmSpec s;
  if (failed(readTiling(op, s))) return failure();
  s.name = dispatchName(op);
  s.batches = sp.mul(Nb, sp.constant(G));
  s.M = sp.constant(OCg);
  s.N = P;
  s.K = sp.constant(Kdim);
  s.aBuf = W.buffer;
  s.cBuf = result.buffer;
  size_t next = 2;
  if (conv.getBias()) {
    s.biasBuf = operands[next++].buffer;
    s.biasMode = BiasMode::PerRow;
    s.biasOffset = [OCg, G](KernelBuilder &kb, Value b) { return kb.mul(kb.rem(b, kb.c(G)), kb.c(OCg)); };
  }
  if (conv.getResidual()) s.residualBuf = operands[next++].buffer;
  s.act = conv.getActivation().str();
  s.alpha = conv.getActAlpha().convertToFloat();
  s.beta = conv.getActBeta().convertToFloat();
  int64_t aMat = OCg * Kdim;
  if (auto packing = packingOf(op); packing && W.constant && !channelLanes) {
    s.aBuf = ctx.packedWeight(W, *packing, G, Kdim, OCg);
    s.aPacked = true;
    aMat = packedMatrixFloats(OCg, Kdim, packing->panel);
  }
  s.aOffset = [aMat, G](KernelBuilder &kb, Value b) { return kb.mul(kb.rem(b, kb.c(G)), kb.c(aMat)); };
  s.cOffset = [P, OCg](KernelBuilder &kb, Value b) { return kb.mul(b, kb.mul(kb.c(OCg), kb.dim(P))); };
  std::optional<int64_t> channelLanesP;
  if (channelLanes) {
    // C^T[P, OCg] = X^T[P, K] W^T[K, OCg]: the weight's lane_panels
    // (v4f-pack-weights) are the B panels, the activation matrix A read down
    // its columns, C stored transposed (GemmSpec::cColStride).
    auto packing = packingOf(op);
    channelLanesP = sp.constValue(P);
    if (!packing || !W.constant || !channelLanesP || !sp.constValue(HW))
      return op->emitOpError("conv_algorithm \"channel_lanes\" needs a packed constant weight and static planes");
    s.M = P;
    s.N = sp.constant(OCg);
    s.aPacked = false;
    s.bBuf = ctx.packedWeight(W, *packing, G, Kdim, OCg);
    s.bPacked = true;
    int64_t bMat = packedMatrixFloats(OCg, Kdim, packing->panel);
    s.bOffset = [bMat, G](KernelBuilder &kb, Value b) { return kb.mul(kb.rem(b, kb.c(G)), kb.c(bMat)); };
    if (s.biasMode == BiasMode::PerRow) s.biasMode = BiasMode::PerColumn;
    s.cColStride = *channelLanesP;
  }
  if (pointwise && channelLanes) {
    s.aBuf = X.buffer;
    s.aKStride = *sp.constValue(HW);
    s.aOffset = [HW, Cg](KernelBuilder &kb, Value b) { return kb.mul(b, kb.mul(kb.c(Cg), kb.dim(HW))); };
    emitGemm(ctx, s);
    return success();
  }
  if (pointwise) {
    s.bBuf = X.buffer;
    s.bOffset = [HW, Cg](KernelBuilder &kb, Value b) { return kb.mul(b, kb.mul(kb.c(Cg), kb.dim(HW))); };
    emitGemm(ctx, s);
    return success();
  }
  // im2col into b_panels (WeightPacking.h): for k = (c, kh, kw) and p =
  // (oh, ow), column p of row k of matrix ng = n*G + g goes to panel p / NR,
  // lane p % NR of that row; the columns past P are zero. `writeColumns`
  // writes columns [qBegin, qEnd) (multiples of NR) of row r = ng*Kdim + k,
  // column q to rowDst + ((q - qBase) / NR) * panelStride + (q - qBase) % NR.
  // Output rows at least 3 vectors wide (OW >= 3 x LANES) go in vector
  // chunks of LANES columns (inside one panel): a chunk inside one output
  // row and inside the input is one vector load (stride 1) or two and an
  // even-lane shuffle (stride 2); the other chunks (padding borders, row
  // ends) go lane by lane. Narrower rows go element by element. The scalar
  // paths avoid gathers, which cost more than scalar copies on AVX2.
  const int64_t kNR = s.nr, kL = s.lanes;
  // With static input and output planes a compile-time position table drives
  // the copy instead (see `tableChunks` below): per padded output column p,
  // its top input row oh * stride - pad (far below 0 past P), then its left
  // input column ow * stride - pad, then per vector of L columns a flag: all
  // inside one output row and inside P.
  std::optional<int64_t> cH = sp.constValue(H), cW = sp.constValue(Wd), cOW = sp.constValue(OW),
                         cP = sp.constValue(P);
  const int64_t tableCols = cP ? (*cP + kNR - 1) / kNR * kNR : 0;
  std::optional<uint32_t> posTable;
  // The table's column count (P rounded up to whole panels) and, for a
  // table built at run time, the register saying it was (0: the planes are
  // too large for its 32-bit positions; the copy then takes the old path).
  Reg tableColsR = sp.constant(tableCols);
  std::optional<Reg> tableOk;
  if (cH && cW && cOW && cP && *cH * *cW < (int64_t(1) << 30) && *cP < (int64_t(1) << 30)) {
    std::vector<int32_t> pos(size_t(2 * tableCols + tableCols / kL));
    for (int64_t q = 0; q < tableCols; ++q) {
      bool inside = q < *cP;
      int64_t oh = inside ? q / *cOW : 0, ow = inside ? q % *cOW : 0;
      pos[q] = inside ? int32_t(oh * strides[0] - pads[0]) : -(int32_t(1) << 30);
      pos[tableCols + q] = int32_t(ow * strides[1] - pads[1]);
    }
    for (int64_t c = 0; c < tableCols / kL; ++c) {
      int64_t first = c * kL, last = first + kL - 1;
      pos[2 * tableCols + c] = last < *cP && first / *cOW == last / *cOW;
    }
    posTable = ctx.int32Table(pos);
  } else if (G == 1 && !ctx.inRunTimeLoop && !channelLanes) {
    // Planes known only at run time (exported vision models with symbolic
    // H, W): a one-workgroup dispatch writes the same table for this run's
    // shapes into a transient (row by row, no division per column; one per
    // vector of columns for the flags). MobileNetV3-small at 224 x 224: its
    // stem conv 224 -> ~110 us, as with static planes.
    tableColsR = sp.mul(sp.ceilDiv(P, sp.constant(kNR)), sp.constant(kNR));
    Reg limit = sp.constant((int64_t(1) << 30) - 1);
    tableOk = sp.select(sp.lt(limit, HW), sp.constant(0), sp.select(sp.lt(limit, P), sp.constant(0), sp.constant(1)));
    Reg entries = sp.add(sp.mul(sp.constant(2), tableColsR), sp.ceilDiv(tableColsR, sp.constant(kL)));
    posTable = ctx.newTransient(sp.mul(sp.select(*tableOk, entries, sp.constant(0)), sp.constant(4)));
    auto kb = ctx.newKernel(s.name + " positions");
    OpBuilder &b = kb->b;
    Value Tab = kb->binding(0);
    Value oh = kb->dim(OH), ow = kb->dim(OW), p = kb->dim(P), T = kb->dim(tableColsR);
    auto store32 = [&](Value v, Value at) {
      kb->store(b.create<arith::TruncIOp>(kb->loc, b.getI32Type(), v), Tab, at);
    };
    kb->forLoop(kb->c(0), oh, kb->c(1), [&](Value y) {
      Value rowPos = kb->sub(kb->mul(y, kb->c(strides[0])), kb->c(pads[0]));
      Value base = kb->mul(y, ow);
      kb->forLoop(kb->c(0), ow, kb->c(1), [&](Value x) {
        Value q = kb->add(base, x);
        store32(rowPos, q);
        store32(kb->sub(kb->mul(x, kb->c(strides[1])), kb->c(pads[1])), kb->add(T, q));
      });
    });
    kb->forLoop(p, T, kb->c(1), [&](Value q) {
      store32(kb->c(-(int64_t(1) << 30)), q);
      store32(kb->c(0), kb->add(T, q));
    });
    kb->forLoop(kb->c(0), kb->div(T, kb->c(kL)), kb->c(1), [&](Value c) {
      Value first = kb->mul(c, kb->c(kL)), last = kb->add(first, kb->c(kL - 1));
      Value same = kb->cmp(arith::CmpIPredicate::eq, kb->div(first, ow), kb->div(last, ow));
      Value inside = kb->cmp(arith::CmpIPredicate::slt, last, p);
      Value flag = b.create<arith::ExtUIOp>(kb->loc, b.getI64Type(), b.create<arith::AndIOp>(kb->loc, same, inside));
      store32(flag, kb->add(kb->mul(kb->c(2), T), c));
    });
    kb->finish();
    ctx.addDispatch(*kb, {*posTable}, sp.constant(1), s.name + " positions");
    ctx.plan.dispatches.back().guard = *tableOk;
  }
  auto writeColumns = [=](KernelBuilder &kbr, Value r, Value rowDst, Value qBase, Value panelStride,
                               Value qBegin, Value qEnd, bool wholeRows, std::optional<unsigned> tableSlot,
                               int64_t panelWidth) {
    KernelBuilder *kb = &kbr;
    OpBuilder &b = kb->b;
    Location loc = kb->loc;
    Value h = kb->dim(H), w = kb->dim(Wd), oh = kb->dim(OH), ow = kb->dim(OW), p = kb->dim(P);
    Value hw = kb->mul(h, w);
    Value Xp = kb->binding(wholeRows ? 1 : 2);
    Value Col = wholeRows ? kb->binding(0) : kb->scratch();
    Type vt = kb->vec(kL);
    auto land = [&](Value x, Value y) -> Value { return b.create<arith::AndIOp>(loc, x, y); };
    auto inRange = [&](Value v, Value hi) {
      return land(kb->cmp(arith::CmpIPredicate::sge, v, kb->c(0)), kb->cmp(arith::CmpIPredicate::slt, v, hi));
    };
    auto column = [&](Value q) {
      Value rel = kb->sub(q, qBase);
      return kb->add(rowDst,
                     kb->add(kb->mul(kb->div(rel, kb->c(panelWidth)), panelStride), kb->rem(rel, kb->c(panelWidth))));
    };
    // Chunks only pay off on rows of several vectors: on narrower rows
    // (ResNet's 14-wide stage 3 on AVX2) most chunks touch a border or a
    // row end and go lane by lane, slower than the plain element loop.
    Value wideRows = kb->cmp(arith::CmpIPredicate::sge, ow, kb->c(3 * kL));
    Value k = kb->rem(r, kb->c(Kdim));
    Value ng = kb->div(r, kb->c(Kdim));
    Value kw = kb->rem(k, kb->c(KW));
    Value t = kb->div(k, kb->c(KW));
    Value kh = kb->rem(t, kb->c(KH));
    Value c = kb->div(t, kb->c(KH));
    Value n = kb->div(ng, kb->c(G)), g = kb->rem(ng, kb->c(G));
    Value channel = kb->add(kb->mul(n, kb->c(G * Cg)), kb->add(kb->mul(g, kb->c(Cg)), c));
    Value plane = kb->mul(channel, hw);
    // Input row / column of output (y, x): y * stride - pad + kh * dilation.
    Value khOff = kb->sub(kb->mul(kh, kb->c(dil[0])), kb->c(pads[0]));
    Value kwOff = kb->sub(kb->mul(kw, kb->c(dil[1])), kb->c(pads[1]));
    // Element (y, x) of the row: the input value, or 0 in the padding.
    auto element = [&](Value y, Value x) {
      Value ih = kb->add(kb->mul(y, kb->c(strides[0])), khOff);
      Value iw = kb->add(kb->mul(x, kb->c(strides[1])), kwOff);
      Value ok = land(inRange(ih, h), inRange(iw, w));
      Value idx = kb->select(ok, kb->add(plane, kb->add(kb->mul(ih, w), iw)), kb->c(0));
      return b.create<arith::SelectOp>(loc, ok, kb->load(kb->f32(), Xp, idx), kb->cf(0.f)).getResult();
    };
    auto chunked = [&] {
      kb->forLoop(qBegin, qEnd, kb->c(kL), [&](Value q0) {
        Value dstIdx = column(q0);
        Value y0 = kb->div(q0, ow), x0 = kb->rem(q0, ow);
        // Lane by lane: a lane past the row's end is on the next row (OW >
        // LANES: at most one wrap); one past P is 0.
        auto lanewise = [&] {
          kb->forLoop(kb->c(0), kb->c(kL), kb->c(1), [&](Value lane) {
            Value x = kb->add(x0, lane);
            Value wrap = kb->cmp(arith::CmpIPredicate::sge, x, ow);
            Value y = kb->select(wrap, kb->add(y0, kb->c(1)), y0);
            x = kb->select(wrap, kb->sub(x, ow), x);
            Value v = element(y, x);
            v = b.create<arith::SelectOp>(loc, kb->cmp(arith::CmpIPredicate::slt, kb->add(q0, lane), p), v,
                                          kb->cf(0.f));
            kb->store(v, Col, kb->add(dstIdx, lane));
          });
        };
        if (strides[1] != 1 && strides[1] != 2) return lanewise();
        // Stride 1: LANES contiguous inputs; stride 2: the even lanes of
        // 2 x LANES contiguous inputs.
        Value ih0 = kb->add(kb->mul(y0, kb->c(strides[0])), khOff);
        Value iw0 = kb->add(kb->mul(x0, kb->c(strides[1])), kwOff);
        Value contiguous =
            land(land(kb->cmp(arith::CmpIPredicate::sle, kb->add(x0, kb->c(kL)), ow),
                      kb->cmp(arith::CmpIPredicate::sle, kb->add(q0, kb->c(kL)), p)),
                 land(inRange(ih0, h), land(kb->cmp(arith::CmpIPredicate::sge, iw0, kb->c(0)),
                                            kb->cmp(arith::CmpIPredicate::sle,
                                                    kb->add(iw0, kb->c(strides[1] * kL)), w))));
        kb->ifThenElse(
            contiguous,
            [&] {
              Value src = kb->add(plane, kb->add(kb->mul(ih0, w), iw0));
              Value v = kb->load(vt, Xp, src);
              if (strides[1] == 2) {
                SmallVector<int64_t> even(kL);
                for (int64_t i = 0; i < kL; ++i) even[i] = 2 * i;
                v = b.create<vector::ShuffleOp>(loc, v, kb->load(vt, Xp, kb->add(src, kb->c(kL))), even);
              }
              kb->store(v, Col, dstIdx);
            },
            lanewise);
      });
    };
    auto narrow = [&] {
      if (wholeRows) {
        kb->forLoop(kb->c(0), oh, kb->c(1), [&](Value y) {
          Value rowP = kb->mul(y, ow);
          kb->forLoop(kb->c(0), ow, kb->c(1),
                      [&](Value x) { kb->store(element(y, x), Col, column(kb->add(rowP, x))); });
        });
        // The last panel's columns past P.
        kb->forLoop(p, qEnd, kb->c(1), [&](Value q) { kb->store(kb->cf(0.f), Col, column(q)); });
        return;
      }
      kb->forLoop(qBegin, qEnd, kb->c(1), [&](Value q) {
        Value inside = kb->cmp(arith::CmpIPredicate::slt, q, p);
        Value qc = kb->select(inside, q, kb->c(0));
        Value v = element(kb->div(qc, ow), kb->rem(qc, ow));
        kb->store(b.create<arith::SelectOp>(loc, inside, v, kb->cf(0.f)), Col, column(q));
      });
    };
    // The position table: every chunk of L columns (inside one panel) is one
    // vector — a contiguous load (stride 1) or two and an even-lane shuffle
    // (stride 2) when it lies inside one output row and inside the input,
    // otherwise a masked gather whose mask leaves out the padding and the
    // columns past P. (ResNet-50 stages 2-3, 28- and 14-wide rows: their
    // im2col went element by element before, 0.9 ms for one 3x3 conv.)
    auto tableChunks = [&] {
      Value Tab = kb->binding(*tableSlot);
      auto i32 = b.getI32Type();
      auto i32v = VectorType::get({kL}, i32);
      auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
      auto ptrVecType = LLVM::LLVMFixedVectorType::get(ptrType, unsigned(kL));
      auto splat32 = [&](Value i64) -> Value {
        return b.create<vector::BroadcastOp>(loc, i32v, b.create<arith::TruncIOp>(loc, i32, i64));
      };
      auto scalarAt = [&](Value at) -> Value {
        return b.create<arith::ExtSIOp>(loc, b.getI64Type(), kb->load(i32, Tab, at));
      };
      Value dh = kb->mul(kh, kb->c(dil[0])), dw = kb->mul(kw, kb->c(dil[1]));
      Value dhV = splat32(dh), dwV = splat32(dw), hV = splat32(h), wV = splat32(w);
      Value zeroV = splat32(kb->c(0));
      Value planePtr = b.create<LLVM::GEPOp>(loc, ptrType, kb->f32(), Xp, ValueRange{plane});
      Value zeroF = kb->cf(0.f, vt);
      auto icmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
        return b.create<arith::CmpIOp>(loc, pred, x, y);
      };
      kb->forLoop(qBegin, qEnd, kb->c(kL), [&](Value q0) {
        Value dstIdx = column(q0);
        auto gather = [&] {
          Value ih = b.create<arith::AddIOp>(loc, kb->load(i32v, Tab, q0), dhV);
          Value iw = b.create<arith::AddIOp>(loc, kb->load(i32v, Tab, kb->add(q0, kb->dim(tableColsR))), dwV);
          Value mask = land(land(icmp(arith::CmpIPredicate::sge, ih, zeroV), icmp(arith::CmpIPredicate::slt, ih, hV)),
                            land(icmp(arith::CmpIPredicate::sge, iw, zeroV), icmp(arith::CmpIPredicate::slt, iw, wV)));
          Value idx = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, ih, wV), iw);
          idx = b.create<arith::SelectOp>(loc, mask, idx, zeroV);
          Value ptrs = b.create<LLVM::GEPOp>(loc, ptrVecType, kb->f32(), planePtr, ValueRange{idx});
          kb->store(b.create<LLVM::masked_gather>(loc, vt, ptrs, mask, ValueRange{zeroF}, uint32_t(4)), Col, dstIdx);
        };
        if (strides[1] != 1 && strides[1] != 2) return gather();
        Value flag = kb->cmp(arith::CmpIPredicate::ne,
                             scalarAt(kb->add(kb->mul(kb->c(2), kb->dim(tableColsR)), kb->div(q0, kb->c(kL)))),
                             kb->c(0));
        Value ih = kb->add(scalarAt(q0), dh), iw = kb->add(scalarAt(kb->add(q0, kb->dim(tableColsR))), dw);
        Value contiguous = land(land(flag, inRange(ih, h)),
                                land(kb->cmp(arith::CmpIPredicate::sge, iw, kb->c(0)),
                                     kb->cmp(arith::CmpIPredicate::sle, kb->add(iw, kb->c(strides[1] * kL)), w)));
        kb->ifThenElse(
            contiguous,
            [&] {
              Value src = kb->add(plane, kb->add(kb->mul(ih, w), iw));
              Value v = kb->load(vt, Xp, src);
              if (strides[1] == 2) {
                SmallVector<int64_t> even(kL);
                for (int64_t i = 0; i < kL; ++i) even[i] = 2 * i;
                v = b.create<vector::ShuffleOp>(loc, v, kb->load(vt, Xp, kb->add(src, kb->c(kL))), even);
              }
              kb->store(v, Col, dstIdx);
            },
            gather);
      });
    };
    auto legacy = [&] { kb->ifThenElse(wideRows, chunked, narrow); };
    if (!tableSlot) return legacy();
    if (!tableOk) return tableChunks();
    kb->ifThenElse(kb->cmp(arith::CmpIPredicate::ne, kb->dim(*tableOk), kb->c(0)), tableChunks, legacy);
  };
  // Convolutions with many columns (G = 1, static P >= 2 x NB: the large
  // early layers, whose im2col matrix is megabytes) pack B per workgroup and
  // K block into scratch instead: the data stays in L2 and nothing is written
  // to memory. Their workgroups own all rows of a column block, at least 8
  // blocks where P allows (ResNet-50 stage 2, P = 784: 7 blocks of 128; its
  // 3x3 convs had materialized a 3.6 MB im2col, which does not get faster on
  // 2 threads: stage 2 at 2 threads 8.75 -> 8.1 ms, the 256-channel 3x3 conv
  // of bench/suite.py 6.54 -> 6.23 ms at 1 thread, 3.60 -> 3.43 at 2). The
  // others materialize im2col: with few column blocks each would be packed
  // once per row block. When P is known only at run time
  // (symbolic H, W: exported vision models), both are planned and a guard
  // register picks one per run (not inside a run-time loop, whose first
  // dispatch's guard means "skip the loop"), and the im2col matrix takes
  // arena space only when it is used: MobileNetV3-small (symbolic H, W) at
  // 224 x 224 needs a 0.63 MB arena instead of 1.76 MB (its stem conv runs
  // as fast either way: with 3 input channels the packing itself dominates).
  std::optional<int64_t> staticP = sp.constValue(P);
  bool packAlways = G == 1 && staticP && *staticP >= 2 * s.nb && !channelLanes;
  bool packWhenLarge = G == 1 && !staticP && !ctx.inRunTimeLoop && !channelLanes;
  std::optional<Reg> largeP;
  if (packAlways || packWhenLarge) {
    GemmSpec packed = s;
    // At least 8 column blocks where P allows (workgroups own all rows).
    if (staticP) packed.nb = std::min(s.nb, std::max(s.nr, (*staticP + 8 * s.nr - 1) / (8 * s.nr) * s.nr));
    packed.bBuf = X.buffer;
    packed.bPacked = true;
    packed.bOffset = [](KernelBuilder &kb, Value) { return kb.c(0); };
    packed.extraBuf = posTable;
    std::optional<unsigned> tableSlot;
    if (posTable) tableSlot = 3 + (packed.biasBuf ? 1 : 0) + (packed.residualBuf ? 1 : 0);
    packed.packB = [=](KernelBuilder &kb, Value batch, Value k0, Value k1, Value n0, Value n1) {
      Value kLen = kb.sub(k1, k0);
      Value panelStride = kb.mul(kLen, kb.c(kNR));
      Value qEnd = kb.add(n0, kb.mul(kb.div(kb.add(kb.sub(n1, n0), kb.c(kNR - 1)), kb.c(kNR)), kb.c(kNR)));
      kb.forLoop(k0, k1, kb.c(1), [&](Value k) {
        writeColumns(kb, kb.add(kb.mul(batch, kb.c(Kdim)), k), kb.mul(kb.sub(k, k0), kb.c(kNR)), n0, panelStride,
                     n0, qEnd, /*wholeRows=*/false, tableSlot, kNR);
      });
    };
    size_t first = ctx.plan.dispatches.size();
    emitGemm(ctx, packed);
    if (packAlways) return success();
    largeP = sp.lt(sp.constant(4 * s.nb - 1), P); // P >= 4 x NB, 0 or 1
    for (size_t d = first; d < ctx.plan.dispatches.size(); ++d) ctx.plan.dispatches[d].guard = *largeP;
  }
  size_t firstMaterialized = ctx.plan.dispatches.size();
  // The matrix is NR-column panels, or for channel_lanes one row-major
  // [K, P rounded up to whole vectors] panel, read down its columns.
  const int64_t colPanel = channelLanes ? (*channelLanesP + kL - 1) / kL * kL : kNR;
  Reg panels = sp.ceilDiv(P, sp.constant(colPanel));
  Reg matFloats = sp.mul(panels, sp.constant(colPanel * Kdim));
  Reg colRows = sp.mul(s.batches, sp.constant(Kdim));
  Reg colBytes = sp.mul(sp.mul(s.batches, matFloats), sp.constant(4));
  // Planned two ways: the matrix takes arena space only in runs that use it.
  if (largeP) colBytes = sp.select(*largeP, sp.constant(0), colBytes);
  uint32_t col = ctx.newTransient(colBytes);
  {
    auto [groups, rowsPerGroup] = ctx.splitRows(colRows, P, 8192);
    auto kb = ctx.newKernel(s.name + " im2col");
    auto [begin, end] = kb->workgroupRange(kb->dim(colRows), kb->dim(rowsPerGroup));
    Value mat = kb->dim(matFloats), qEnd = kb->mul(kb->dim(panels), kb->c(colPanel));
    kb->forLoop(begin, end, kb->c(1), [&](Value r) {
      Value k = kb->rem(r, kb->c(Kdim)), ng = kb->div(r, kb->c(Kdim));
      writeColumns(*kb, r, kb->add(kb->mul(ng, mat), kb->mul(k, kb->c(colPanel))), kb->c(0), kb->c(colPanel * Kdim),
                   kb->c(0), qEnd, /*wholeRows=*/true, posTable ? std::optional<unsigned>(2) : std::nullopt, colPanel);
    });
    kb->finish();
    std::vector<uint32_t> bindings = {col, X.buffer};
    if (posTable) bindings.push_back(*posTable);
    ctx.addDispatch(*kb, bindings, groups, s.name + " im2col");
  }
  if (channelLanes) {
    s.aBuf = col;
    s.aKStride = colPanel;
    s.aOffset = [matFloats](KernelBuilder &kb, Value b) { return kb.mul(b, kb.dim(matFloats)); };
  } else {
    s.bBuf = col;
    s.bPacked = true;
    s.bOffset = [matFloats](KernelBuilder &kb, Value b) { return kb.mul(b, kb.dim(matFloats)); };
  }
  emitGemm(ctx, s);
  if (largeP) {
    Reg smallP = sp.eq(*largeP, sp.constant(0));
    for (size_t d = firstMaterialized; d < ctx.plan.dispatches.size(); ++d) ctx.plan.dispatches[d].guard = smallP;
  }
  return success();
}

} // namespace v4f
