//===- ConvKernels.cpp - convolution as GEMM (im2col, channels in lanes) ---===//
//
// emitConv lowers a v4f.conv onto the GEMM emitter (GemmEmitter.h):
// C[OC/G, P] = W * B per image and group, B the im2col matrix — read
// directly for 1x1 stride-1 convs, packed per workgroup into scratch for
// large outputs (GemmSpec::packB), otherwise materialized by an im2col
// dispatch; both copy through a position table when the planes allow. A
// conv marked "channel_lanes" computes C^T = X^T W^T instead (output
// channels in vector lanes), and "depthwise" goes to DepthwiseConvKernels.cpp.
// docs/design/cpu-kernels.md ("Kernel families") has the design.
//
//===----------------------------------------------------------------------===//
#include "GemmEmitter.h"
#include "KernelRegistry.h"
#include "WeightPacking.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SmallSet.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

namespace {

/// A channels-in-lanes conv (C^T = X^T W^T, static planes, G = 1) with no
/// im2col matrix: A element (pixel r, k = (c, kh, kw)) is read straight from
/// the input — or from a copy of it — at the pixel's window origin plus a
/// compile-time offset per k (an int32 table).
///
/// The copy is zero-padded when the conv pads, and split into stride phases
/// when it strides: plane c of the copy holds the sh x sw phase images (those
/// the taps read) Xq[c][ph][pw][i][j] = Xp[c][i sh + ph]
/// [j sw + pw] (Xp the padded input), so that pixel (oh, ow)'s tap at row r,
/// column q reads Xq[c][r % sh][q % sw][oh + r / sh][ow + q / sw]: the pixels
/// of a row tile read neighbouring floats, as with stride 1, instead of
/// every sh-th (a stride-2 conv touched twice the cache lines per K step, and
/// ResNet-50's stride-2 3x3 convs reached a lower share of the FMA peak than
/// their stride-1 neighbours). The copy is C x (H + pads) x (W + pads)
/// floats rounded up to whole phases, a fraction of the K x P im2col matrix
/// it replaces (ResNet-50 stage 3: 0.26 MB against 1.8 MB per conv).
LogicalResult emitImplicitChannelLanes(CPUKernelContext &ctx, GemmSpec s, const TensorInfo &X, int64_t Cg, int64_t KH,
                                       int64_t KW, int64_t OW, ArrayRef<int64_t> strides, ArrayRef<int64_t> dil,
                                       ArrayRef<int64_t> pads) {
  auto &sp = ctx.shapes;
  const int64_t H = *sp.constValue(X.dims[2]), W = *sp.constValue(X.dims[3]);
  const int64_t padT = pads[0], padL = pads[1], padB = pads[2], padR = pads[3];
  const int64_t Hp = H + padT + padB, Wp = W + padL + padR;
  const int64_t sh = strides[0], sw = strides[1];
  // The phases the taps read: rows (kh dh) % sh, columns (kw dw) % sw; split
  // when each set is 0, 1, ..., n - 1 (always with dilation 1: a 1x1 stride-2
  // conv reads phase (0, 0) only, a subsampled copy).
  auto phasesRead = [](int64_t taps, int64_t d, int64_t stride) -> int64_t {
    llvm::SmallSet<int64_t, 8> set;
    int64_t top = 0;
    for (int64_t t = 0; t < taps; ++t) set.insert(t * d % stride), top = std::max(top, t * d % stride);
    return int64_t(set.size()) == top + 1 ? top + 1 : 0;
  };
  const int64_t nh = phasesRead(KH, dil[0], sh), nw = phasesRead(KW, dil[1], sw);
  const bool split = (sh > 1 || sw > 1) && nh && nw;
  const int64_t Sh = split ? sh : 1, Sw = split ? sw : 1; // phase strides
  const int64_t Nh = split ? nh : 1, Nw = split ? nw : 1; // phases copied
  const int64_t Hq = (Hp + Sh - 1) / Sh, Wq = (Wp + Sw - 1) / Sw, phaseP = Hq * Wq, planeQ = Nh * Nw * phaseP;
  const bool padded = padT || padL || padB || padR;
  const int64_t L = s.lanes, Kdim = Cg * KH * KW;
  if (X.channelsLast) {
    // A channels-last input is read in place: tap (c, kh, kw) of the window
    // at pixel origin o is at o C + (kh dh W + kw dw) C + c, so a register
    // tile's rows each read C adjacent floats per input pixel (no phase
    // copy: the pixels of a strided row tile are C floats apart anyway).
    // (Unpadded: emitConv checked.)
    std::vector<int32_t> table(size_t(Kdim + GemmSpec::kTablePad));
    for (int64_t k = 0; k < Kdim + GemmSpec::kTablePad; ++k) {
      int64_t kk = std::min(k, Kdim - 1);
      int64_t c = kk / (KH * KW), r = kk / KW % KH * dil[0], q = kk % KW * dil[1];
      table[size_t(k)] = int32_t((r * W + q) * Cg + c);
    }
    s.aBuf = X.buffer;
    s.aKTable = true;
    s.extraBuf = ctx.int32Table(table);
    s.aOffset = [Cg, H, W](KernelBuilder &kb, Value b) { return kb.mul(b, kb.c(Cg * H * W)); };
    s.aRowBase = [OW, sh, sw, W, Cg](KernelBuilder &kb, Value row) {
      return kb.mul(kb.add(kb.mul(kb.div(row, kb.c(OW)), kb.c(sh * W)), kb.mul(kb.rem(row, kb.c(OW)), kb.c(sw))),
                    kb.c(Cg));
    };
    emitGemm(ctx, s);
    return success();
  }
  Reg planes = sp.mul(X.dims[0], sp.constant(Cg)); // N * C planes (G = 1)
  uint32_t src = X.buffer;
  if (padded || split) {
    // Row (plane, ph, pw, i) of the copy: input row i sh + ph - padT at
    // columns j sw + pw - padL with zeros around it, or zeros; in chunks of
    // L columns (masked loads; across a stride of 2 two of them and their
    // even lanes, across larger strides gathers; masked stores).
    Reg rows = sp.mul(planes, sp.constant(Nh * Nw * Hq));
    src = ctx.newTransient(sp.mul(sp.mul(planes, sp.constant(planeQ)), sp.constant(4)));
    auto [groups, rowsPerGroup] = ctx.splitRows(rows, sp.constant(Wq));
    auto kb = ctx.newKernel(s.name + (split ? " phases" : " pad"));
    OpBuilder &b = kb->b;
    Location loc = kb->loc;
    Type vt = kb->vec(L);
    auto idxType = VectorType::get({L}, b.getI64Type());
    SmallVector<int64_t> iotaValues(L);
    for (int64_t i = 0; i < L; ++i) iotaValues[i] = i * Sw;
    Value iota =
        b.create<arith::ConstantOp>(loc, idxType, DenseElementsAttr::get(idxType, ArrayRef<int64_t>(iotaValues)));
    Value iotaOne = kb->iota(L);
    auto splatI = [&](Value v) { return b.create<vector::BroadcastOp>(loc, idxType, v).getResult(); };
    auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
    kb->forLoop(begin, end, kb->c(1), [&](Value row) {
      Value plane = kb->div(row, kb->c(Nh * Nw * Hq)), inPlane = kb->rem(row, kb->c(Nh * Nw * Hq));
      Value phase = kb->div(inPlane, kb->c(Hq)), i = kb->rem(inPlane, kb->c(Hq));
      Value ph = kb->div(phase, kb->c(Nw)), pw = kb->rem(phase, kb->c(Nw));
      Value y = kb->sub(kb->add(kb->mul(i, kb->c(Sh)), ph), kb->c(padT));
      Value rowIn = b.create<arith::AndIOp>(loc, kb->cmp(arith::CmpIPredicate::sge, y, kb->c(0)),
                                            kb->cmp(arith::CmpIPredicate::slt, y, kb->c(H)));
      Value srcRow = kb->add(kb->mul(plane, kb->c(H * W)), kb->mul(kb->select(rowIn, y, kb->c(0)), kb->c(W)));
      Value dstRow = kb->mul(row, kb->c(Wq));
      Value first = kb->sub(pw, kb->c(padL)); // input column of j = 0
      for (int64_t j0 = 0; j0 < Wq; j0 += L) {
        Value x0 = kb->add(first, kb->c(j0 * Sw));
        Value cols = b.create<arith::AddIOp>(loc, iota, splatI(x0)); // input columns
        Value inside = b.create<arith::AndIOp>(
            loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, cols, splatI(kb->c(0))),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, cols, splatI(kb->c(W))));
        inside = b.create<arith::AndIOp>(loc, inside, b.create<vector::BroadcastOp>(loc, inside.getType(), rowIn));
        Value v;
        if (Sw == 1) {
          v = kb->maskedLoad(vt, kb->binding(1), kb->add(srcRow, x0), inside);
        } else if (Sw == 2) {
          // Two masked loads of the 2L columns from x0, their even lanes.
          Value halves[2];
          for (int64_t h = 0; h < 2; ++h) {
            Value c = b.create<arith::AddIOp>(loc, iotaOne, splatI(kb->add(x0, kb->c(h * L))));
            Value in = b.create<arith::AndIOp>(
                loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, c, splatI(kb->c(0))),
                b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, c, splatI(kb->c(W))));
            in = b.create<arith::AndIOp>(loc, in, b.create<vector::BroadcastOp>(loc, in.getType(), rowIn));
            halves[h] = kb->maskedLoad(vt, kb->binding(1), kb->add(srcRow, kb->add(x0, kb->c(h * L))), in);
          }
          SmallVector<int64_t> even(L);
          for (int64_t t = 0; t < L; ++t) even[t] = 2 * t;
          v = b.create<vector::ShuffleOp>(loc, halves[0], halves[1], even);
        } else {
          Value idx = b.create<arith::AddIOp>(loc, cols, splatI(srcRow));
          v = kb->maskedGather(vt, kb->binding(1), b.create<arith::SelectOp>(loc, inside, idx, splatI(srcRow)), inside);
        }
        if (j0 + L <= Wq)
          kb->store(v, kb->binding(0), kb->add(dstRow, kb->c(j0)));
        else
          kb->maskedStore(v, kb->binding(0), kb->add(dstRow, kb->c(j0)), kb->laneMask(kb->c(Wq - j0), L));
      }
    });
    kb->finish();
    ctx.addDispatch(*kb, {src, X.buffer}, groups, s.name + (split ? " phases" : " pad"));
  }
  // Offset of K row k = (c, kh, kw) from the window origin, padded past K
  // with the last entry.
  std::vector<int32_t> table(size_t(Kdim + GemmSpec::kTablePad));
  for (int64_t k = 0; k < Kdim + GemmSpec::kTablePad; ++k) {
    int64_t kk = std::min(k, Kdim - 1);
    int64_t c = kk / (KH * KW), r = kk / KW % KH * dil[0], q = kk % KW * dil[1];
    table[size_t(k)] = int32_t(c * planeQ + (r % Sh * Nw + q % Sw) * phaseP + r / Sh * Wq + q / Sw);
  }
  s.aBuf = src;
  s.aKTable = true;
  s.extraBuf = ctx.int32Table(table);
  s.aOffset = [Cg, planeQ](KernelBuilder &kb, Value b) { return kb.mul(b, kb.c(Cg * planeQ)); };
  // Window origin of output pixel (oh, ow) in the copy's phase (0, 0).
  const int64_t rowStep = sh / Sh * Wq, colStep = sw / Sw;
  s.aRowBase = [OW, rowStep, colStep](KernelBuilder &kb, Value row) {
    return kb.add(kb.mul(kb.div(row, kb.c(OW)), kb.c(rowStep)), kb.mul(kb.rem(row, kb.c(OW)), kb.c(colStep)));
  };
  emitGemm(ctx, s);
  return success();
}

} // namespace

ConvEpilogueSlots bindConvEpilogue(ConvOp conv, ArrayRef<TensorInfo> operands, std::vector<uint32_t> &bindings) {
  ConvEpilogueSlots slots;
  size_t next = 2;
  if (conv.getBias()) {
    slots.bias = unsigned(bindings.size());
    bindings.push_back(operands[next++].buffer);
  }
  if (conv.getResidual()) {
    slots.residual = unsigned(bindings.size());
    bindings.push_back(operands[next++].buffer);
  }
  return slots;
}

LogicalResult emitConv(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands, const TensorInfo &result,
                       std::optional<uint32_t> scaledWeight) {
  auto conv = cast<ConvOp>(op);
  auto algorithm = op->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
  if (scaledWeight && ((algorithm && (algorithm == "depthwise" || algorithm == "small_input")) || winogradTileOf(op)))
    return op->emitOpError("a channel-scaled conv takes a GEMM, not ") << algorithm;
  const bool channelLanes = algorithm && algorithm == "channel_lanes";
  // Channels-last operands and results only where v4f-assign-cpu-layouts
  // put them: a channels-in-lanes kernel (which stores its residual the way
  // it stores its result).
  if ((operands[0].channelsLast || result.channelsLast) && !channelLanes)
    return op->emitOpError("reads or writes a channels-last tensor but does not compute channels in lanes");
  if (conv.getResidual() && operands.back().channelsLast != result.channelsLast)
    return op->emitOpError("its residual and its result are stored in different layouts");
  if (algorithm && algorithm == "depthwise") return emitDepthwiseConv(ctx, op, operands, result);
  if (algorithm && algorithm == "small_input") return emitSmallInputConv(ctx, op, operands, result);
  if (winogradTileOf(op)) return emitWinogradConv(ctx, op, operands, result);
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0], &W = operands[1];
  auto wShape = conv.getWeight().getType().getShape();
  int64_t G = conv.getGroups(), OC = wShape[0], Cg = wShape[1], KH = wShape[2], KW = wShape[3];
  int64_t OCg = OC / G, Kdim = Cg * KH * KW;
  auto strides = conv.getStrides(), dil = conv.getDilations(), pads = conv.getPads();
  Reg Nb = X.dims[0], H = X.dims[2], Wd = X.dims[3], OH = result.dims[2], OW = result.dims[3];
  Reg HW = sp.mul(H, Wd), P = sp.mul(OH, OW);
  bool pointwise = readsInputAsB(conv);
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
    s.aBuf = scaledWeight ? *scaledWeight : ctx.packedWeight(W, *packing, G, Kdim, OCg);
    s.aPacked = true;
    aMat = packedMatrixFloats(OCg, Kdim, packing->panel);
  } else if (scaledWeight && !channelLanes) {
    return op->emitOpError("a channel-scaled conv needs a packed weight");
  }
  // Offset of the weight matrix (`mat` floats each) of batch b = (image,
  // group): one per group, or a scaled weight's one per image (G = 1).
  auto weightOffset = [perImage = scaledWeight.has_value(), G](int64_t mat) {
    return [=](KernelBuilder &kb, Value b) { return kb.mul(perImage ? b : kb.rem(b, kb.c(G)), kb.c(mat)); };
  };
  s.aOffset = weightOffset(aMat);
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
    s.bBuf = scaledWeight ? *scaledWeight : ctx.packedWeight(W, *packing, G, Kdim, OCg);
    s.bPacked = true;
    int64_t bMat = packedMatrixFloats(OCg, Kdim, packing->panel);
    s.bOffset = weightOffset(bMat);
    if (s.biasMode == BiasMode::PerRow) s.biasMode = BiasMode::PerColumn;
    // Channels-last output: C^T is the output's row-major [P, OC] matrix
    // itself (and so is the residual), stored row by row.
    if (!result.channelsLast) s.cColStride = *channelLanesP;
  }
  if (pointwise && channelLanes) {
    s.aBuf = X.buffer;
    // A channels-last input is A's row-major [P, K] matrix (rows of C
    // floats); a channels-first one is read down its columns.
    if (!X.channelsLast) s.aKStride = *sp.constValue(HW);
    s.aOffset = [HW, Cg](KernelBuilder &kb, Value b) { return kb.mul(b, kb.mul(kb.c(Cg), kb.dim(HW))); };
    emitGemm(ctx, s);
    return success();
  }
  if (pointwise) {
    s.rowTilesOuter = op->hasAttr(kRowTilesOuterAttr); // recorded with the tiling
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
  std::optional<int64_t> cH = sp.constValue(H), cW = sp.constValue(Wd), cOW = sp.constValue(OW), cP = sp.constValue(P);
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
    // vector of columns for the flags), so a conv over symbolic planes
    // (MobileNetV3-small's stem) gathers as it does with static planes
    // (measurements: bench/results/history.md, "Measurements behind code
    // decisions").
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
  auto writeColumns = [=](KernelBuilder &kbr, Value r, Value rowDst, Value qBase, Value panelStride, Value qBegin,
                          Value qEnd, bool wholeRows, std::optional<unsigned> tableSlot, int64_t panelWidth) {
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
    // The L columns of a chunk inside one output row and inside the input,
    // starting at input (ih, iw): one load (stride 1), or two and an
    // even-lane shuffle (stride 2), stored as the chunk's vector.
    auto copyRun = [&](Value ih, Value iw, Value dstIdx) {
      Value src = kb->add(plane, kb->add(kb->mul(ih, w), iw));
      Value v = kb->load(vt, Xp, src);
      if (strides[1] == 2) {
        SmallVector<int64_t> even(kL);
        for (int64_t i = 0; i < kL; ++i) even[i] = 2 * i;
        v = b.create<vector::ShuffleOp>(loc, v, kb->load(vt, Xp, kb->add(src, kb->c(kL))), even);
      }
      kb->store(v, Col, dstIdx);
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
        Value contiguous = land(
            land(kb->cmp(arith::CmpIPredicate::sle, kb->add(x0, kb->c(kL)), ow),
                 kb->cmp(arith::CmpIPredicate::sle, kb->add(q0, kb->c(kL)), p)),
            land(inRange(ih0, h), land(kb->cmp(arith::CmpIPredicate::sge, iw0, kb->c(0)),
                                       kb->cmp(arith::CmpIPredicate::sle, kb->add(iw0, kb->c(strides[1] * kL)), w))));
        kb->ifThenElse(
            contiguous, [&] { copyRun(ih0, iw0, dstIdx); }, lanewise);
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
    // im2col went element by element before; measurements:
    // bench/results/history.md, "Measurements behind code decisions".)
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
        Value flag =
            kb->cmp(arith::CmpIPredicate::ne,
                    scalarAt(kb->add(kb->mul(kb->c(2), kb->dim(tableColsR)), kb->div(q0, kb->c(kL)))), kb->c(0));
        Value ih = kb->add(scalarAt(q0), dh), iw = kb->add(scalarAt(kb->add(q0, kb->dim(tableColsR))), dw);
        Value contiguous = land(land(flag, inRange(ih, h)),
                                land(kb->cmp(arith::CmpIPredicate::sge, iw, kb->c(0)),
                                     kb->cmp(arith::CmpIPredicate::sle, kb->add(iw, kb->c(strides[1] * kL)), w)));
        kb->ifThenElse(
            contiguous, [&] { copyRun(ih, iw, dstIdx); }, gather);
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
  // 3x3 convs had materialized a 3.6 MB im2col, whose memory traffic does
  // not get faster on 2 threads; measurements: bench/results/history.md,
  // "Measurements behind code decisions"). The others materialize im2col:
  // with few column blocks each would be packed once per row block. When P
  // is known only at run time
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
        writeColumns(kb, kb.add(kb.mul(batch, kb.c(Kdim)), k), kb.mul(kb.sub(k, k0), kb.c(kNR)), n0, panelStride, n0,
                     qEnd, /*wholeRows=*/false, tableSlot, kNR);
      });
    };
    size_t first = ctx.plan.dispatches.size();
    emitGemm(ctx, packed);
    if (packAlways) return success();
    largeP = sp.lt(sp.constant(4 * s.nb - 1), P); // P >= 4 x NB, 0 or 1
    for (size_t d = first; d < ctx.plan.dispatches.size(); ++d) ctx.plan.dispatches[d].guard = *largeP;
  }
  // The implicit form's int32 offsets must reach every element of one
  // (padded) image: Cg x (H + pads) x (W + pads) < 2^31.
  // (The phase split rounds the padded planes up to whole strides.)
  if (channelLanes && G == 1 && sp.constValue(H) && sp.constValue(Wd) && sp.constValue(OW) &&
      Cg * (*sp.constValue(H) + pads[0] + pads[2] + strides[0]) *
              (*sp.constValue(Wd) + pads[1] + pads[3] + strides[1]) <
          (int64_t(1) << 31)) {
    if (X.channelsLast && llvm::any_of(pads, [](int64_t p) { return p != 0; }))
      return op->emitOpError("a padded conv cannot read a channels-last input");
    return emitImplicitChannelLanes(ctx, s, X, Cg, KH, KW, *sp.constValue(OW), strides, dil, pads);
  }
  if (X.channelsLast) // canReadChannelsLast promised one of the paths above
    return op->emitOpError("cannot read a channels-last input with this conv's kernel");
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

void registerConvKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<ConvOp>([](CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                  const TensorInfo &result) { return emitConv(ctx, op, operands, result); });
}

} // namespace v4f
