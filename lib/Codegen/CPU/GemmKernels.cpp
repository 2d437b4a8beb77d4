//===- GemmKernels.cpp - the GEMM emitter and matmul -----------------------===//
//
// One GEMM emitter (GemmEmitter.h) serves MatMul and Conv (ConvKernels.cpp): C[M,N] = A[M,K] * B[K,N] per batch,
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
#include "GemmEmitter.h"
#include "KernelRegistry.h"
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

/// The smallest packed B (bytes per matrix) whose next chunks are
/// prefetched: a smaller one stays in cache from one run to the next, and
/// each prefetch is code in every tile variant.
constexpr int64_t kPrefetchMinBytes = 256 * 1024;
/// How many K steps ahead operands read in place are prefetched (see the
/// K loop of emitTile): 8 and 32 rows of B gained less than 16.
constexpr int64_t kUnpackedBAhead = 16, kStridedAAhead = GemmSpec::kTablePad;

struct TileState {
  Value aOff, bOff, cOff, biasOff, K, N;
  Value n0; // packB: the first column the scratch panels hold
  Value m0; // the workgroup's first row (transposed C: its scratch tile's origin)
  // Next-chunk prefetch: the row block's first row and row count, and how
  // far on (floats) the next panel's chunk of this K block starts.
  Value mFirst, blockRows, nextChunk;
  std::optional<int64_t> blockRowsConst;
};

/// The K block [k0, k1) a tile accumulates: the first starts from zero,
/// later ones from the partial sums in C; only the last applies the
/// epilogue.
struct KBlock {
  Value k0, k1, first, last;
};

/// Transposes 8 vectors of LANES (8 or 16) lanes, rows[r][j], in three
/// stages of 8 two-input shuffles. Stage `level` (groups of w = 1, 2, 4
/// rows): output h * 4 + q interleaves, w lanes at a time, half h of inputs
/// 2q and 2q + 1. Afterwards vector i holds LANES / 8 columns from
/// (4 (i % 2) + 2 (i / 2 % 2) + i / 4) * LANES / 8 on, each as its 8 rows in
/// order.
SmallVector<Value> transposeRows8(OpBuilder &b, Location loc, SmallVector<Value> cur, int64_t lanes) {
  for (int w = 1, level = 0; w < 8; w *= 2, ++level) {
    SmallVector<Value> next(8);
    const int64_t span = lanes >> (level + 1); // source lanes per half
    for (int q = 0; q < 4; ++q)
      for (int h = 0; h < 2; ++h) {
        SmallVector<int64_t> idx(lanes);
        for (int64_t t = 0; t < span; ++t)
          for (int e = 0; e < 2; ++e)
            for (int u = 0; u < w; ++u) idx[size_t((t * 2 + e) * w + u)] = e * lanes + (h * span + t) * w + u;
        next[size_t(h * 4 + q)] = b.create<vector::ShuffleOp>(loc, cur[2 * q], cur[2 * q + 1], idx);
      }
    cur = next;
  }
  return cur;
}

/// One register tile: rows [m, m + rows) by the NR columns from n, or by the
/// first `edgeCols` of them (the column edge: lane-masked loads of an
/// unpacked B, masked stores; packed B panels are zero-padded instead).
void emitTile(KernelBuilder &kb, const GemmSpec &s, const TileState &t, const KBlock &kblk, Value m, Value n, int rows,
              Value edgeCols) {
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
  SmallVector<Value> init =
      transposedC ? kb.ifYield(
                        kblk.first, accTypes, [&] { return SmallVector<Value>(rows * vecs, kb.cf(0.f, vt)); },
                        [&] {
                          SmallVector<Value> partial;
                          for (int r = 0; r < rows; ++r)
                            for (int v = 0; v < vecs; ++v)
                              partial.push_back(kb.load(vt, kb.scratch(), partialIndex(r, v)));
                          return partial;
                        })
                  : kb.ifYield(
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
    if (s.aKTable) {
      rowBase.push_back(kb.add(t.aOff, s.aRowBase(kb, row)));
    } else if (s.aKStride) {
      rowBase.push_back(kb.add(t.aOff, row));
    } else if (s.aPacked) {
      Value panel = kb.div(row, kb.c(s.mr));
      rowBase.push_back(kb.add(t.aOff, kb.add(kb.mul(panel, kb.mul(t.K, kb.c(s.mr))), kb.rem(row, kb.c(s.mr)))));
    } else {
      rowBase.push_back(kb.add(t.aOff, kb.mul(row, t.K)));
    }
  }
  // Row k of the tile's B columns is at bBase + k * bStep.
  Value bBase = s.bPacked ? kb.add(t.bOff, kb.mul(kb.div(n, kb.c(s.nr)), kb.mul(t.K, kb.c(s.nr)))) : kb.add(t.bOff, n);
  if (s.packB) // this K block's panels in scratch: (k1 - k0) x NR each, from column n0
    bBase = kb.sub(kb.mul(kb.div(kb.sub(n, t.n0), kb.c(s.nr)), kb.mul(kb.sub(kblk.k1, kblk.k0), kb.c(s.nr))),
                   kb.mul(kblk.k0, kb.c(s.nr)));
  Value bStep = s.bPacked ? kb.c(s.nr) : t.N;
  // Spread over the T = ceil(R / MR) row tiles of this panel, the next
  // chunk of packed B -- the next panel's K block, t.nextChunk floats on --
  // is prefetched into L2: tile j covers part j of T, NR / T floats per K
  // step. Its first row tile then finds its B in L2 instead of waiting on
  // DRAM: a batch-1 model reads each weight once per run, and a chunk's
  // first tile used to load it line by line (a 4 KB-ahead prefetch within
  // the panel's own stream, which this replaces, gained less; measurements:
  // bench/results/history.md, "Measurements behind code decisions").
  Value pfBase, pfStep;
  int64_t pfLines = s.nr / 16;
  if (s.prefetchB) {
    Value tilesV = kb.max(kb.div(kb.add(t.blockRows, kb.c(s.mr - 1)), kb.c(s.mr)), kb.c(1));
    Value j = kb.div(kb.sub(m, t.mFirst), kb.c(s.mr));
    Value chunk = kb.mul(kb.sub(kblk.k1, kblk.k0), kb.c(s.nr));
    pfBase = kb.add(kb.add(bBase, kb.mul(kblk.k0, kb.c(s.nr))), kb.add(t.nextChunk, kb.div(kb.mul(j, chunk), tilesV)));
    pfStep = kb.div(kb.c(s.nr), tilesV);
    if (t.blockRowsConst && *t.blockRowsConst > 0) {
      int64_t tiles = (*t.blockRowsConst + s.mr - 1) / s.mr;
      pfLines = std::max<int64_t>(1, (s.nr / tiles + 15) / 16);
    }
  }
  bool maskB = edgeCols && !s.bPacked;
  Value kTable = s.aKTable ? kb.binding(3 + (s.biasBuf ? 1 : 0) + (s.residualBuf ? 1 : 0)) : Value();
  auto acc = kb.forLoop(kblk.k0, kblk.k1, kb.c(1), init, [&](Value k, ValueRange a) -> SmallVector<Value> {
    Value bRow = kb.add(bBase, kb.mul(k, bStep));
    // A's offset of K row k: k * aStep, or the implicit conv's table entry.
    auto tableAt = [&](Value at) -> Value {
      return b.create<arith::ExtSIOp>(loc, b.getI64Type(), kb.load(b.getI32Type(), kTable, at));
    };
    Value kOffset = s.aKTable ? tableAt(k) : kb.mul(k, aStep);
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto prefetch = [&](Value base, Value at, unsigned locality) {
      b.create<LLVM::Prefetch>(loc, b.create<LLVM::GEPOp>(loc, ptrType, kb.f32(), base, ValueRange{at}), 0u, locality,
                               1u);
    };
    // The next chunk's prefetch into L2 (above), which replaced a 4 KB-ahead
    // prefetch within the panel's own stream.
    if (s.prefetchB)
      for (int64_t line = 0; line < pfLines; ++line)
        prefetch(B, kb.add(pfBase, kb.add(kb.mul(kb.sub(k, kblk.k0), pfStep), kb.c(line * 16))), 2u);
    // Operands read in place, not as packed panels, are prefetched into L1
    // a fixed number of K steps ahead: an unpacked B (a 1x1 conv's input,
    // an activation matmul operand) kUnpackedBAhead rows on, and a
    // channels-in-lanes conv's activation A (one input plane row per K
    // step) kStridedAAhead steps on. Both were usually written by the
    // previous dispatch, half of them by the other core, and plane rows of
    // 196 floats defeat the hardware prefetchers: MobileNetV2's depthwise ->
    // 1x1 384 -> 64 ran as fast on 2 threads as on 1 without the B prefetch
    // (measurements: bench/results/history.md, "Measurements behind code
    // decisions").
    if (!s.bPacked && !s.packB) {
      // Past this K block's last row, the block's first rows of the next
      // column panel, which the next tile of the row-tiles-outside order and
      // the next panel of the other order read first (ahead of the block
      // they went to rows nobody read soon: MobileNetV2's 32 -> 16 conv at
      // 112 x 112, K = 32, prefetched only its second half; measurements:
      // bench/results/history.md, "Measurements behind code decisions").
      // Prefetches do not fault past the buffer.
      Value kAhead = kb.add(k, kb.c(kUnpackedBAhead));
      Value wrapped = kb.add(kb.add(bBase, kb.c(s.nr)), kb.mul(kb.sub(kAhead, kb.sub(kblk.k1, kblk.k0)), bStep));
      Value ahead = kb.select(kb.cmp(arith::CmpIPredicate::slt, kAhead, kblk.k1),
                              kb.add(bRow, kb.mul(kb.c(kUnpackedBAhead), bStep)), wrapped);
      for (int64_t off = 0; off < s.nr + 15; off += 16) prefetch(B, kb.add(ahead, kb.c(std::min(off, s.nr - 1))), 3u);
    }
    if (s.aKStride || s.aKTable) {
      Value ahead =
          s.aKTable ? tableAt(kb.add(k, kb.c(kStridedAAhead))) : kb.mul(kb.add(k, kb.c(kStridedAAhead)), aStep);
      prefetch(A, kb.add(rowBase[0], ahead), 3u);
      if (rows > 1) prefetch(A, kb.add(rowBase[rows - 1], ahead), 3u);
    }
    SmallVector<Value> bv;
    for (int v = 0; v < vecs; ++v) {
      Value idx = kb.add(bRow, kb.c(v * kLanes));
      bv.push_back(maskB ? kb.maskedLoad(vt, B, idx, masks[v]) : kb.load(vt, B, idx));
    }
    SmallVector<Value> next;
    for (int r = 0; r < rows; ++r) {
      Value av = kb.splat(kb.load(kb.f32(), A, kb.add(rowBase[r], kOffset)), kLanes);
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
      Value allLanes =
          b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(VectorType::get({kLanes}, b.getI1Type()), true));
      SmallVector<Value> laneOffsets;
      for (int v = 0; v < vecs; ++v) {
        SmallVector<int32_t> offs(kLanes);
        for (int64_t j = 0; j < kLanes; ++j) offs[j] = int32_t((v * kLanes + j) * *s.cColStride);
        laneOffsets.push_back(b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(i32v, ArrayRef<int32_t>(offs))));
      }
      Value colBase = kb.add(t.cOff, kb.mul(n, kb.c(*s.cColStride)));
      auto addBias = [&](Value val, int v) {
        if (s.biasMode == BiasMode::PerColumn)
          val =
              b.create<arith::AddFOp>(loc, val, load(kb.binding(3), kb.add(t.biasOff, kb.add(n, kb.c(v * kLanes))), v));
        return val;
      };
      if (!edgeCols && (kLanes == 8 || kLanes == 16)) {
        // Whole column vectors: transpose the tile in registers, 8 rows at a
        // time, and store each output channel's 8 pixels (contiguous in C)
        // with one 8-lane store: 24 two-input shuffles per 8 x LANES block
        // where the scatters cost one element store per lane.
        auto v8 = kb.vec(8);
        for (int g = 0; g < rows; g += 8) {
          const int count = std::min(rows - g, 8);
          for (int v = 0; v < vecs; ++v) {
            SmallVector<Value> cur;
            for (int r = 0; r < 8; ++r)
              cur.push_back(g + r < rows ? addBias(acc[(g + r) * vecs + v], v) : kb.cf(0.f, vt));
            cur = transposeRows8(b, loc, cur, kLanes);
            SmallVector<int64_t> lo(8), hi(8);
            for (int i = 0; i < 8; ++i) lo[i] = i, hi[i] = 8 + i;
            Value rowMask = count < 8 ? kb.laneMask(kb.c(count), 8) : Value();
            for (int i = 0; i < 8; ++i) {
              int64_t chan0 = (4 * (i % 2) + 2 * (i / 2 % 2) + i / 4) * (kLanes / 8);
              for (int64_t t = 0; t < kLanes / 8; ++t) {
                Value val = kLanes == 8
                                ? cur[i]
                                : b.create<vector::ShuffleOp>(loc, cur[i], cur[i], t == 0 ? lo : hi).getResult();
                Value at = kb.add(colBase, kb.add(kb.c((v * kLanes + chan0 + t) * *s.cColStride), kb.add(m, kb.c(g))));
                if (s.residualBuf) {
                  Value R = kb.binding(s.biasBuf ? 4 : 3);
                  val = b.create<arith::AddFOp>(loc, val,
                                                rowMask ? kb.maskedLoad(v8, R, at, rowMask) : kb.load(v8, R, at));
                }
                val = applyActivation(kb, val, s.act, s.alpha, s.beta);
                if (rowMask)
                  kb.maskedStore(val, C, at, rowMask);
                else
                  kb.store(val, C, at);
              }
            }
          }
        }
        return;
      }
      for (int r = 0; r < rows; ++r) {
        Value at = kb.add(colBase, kb.add(m, kb.c(r)));
        for (int v = 0; v < vecs; ++v) {
          Value mask = edgeCols ? masks[v] : allLanes;
          auto ptrsIn = [&](Value base) {
            Value row = b.create<LLVM::GEPOp>(loc, ptrType, kb.f32(), base, ValueRange{at});
            return b.create<LLVM::GEPOp>(loc, ptrVecType, kb.f32(), row, ValueRange{laneOffsets[v]}).getResult();
          };
          Value val = addBias(acc[r * vecs + v], v);
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

} // namespace

void emitGemm(CPUKernelContext &ctx, const GemmSpec &spec) {
  auto &sp = ctx.shapes;
  GemmSpec s = spec;
  if (s.bPacked && !s.packB) {
    std::optional<int64_t> K = sp.constValue(s.K), N = sp.constValue(s.N);
    s.prefetchB = !K || !N || *K * *N * 4 >= kPrefetchMinBytes;
  }
  const bool rowTilesOuter = s.rowTilesOuter && !s.bPacked && !s.packB && !s.cColStride;
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
  // kMinWorkgroups / 2 of them. With several row blocks every row block
  // re-reads its columns' weights instead, and the split above stays (whole
  // NB column blocks ran stage 3 slower; measurements:
  // bench/results/history.md, "Measurements behind code decisions").
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
  if (std::optional<int64_t> Mc = sp.constValue(s.M)) t.blockRowsConst = std::min(*Mc, kMB);
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
  // tiles inside, or the other way round (GemmSpec::rowTilesOuter).
  kb->forLoop(kb->c(0), kEnd, kStep, [&](Value k0) {
    KBlock blk;
    blk.k0 = k0;
    blk.k1 = kb->min(kb->add(k0, kStep), t.K);
    blk.first = kb->cmp(arith::CmpIPredicate::eq, k0, kb->c(0));
    blk.last = kb->cmp(arith::CmpIPredicate::sge, kb->add(k0, kStep), t.K);
    // Rows [m0, m1) of the workgroup's columns for this K block.
    auto rowBlock = [&](Value m0, Value m1) {
      Value mFull = kb->add(m0, kb->mul(kb->div(kb->sub(m1, m0), kb->c(kMR)), kb->c(kMR)));
      t.mFirst = m0;
      t.blockRows = kb->sub(m1, m0);
      // fn(m, rows) for each row tile of [m0, m1): whole MR tiles, then a
      // tile per set bit of the remainder (tile `rows` after the larger
      // tiles' rows).
      auto rowTiles = [&](const std::function<void(Value, int)> &fn) {
        kb->forLoop(m0, mFull, kb->c(kMR), [&](Value m) { fn(m, int(kMR)); });
        Value rest = kb->sub(m1, mFull);
        for (int64_t rows : edgeRows) {
          Value bit = kb->b.create<arith::AndIOp>(kb->loc, rest, kb->c(rows));
          Value before = kb->b.create<arith::AndIOp>(kb->loc, rest, kb->c(~(2 * rows - 1)));
          kb->ifThen(kb->cmp(arith::CmpIPredicate::ne, bit, kb->c(0)), [&] { fn(kb->add(mFull, before), int(rows)); });
        }
      };
      // fn(n, edgeCols) for each column panel: whole NR panels, then the
      // edge (its column count; a null Value for whole panels).
      auto panels = [&](const std::function<void(Value, Value)> &fn) {
        kb->forLoop(n0, nFull, kb->c(kNR), [&](Value n) { fn(n, Value()); });
        kb->ifThen(kb->cmp(arith::CmpIPredicate::slt, nFull, n1), [&] { fn(nFull, kb->sub(n1, nFull)); });
      };
      if (rowTilesOuter) // GemmSpec::rowTilesOuter
        return rowTiles([&](Value m, int rows) {
          panels([&](Value n, Value edgeCols) { emitTile(*kb, s, t, blk, m, n, rows, edgeCols); });
        });
      panels([&](Value n, Value edgeCols) {
        if (s.prefetchB) {
          // The next panel of this workgroup, or after its last panel the
          // first panel's next K block.
          Value panelFloats = kb->mul(t.K, kb->c(kNR));
          Value nNext = kb->add(n, kb->c(kNR));
          Value back = kb->add(kb->mul(kb->div(kb->sub(n0, n), kb->c(kNR)), panelFloats), kb->mul(kStep, kb->c(kNR)));
          t.nextChunk = kb->select(kb->cmp(arith::CmpIPredicate::slt, nNext, n1), panelFloats, back);
        }
        rowTiles([&](Value m, int rows) { emitTile(*kb, s, t, blk, m, n, rows, edgeCols); });
      });
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
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2), sp.mul(sp.mul(s.batches, s.M), sp.mul(s.N, s.K)));
}

/// Reads the op's #v4f.gemm_tiling into `s`.
LogicalResult readTiling(Operation *op, GemmSpec &s) {
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  s.mr = tiling.getMr();
  s.nr = tiling.getNr();
  s.lanes = tiling.getLanes();
  s.mb = tiling.getMb();
  s.nb = tiling.getNb();
  s.kc = tiling.getKc();
  return success();
}

LogicalResult emitMatMul(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
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

void registerGemmKernels(CPUKernelRegistry &registry) { registry.addOpKernel<MatMulOp>(emitMatMul); }

} // namespace v4f
