//===- WinogradConvKernels.cpp - 3x3 stride-1 convs by Winograd F(2x2, 3x3) -===//
//
// A conv marked v4f.conv_algorithm = "winograd" (v4f-select-cpu-strategy:
// 3x3, stride 1, no dilation, one group, float, constant weight, static
// planes) computes each 2x2 block of output pixels (a tile) from the 4x4
// input block under it as
//
//   Y = A^T [ sum_c (G g_oc,c G^T) .* (B^T d_c B) ] A
//
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"): 16
// products per tile, channel pair and output channel instead of the 36 of
// the direct conv — the 16 element-wise products summed over channels are
// 16 GEMMs M_xi[OC, tiles] = U_xi[OC, C] V_xi[C, tiles], xi = 0..15.
//
// U = G g G^T is computed at compile time (the weight is stored only
// transformed: [16][OC / MR][C][MR] floats, the last output-channel tile
// zero-padded), so the kernel reads MR consecutive floats per (xi, channel).
//
// A work item is one image, a block of NV x LANES tiles (tiles numbered
// row-major over the image's ceil(OH / 2) x ceil(OW / 2) tiles, one tile
// per vector lane) and a group of output-channel tiles:
//
//   1. input transform: per channel, B^T d B of every lane's tile, stored as
//      V[xi][c][lanes] (16 C NV LANES floats: 128 KB for C = 64, NV = 2,
//      AVX-512). The L tiles of a vector span a few tile rows (segments);
//      per segment and input row, two masked loads of 2L floats (at the
//      segment's first tile and 2 floats further) hold every lane's 4
//      inputs in their even and odd lanes (two shuffles each) — lanes
//      outside the segment, the zero padding and tiles past the image read
//      0, so the segments' values add up. (Gathers of the 16 inputs cost
//      twice the time on the Xeon: LLVM splits them by 64-bit addresses.)
//      With a single output-channel group the work item transforms into its
//      scratch; with several (few tile blocks: small planes), a separate
//      "input transform" dispatch writes every block's V once into a
//      transient the groups share.
//   2. per output-channel tile of MR channels and per xi, an MR x NV-vector
//      register tile accumulates U_xi[oc, c] (broadcast) x V_xi[c, lanes]
//      over the channels, stored to M[xi][MR][lanes] in scratch;
//   3. output transform: per channel of the tile, A^T m A from the 16 M
//      vectors, bias; per output row, the two pixels of every lane's tile
//      interleaved into 2L floats, the residual added (masked loads),
//      activation, masked stores per segment (odd edges masked).
//
// Measured against the direct conv: docs/architecture.md ("Kernel
// generation"); the cost model that chooses it: SelectStrategy.cpp.
//
// F(2x2, 3x3)'s transforms use only 0, +-1 and +-1/2, so the result is as
// accurate as the direct conv's to within a few ulps of the sums (e2e
// `winograd_convs` compares against the reference at 1e-4).
//
//===----------------------------------------------------------------------===//
#include "DispatchContext.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

WinogradShape winogradShape(ConvOp conv, GemmTilingAttr tiling) {
  WinogradShape w;
  auto yShape = conv.getType().getShape();
  w.lanes = tiling.getLanes();
  w.mr = tiling.getMr();
  w.tileRows = (yShape[2] + 1) / 2;
  w.tileCols = (yShape[3] + 1) / 2;
  w.tiles = w.tileRows * w.tileCols;
  w.vectors = std::clamp<int64_t>((w.tiles + w.lanes - 1) / w.lanes, 1, tiling.getNr() / w.lanes);
  w.tileBlocks = (w.tiles + w.vectors * w.lanes - 1) / (w.vectors * w.lanes);
  // L consecutive tiles starting anywhere in a row reach up to this many rows.
  w.segments = std::min<int64_t>((w.tileCols + w.lanes - 2) / w.tileCols + 1, w.tileRows);
  int64_t OC = conv.getWeight().getType().getDimSize(0);
  w.ocTiles = (OC + w.mr - 1) / w.mr;
  // At least 8 items per image: small planes (one or two tile blocks) split
  // their output channels instead.
  w.ocGroups = std::clamp<int64_t>((8 + w.tileBlocks - 1) / w.tileBlocks, 1, w.ocTiles);
  w.ocTilesPerGroup = (w.ocTiles + w.ocGroups - 1) / w.ocGroups;
  w.ocGroups = (w.ocTiles + w.ocTilesPerGroup - 1) / w.ocTilesPerGroup;
  return w;
}

LogicalResult emitWinogradConv(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                               const TensorInfo &result) {
  auto conv = cast<ConvOp>(op);
  auto tiling = op->getAttrOfType<GemmTilingAttr>("v4f.tiling");
  if (!tiling) return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  if (!winogradEligible(conv, tiling))
    return op->emitOpError("is marked winograd but is not a float 3x3 stride-1 one-group conv with static planes "
                           "and a constant weight");
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0], &Wt = operands[1];
  if (!Wt.constant) return op->emitOpError("winograd: the weight is not a constant");
  auto xShape = conv.getInput().getType().getShape(), yShape = conv.getType().getShape();
  const int64_t C = xShape[1], H = xShape[2], W = xShape[3], OH = yShape[2], OW = yShape[3];
  const int64_t OC = conv.getWeight().getType().getDimSize(0);
  const int64_t padT = conv.getPads()[0], padL = conv.getPads()[1];
  const WinogradShape ws = winogradShape(conv, tiling);
  const int64_t L = ws.lanes, MR = ws.mr, NV = ws.vectors, NVL = NV * L, TW = ws.tileCols, T = ws.tiles;
  const int64_t OCT = ws.ocTiles, OG = ws.ocGroups, TPG = ws.ocTilesPerGroup, TB = ws.tileBlocks;

  // U[xi][ocTile][c][i] = (G g G^T)[xi] of output channel ocTile * MR + i.
  auto values = Wt.constant.getValues<float>();
  std::vector<float> weight(values.begin(), values.end());
  if (Wt.constant.isSplat()) weight.assign(size_t(OC * C * 9), Wt.constant.getSplatValue<float>());
  uint32_t uBuffer = ctx.newConstant(size_t(16 * OCT * C * MR) * sizeof(float), [&](uint8_t *out) {
    float *u = reinterpret_cast<float *>(out);
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t c = 0; c < C; ++c) {
        const float *g = &weight[size_t((oc * C + c) * 9)];
        double gg[4][3]; // G g
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 3; ++j) gg[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            double v = gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2];
            u[((size_t(i * 4 + j) * OCT + oc / MR) * C + c) * MR + oc % MR] = float(v);
          }
      }
  });

  std::vector<uint32_t> bindings = {result.buffer, X.buffer, uBuffer};
  const auto [biasSlot, residualSlot] = bindConvEpilogue(conv, operands, bindings);
  std::optional<unsigned> vSlot;
  const std::string act = conv.getActivation().str();
  const float alpha = conv.getActAlpha().convertToFloat(), beta = conv.getActBeta().convertToFloat();
  // V's planes (one per xi) are C x NVL floats apart plus one cache line
  // (no 4 KB-multiple strides between the 16 stores of a transform).
  const int64_t vPlane = C * NVL + 16, vBlock = 16 * vPlane;
  const int64_t S = ws.segments;
  // With output-channel groups, the input transform is a dispatch of its
  // own (every tile block's V once, into a transient the groups share);
  // otherwise each item transforms into its scratch.
  const bool shared = OG > 1;
  std::string name = dispatchName(op);
  using P = arith::CmpIPredicate;

  // Emission helpers over one kernel.
  struct Emitter {
    KernelBuilder &kb;
    OpBuilder &b;
    Location loc;
    int64_t L;
    Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
    Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
    Value land(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
    Value cmp(P p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y); }
    Value iadd(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
    VectorType ivt2() { return VectorType::get({2 * L}, b.getI32Type()); }
    Value ci2(int64_t v) {
      return b.create<arith::ConstantOp>(loc, ivt2(), DenseElementsAttr::get(ivt2(), b.getI32IntegerAttr(int32_t(v))));
    }
    Value table(const std::function<int32_t(int64_t)> &f) {
      SmallVector<int32_t> v(size_t(2 * L));
      for (int64_t i = 0; i < 2 * L; ++i) v[size_t(i)] = f(i);
      return b.create<arith::ConstantOp>(loc, ivt2(), DenseElementsAttr::get(ivt2(), ArrayRef<int32_t>(v)));
    }
    Value splat2(Value scalar64) {
      return b.create<vector::SplatOp>(loc, ivt2(), b.create<arith::TruncIOp>(loc, b.getI32Type(), scalar64));
    }
    Value andScalar(Value mask, Value cond) {
      return land(mask, b.create<vector::SplatOp>(loc, llvm::cast<VectorType>(mask.getType()), cond));
    }
    Value shuffle(Value x, Value y, ArrayRef<int64_t> m) { return b.create<vector::ShuffleOp>(loc, x, y, m); }
  };
  SmallVector<int64_t> even(L), odd(L), interleave(2 * L);
  for (int64_t i = 0; i < L; ++i) even[i] = 2 * i, odd[i] = 2 * i + 1, interleave[2 * i] = i, interleave[2 * i + 1] = L + i;

  // Per vector v of tile block `tb` and segment: the window's offset in a
  // plane and the masks of its 4 input rows' two windows (lane i of a
  // segment reads window columns 2i .. 2i + 3: the even and odd lanes of
  // the window and of the window 2 floats further; lanes outside the
  // segment and the zero padding read 0, so the segments add up), and the
  // offset and masks of its 2 output rows.
  struct Segment {
    Value inAt, outAt;
    Value inMask[4][2], outMask[2];
  };
  auto segmentsOf = [&](Emitter &e, Value tb) {
    KernelBuilder &kb = e.kb;
    Value jv = e.table([](int64_t i) { return int32_t(i); });
    Value lanev = e.table([](int64_t i) { return int32_t(i / 2); });
    auto inRange = [&](Value v, int64_t hi) { return e.land(e.cmp(P::sge, v, e.ci2(0)), e.cmp(P::slt, v, e.ci2(hi))); };
    SmallVector<SmallVector<Segment>> segs(NV);
    for (int64_t v = 0; v < NV; ++v) {
      Value t0 = kb.add(kb.mul(tb, kb.c(NVL)), kb.c(v * L));
      Value ty0 = kb.div(t0, kb.c(TW));
      for (int64_t sg = 0; sg < S; ++sg) {
        Segment seg;
        Value ty = kb.add(ty0, kb.c(sg));
        Value x0 = kb.sub(t0, kb.mul(ty, kb.c(TW))); // tx of lane 0 (may be < 0 or >= TW)
        Value tx = e.iadd(e.splat2(x0), lanev);
        Value laneOk = e.land(e.land(e.cmp(P::sge, tx, e.ci2(0)), e.cmp(P::slt, tx, e.ci2(TW))),
                              e.cmp(P::slt, e.iadd(e.splat2(t0), lanev), e.ci2(T)));
        Value iy = kb.sub(kb.mul(ty, kb.c(2)), kb.c(padT));
        Value ix = kb.sub(kb.mul(x0, kb.c(2)), kb.c(padL));
        seg.inAt = kb.add(kb.mul(iy, kb.c(W)), ix);
        for (int o = 0; o < 2; ++o) {
          Value colOk = e.land(laneOk, inRange(e.iadd(e.splat2(kb.add(ix, kb.c(2 * o))), jv), W));
          for (int r = 0; r < 4; ++r) {
            Value y = kb.add(iy, kb.c(r));
            seg.inMask[r][o] = e.andScalar(colOk, e.land(kb.cmp(P::sge, y, kb.c(0)), kb.cmp(P::slt, y, kb.c(H))));
          }
        }
        Value oy = kb.mul(ty, kb.c(2)), ox = kb.mul(x0, kb.c(2));
        seg.outAt = kb.add(kb.mul(oy, kb.c(OW)), ox);
        Value outColOk = e.land(laneOk, e.cmp(P::slt, e.iadd(e.splat2(ox), jv), e.ci2(OW)));
        for (int a = 0; a < 2; ++a) seg.outMask[a] = e.andScalar(outColOk, kb.cmp(P::slt, kb.add(oy, kb.c(a)), kb.c(OH)));
        segs[v].push_back(seg);
      }
    }
    return segs;
  };
  // V[xi][c][lanes] = B^T d B for channels [c0, c1) of image `xImage`, into
  // `dst` at element `dstAt`.
  auto transformInput = [&](Emitter &e, Value Xb, Value xImage, ArrayRef<SmallVector<Segment>> segs, Value c0,
                            Value c1, Value dst, Value dstAt) {
    KernelBuilder &kb = e.kb;
    Type vt2 = kb.vec(2 * L);
    kb.forLoop(c0, c1, kb.c(1), [&](Value c) {
      Value plane = kb.add(xImage, kb.mul(c, kb.c(H * W)));
      for (int64_t v = 0; v < NV; ++v) {
        Value d[4][4];
        for (int r = 0; r < 4; ++r)
          for (int64_t sg = 0; sg < S; ++sg) {
            const Segment &seg = segs[size_t(v)][size_t(sg)];
            Value at = kb.add(plane, kb.add(seg.inAt, kb.c(r * W)));
            Value w0 = kb.maskedLoad(vt2, Xb, at, seg.inMask[r][0]);
            Value w2 = kb.maskedLoad(vt2, Xb, kb.add(at, kb.c(2)), seg.inMask[r][1]);
            Value part[4] = {e.shuffle(w0, w0, even), e.shuffle(w0, w0, odd), e.shuffle(w2, w2, even),
                             e.shuffle(w2, w2, odd)};
            for (int q = 0; q < 4; ++q) d[r][q] = sg == 0 ? part[q] : e.add(d[r][q], part[q]);
          }
        // B^T d: rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3); then the same on
        // the columns.
        Value t[4][4];
        for (int q = 0; q < 4; ++q) {
          t[0][q] = e.sub(d[0][q], d[2][q]);
          t[1][q] = e.add(d[1][q], d[2][q]);
          t[2][q] = e.sub(d[2][q], d[1][q]);
          t[3][q] = e.sub(d[1][q], d[3][q]);
        }
        Value at = kb.add(dstAt, kb.add(kb.mul(c, kb.c(NVL)), kb.c(v * L)));
        for (int r = 0; r < 4; ++r) {
          Value row[4] = {e.sub(t[r][0], t[r][2]), e.add(t[r][1], t[r][2]), e.sub(t[r][2], t[r][1]),
                          e.sub(t[r][1], t[r][3])};
          for (int j = 0; j < 4; ++j) kb.store(row[j], dst, kb.add(at, kb.c((r * 4 + j) * vPlane)));
        }
      }
    });
  };

  auto &spr = sp;
  if (shared) {
    // The input transform: items = image x tile block x chunk of channels.
    const int64_t CB = (C + 63) / 64, chunk = (C + CB - 1) / CB;
    uint32_t vBuffer = ctx.newTransient(spr.mul(X.dims[0], spr.constant(TB * vBlock * int64_t(sizeof(float)))));
    Reg vItems = spr.mul(X.dims[0], spr.constant(TB * CB));
    auto [vGroups, vPerGroup] = ctx.splitRows(vItems, spr.constant(16 * chunk * NVL * S));
    auto kb = ctx.newKernel(name + " input transform");
    Emitter e{*kb, kb->b, kb->loc, L};
    Value Vt = kb->binding(0), Xb = kb->binding(1);
    auto [begin, end] = kb->workgroupRange(kb->dim(vItems), kb->dim(vPerGroup));
    kb->forLoop(begin, end, kb->c(1), [&](Value item) {
      Value cb = kb->rem(item, kb->c(CB)), block = kb->div(item, kb->c(CB));
      Value tb = kb->rem(block, kb->c(TB)), n = kb->div(block, kb->c(TB));
      auto segs = segmentsOf(e, tb);
      Value c0 = kb->mul(cb, kb->c(chunk)), c1 = kb->min(kb->add(c0, kb->c(chunk)), kb->c(C));
      transformInput(e, Xb, kb->mul(n, kb->c(C * H * W)), segs, c0, c1, Vt, kb->mul(block, kb->c(vBlock)));
    });
    kb->finish();
    ctx.addDispatch(*kb, {vBuffer, X.buffer}, vGroups, name + " input transform");
    vSlot = bindings.size();
    bindings.push_back(vBuffer);
  }

  Reg items = spr.mul(X.dims[0], spr.constant(TB * OG));
  auto [groups, perGroup] = ctx.splitRows(items, spr.constant(16 * C * NVL * TPG * MR));
  auto kb = ctx.newKernel(name);
  Emitter e{*kb, kb->b, kb->loc, L};
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), vt2 = kb->vec(2 * L), f32 = kb->f32();
  Value Out = kb->binding(0), Xb = kb->binding(1), U = kb->binding(2), scratch = kb->scratch();
  const int64_t mBase = shared ? 0 : vBlock; // M after V in the scratch
  Value zero = kb->cf(0.f, vt);
  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value og = kb->rem(item, kb->c(OG)), block = kb->div(item, kb->c(OG));
    Value tb = kb->rem(block, kb->c(TB)), n = kb->div(block, kb->c(TB));
    Value yImage = kb->mul(n, kb->c(OC * OH * OW));
    auto segs = segmentsOf(e, tb);
    // 1. V of this tile block: the shared transient's, or transformed here.
    Value V = scratch, vBase = kb->c(0);
    if (shared) {
      V = kb->binding(*vSlot);
      vBase = kb->mul(block, kb->c(vBlock));
    } else {
      transformInput(e, Xb, kb->mul(n, kb->c(C * H * W)), segs, kb->c(0), kb->c(C), scratch, kb->c(0));
    }

    // 2 + 3, per output-channel tile of the group.
    Value tile0 = kb->mul(og, kb->c(TPG));
    Value tile1 = kb->min(kb->add(tile0, kb->c(TPG)), kb->c(OCT));
    kb->forLoop(tile0, tile1, kb->c(1), [&](Value ocTile) {
      // M[xi][i][lanes] = sum_c U[xi][oc_i][c] V[xi][c][lanes], an MR x NV
      // register tile per xi.
      kb->forLoop(kb->c(0), kb->c(16), kb->c(1), [&](Value xi) {
        Value vRow = kb->add(vBase, kb->mul(xi, kb->c(vPlane)));
        Value uRow = kb->mul(kb->add(kb->mul(xi, kb->c(OCT)), ocTile), kb->c(C * MR));
        SmallVector<Value> init(size_t(MR * NV), zero);
        auto acc = kb->forLoop(kb->c(0), kb->c(C), kb->c(1), init, [&](Value c, ValueRange a) {
          SmallVector<Value> xv;
          Value vAt = kb->add(vRow, kb->mul(c, kb->c(NVL)));
          for (int64_t v = 0; v < NV; ++v) xv.push_back(kb->load(vt, V, kb->add(vAt, kb->c(v * L))));
          Value uAt = kb->add(uRow, kb->mul(c, kb->c(MR)));
          SmallVector<Value> nextAcc;
          for (int64_t i = 0; i < MR; ++i) {
            Value u = kb->splat(kb->load(f32, U, kb->add(uAt, kb->c(i))), L);
            for (int64_t v = 0; v < NV; ++v)
              nextAcc.push_back(b.create<vector::FMAOp>(loc, u, xv[size_t(v)], a[size_t(i * NV + v)]));
          }
          return nextAcc;
        });
        Value mAt = kb->add(kb->c(mBase), kb->mul(xi, kb->c(MR * NVL)));
        for (int64_t i = 0; i < MR; ++i)
          for (int64_t v = 0; v < NV; ++v)
            kb->store(acc[size_t(i * NV + v)], scratch, kb->add(mAt, kb->c(i * NVL + v * L)));
      });
      // Y = A^T m A per output channel of the tile, bias, residual,
      // activation; output row 2 ty + a of each segment holds lane i's two
      // pixels at window columns 2i and 2i + 1.
      Value oc0 = kb->mul(ocTile, kb->c(MR));
      kb->forLoop(kb->c(0), kb->min(kb->c(MR), kb->sub(kb->c(OC), oc0)), kb->c(1), [&](Value i) {
        Value oc = kb->add(oc0, i);
        Value bias = biasSlot ? kb->splat(kb->load(f32, kb->binding(*biasSlot), oc), L) : Value();
        Value plane = kb->add(yImage, kb->mul(oc, kb->c(OH * OW)));
        for (int64_t v = 0; v < NV; ++v) {
          Value m[4][4];
          for (int r = 0; r < 4; ++r)
            for (int j = 0; j < 4; ++j)
              m[r][j] = kb->load(vt, scratch,
                                 kb->add(kb->c(mBase + (r * 4 + j) * MR * NVL + v * L), kb->mul(i, kb->c(NVL))));
          // A^T m: rows (m0 + m1 + m2, m1 - m2 - m3); then the same on the columns.
          Value s[2][4];
          for (int j = 0; j < 4; ++j) {
            s[0][j] = e.add(e.add(m[0][j], m[1][j]), m[2][j]);
            s[1][j] = e.sub(e.sub(m[1][j], m[2][j]), m[3][j]);
          }
          for (int a = 0; a < 2; ++a) {
            Value y[2] = {e.add(e.add(s[a][0], s[a][1]), s[a][2]), e.sub(e.sub(s[a][1], s[a][2]), s[a][3])};
            for (int c = 0; c < 2; ++c)
              if (bias) y[c] = e.add(y[c], bias);
            Value row = e.shuffle(y[0], y[1], interleave);
            if (!residualSlot) row = applyActivation(*kb, row, act, alpha, beta);
            for (int64_t sg = 0; sg < S; ++sg) {
              const Segment &seg = segs[size_t(v)][size_t(sg)];
              Value at = kb->add(plane, kb->add(seg.outAt, kb->c(a * OW)));
              Value val = row;
              if (residualSlot)
                val = applyActivation(
                    *kb, e.add(val, kb->maskedLoad(vt2, kb->binding(*residualSlot), at, seg.outMask[a])), act, alpha,
                    beta);
              kb->maskedStore(val, Out, at, seg.outMask[a]);
            }
          }
        }
      });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name, spr.constant((mBase + 16 * MR * NVL) * int64_t(sizeof(float))));
  // The direct conv's operation count, so the profile's GFLOP/s compare.
  ctx.plan.dispatches.back().flops = spr.mul(X.dims[0], spr.constant(2 * OC * C * 9 * OH * OW));
  return success();
}

} // namespace v4f
