//===- WinogradConvKernels.cpp - 3x3 stride-1 convs by Winograd -----------===//
//
// A conv marked v4f.conv_algorithm = "winograd_2x2" or "winograd_4x4"
// (v4f-select-cpu-strategy: 3x3, stride 1, no dilation, one group, float,
// constant weight, static planes) computes each m x m block of output
// pixels (a tile) from the (m + 2) x (m + 2) input block under it as
//
//   Y = A^T [ sum_c (G g_oc,c G^T) .* (B^T d_c B) ] A
//
// (Winograd's minimal filtering, F(m x m, 3x3); Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks"): (m + 2)^2 products per
// tile, channel pair and output channel instead of the 9 m^2 of the direct
// conv (16 against 36 for m = 2, 36 against 144 for m = 4) — the products
// summed over channels are (m + 2)^2 GEMMs M_xi[OC, tiles] = U_xi[OC, C]
// V_xi[C, tiles]. F(2x2)'s transforms use 0, +-1 and +-1/2; F(4x4)'s the
// points 0, +-1, +-2 (constants up to 8 and 1/24), whose rounding errors are
// about 10x larger: e2e `winograd_convs` sees 5e-5 against 3e-6 on outputs
// of magnitude 1-5, ResNet-50 stays within 1e-6 of ORT relative to its
// largest output.
//
// U = G g G^T is computed at compile time (the weight is stored only
// transformed: [OC / MR][(m + 2)^2][C][MR] floats, the last output-channel
// tile zero-padded), so the kernel reads MR consecutive floats per (xi,
// channel) and one output-channel tile's U is one contiguous run. Or, for
// "winograd_4x4_direct_weights", the artifact keeps the direct weight
// (packed per output-channel tile, 9 / 36 of U's bytes) and each work item
// transforms it per output-channel tile, a chunk of channels at a time into
// its scratch (U' = G' g G'^T with G = diag(1 / s) G' of small integers; the
// scales s fold into A^T), accumulating each chunk while it is in L1 and
// prefetching the next chunk's weight meanwhile: for few tiles (small
// planes, one or two tile blocks) U streamed from memory cost more than the
// transform, and the artifact shrinks (ResNet-50's stage 3: 18 MB). The cost
// model chooses (SelectStrategy.cpp; measurements: bench/results/history.md,
// "Measurements behind code decisions").
//
// A work item is one image, a block of NV x LANES tiles (tiles numbered
// row-major over the image's ceil(OH / m) x ceil(OW / m) tiles, one tile
// per vector lane) and a group of output-channel tiles:
//
//   1. input transform: per channel, B^T d B of every lane's tile, stored as
//      V[xi][c][lanes]. The L tiles of a vector span a few tile rows
//      (segments); per segment and input row, two masked loads of m L
//      floats (at the segment's first tile and m floats further) hold every
//      lane's m + 2 inputs as elements q of each lane's m (strided
//      shuffles) — lanes outside the segment, the zero padding and tiles
//      past the image read 0, so the segments' values add up. (Gathers of
//      the inputs cost more on the Xeon: LLVM splits them by 64-bit
//      addresses.) With a single output-channel group the work item
//      transforms into its scratch; with several (few tile blocks: small
//      planes), a separate "input transform" dispatch writes every block's
//      V once into a transient the groups share.
//   2. per output-channel tile of MR channels and per xi, an MR x NV-vector
//      register tile accumulates U_xi[oc, c] (broadcast) x V_xi[c, lanes]
//      over the channels, stored to M[xi][MR][lanes] in scratch;
//   3. output transform: per channel of the tile, A^T m A from the M
//      vectors, bias; per output row, the m pixels of every lane's tile
//      interleaved into m L floats, the residual added (masked loads),
//      activation, masked stores per segment (ragged edges masked).
//
// Against the direct conv: docs/design/cpu-kernels.md ("Kernel
// generation"); the cost model that chooses m: SelectStrategy.cpp.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

namespace {
/// The transforms of F(m x m, 3 x 3), alpha = m + 2 (interpolation points
/// 0, 1, -1 and, for m = 4, 2, -2; the last row the point at infinity).
struct WinogradMatrices {
  int64_t m, alpha;
  double BT[6][6], G[6][3], AT[4][6];
};
WinogradMatrices matricesFor(int64_t m) {
  if (m == 2)
    return {2,
            4,
            {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
            {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
            {{1, 1, 1, 0}, {0, 1, -1, -1}}};
  return {4,
          6,
          {{4, 0, -5, 0, 1, 0},
           {0, -4, -4, 1, 1, 0},
           {0, 4, -4, -1, 1, 0},
           {0, -2, -1, 2, 1, 0},
           {0, 2, -1, -2, 1, 0},
           {0, 4, 0, -5, 0, 1}},
          {{1.0 / 4, 0, 0},
           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
           {1.0 / 24, 1.0 / 12, 1.0 / 6},
           {1.0 / 24, -1.0 / 12, 1.0 / 6},
           {0, 0, 1}},
          {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
}
} // namespace

WinogradShape winogradShape(ConvOp conv, GemmTilingAttr tiling, int64_t tile) {
  WinogradShape w;
  auto yShape = conv.getType().getShape();
  w.tile = tile;
  w.lanes = tiling.getLanes();
  w.mr = tiling.getMr();
  w.tileRows = (yShape[2] + tile - 1) / tile;
  w.tileCols = (yShape[3] + tile - 1) / tile;
  w.tiles = w.tileRows * w.tileCols;
  w.vectors = std::clamp<int64_t>((w.tiles + w.lanes - 1) / w.lanes, 1, tiling.getNr() / w.lanes);
  w.tileBlocks = (w.tiles + w.vectors * w.lanes - 1) / (w.vectors * w.lanes);
  w.lastVectors = (w.tiles - (w.tileBlocks - 1) * w.vectors * w.lanes + w.lanes - 1) / w.lanes;
  // L consecutive tiles starting anywhere in a row reach up to this many rows.
  w.segments = std::min<int64_t>((w.tileCols + w.lanes - 2) / w.tileCols + 1, w.tileRows);
  int64_t OC = conv.getWeight().getType().getDimSize(0);
  w.ocTiles = (OC + w.mr - 1) / w.mr;
  // At least 8 items per image: small planes (a few tile blocks) split their
  // output channels instead. Not with 6 tile blocks or more, which balance
  // two threads alone: split channels share one input-transform dispatch,
  // whose transformed blocks then cross between the cores' caches, so a
  // second thread gains little on either; one group per block transforms
  // inline instead (measurements: bench/results/history.md, "Measurements
  // behind code decisions").
  w.ocGroups = w.tileBlocks >= 6 ? 1 : std::clamp<int64_t>((8 + w.tileBlocks - 1) / w.tileBlocks, 1, w.ocTiles);
  w.ocTilesPerGroup = (w.ocTiles + w.ocGroups - 1) / w.ocGroups;
  w.ocGroups = (w.ocTiles + w.ocTilesPerGroup - 1) / w.ocTilesPerGroup;
  int64_t C = conv.getWeight().getType().getDimSize(1);
  w.transformChannels = w.lanes % w.mr == 0 && C % (w.lanes / w.mr) == 0 ? w.lanes / w.mr : 1;
  return w;
}

llvm::StringRef winogradAlgorithm(int64_t tile, bool directWeights) {
  if (tile == 2) return "winograd_2x2";
  return directWeights ? "winograd_4x4_direct_weights" : "winograd_4x4";
}

std::optional<int64_t> winogradTileOf(llvm::StringRef algorithm) {
  if (algorithm == winogradAlgorithm(2, false)) return 2;
  if (algorithm == winogradAlgorithm(4, false) || algorithm == winogradAlgorithm(4, true)) return 4;
  return std::nullopt;
}

std::optional<int64_t> winogradTileOf(Operation *op) {
  auto algorithm = op->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
  return algorithm ? winogradTileOf(algorithm.getValue()) : std::nullopt;
}

bool winogradTransformsWeights(Operation *op) {
  auto algorithm = op->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
  return algorithm && algorithm.getValue() == winogradAlgorithm(4, true);
}

LogicalResult emitWinogradConv(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                               const TensorInfo &result) {
  auto conv = cast<ConvOp>(op);
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  std::optional<int64_t> tile = winogradTileOf(op);
  if (!tile || !winogradEligible(conv, tiling) || (winogradTransformsWeights(op) && *tile != 4))
    return op->emitOpError("is marked for Winograd but is not a float 3x3 stride-1 one-group conv with static "
                           "planes and a constant weight");
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0], &Wt = operands[1];
  if (!Wt.constant) return op->emitOpError("winograd: the weight is not a constant");
  auto xShape = conv.getInput().getType().getShape(), yShape = conv.getType().getShape();
  const int64_t C = xShape[1], H = xShape[2], W = xShape[3], OH = yShape[2], OW = yShape[3];
  const int64_t OC = conv.getWeight().getType().getDimSize(0);
  const int64_t padT = conv.getPads()[0], padL = conv.getPads()[1];
  const WinogradShape ws = winogradShape(conv, tiling, *tile);
  const WinogradMatrices wm = matricesFor(*tile);
  const int64_t m = wm.m, A = wm.alpha, A2 = A * A;
  const int64_t L = ws.lanes, MR = ws.mr, NV = ws.vectors, NVL = NV * L, TW = ws.tileCols, T = ws.tiles;
  const int64_t OCT = ws.ocTiles, OG = ws.ocGroups, TPG = ws.ocTilesPerGroup, TB = ws.tileBlocks;

  auto values = Wt.constant.getValues<float>();
  std::vector<float> weight(values.begin(), values.end()); // splats iterate every element
  // Direct weights: D[ocTile][c / CP][k][c % CP][i] = g[ocTile * MR + i][c][k]
  // (tap k = 3 kh + kw), CP channels per vector of VW = CP MR floats (CP =
  // LANES / MR where MR divides the lanes and CP divides C, otherwise 1), so
  // the kernel transforms CP channels of an output-channel tile per vector
  // and stores them in U's layout below ([xi][c][i], whose CP consecutive
  // channels are VW consecutive floats).
  const bool directWeights = winogradTransformsWeights(op);
  const int64_t CP = directWeights ? ws.transformChannels : 1, VW = CP * MR;
  auto directBuffer = [&] {
    return ctx.newConstant(size_t(OCT * C * 9 * MR) * sizeof(float), [&](uint8_t *out) {
      float *d = reinterpret_cast<float *>(out);
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t k = 0; k < 9; ++k)
            d[size_t((((oc / MR) * (C / CP) + c / CP) * 9 + k) * VW + (c % CP) * MR + oc % MR)] =
                weight[size_t((oc * C + c) * 9 + k)];
    });
  };
  // Otherwise U[ocTile][xi][c][i] = (G g G^T)[xi] of output channel
  // ocTile * MR + i, transformed here.
  auto transformedBuffer = [&] {
    return ctx.newConstant(size_t(A2 * OCT * C * MR) * sizeof(float), [&](uint8_t *out) {
      float *u = reinterpret_cast<float *>(out);
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t c = 0; c < C; ++c) {
          const float *g = &weight[size_t((oc * C + c) * 9)];
          double gg[6][3]; // G g
          for (int64_t i = 0; i < A; ++i)
            for (int j = 0; j < 3; ++j) gg[i][j] = wm.G[i][0] * g[j] + wm.G[i][1] * g[3 + j] + wm.G[i][2] * g[6 + j];
          for (int64_t i = 0; i < A; ++i)
            for (int64_t j = 0; j < A; ++j) {
              double v = gg[i][0] * wm.G[j][0] + gg[i][1] * wm.G[j][1] + gg[i][2] * wm.G[j][2];
              u[((size_t(oc / MR) * A2 + i * A + j) * C + c) * MR + oc % MR] = float(v);
            }
        }
    });
  };
  uint32_t uBuffer = directWeights ? directBuffer() : transformedBuffer();

  std::vector<uint32_t> bindings = {result.buffer, X.buffer, uBuffer};
  const auto [biasSlot, residualSlot] = bindConvEpilogue(conv, operands, bindings);
  std::optional<unsigned> vSlot;
  const std::string act = conv.getActivation().str();
  const float alpha = conv.getActAlpha().convertToFloat(), beta = conv.getActBeta().convertToFloat();
  // V's planes (one per xi) are C x NVL floats apart plus one cache line
  // (no 4 KB-multiple strides between the stores of a transform).
  const int64_t vPlane = C * NVL + 16, vBlock = A2 * vPlane;
  const int64_t S = ws.segments;
  // With output-channel groups, the input transform is a dispatch of its
  // own (every tile block's V once, into a transient the groups share);
  // otherwise each item transforms into its scratch.
  const bool shared = OG > 1;
  // A^T, its columns divided by the scales s of the kernel's weight
  // transform (below) when it transforms the weight: G = diag(1 / s) G' with
  // G' of small integers, so the kernel's U' = G' g G'^T is U scaled by
  // s_i s_j at xi = (i, j), and A^T diag(1 / s) M' diag(1 / s) A = A^T M A.
  // (F(4x4) only: F(2x2)'s 16 / 9 larger transformed weight costs less to
  // stream than the transform, SelectStrategy.cpp.)
  double AT[4][6];
  const double scales[6] = {4, -6, -6, 24, 24, 1};
  for (int64_t a = 0; a < m; ++a)
    for (int64_t r = 0; r < A; ++r) AT[a][r] = wm.AT[a][r] / (directWeights ? scales[r] : 1.0);
  std::string name = dispatchName(op);
  using P = arith::CmpIPredicate;

  // Emission helpers over one kernel.
  struct Emitter {
    KernelBuilder &kb;
    OpBuilder &b;
    Location loc;
    int64_t L, m;
    Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
    Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
    Value land(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
    Value cmp(P p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y); }
    Value iadd(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
    /// Window vectors: m floats per lane.
    VectorType ivw() { return VectorType::get({m * L}, b.getI32Type()); }
    Value ciw(int64_t v) {
      return b.create<arith::ConstantOp>(loc, ivw(), DenseElementsAttr::get(ivw(), b.getI32IntegerAttr(int32_t(v))));
    }
    Value table(const std::function<int32_t(int64_t)> &f) {
      SmallVector<int32_t> v(size_t(m * L));
      for (int64_t i = 0; i < m * L; ++i) v[size_t(i)] = f(i);
      return b.create<arith::ConstantOp>(loc, ivw(), DenseElementsAttr::get(ivw(), ArrayRef<int32_t>(v)));
    }
    Value splatw(Value scalar64) {
      return b.create<vector::SplatOp>(loc, ivw(), b.create<arith::TruncIOp>(loc, b.getI32Type(), scalar64));
    }
    Value andScalar(Value mask, Value cond) {
      return land(mask, b.create<vector::SplatOp>(loc, llvm::cast<VectorType>(mask.getType()), cond));
    }
    Value shuffle(Value x, Value y, ArrayRef<int64_t> mask) { return b.create<vector::ShuffleOp>(loc, x, y, mask); }
    /// sum_i coef[i] * vals[i] (coefficients 0 skipped, +-1 as adds and
    /// subtractions, starting from a positive term where there is one).
    Value combine(ArrayRef<double> coef, ArrayRef<Value> vals) {
      Value acc;
      size_t first = coef.size();
      for (size_t i = 0; i < coef.size() && first == coef.size(); ++i)
        if (coef[i] > 0) first = i;
      auto term = [&](size_t i) {
        double c = coef[i];
        if (c == 0) return;
        if (!acc) {
          acc =
              c == 1 ? vals[i] : b.create<arith::MulFOp>(loc, kb.cf(float(c), vals[i].getType()), vals[i]).getResult();
        } else if (c == 1) {
          acc = add(acc, vals[i]);
        } else if (c == -1) {
          acc = sub(acc, vals[i]);
        } else {
          acc = b.create<vector::FMAOp>(loc, kb.cf(float(c), vals[i].getType()), vals[i], acc);
        }
      };
      if (first < coef.size()) term(first);
      for (size_t i = 0; i < coef.size(); ++i)
        if (i != first) term(i);
      return acc ? acc : kb.cf(0.f, vals[0].getType());
    }
  };
  // Lane i of a window of m L floats holds elements m i .. m i + m - 1:
  // `strided[q]` picks element q of every lane.
  SmallVector<SmallVector<int64_t>> strided(m);
  for (int64_t q = 0; q < m; ++q)
    for (int64_t i = 0; i < L; ++i) strided[q].push_back(m * i + q);
  // Interleaving m vectors into a window: pairs (x, y) -> [x0 y0 x1 y1 ..].
  auto interleaveIdx = [](int64_t n) {
    SmallVector<int64_t> idx(2 * n);
    for (int64_t i = 0; i < n; ++i) idx[2 * i] = i, idx[2 * i + 1] = n + i;
    return idx;
  };

  // Per vector v of tile block `tb` and segment (a tile row the vector's
  // tiles reach): the window's offset in a plane and the masks of its A
  // input rows' two windows (lane i of a segment reads window columns
  // m i .. m i + m + 1: element q < m of each lane of the window and element
  // q - m of the window m floats further; lanes outside the segment and the
  // zero padding read 0, so the segments add up), and the offset and masks
  // of its m output rows.
  struct Segment {
    Value inAt, outAt;
    Value inMask[6][2], outMask[4];
  };
  auto segmentsOf = [&](Emitter &e, Value tb) {
    KernelBuilder &kb = e.kb;
    Value jv = e.table([](int64_t i) { return int32_t(i); });
    Value lanev = e.table([m](int64_t i) { return int32_t(i / m); });
    auto inRange = [&](Value v, int64_t hi) { return e.land(e.cmp(P::sge, v, e.ciw(0)), e.cmp(P::slt, v, e.ciw(hi))); };
    SmallVector<SmallVector<Segment>> segs(NV);
    for (int64_t v = 0; v < NV; ++v) {
      Value t0 = kb.add(kb.mul(tb, kb.c(NVL)), kb.c(v * L));
      Value ty0 = kb.div(t0, kb.c(TW));
      for (int64_t sg = 0; sg < S; ++sg) {
        Segment seg;
        Value ty = kb.add(ty0, kb.c(sg));
        Value x0 = kb.sub(t0, kb.mul(ty, kb.c(TW))); // tx of lane 0 (may be < 0 or >= TW)
        Value tx = e.iadd(e.splatw(x0), lanev);
        Value laneOk = e.land(e.land(e.cmp(P::sge, tx, e.ciw(0)), e.cmp(P::slt, tx, e.ciw(TW))),
                              e.cmp(P::slt, e.iadd(e.splatw(t0), lanev), e.ciw(T)));
        Value iy = kb.sub(kb.mul(ty, kb.c(m)), kb.c(padT));
        Value ix = kb.sub(kb.mul(x0, kb.c(m)), kb.c(padL));
        seg.inAt = kb.add(kb.mul(iy, kb.c(W)), ix);
        for (int o = 0; o < 2; ++o) {
          Value colOk = e.land(laneOk, inRange(e.iadd(e.splatw(kb.add(ix, kb.c(m * o))), jv), W));
          for (int64_t r = 0; r < A; ++r) {
            Value y = kb.add(iy, kb.c(r));
            seg.inMask[r][o] = e.andScalar(colOk, e.land(kb.cmp(P::sge, y, kb.c(0)), kb.cmp(P::slt, y, kb.c(H))));
          }
        }
        Value oy = kb.mul(ty, kb.c(m)), ox = kb.mul(x0, kb.c(m));
        seg.outAt = kb.add(kb.mul(oy, kb.c(OW)), ox);
        Value outColOk = e.land(laneOk, e.cmp(P::slt, e.iadd(e.splatw(ox), jv), e.ciw(OW)));
        for (int64_t a = 0; a < m; ++a)
          seg.outMask[a] = e.andScalar(outColOk, kb.cmp(P::slt, kb.add(oy, kb.c(a)), kb.c(OH)));
        segs[v].push_back(seg);
      }
    }
    return segs;
  };
  // V[xi][c][lanes] = B^T d B for channels [c0, c1) of image `xImage`, into
  // `dst` at element `dstAt`, for the block's first `nv` vectors.
  auto transformInput = [&](Emitter &e, Value Xb, Value xImage, ArrayRef<SmallVector<Segment>> segs, Value c0, Value c1,
                            Value dst, Value dstAt, int64_t nv) {
    KernelBuilder &kb = e.kb;
    Type vtw = kb.vec(m * L);
    kb.forLoop(c0, c1, kb.c(1), [&](Value c) {
      Value plane = kb.add(xImage, kb.mul(c, kb.c(H * W)));
      for (int64_t v = 0; v < nv; ++v) {
        Value d[6][6];
        for (int64_t r = 0; r < A; ++r)
          for (int64_t sg = 0; sg < S; ++sg) {
            const Segment &seg = segs[size_t(v)][size_t(sg)];
            Value at = kb.add(plane, kb.add(seg.inAt, kb.c(r * W)));
            Value w[2] = {kb.maskedLoad(vtw, Xb, at, seg.inMask[r][0]),
                          kb.maskedLoad(vtw, Xb, kb.add(at, kb.c(m)), seg.inMask[r][1])};
            for (int64_t q = 0; q < A; ++q) {
              Value part = e.shuffle(w[q / m], w[q / m], strided[q % m]);
              d[r][q] = sg == 0 ? part : e.add(d[r][q], part);
            }
          }
        // B^T d, then (B^T d) B.
        Value t[6][6];
        for (int64_t i = 0; i < A; ++i)
          for (int64_t q = 0; q < A; ++q) {
            SmallVector<Value> col;
            for (int64_t r = 0; r < A; ++r) col.push_back(d[r][q]);
            t[i][q] = e.combine(ArrayRef<double>(wm.BT[i], A), col);
          }
        Value at = kb.add(dstAt, kb.add(kb.mul(c, kb.c(NVL)), kb.c(v * L)));
        for (int64_t i = 0; i < A; ++i)
          for (int64_t j = 0; j < A; ++j) {
            Value val = e.combine(ArrayRef<double>(wm.BT[j], A), ArrayRef<Value>(t[i], A));
            kb.store(val, dst, kb.add(at, kb.c((i * A + j) * vPlane)));
          }
      }
    });
  };

  // The last tile block holds the T - (TB - 1) NV L remaining tiles: it
  // runs only the vectors they fill (ResNet-50's stage 1: 196 tiles, 6
  // blocks of 32 and one of 4 -- one vector, not two: 7 equal work items
  // would split 4 / 3 between two threads).
  const int64_t lastNV = ws.lastVectors;
  auto forBlockVectors = [&](KernelBuilder &k, Value tb, const std::function<void(int64_t)> &body) {
    if (lastNV == NV) return body(NV);
    k.ifThenElse(
        k.cmp(P::eq, tb, k.c(TB - 1)), [&] { body(lastNV); }, [&] { body(NV); });
  };

  auto &spr = sp;
  if (shared) {
    // The input transform: items = image x tile block x chunk of channels.
    const int64_t CB = (C + 63) / 64, chunk = (C + CB - 1) / CB;
    uint32_t vBuffer = ctx.newTransient(spr.mul(X.dims[0], spr.constant(TB * vBlock * int64_t(sizeof(float)))));
    Reg vItems = spr.mul(X.dims[0], spr.constant(TB * CB));
    auto [vGroups, vPerGroup] = ctx.splitRows(vItems, spr.constant(A2 * chunk * NVL * S));
    auto kb = ctx.newKernel(name + " input transform");
    Emitter e{*kb, kb->b, kb->loc, L, m};
    Value Vt = kb->binding(0), Xb = kb->binding(1);
    auto [begin, end] = kb->workgroupRange(kb->dim(vItems), kb->dim(vPerGroup));
    kb->forLoop(begin, end, kb->c(1), [&](Value item) {
      Value cb = kb->rem(item, kb->c(CB)), block = kb->div(item, kb->c(CB));
      Value tb = kb->rem(block, kb->c(TB)), n = kb->div(block, kb->c(TB));
      auto segs = segmentsOf(e, tb);
      Value c0 = kb->mul(cb, kb->c(chunk)), c1 = kb->min(kb->add(c0, kb->c(chunk)), kb->c(C));
      forBlockVectors(*kb, tb, [&](int64_t nv) {
        transformInput(e, Xb, kb->mul(n, kb->c(C * H * W)), segs, c0, c1, Vt, kb->mul(block, kb->c(vBlock)), nv);
      });
    });
    kb->finish();
    ctx.addDispatch(*kb, {vBuffer, X.buffer}, vGroups, name + " input transform");
    vSlot = bindings.size();
    bindings.push_back(vBuffer);
  }

  Reg items = spr.mul(X.dims[0], spr.constant(TB * OG));
  auto [groups, perGroup] = ctx.splitRows(items, spr.constant(A2 * C * NVL * TPG * MR));
  auto kb = ctx.newKernel(name);
  Emitter e{*kb, kb->b, kb->loc, L, m};
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), vtw = kb->vec(m * L), f32 = kb->f32();
  Value Out = kb->binding(0), Xb = kb->binding(1), U = kb->binding(2), scratch = kb->scratch();
  const int64_t mBase = shared ? 0 : vBlock; // M after V in the scratch
  // Then U' of a chunk of CC channels (direct weights), about half of L1
  // (the tiling's K block of NR columns), its planes one cache line further
  // apart than CC MR floats, like V's (a 4 KB-multiple stride between the
  // transform's 36 stores per vector made them conflict in L1).
  const int64_t CC = std::min(C, std::max<int64_t>(1, tiling.getKc() * tiling.getNr() / (A2 * VW)) * CP);
  const int64_t uBase = mBase + A2 * MR * NVL, uPlane = CC * MR + 16;
  const int64_t PF = (CC * 9 * MR + A2 * 16 - 1) / (A2 * 16); // cache lines prefetched per xi
  const int64_t scratchFloats = uBase + (directWeights ? A2 * uPlane : 0);
  Value zero = kb->cf(0.f, vt);
  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value og = kb->rem(item, kb->c(OG)), block = kb->div(item, kb->c(OG));
    Value tb = kb->rem(block, kb->c(TB)), n = kb->div(block, kb->c(TB));
    forBlockVectors(*kb, tb, [&](int64_t nv) {
      Value yImage = kb->mul(n, kb->c(OC * OH * OW));
      auto segs = segmentsOf(e, tb);
      // 1. V of this tile block: the shared transient's, or transformed here.
      Value V = scratch, vBase = kb->c(0);
      if (shared) {
        V = kb->binding(*vSlot);
        vBase = kb->mul(block, kb->c(vBlock));
      } else {
        transformInput(e, Xb, kb->mul(n, kb->c(C * H * W)), segs, kb->c(0), kb->c(C), scratch, kb->c(0), nv);
      }

      // 2 + 3, per output-channel tile of the group.
      Value tile0 = kb->mul(og, kb->c(TPG));
      Value tile1 = kb->min(kb->add(tile0, kb->c(TPG)), kb->c(OCT));
      kb->forLoop(tile0, tile1, kb->c(1), [&](Value ocTile) {
        // M[xi][i][lanes] = sum_c U[oc_i][xi][c] V[xi][c][lanes] over the
        // channels [c0, c1) (U's plane of xi at uRow0 + xi * uStride, channel
        // c at (c - cOrigin) * MR), an MR x NV register tile per xi, added to
        // M unless `first`.
        auto accumulate = [&](Value Ub, Value uRow0, int64_t uStride, Value c0, Value c1, Value cOrigin, bool first,
                              Value prefetchAt = Value()) {
          kb->forLoop(kb->c(0), kb->c(A2), kb->c(1), [&](Value xi) {
            if (prefetchAt) // the next chunk's direct weights, PF lines per xi
              for (int64_t line = 0; line < PF; ++line) {
                Value at = kb->add(prefetchAt, kb->add(kb->mul(xi, kb->c(PF * 16)), kb->c(line * 16)));
                auto ptr = LLVM::LLVMPointerType::get(b.getContext());
                b.create<LLVM::Prefetch>(loc, b.create<LLVM::GEPOp>(loc, ptr, f32, U, ValueRange{at}), 0u, 2u, 1u);
              }
            Value vRow = kb->add(vBase, kb->mul(xi, kb->c(vPlane)));
            Value uRow = kb->add(uRow0, kb->mul(xi, kb->c(uStride)));
            Value mAt = kb->add(kb->c(mBase), kb->mul(xi, kb->c(MR * NVL)));
            SmallVector<Value> init;
            for (int64_t i = 0; i < MR; ++i)
              for (int64_t v = 0; v < nv; ++v)
                init.push_back(first ? zero : kb->load(vt, scratch, kb->add(mAt, kb->c(i * NVL + v * L))));
            auto acc = kb->forLoop(c0, c1, kb->c(1), init, [&](Value c, ValueRange a) {
              SmallVector<Value> xv;
              Value vAt = kb->add(vRow, kb->mul(c, kb->c(NVL)));
              for (int64_t v = 0; v < nv; ++v) xv.push_back(kb->load(vt, V, kb->add(vAt, kb->c(v * L))));
              Value uAt = kb->add(uRow, kb->mul(kb->sub(c, cOrigin), kb->c(MR)));
              SmallVector<Value> nextAcc;
              for (int64_t i = 0; i < MR; ++i) {
                Value u = kb->splat(kb->load(f32, Ub, kb->add(uAt, kb->c(i))), L);
                for (int64_t v = 0; v < nv; ++v)
                  nextAcc.push_back(b.create<vector::FMAOp>(loc, u, xv[size_t(v)], a[size_t(i * nv + v)]));
              }
              return nextAcc;
            });
            for (int64_t i = 0; i < MR; ++i)
              for (int64_t v = 0; v < nv; ++v)
                kb->store(acc[size_t(i * nv + v)], scratch, kb->add(mAt, kb->c(i * NVL + v * L)));
          });
        };
        if (!directWeights) {
          accumulate(U, kb->mul(ocTile, kb->c(A2 * C * MR)), C * MR, kb->c(0), kb->c(C), kb->c(0), true);
        } else {
          // The weight's transform, U'[xi][c - c0][i] = (G' g G'^T)[xi] of the
          // tile's channels [c0, c1) into the scratch, CP channels per vector
          // of VW floats (per column of g the 3-tap transform by G', then per
          // row), a chunk of CC channels at a time, each accumulated while in
          // L1 (U' of all channels written to L2 and read back cost a large
          // share of the conv).
          Type vw = kb->vec(VW);
          auto taps = [&](Value g0, Value g1, Value g2) {
            // G' = [1 0 0; 1 1 1; 1 -1 1; 1 2 4; 1 -2 4; 0 0 1].
            Value t = e.add(g0, g2), u = b.create<vector::FMAOp>(loc, kb->cf(4.f, vw), g2, g0), v = e.add(g1, g1);
            return SmallVector<Value, 6>{g0, e.add(t, g1), e.sub(t, g1), e.add(u, v), e.sub(u, v), g2};
          };
          auto chunk = [&](Value c0, bool first) {
            Value c1 = kb->min(kb->add(c0, kb->c(CC)), kb->c(C));
            kb->forLoop(kb->div(c0, kb->c(CP)), kb->div(c1, kb->c(CP)), kb->c(1), [&](Value cp) {
              Value at = kb->mul(kb->add(kb->mul(ocTile, kb->c(C / CP)), cp), kb->c(9 * VW));
              Value g[9];
              for (int64_t k = 0; k < 9; ++k) g[k] = kb->load(vw, U, kb->add(at, kb->c(k * VW)));
              SmallVector<Value, 6> col[3];
              for (int64_t t = 0; t < 3; ++t) col[t] = taps(g[t], g[3 + t], g[6 + t]);
              Value dst = kb->add(kb->c(uBase), kb->mul(kb->sub(cp, kb->div(c0, kb->c(CP))), kb->c(VW)));
              for (int64_t i = 0; i < A; ++i) {
                SmallVector<Value, 6> row = taps(col[0][size_t(i)], col[1][size_t(i)], col[2][size_t(i)]);
                for (int64_t j = 0; j < A; ++j)
                  kb->store(row[size_t(j)], scratch, kb->add(dst, kb->c((i * A + j) * uPlane)));
              }
            });
            // While the chunk accumulates, the next chunk's direct weights
            // (CC 9 MR floats on; after a tile's last chunk the next tile's
            // first) are prefetched into L2, so the transform, which reads
            // them in a burst, finds them there instead of in memory. (Past
            // the buffer's end for the last tile: prefetches do not fault.)
            Value next = kb->mul(kb->add(kb->mul(ocTile, kb->c(C / CP)), kb->div(c1, kb->c(CP))), kb->c(9 * VW));
            accumulate(scratch, kb->c(uBase), uPlane, c0, c1, c0, first, next);
          };
          chunk(kb->c(0), true);
          if (CC < C) kb->forLoop(kb->c(CC), kb->c(C), kb->c(CC), [&](Value c0) { chunk(c0, false); });
        }
        // Y = A^T m A per output channel of the tile, bias, residual,
        // activation; output row m ty + a of each segment holds lane i's m
        // pixels at window columns m i .. m i + m - 1.
        Value oc0 = kb->mul(ocTile, kb->c(MR));
        kb->forLoop(kb->c(0), kb->min(kb->c(MR), kb->sub(kb->c(OC), oc0)), kb->c(1), [&](Value i) {
          Value oc = kb->add(oc0, i);
          Value bias = biasSlot ? kb->splat(kb->load(f32, kb->binding(*biasSlot), oc), L) : Value();
          Value plane = kb->add(yImage, kb->mul(oc, kb->c(OH * OW)));
          for (int64_t v = 0; v < nv; ++v) {
            Value mv[6][6];
            for (int64_t r = 0; r < A; ++r)
              for (int64_t j = 0; j < A; ++j)
                mv[r][j] = kb->load(vt, scratch,
                                    kb->add(kb->c(mBase + (r * A + j) * MR * NVL + v * L), kb->mul(i, kb->c(NVL))));
            Value s[4][6]; // A^T m
            for (int64_t a = 0; a < m; ++a)
              for (int64_t j = 0; j < A; ++j) {
                SmallVector<Value> col;
                for (int64_t r = 0; r < A; ++r) col.push_back(mv[r][j]);
                s[a][j] = e.combine(ArrayRef<double>(AT[a], A), col);
              }
            for (int64_t a = 0; a < m; ++a) {
              SmallVector<Value> y;
              for (int64_t q = 0; q < m; ++q) {
                Value val = e.combine(ArrayRef<double>(AT[q], A), ArrayRef<Value>(s[a], A));
                y.push_back(bias ? e.add(val, bias) : val);
              }
              // Interleave the m pixel vectors into the row window.
              Value row = m == 2 ? e.shuffle(y[0], y[1], interleaveIdx(L))
                                 : e.shuffle(e.shuffle(y[0], y[2], interleaveIdx(L)),
                                             e.shuffle(y[1], y[3], interleaveIdx(L)), interleaveIdx(2 * L));
              if (!residualSlot) row = applyActivation(*kb, row, act, alpha, beta);
              for (int64_t sg = 0; sg < S; ++sg) {
                const Segment &seg = segs[size_t(v)][size_t(sg)];
                Value at = kb->add(plane, kb->add(seg.outAt, kb->c(a * OW)));
                Value val = row;
                if (residualSlot)
                  val = applyActivation(*kb,
                                        e.add(val, kb->maskedLoad(vtw, kb->binding(*residualSlot), at, seg.outMask[a])),
                                        act, alpha, beta);
                kb->maskedStore(val, Out, at, seg.outMask[a]);
              }
            }
          }
        });
      });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name, spr.constant(scratchFloats * int64_t(sizeof(float))));
  // The direct conv's operation count, so the profile's GFLOP/s compare.
  ctx.plan.dispatches.back().flops = spr.mul(X.dims[0], spr.constant(2 * OC * C * 9 * OH * OW));
  return success();
}

} // namespace v4f
