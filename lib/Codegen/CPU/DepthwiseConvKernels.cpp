//===- DepthwiseConvKernels.cpp - direct convolution of one-channel groups ===//
//
// A v4f.conv whose groups each read one input channel (depthwise, and any
// conv of a single-channel input) has a GEMM K of only KH*KW: im2col + GEMM
// would spend its time copying. v4f-select-cpu-strategy marks such convs
// `v4f.conv_algorithm = "depthwise"` and they lower here instead: a direct
// NCHW kernel, vectorized along the output row.
//
// Work item = a block of up to kMaxRows output rows of one (batch, output
// channel) plane. The plane's KH*KW taps are broadcast once per item; the
// rows run in chunks of one vector of output columns (kVectorsPerChunk).
// Per chunk, each input row the block reads is loaded once per kernel
// column and feeds every output row that reads it (two accumulators per
// output row: even and odd kernel rows); input rows in the vertical padding
// are skipped. A chunk whose every tap reads inside the input row uses
// plain vector loads (stride 1: one load per tap; stride 2: two loads and
// an even-lane shuffle); the chunks at the borders use lane-masked loads
// that read the padding as 0 (masks built once per chunk and kernel column)
// and masked stores. (Two-vector chunks were slower: at AVX-512's 32
// columns per chunk nearly every chunk of a 56-wide row is a border chunk;
// measurements: bench/results/history.md, "Measurements behind code
// decisions".) Bias, residual and the fused activation apply before the
// store, as in the GEMM epilogue.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <map>

using namespace mlir;

namespace v4f {

namespace {
constexpr int64_t kVectorsPerChunk = 1;
/// Output rows per work item, at most.
constexpr int64_t kMaxRows = 4;
/// Stride-2 convs whose input (per batch) is larger keep one row per item.
constexpr int64_t kRowBlockInputBytes = 1 << 20;
} // namespace

LogicalResult emitDepthwiseConv(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                const TensorInfo &result) {
  auto conv = cast<ConvOp>(op);
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return op->emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0], &W = operands[1];
  auto wShape = conv.getWeight().getType().getShape();
  const int64_t G = conv.getGroups(), OC = wShape[0], KH = wShape[2], KW = wShape[3];
  const int64_t OCg = OC / G, taps = KH * KW;
  const int64_t L = tiling.getLanes(), CW = L * kVectorsPerChunk;
  auto strides = conv.getStrides(), dil = conv.getDilations(), pads = conv.getPads();
  const int64_t sh = strides[0], sw = strides[1];
  if (wShape[1] != 1 || (sw != 1 && sw != 2))
    return op->emitOpError("is marked depthwise but its groups read ") << wShape[1] << " channels at stride " << sw;
  Reg Nb = X.dims[0], H = X.dims[2], Wd = X.dims[3], OH = result.dims[2], OW = result.dims[3];
  // Rows per work item: R output rows share their input rows, so each
  // loaded input vector feeds up to KH output rows (a 5x5 stride-1 kernel:
  // 8 input rows of loads for 4 output rows instead of 20). With a static
  // OH, R is the even split of OH into blocks of at most kMaxRows. Stride 2
  // over an input larger than kRowBlockInputBytes keeps one row per item:
  // interleaving 2R + 1 input rows of a plane that streams from memory ran
  // slower there (MobileNetV2's 96 x 112 x 112 -> 56; measurements:
  // bench/results/history.md, "Measurements behind code decisions").
  int64_t R = kMaxRows;
  std::optional<int64_t> hC = sp.constValue(H), wC = sp.constValue(Wd);
  if (sh == 2 && hC && wC && G * *hC * *wC * 4 > kRowBlockInputBytes) // G one-channel groups
    R = 1;
  if (auto ohC = sp.constValue(OH); ohC && *ohC > 0) {
    int64_t blocks = (*ohC + R - 1) / R;
    R = (*ohC + blocks - 1) / blocks;
  }
  Reg rowBlocks = sp.ceilDiv(OH, sp.constant(R));
  Reg items = sp.mul(sp.mul(Nb, sp.constant(OC)), rowBlocks);
  Reg rows = sp.mul(sp.mul(Nb, sp.constant(OC)), OH);
  auto [groups, itemsPerGroup] = ctx.splitRows(items, sp.mul(sp.mul(OW, sp.constant(R)), sp.constant(taps)));
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(L);
  using P = arith::CmpIPredicate;
  auto land = [&](Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y).getResult(); };

  std::vector<uint32_t> bindings = {result.buffer, X.buffer, W.buffer};
  auto [biasSlot, residualSlot] = bindConvEpilogue(conv, operands, bindings);

  // The input rows of a block, relative to its first output row's first
  // kernel row: output row r reads relative row r * sh + kh * dh for kernel
  // row kh. Each relative row lists the (r, kh) that read it.
  const int64_t dh = dil[0];
  std::map<int64_t, SmallVector<std::pair<int64_t, int64_t>>> readers;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t kh = 0; kh < KH; ++kh) readers[r * sh + kh * dh].push_back({r, kh});

  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(itemsPerGroup));
  Value h = kb->dim(H), w = kb->dim(Wd), oh = kb->dim(OH), ow = kb->dim(OW);
  Value inPlaneSize = kb->mul(h, w), outPlaneSize = kb->mul(oh, ow);
  Value Xp = kb->binding(1), Wp = kb->binding(2), Out = kb->binding(0);
  // Lane i of `iota` is i (i64), for the border masks.
  auto idxType = VectorType::get({L}, b.getI64Type());
  SmallVector<int64_t> iotaValues(L);
  for (int64_t i = 0; i < L; ++i) iotaValues[i] = i;
  Value iota =
      b.create<arith::ConstantOp>(loc, idxType, DenseElementsAttr::get(idxType, ArrayRef<int64_t>(iotaValues)));
  Value zeroV = kb->cf(0.f, vt);
  Value blocksV = kb->dim(rowBlocks);

  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value plane = kb->div(item, blocksV), y0 = kb->mul(kb->rem(item, blocksV), kb->c(R));
    Value n = kb->div(plane, kb->c(OC)), oc = kb->rem(plane, kb->c(OC));
    Value channel = kb->add(kb->mul(n, kb->c(G)), kb->div(oc, kb->c(OCg)));
    Value inPlane = kb->mul(channel, inPlaneSize);
    SmallVector<Value> wv;
    for (int64_t t = 0; t < taps; ++t)
      wv.push_back(kb->splat(kb->load(kb->f32(), Wp, kb->add(kb->mul(oc, kb->c(taps)), kb->c(t))), L));
    Value bias = biasSlot ? kb->splat(kb->load(kb->f32(), kb->binding(*biasSlot), oc), L) : Value();
    // Per relative input row: inside the input (else it reads as 0), and
    // its start (row 0 when outside, never read).
    Value ihFirst = kb->sub(kb->mul(y0, kb->c(sh)), kb->c(pads[0]));
    SmallVector<Value> relOk, relBase;
    for (auto &[rel, who] : readers) {
      Value ih = kb->add(ihFirst, kb->c(rel));
      Value ok = land(kb->cmp(P::sge, ih, kb->c(0)), kb->cmp(P::slt, ih, h));
      relOk.push_back(ok);
      relBase.push_back(kb->add(inPlane, kb->mul(kb->select(ok, ih, kb->c(0)), w)));
    }
    // The lanes of an L-float run from input column `iw` that lie in
    // [0, W). Depends on the column only, so a chunk builds them once and
    // every input row reuses them.
    auto runMask = [&](Value iw) -> Value {
      Value col = b.create<arith::AddIOp>(loc, iota, b.create<vector::BroadcastOp>(loc, idxType, iw));
      Value lo = b.create<arith::CmpIOp>(loc, P::sge, col, b.create<vector::BroadcastOp>(loc, idxType, kb->c(0)));
      Value hi = b.create<arith::CmpIOp>(loc, P::slt, col, b.create<vector::BroadcastOp>(loc, idxType, w));
      return land(lo, hi);
    };
    // Column offset and border masks (empty when unmasked) of the runs that
    // output columns x .. x+L-1 read for kernel column kw: one run at
    // stride 1, two (then the even lanes) at stride 2.
    struct Taps {
      Value iw;
      SmallVector<Value, 2> masks;
    };
    auto tapsFor = [&](Value x, int64_t kw, bool masked) {
      Taps t;
      t.iw = kb->add(kb->mul(x, kb->c(sw)), kb->c(kw * dil[1] - pads[1]));
      if (masked)
        for (int64_t half = 0; half < sw; ++half) t.masks.push_back(runMask(kb->add(t.iw, kb->c(half * L))));
      return t;
    };
    auto loadInputs = [&](Value base, const Taps &t) -> Value {
      SmallVector<Value, 2> runs;
      for (int64_t half = 0; half < sw; ++half) {
        Value idx = kb->add(base, kb->add(t.iw, kb->c(half * L)));
        runs.push_back(t.masks.empty() ? kb->load(vt, Xp, idx) : kb->maskedLoad(vt, Xp, idx, t.masks[half]));
      }
      if (sw == 1) return runs[0];
      SmallVector<int64_t> even(L);
      for (int64_t i = 0; i < L; ++i) even[i] = 2 * i;
      return b.create<vector::ShuffleOp>(loc, runs[0], runs[1], even);
    };
    // Two accumulators per output row (even and odd kernel rows): 2R
    // independent FMA chains.
    auto chunk = [&](Value x0, bool masked) {
      SmallVector<Taps> tapCols;
      for (int64_t kw = 0; kw < KW; ++kw) tapCols.push_back(tapsFor(x0, kw, masked));
      SmallVector<Value> acc(2 * R, zeroV);
      SmallVector<Type> types(2 * R, vt);
      size_t i = 0;
      for (auto &[rel, who] : readers) {
        const auto &readersOfRow = who;
        Value base = relBase[i];
        acc = kb->ifYield(
            relOk[i], types,
            [&] {
              SmallVector<Value> a = acc;
              for (int64_t kw = 0; kw < KW; ++kw) {
                Value v = loadInputs(base, tapCols[kw]);
                for (auto [r, kh] : readersOfRow) {
                  Value &slot = a[2 * r + (kh & 1)];
                  slot = b.create<vector::FMAOp>(loc, wv[kh * KW + kw], v, slot);
                }
              }
              return a;
            },
            [&] { return acc; });
        ++i;
      }
      Value mask = masked ? kb->laneMask(kb->sub(ow, x0), L) : Value();
      for (int64_t r = 0; r < R; ++r) {
        Value y = kb->add(y0, kb->c(r));
        auto store = [&] {
          Value val = b.create<arith::AddFOp>(loc, acc[2 * r], acc[2 * r + 1]);
          if (bias) val = b.create<arith::AddFOp>(loc, val, bias);
          Value idx = kb->add(kb->add(kb->mul(plane, outPlaneSize), kb->mul(y, ow)), x0);
          if (residualSlot) {
            Value res = masked ? kb->maskedLoad(vt, kb->binding(*residualSlot), idx, mask)
                               : kb->load(vt, kb->binding(*residualSlot), idx);
            val = b.create<arith::AddFOp>(loc, val, res);
          }
          val = applyActivation(*kb, val, conv);
          if (masked)
            kb->maskedStore(val, Out, idx, mask);
          else
            kb->store(val, Out, idx);
        };
        if (r == 0)
          store(); // y0 < OH for every item
        else
          kb->ifThen(kb->cmp(P::slt, y, oh), store);
      }
    };
    kb->forLoop(kb->c(0), ow, kb->c(CW), [&](Value x0) {
      // Every tap of the chunk reads inside the row: the first input column
      // is >= 0 and the last (of the last output column, with the stride-2
      // window's extra lane) is < W.
      Value first = kb->sub(kb->mul(x0, kb->c(sw)), kb->c(pads[1]));
      Value last = kb->add(kb->mul(kb->add(x0, kb->c(CW - 1)), kb->c(sw)),
                           kb->c((KW - 1) * dil[1] - pads[1] + (sw == 2 ? 1 : 0)));
      Value interior = land(land(kb->cmp(P::sge, first, kb->c(0)), kb->cmp(P::slt, last, w)),
                            kb->cmp(P::sle, kb->add(x0, kb->c(CW)), ow));
      kb->ifThenElse(
          interior, [&] { chunk(x0, false); }, [&] { chunk(x0, true); });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name);
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * taps), sp.mul(rows, OW));
  return success();
}

} // namespace v4f
