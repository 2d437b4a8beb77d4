//===- DepthwisePointwiseKernels.cpp - depthwise conv + 1x1 conv, fused ---===//
//
// A region merged by v4f-fuse-depthwise-pointwise: a depthwise conv (M
// channels, KH x KW, stride 1 or 2, bias, activation) whose result only a
// 1x1 conv (M -> P channels, bias, residual, activation) reads — a
// MobileNetV1 pair, or the first block of MobileNetV2/EfficientNet, whose
// depthwise output (32 x 112 x 112 floats, 1.6 MB) was written only to be
// read back by the projection. One kernel; a work item is one image and a
// block of R output rows, all channels:
//
//   1. per channel, the block's input rows are copied into the worker's
//      scratch with the conv's zero padding around them (rows above or
//      below the image are zeros): one contiguous stretch of the input per
//      channel, which the hardware prefetcher follows (a row of every
//      channel at a time would be M streams at once);
//   2. the channel's R depthwise output rows are computed from there, one
//      vector of output columns at a time (stride 2: two loads and an
//      even-lane shuffle per tap), bias, activation, into the block's
//      depthwise rows in the scratch (M x R rows; R chosen so that the
//      scratch stays within kBlockScratchBytes, in L2);
//   3. the 1x1 conv of each row of the block: a register tile of 8 output
//      channels x 1-2 vectors of columns summing over the M channels
//      (loaded as vectors, the weights broadcast), then bias, residual,
//      activation, stored (masked on a column tail).
//
// The depthwise result never exists in memory.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Codegen/KernelLimits.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

namespace {
/// Output channels per register tile of the 1x1 conv.
constexpr int64_t kChannels = 8;
/// Row blocks per image, at most: enough work items to share between
/// workers (a block boundary copies (KH - 1) * dh + 1 - sh input rows
/// again, no arithmetic).
constexpr int64_t kRowBlocks = 16;
/// Scratch per worker the row blocks are sized for (the block's input rows
/// of one channel and its depthwise rows of all M channels, written and
/// read back once: they stay in L2). At least one row per block, whatever
/// this says: v4f-fuse-depthwise-pointwise bounds that scratch.
constexpr int64_t kBlockScratchBytes = 256 << 10;
} // namespace

void emitPaddedRow(KernelBuilder &kb, Value x, Value plane, Value y, Value scratch, Value dst, int64_t H, int64_t W,
                   int64_t SW, int64_t lanes) {
  const int64_t L = lanes;
  Type vt = kb.vec(L);
  Value zero = kb.cf(0.f, vt);
  Value inside = kb.b.create<arith::AndIOp>(kb.loc, kb.cmp(arith::CmpIPredicate::sge, y, kb.c(0)),
                                            kb.cmp(arith::CmpIPredicate::slt, y, kb.c(H)));
  kb.ifThenElse(
      inside,
      [&] {
        Value src = kb.add(kb.mul(plane, kb.c(H * W)), kb.mul(y, kb.c(W)));
        kb.store(zero, scratch, dst); // the left padding (at most a vector)
        for (int64_t c0 = 0; c0 < W; c0 += L) {
          Value at = kb.add(src, kb.c(c0)), to = kb.add(dst, kb.c(L + c0));
          if (c0 + L <= W) {
            kb.store(kb.load(vt, x, at), scratch, to);
          } else {
            Value mask = kb.laneMask(kb.c(W - c0), L);
            kb.maskedStore(kb.maskedLoad(vt, x, at, mask), scratch, to, mask);
          }
        }
        // The right padding and the slack past it.
        for (int64_t c = L + W; c < SW; c += L) kb.store(zero, scratch, kb.add(dst, kb.c(std::min(c, SW - L))));
      },
      [&] {
        for (int64_t c = 0; c < SW; c += L) kb.store(zero, scratch, kb.add(dst, kb.c(c)));
      });
}

static LogicalResult emitDepthwisePointwise(CPUKernelContext &ctx, DispatchOp region, ArrayRef<Operation *> ops,
                                            llvm::function_ref<const TensorInfo &(Value)> infoOf,
                                            const TensorInfo &result) {
  if (ops.size() != 2 || !isa<ConvOp>(ops[0]) || !isa<ConvOp>(ops[1]) || ops[1]->getOperand(0) != ops[0]->getResult(0))
    return region.emitOpError(
        "is a fused 'depthwise_pointwise' region whose ops are not two convs, one feeding the other");
  auto dw = cast<ConvOp>(ops[0]), pw = cast<ConvOp>(ops[1]);
  auto tiling = dw->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return dw.emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  const int64_t L = tiling.getLanes();
  auto xShape = dw.getInput().getType().getShape(), yShape = pw.getType().getShape();
  auto dwShape = dw.getWeight().getType().getShape();
  const int64_t N = xShape[0], M = xShape[1], H = xShape[2], W = xShape[3];
  const int64_t P = yShape[1], OH = yShape[2], OW = yShape[3];
  const int64_t KH = dwShape[2], KW = dwShape[3];
  auto strides = dw.getStrides(), dil = dw.getDilations(), pads = dw.getPads();
  const int64_t sh = strides[0], sw = strides[1], dh = dil[0], dwl = dil[1];
  const int64_t padT = pads[0], padL = pads[1];
  if (padL > L) return dw.emitOpError("fused depthwise + pointwise: left padding wider than a vector");
  // Scratch row: a vector whose last padL floats are the left padding, the
  // input row from float L on (aligned stores), its right padding rounded
  // up to vectors, and two vectors of slack for the reads of the last output
  // chunk; output column ox reads from float L - padL + ox sw on.
  // (KernelLimits.h: v4f-fuse-depthwise-pointwise sizes this scratch too.)
  const DepthwisePointwiseScratch scratchShape = depthwisePointwiseScratch(W, pads[3], OW, KH, dh, L);
  const int64_t SW = scratchShape.inputRowFloats, origin = L - padL;
  const int64_t window = scratchShape.window;
  if (window < sh) return dw.emitOpError("fused depthwise + pointwise: stride wider than the window");
  const int64_t DW = scratchShape.depthwiseRowFloats; // a depthwise row, whole vectors
  // Scratch floats: scratchShape.floats(R, M, sh) = ((R - 1) sh + window) SW
  // input rows + M R DW depthwise rows.
  const int64_t maxRows =
      std::max<int64_t>(1, (kBlockScratchBytes / int64_t(sizeof(float)) - (window - sh) * SW) / (M * DW + sh * SW));
  const int64_t R = std::min((OH + std::min(OH, kRowBlocks) - 1) / std::min(OH, kRowBlocks), maxRows);
  const int64_t nRB = (OH + R - 1) / R;
  const int64_t IR = (R - 1) * sh + window; // input rows of a block
  const int64_t rowBase = IR * SW;          // the depthwise rows' offset

  // The 1x1 conv's weight as [P][M] floats (it may be stored only packed).
  uint32_t wpBuffer = ctx.plainFloatWeight(infoOf(pw.getWeight()), P * M);
  if (wpBuffer == ~0u) return pw.emitOpError("fused depthwise + pointwise: weight is not a constant");
  std::vector<uint32_t> bindings = {result.buffer, infoOf(dw.getInput()).buffer, infoOf(dw.getWeight()).buffer,
                                    wpBuffer};
  auto slot = [&](Value v) -> std::optional<unsigned> {
    if (!v) return std::nullopt;
    bindings.push_back(infoOf(v).buffer);
    return unsigned(bindings.size() - 1);
  };
  std::optional<unsigned> biasD = slot(dw.getBias()), biasP = slot(pw.getBias()), residual = slot(pw.getResidual());

  auto &sp = ctx.shapes;
  Reg items = sp.constant(N * nRB);
  auto [groups, perGroup] = ctx.splitRows(items, sp.constant(R * OW * M * (KH * KW + P)));
  std::string name = dispatchName(dw) + " + " + dispatchName(pw) + " fused";
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), f32 = kb->f32();
  Value Out = kb->binding(0), X = kb->binding(1), WD = kb->binding(2), WP = kb->binding(3);
  Value scratch = kb->scratch();
  Value zero = kb->cf(0.f, vt);
  const int64_t vecsPerChunk = L >= 16 ? 2 : 1; // AVX2's 16 registers hold 8 x 1 accumulators

  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value n = kb->div(item, kb->c(nRB)), oy0 = kb->mul(kb->rem(item, kb->c(nRB)), kb->c(R));
    Value y0 = kb->sub(kb->mul(oy0, kb->c(sh)), kb->c(padT)); // input row of scratch row 0
    Value rowsOut = kb->min(kb->c(R), kb->sub(kb->c(OH), oy0));
    Value rowsIn = kb->add(kb->mul(kb->sub(rowsOut, kb->c(1)), kb->c(sh)), kb->c(window));

    // 1. Input row j of the block, channel m, into scratch row j.
    auto copyRow = [&](Value j, Value m) {
      emitPaddedRow(*kb, X, kb->add(kb->mul(n, kb->c(M)), m), kb->add(y0, j), scratch, kb->mul(j, kb->c(SW)), H, W, SW,
                    L);
    };

    // 2. Channel m's depthwise rows of the block (after its input rows).
    auto depthwiseRows = [&](Value m) {
      kb->forLoop(kb->c(0), rowsIn, kb->c(1), [&](Value j) { copyRow(j, m); });
      Value bias = biasD ? kb->splat(kb->load(f32, kb->binding(*biasD), m), L) : Value();
      SmallVector<Value> taps = emitDepthwiseTaps(*kb, WD, m, KH * KW, L);
      kb->forLoop(kb->c(0), rowsOut, kb->c(1), [&](Value r) {
        Value top = kb->mul(kb->mul(r, kb->c(sh)), kb->c(SW));
        SmallVector<Value> rows;
        for (int64_t kh = 0; kh < KH; ++kh) rows.push_back(kb->add(top, kb->c(kh * dh * SW)));
        Value dRow = kb->add(kb->c(rowBase), kb->mul(kb->add(kb->mul(m, kb->c(R)), r), kb->c(DW)));
        for (int64_t ox0 = 0; ox0 < OW; ox0 += L) {
          Value acc =
              emitDepthwiseVector(*kb, scratch, rows, origin + ox0 * sw, KW, dwl, sw, taps, bias ? bias : zero, L);
          kb->store(applyActivation(*kb, acc, dw), scratch, kb->add(dRow, kb->c(ox0)));
        }
      });
    };

    // 3. The 1x1 conv of depthwise row r: output channels [p0, p0 + cnt).
    auto pointwiseRow = [&](Value r, Value p0, int64_t cnt) {
      Value oy = kb->add(oy0, r);
      for (int64_t c0 = 0; c0 < OW; c0 += vecsPerChunk * L) {
        const int64_t vecs = std::min(vecsPerChunk, (OW - c0 + L - 1) / L);
        SmallVector<Value> masks;
        for (int64_t v = 0; v < vecs; ++v)
          masks.push_back(c0 + (v + 1) * L <= OW ? Value() : kb->laneMask(kb->c(OW - c0 - v * L), L));
        auto acc = emitPointwiseTile(*kb, WP, p0, M, cnt, vecs, L, [&](Value k, int64_t v) {
          Value row = kb->add(kb->mul(k, kb->c(R)), r);
          return kb->load(vt, scratch, kb->add(kb->c(rowBase + c0 + v * L), kb->mul(row, kb->c(DW))));
        });
        for (int64_t r = 0; r < cnt; ++r) {
          Value p = kb->add(p0, kb->c(r));
          Value bias = biasP ? kb->splat(kb->load(f32, kb->binding(*biasP), p), L) : Value();
          Value outRow = kb->mul(kb->add(kb->mul(kb->add(kb->mul(n, kb->c(P)), p), kb->c(OH)), oy), kb->c(OW));
          for (int64_t v = 0; v < vecs; ++v) {
            Value val = acc[size_t(r * vecs + v)];
            if (bias) val = b.create<arith::AddFOp>(loc, val, bias);
            Value at = kb->add(outRow, kb->c(c0 + v * L));
            if (residual) {
              Value res = masks[v] ? kb->maskedLoad(vt, kb->binding(*residual), at, masks[v])
                                   : kb->load(vt, kb->binding(*residual), at);
              val = b.create<arith::AddFOp>(loc, val, res);
            }
            val = applyActivation(*kb, val, pw);
            if (masks[v])
              kb->maskedStore(val, Out, at, masks[v]);
            else
              kb->store(val, Out, at);
          }
        }
      }
    };

    kb->forLoop(kb->c(0), kb->c(M), kb->c(1), depthwiseRows);
    kb->forLoop(kb->c(0), rowsOut, kb->c(1), [&](Value r) {
      kb->forLoop(kb->c(0), kb->c(P / kChannels), kb->c(1),
                  [&](Value g) { pointwiseRow(r, kb->mul(g, kb->c(kChannels)), kChannels); });
      if (P % kChannels) pointwiseRow(r, kb->c(P / kChannels * kChannels), P % kChannels);
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name, sp.constant((rowBase + M * R * DW) * int64_t(sizeof(float))));
  ctx.plan.dispatches.back().flops = sp.constant(2 * N * M * OH * OW * (KH * KW + P));
  return success();
}

void registerDepthwisePointwiseKernels(CPUKernelRegistry &registry) {
  registry.addRegionKernel(kFusedDepthwisePointwise, emitDepthwisePointwise);
}

} // namespace v4f
