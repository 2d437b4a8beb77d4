//===- SmallInputConvKernels.cpp - direct conv over a few input channels --===//
//
// An image stem (ResNet's 7x7 stride-2 conv of RGB to 64 channels,
// MobileNet's 3x3 stride-2 one to 32) has a GEMM K of only C KH KW = 27 to
// 147: im2col + GEMM packs every pixel's window and spends much of each
// register tile on its epilogue. v4f-select-cpu-strategy marks such convs
// `v4f.conv_algorithm = "small_input"` (isSmallInputConv) and they lower
// here: a direct NCHW kernel.
//
// A work item is one image and a block of R output rows, all output
// channels. The block's input rows of every channel are first copied into
// the worker's scratch with the conv's zero padding around them (rows above
// or below the image are zeros); at stride 2 each padded row is stored
// de-interleaved, its even columns then its odd ones, so every tap of a
// vector of output columns is one plain load. Then per output row, per
// group of output channels and chunk of 2 vectors of columns, a register
// tile (8 channels on AVX-512, 6 on AVX2/SSE) sums over the C x KH x KW taps
// (an input vector loaded once per tap, the weights broadcast), then bias,
// residual, activation, stored (masked on a column tail).
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

namespace {
/// Row blocks per image, at most (a block boundary copies the rows its
/// window shares with the previous block again).
constexpr int64_t kRowBlocks = 16;
/// Scratch per worker the row blocks are sized for (the block's padded
/// input rows of every channel: they stay in L1/L2 while every output
/// channel group reads them).
constexpr int64_t kBlockScratchBytes = 64 << 10;
} // namespace

LogicalResult emitSmallInputConv(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                 const TensorInfo &result) {
  auto conv = cast<ConvOp>(op);
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  if (!isSmallInputConv(conv)) return op->emitOpError("is marked small_input but is not such a conv");
  auto &sp = ctx.shapes;
  const int64_t L = tiling.getLanes();
  const TensorInfo &X = operands[0];
  auto wShape = conv.getWeight().getType().getShape();
  auto xShape = conv.getInput().getType().getShape(), yShape = conv.getType().getShape();
  const int64_t OC = wShape[0], C = wShape[1], KH = wShape[2], KW = wShape[3], K = C * KH * KW;
  const int64_t H = xShape[2], W = xShape[3], OH = yShape[2], OW = yShape[3];
  auto strides = conv.getStrides(), dil = conv.getDilations(), pads = conv.getPads();
  const int64_t sh = strides[0], sw = strides[1], dh = dil[0], dwl = dil[1];
  const int64_t padT = pads[0], padL = pads[1];
  if (padL > L) return op->emitOpError("small_input conv: left padding wider than a vector");
  // A padded row: a vector whose last padL floats are the left padding, the
  // input row from float L on (aligned stores), zeros after it up to SW;
  // padded column q (input column q - padL) sits at float `origin` + q.
  const int64_t origin = L - padL;
  const int64_t DW = (OW + L - 1) / L * L;
  // Stride 2: the padded row de-interleaved into halves of EO floats (even
  // columns, then odd), output column ox of tap kw reading column
  // 2 ox + kw dwl, i.e. half (kw dwl) % 2 at (kw dwl) / 2 + ox.
  const int64_t EO = DW + ((KW - 1) * dwl / 2 + L) / L * L;
  const int64_t SW = sw == 1 ? L + (W + pads[3] + L - 1) / L * L + 2 * L
                             : std::max(L + (W + L - 1) / L * L + L, (origin + 2 * EO + L - 1) / L * L);
  const int64_t RS = sw == 1 ? SW : 2 * EO; // floats per stored row
  const int64_t window = (KH - 1) * dh + 1;
  // Rows per block: an even split into at most kRowBlocks blocks, fewer
  // rows when the block's rows would outgrow kBlockScratchBytes.
  const int64_t perRow = C * sh * RS, fixed = C * (window - sh) * RS + (sw == 1 ? 0 : SW);
  const int64_t maxRows = std::max<int64_t>(1, (kBlockScratchBytes / int64_t(sizeof(float)) - fixed) / perRow);
  int64_t R = std::min((OH + std::min(OH, kRowBlocks) - 1) / std::min(OH, kRowBlocks), maxRows);
  const int64_t nRB = (OH + R - 1) / R;
  R = (OH + nRB - 1) / nRB;
  const int64_t IR = (R - 1) * sh + window; // input rows of a block
  const int64_t tempBase = C * IR * RS;     // stride 2: the row being de-interleaved

  uint32_t wBuffer = ctx.plainFloatWeight(operands[1], OC * K);
  if (wBuffer == ~0u) return op->emitOpError("small_input conv: weight is not a constant");
  std::vector<uint32_t> bindings = {result.buffer, X.buffer, wBuffer};
  auto [biasSlot, residualSlot] = bindConvEpilogue(conv, operands, bindings);

  Reg items = sp.mul(X.dims[0], sp.constant(nRB));
  auto [groups, perGroup] = ctx.splitRows(items, sp.constant(R * OW * OC * K));
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), f32 = kb->f32();
  Value Out = kb->binding(0), Xb = kb->binding(1), Wb = kb->binding(2);
  Value scratch = kb->scratch();
  Value zero = kb->cf(0.f, vt);
  // The register tile: 8 channels x 2 vectors on AVX-512 (16 of its 32
  // registers; a tap's 2 input loads and 8 broadcasts feed 16 FMAs), 6 x 2
  // with 16 registers (12 accumulators). On a 7x7 stride-2 stem the other
  // tiles tried on the Xeon ran no faster beyond the noise, and tiles one
  // vector wide much slower (measurements: bench/results/history.md,
  // "Measurements behind code decisions").
  const int64_t kChannels = L >= 16 ? 8 : 6, vecsPerChunk = 2;
  SmallVector<int64_t> even(L), odd(L);
  for (int64_t t = 0; t < L; ++t) even[t] = 2 * t, odd[t] = 2 * t + 1;

  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value n = kb->div(item, kb->c(nRB)), oy0 = kb->mul(kb->rem(item, kb->c(nRB)), kb->c(R));
    Value y0 = kb->sub(kb->mul(oy0, kb->c(sh)), kb->c(padT)); // input row of block row 0
    Value rowsOut = kb->min(kb->c(R), kb->sub(kb->c(OH), oy0));
    Value rowsIn = kb->add(kb->mul(kb->sub(rowsOut, kb->c(1)), kb->c(sh)), kb->c(window));

    // 1. The block's input rows, every channel, padded (and at stride 2
    // de-interleaved) into the scratch: row j of channel c at (c IR + j) RS.
    for (int64_t c = 0; c < C; ++c) {
      kb->forLoop(kb->c(0), rowsIn, kb->c(1), [&](Value j) {
        Value stored = kb->mul(kb->add(kb->c(c * IR), j), kb->c(RS));
        Value row = sw == 1 ? stored : kb->c(tempBase); // where the padded row is built
        emitPaddedRow(*kb, Xb, kb->add(kb->mul(n, kb->c(C)), kb->c(c)), kb->add(y0, j), scratch, row, H, W, SW, L);
        if (sw == 2)
          for (int64_t e0 = 0; e0 < EO; e0 += L) {
            Value at = kb->add(row, kb->c(origin + 2 * e0));
            Value lo = kb->load(vt, scratch, at), hi = kb->load(vt, scratch, kb->add(at, kb->c(L)));
            kb->store(b.create<vector::ShuffleOp>(loc, lo, hi, even).getResult(), scratch, kb->add(stored, kb->c(e0)));
            kb->store(b.create<vector::ShuffleOp>(loc, lo, hi, odd).getResult(), scratch,
                      kb->add(stored, kb->c(EO + e0)));
          }
      });
    }

    // 2. Output row r, channels [p0, p0 + cnt).
    auto outputRow = [&](Value r, Value p0, int64_t cnt) {
      Value oy = kb->add(oy0, r);
      for (int64_t c0 = 0; c0 < OW; c0 += vecsPerChunk * L) {
        const int64_t vecs = std::min(vecsPerChunk, (OW - c0 + L - 1) / L);
        SmallVector<Value> init;
        for (int64_t i = 0; i < cnt; ++i) {
          Value bias = biasSlot ? kb->splat(kb->load(f32, kb->binding(*biasSlot), kb->add(p0, kb->c(i))), L) : zero;
          for (int64_t v = 0; v < vecs; ++v) init.push_back(bias);
        }
        // Kernel rows in a loop; channels and kernel columns unrolled.
        auto acc = kb->forLoop(kb->c(0), kb->c(KH), kb->c(1), init, [&](Value kh, ValueRange a) {
          SmallVector<Value> next(a.begin(), a.end());
          Value j = kb->add(kb->mul(r, kb->c(sh)), kb->mul(kh, kb->c(dh)));
          for (int64_t c = 0; c < C; ++c) {
            Value rowAt = kb->mul(kb->add(kb->c(c * IR), j), kb->c(RS));
            for (int64_t kw = 0; kw < KW; ++kw) {
              // Where output column c0 of this tap reads.
              const int64_t off = sw == 1 ? origin + c0 + kw * dwl : (kw * dwl) % 2 * EO + (kw * dwl) / 2 + c0;
              SmallVector<Value> xv;
              for (int64_t v = 0; v < vecs; ++v)
                xv.push_back(kb->load(vt, scratch, kb->add(rowAt, kb->c(off + v * L))));
              Value tap = kb->add(kb->mul(kh, kb->c(KW)), kb->c(c * KH * KW + kw));
              for (int64_t i = 0; i < cnt; ++i) {
                Value w = kb->splat(kb->load(f32, Wb, kb->add(kb->mul(kb->add(p0, kb->c(i)), kb->c(K)), tap)), L);
                for (int64_t v = 0; v < vecs; ++v)
                  next[size_t(i * vecs + v)] =
                      b.create<vector::FMAOp>(loc, w, xv[size_t(v)], next[size_t(i * vecs + v)]).getResult();
              }
            }
          }
          return next;
        });
        for (int64_t i = 0; i < cnt; ++i) {
          Value outRow = kb->mul(kb->add(kb->mul(kb->add(kb->mul(n, kb->c(OC)), kb->add(p0, kb->c(i))), kb->c(OH)), oy),
                                 kb->c(OW));
          for (int64_t v = 0; v < vecs; ++v) {
            Value at = kb->add(outRow, kb->c(c0 + v * L));
            Value mask = c0 + (v + 1) * L <= OW ? Value() : kb->laneMask(kb->c(OW - c0 - v * L), L);
            Value val = acc[size_t(i * vecs + v)];
            if (residualSlot) {
              Value res = mask ? kb->maskedLoad(vt, kb->binding(*residualSlot), at, mask)
                               : kb->load(vt, kb->binding(*residualSlot), at);
              val = b.create<arith::AddFOp>(loc, val, res);
            }
            val = applyActivation(*kb, val, conv);
            if (mask)
              kb->maskedStore(val, Out, at, mask);
            else
              kb->store(val, Out, at);
          }
        }
      }
    };
    kb->forLoop(kb->c(0), rowsOut, kb->c(1), [&](Value r) {
      kb->forLoop(kb->c(0), kb->c(OC / kChannels), kb->c(1),
                  [&](Value g) { outputRow(r, kb->mul(g, kb->c(kChannels)), kChannels); });
      if (OC % kChannels) outputRow(r, kb->c(OC / kChannels * kChannels), OC % kChannels);
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name, sp.constant((tempBase + (sw == 1 ? 0 : SW)) * int64_t(sizeof(float))));
  ctx.plan.dispatches.back().flops = sp.mul(X.dims[0], sp.constant(2 * OC * K * OH * OW));
  return success();
}

} // namespace v4f
