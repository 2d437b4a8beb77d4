//===- PointwiseDepthwiseKernels.cpp - 1x1 conv + depthwise conv, fused ---===//
//
// A region merged by v4f-fuse-pointwise-depthwise: a 1x1 conv (C -> M
// channels, bias, activation) whose result only a depthwise conv (M
// channels, KH x KW, stride 1 or 2, bias, residual, activation) reads. One
// kernel; a work item is one image, a block of output rows (the whole image
// when there are at least 4 groups of 8 channels to share between workers)
// and 8 channels. The depthwise conv reads its input from a ring of the last
// (KH - 1) * dh + sh expanded rows per channel in the worker's scratch, each
// row with the conv's zero padding around it (rows above or below the image
// are zeros). Per output row:
//
//   1. the sh input rows it adds are expanded into the ring — a register
//      tile of 8 channels x 1-2 vectors of pixels, the input rows loaded as
//      vectors and the weights broadcast, then bias and activation;
//   2. the output row of the 8 channels is computed from the ring, one vector
//      of output columns at a time (stride 2: two loads and an even-lane
//      shuffle per tap), bias, residual, activation, and stored.
//
// The expanded tensor never exists, and no row is expanded twice but the
// (KH - 1) * dh + 1 - sh rows at the start of a block. The scratch (8 x ring
// x padded row floats: 20 KB for MobileNetV2's 112-wide stride-2 block)
// stays in L1.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

namespace {
/// Channels per work item (the register tile's rows).
constexpr int64_t kChannels = 8;
} // namespace

SmallVector<Value> emitPointwiseTile(KernelBuilder &kb, Value weights, Value r0, int64_t K, int64_t rows, int64_t vecs,
                                     int64_t lanes, llvm::function_ref<Value(Value, int64_t)> input) {
  OpBuilder &b = kb.b;
  SmallVector<Value> init(size_t(rows * vecs), kb.cf(0.f, kb.vec(lanes)));
  return kb.forLoop(kb.c(0), kb.c(K), kb.c(1), init, [&](Value k, ValueRange a) {
    SmallVector<Value> xv, next;
    for (int64_t v = 0; v < vecs; ++v) xv.push_back(input(k, v));
    for (int64_t r = 0; r < rows; ++r) {
      Value w = kb.splat(kb.load(kb.f32(), weights, kb.add(kb.mul(kb.add(r0, kb.c(r)), kb.c(K)), k)), lanes);
      for (int64_t v = 0; v < vecs; ++v)
        next.push_back(b.create<vector::FMAOp>(kb.loc, w, xv[size_t(v)], a[size_t(r * vecs + v)]).getResult());
    }
    return next;
  });
}

SmallVector<Value> emitDepthwiseTaps(KernelBuilder &kb, Value weights, Value m, int64_t taps, int64_t lanes) {
  SmallVector<Value> out;
  for (int64_t t = 0; t < taps; ++t)
    out.push_back(kb.splat(kb.load(kb.f32(), weights, kb.add(kb.mul(m, kb.c(taps)), kb.c(t))), lanes));
  return out;
}

Value emitDepthwiseVector(KernelBuilder &kb, Value scratch, ArrayRef<Value> rows, int64_t column, int64_t KW,
                          int64_t dwl, int64_t sw, ArrayRef<Value> taps, Value init, int64_t lanes) {
  const int64_t L = lanes;
  Type vt = kb.vec(L);
  SmallVector<int64_t> even(L);
  for (int64_t t = 0; t < L; ++t) even[t] = 2 * t;
  Value acc = init;
  for (auto [kh, row] : llvm::enumerate(rows))
    for (int64_t kw = 0; kw < KW; ++kw) {
      Value at = kb.add(row, kb.c(column + kw * dwl));
      Value x = sw == 1 ? kb.load(vt, scratch, at)
                        : kb.b.create<vector::ShuffleOp>(kb.loc, kb.load(vt, scratch, at),
                                                         kb.load(vt, scratch, kb.add(at, kb.c(L))), even)
                              .getResult();
      acc = kb.b.create<vector::FMAOp>(kb.loc, taps[kh * KW + kw], x, acc).getResult();
    }
  return acc;
}

static LogicalResult emitPointwiseDepthwise(CPUKernelContext &ctx, DispatchOp region, ArrayRef<Operation *> ops,
                                            llvm::function_ref<const TensorInfo &(Value)> infoOf,
                                            const TensorInfo &result) {
  if (ops.size() != 2 || !isa<ConvOp>(ops[0]) || !isa<ConvOp>(ops[1]) || ops[1]->getOperand(0) != ops[0]->getResult(0))
    return region.emitOpError(
        "is a fused 'pointwise_depthwise' region whose ops are not two convs, one feeding the other");
  auto pw = cast<ConvOp>(ops[0]), dw = cast<ConvOp>(ops[1]);
  auto tiling = dw->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return dw.emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  const int64_t L = tiling.getLanes();
  auto xShape = pw.getInput().getType().getShape(), yShape = dw.getType().getShape();
  auto dwShape = dw.getWeight().getType().getShape();
  const int64_t N = xShape[0], C = xShape[1], H = xShape[2], W = xShape[3];
  const int64_t M = pw.getWeight().getType().getDimSize(0), KH = dwShape[2], KW = dwShape[3];
  const int64_t OH = yShape[2], OW = yShape[3];
  auto strides = dw.getStrides(), dil = dw.getDilations(), pads = dw.getPads();
  const int64_t sh = strides[0], sw = strides[1], dh = dil[0], dwl = dil[1];
  const int64_t padT = pads[0], padL = pads[1];
  if (padL > L) return dw.emitOpError("fused pointwise + depthwise: left padding wider than a vector");
  // Scratch row: the padded input row, rounded up to vectors, plus two
  // vectors of slack for the reads of the last output chunk.
  const int64_t SW = (W + pads[1] + pads[3] + L - 1) / L * L + 2 * L;
  // A ring of the last `ring` expanded rows per channel: output row r reads
  // input rows r sh + kh dh (relative to the block's first), so after the
  // rows through r sh + (KH - 1) dh are expanded the ring still holds
  // every row from r sh - sh + 1 on.
  const int64_t window = (KH - 1) * dh + 1, ring = window - 1 + sh, pre = window - sh;
  if (pre < 0) return dw.emitOpError("fused pointwise + depthwise: stride wider than the window");
  const int64_t nGroups = (M + kChannels - 1) / kChannels;
  // Blocks of output rows: the whole image unless there are too few channel
  // groups to share between workers (a block boundary recomputes `pre`
  // rows).
  const int64_t nRB = std::min<int64_t>(OH, nGroups >= 4 ? 1 : 4), R = (OH + nRB - 1) / nRB;
  const int64_t chanStride = ring * SW; // scratch floats per channel

  // The 1x1 conv's weight as [M][C] floats (it may be stored only packed).
  uint32_t waBuffer = ctx.plainFloatWeight(infoOf(pw.getWeight()), M * C);
  if (waBuffer == ~0u) return pw.emitOpError("fused pointwise + depthwise: weight is not a constant");
  std::vector<uint32_t> bindings = {result.buffer, infoOf(pw.getInput()).buffer, waBuffer,
                                    infoOf(dw.getWeight()).buffer};
  auto slot = [&](Value v) -> std::optional<unsigned> {
    if (!v) return std::nullopt;
    bindings.push_back(infoOf(v).buffer);
    return unsigned(bindings.size() - 1);
  };
  std::optional<unsigned> biasA = slot(pw.getBias()), biasB = slot(dw.getBias()), residual = slot(dw.getResidual());

  auto &sp = ctx.shapes;
  Reg items = sp.constant(N * nRB * nGroups);
  auto [groups, perGroup] = ctx.splitRows(items, sp.constant(kChannels * R * W * C));
  std::string name = dispatchName(pw) + " + " + dispatchName(dw) + " fused";
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L), f32 = kb->f32();
  Value Out = kb->binding(0), X = kb->binding(1), WA = kb->binding(2), WB = kb->binding(3);
  Value scratch = kb->scratch();
  Value zero = kb->cf(0.f, vt);
  const int64_t vecsPerChunk = L >= 16 ? 2 : 1; // AVX2's 16 registers hold 8 x 1 accumulators

  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value g = kb->rem(item, kb->c(nGroups)), block = kb->div(item, kb->c(nGroups));
    Value n = kb->div(block, kb->c(nRB)), oy0 = kb->mul(kb->rem(block, kb->c(nRB)), kb->c(R));
    Value y0 = kb->sub(kb->mul(oy0, kb->c(sh)), kb->c(padT)); // input row of scratch row 0
    Value xImage = kb->mul(n, kb->c(C * H * W));
    Value rowsOut = kb->min(kb->c(R), kb->sub(kb->c(OH), oy0));
    // Channels [m0, m0 + cnt) of the block.
    auto channelGroup = [&](Value m0, int64_t cnt) {
      // 1. Expansion of relative input row j into its ring slot.
      auto expandRow = [&](Value j) {
        Value y = kb->add(y0, j);
        Value inside = b.create<arith::AndIOp>(loc, kb->cmp(arith::CmpIPredicate::sge, y, kb->c(0)),
                                               kb->cmp(arith::CmpIPredicate::slt, y, kb->c(H)));
        Value rowBase = kb->mul(kb->rem(j, kb->c(ring)), kb->c(SW));
        kb->ifThenElse(
            inside,
            [&] {
              for (int64_t r = 0; r < cnt; ++r) kb->store(zero, scratch, kb->add(kb->c(r * chanStride), rowBase));
              Value xRow = kb->add(xImage, kb->mul(y, kb->c(W)));
              for (int64_t c0 = 0; c0 < W; c0 += vecsPerChunk * L) {
                const int64_t vecs = std::min(vecsPerChunk, (W - c0 + L - 1) / L);
                SmallVector<Value> masks;
                for (int64_t v = 0; v < vecs; ++v)
                  masks.push_back(c0 + (v + 1) * L <= W ? Value() : kb->laneMask(kb->c(W - c0 - v * L), L));
                auto acc = emitPointwiseTile(*kb, WA, m0, C, cnt, vecs, L, [&](Value k, int64_t v) {
                  Value at = kb->add(xRow, kb->add(kb->mul(k, kb->c(H * W)), kb->c(c0 + v * L)));
                  return masks[size_t(v)] ? kb->maskedLoad(vt, X, at, masks[size_t(v)]) : kb->load(vt, X, at);
                });
                for (int64_t r = 0; r < cnt; ++r) {
                  Value bias =
                      biasA ? kb->splat(kb->load(f32, kb->binding(*biasA), kb->add(m0, kb->c(r))), L) : Value();
                  for (int64_t v = 0; v < vecs; ++v) {
                    Value val = acc[size_t(r * vecs + v)];
                    if (bias) val = b.create<arith::AddFOp>(loc, val, bias);
                    val = applyActivation(*kb, val, pw);
                    Value at = kb->add(kb->c(r * chanStride + padL + c0 + v * L), rowBase);
                    if (masks[v])
                      kb->maskedStore(val, scratch, at, masks[v]);
                    else
                      kb->store(val, scratch, at);
                  }
                }
              }
              // The right padding and the slack past it.
              for (int64_t r = 0; r < cnt; ++r)
                for (int64_t j = padL + W; j < SW; j += L)
                  kb->store(zero, scratch, kb->add(kb->c(r * chanStride + std::min(j, SW - L)), rowBase));
            },
            [&] {
              for (int64_t r = 0; r < cnt; ++r)
                for (int64_t j = 0; j < SW; j += L)
                  kb->store(zero, scratch, kb->add(kb->c(r * chanStride + j), rowBase));
            });
      };
      // 2. The depthwise conv of the group's channels from the ring.
      auto depthwiseRow = [&](Value oyr) {
        kb->forLoop(kb->c(0), kb->c(cnt), kb->c(1), [&](Value r) {
          Value m = kb->add(m0, r);
          Value chanBase = kb->mul(r, kb->c(chanStride));
          Value bias = biasB ? kb->splat(kb->load(f32, kb->binding(*biasB), m), L) : Value();
          Value outRow =
              kb->mul(kb->add(kb->mul(kb->add(kb->mul(n, kb->c(M)), m), kb->c(OH)), kb->add(oy0, oyr)), kb->c(OW));
          SmallVector<Value> rows;
          for (int64_t kh = 0; kh < KH; ++kh) {
            Value j = kb->add(kb->mul(oyr, kb->c(sh)), kb->c(kh * dh));
            rows.push_back(kb->add(chanBase, kb->mul(kb->rem(j, kb->c(ring)), kb->c(SW))));
          }
          SmallVector<Value> taps = emitDepthwiseTaps(*kb, WB, m, KH * KW, L);
          for (int64_t ox0 = 0; ox0 < OW; ox0 += L) {
            Value mask = ox0 + L <= OW ? Value() : kb->laneMask(kb->c(OW - ox0), L);
            Value acc = emitDepthwiseVector(*kb, scratch, rows, ox0 * sw, KW, dwl, sw, taps, bias ? bias : zero, L);
            Value at = kb->add(outRow, kb->c(ox0));
            if (residual) {
              Value res = mask ? kb->maskedLoad(vt, kb->binding(*residual), at, mask)
                               : kb->load(vt, kb->binding(*residual), at);
              acc = b.create<arith::AddFOp>(loc, acc, res);
            }
            acc = applyActivation(*kb, acc, dw);
            if (mask)
              kb->maskedStore(acc, Out, at, mask);
            else
              kb->store(acc, Out, at);
          }
        });
      };
      // Rows 0 .. pre - 1, then per output row the sh rows it adds.
      kb->forLoop(kb->c(0), kb->c(pre), kb->c(1), expandRow);
      kb->forLoop(kb->c(0), rowsOut, kb->c(1), [&](Value oyr) {
        Value first = kb->add(kb->mul(oyr, kb->c(sh)), kb->c(pre));
        kb->forLoop(first, kb->add(first, kb->c(sh)), kb->c(1), expandRow);
        depthwiseRow(oyr);
      });
    };
    Value m0 = kb->mul(g, kb->c(kChannels));
    if (M % kChannels == 0)
      channelGroup(m0, kChannels);
    else
      kb->ifThenElse(
          kb->cmp(arith::CmpIPredicate::slt, g, kb->c(M / kChannels)), [&] { channelGroup(m0, kChannels); },
          [&] { channelGroup(m0, M % kChannels); });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name, sp.constant(kChannels * chanStride * int64_t(sizeof(float))));
  ctx.plan.dispatches.back().flops = sp.constant(2 * N * M * (H * W * C + OH * OW * KH * KW));
  return success();
}

void registerPointwiseDepthwiseKernels(CPUKernelRegistry &registry) {
  registry.addRegionKernel(kFusedPointwiseDepthwise, emitPointwiseDepthwise);
}

} // namespace v4f
