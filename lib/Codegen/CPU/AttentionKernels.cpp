//===- AttentionKernels.cpp - fused attention (one dispatch) -------------===//
//
// A region merged by v4f-fuse-attention-regions: [transpose Q] [transpose
// KT] matmul(Q, KT) -> softmax(scale, mask) -> [transpose V] matmul(P, V)
// [transpose out], static float32. One kernel; a work item is one batch
// index (e.g. one head) and one block of QB = LANES query rows:
//
//   A. the block's queries, transposed into scratch QT[D][QB] (gathers:
//      queries in lanes);
//   B. scores^T[l][q] = sum_d K[l, d] * QT[d][q] for 8 keys at a time (a key
//      element broadcast against a vector of queries), times the scale
//      plus the mask, into scratch ST[L][QB], with the per-query running max;
//   C. exp(x - max) in place and the per-query sums — the softmax runs down
//      the columns of ST, so every reduction is a vertical vector op;
//   D. out[q, :] = (sum_l ST[l][q] * V[l, :]) / sum[q] for 8 queries x 2
//      vectors of the head dim at a time (a probability broadcast against
//      rows of V), stored straight into the output's layout.
//
// The scores never leave the worker's scratch ((D + L + 1) x QB floats:
// 12 KB for BERT-base at 128 tokens), and the absorbed transposes are
// strides: Q and K^T are read element by element, V's rows and the output's
// rows must be contiguous (the pass checks).
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;

namespace v4f {

namespace {

std::vector<int64_t> contiguousStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Where operand `v` of the attention comes from: the external value read
/// and the strides of `v`'s logical dims in it (an absorbed transpose
/// permutes the external's strides).
struct Source {
  Value external;
  std::vector<int64_t> strides;
};

Source sourceOf(Value v, DispatchOp region) {
  auto shape = [](Value x) { return llvm::cast<RankedTensorType>(x.getType()).getShape(); };
  if (auto t = v.getDefiningOp<TransposeOp>(); t && t->getParentOp() == region.getOperation()) {
    std::vector<int64_t> in = contiguousStrides(shape(t.getInput()));
    Source s{t.getInput(), {}};
    for (int64_t p : t.getPerm()) s.strides.push_back(in[size_t(p)]);
    return s;
  }
  return {v, contiguousStrides(shape(v))};
}

} // namespace

LogicalResult emitAttention(CPUKernelContext &ctx, DispatchOp region, ArrayRef<Operation *> ops,
                            llvm::function_ref<const TensorInfo &(Value)> infoOf, const TensorInfo &result) {
  if (!isAttentionRegion(ops))
    return region.emitOpError("is a fused 'attention' region whose ops are not two matmuls around a softmax");
  SoftmaxOp softmax;
  for (Operation *op : ops)
    if (auto s = dyn_cast<SoftmaxOp>(op)) softmax = s;
  auto m1 = softmax.getInput().getDefiningOp<MatMulOp>();
  auto m2 = cast<MatMulOp>(*softmax->getUsers().begin());
  auto tiling = m1->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!tiling) return m1.emitOpError("has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation");
  const int64_t QB = tiling.getLanes();
  if (QB != 4 && QB != 8 && QB != 16) return m1.emitOpError("fused attention: unsupported vector width");
  auto scoresType = softmax.getInput().getType();
  const int64_t rank = scoresType.getRank();
  auto scoresShape = scoresType.getShape();
  const int64_t S = scoresShape[rank - 2], L = scoresShape[rank - 1];
  const int64_t D = m1.getLhs().getType().getDimSize(rank - 1), D2 = m2.getType().getDimSize(rank - 1);
  const int64_t nb = rank - 2;
  int64_t batches = 1;
  for (int64_t i = 0; i < nb; ++i) batches *= scoresShape[i];

  Source q = sourceOf(m1.getLhs(), region), kt = sourceOf(m1.getRhs(), region), v = sourceOf(m2.getRhs(), region);
  // The output: m2's result, or the transpose of it that ends the region.
  Operation *last = ops.back();
  std::vector<int64_t> oStrides = contiguousStrides(m2.getType().getShape());
  if (auto t = dyn_cast<TransposeOp>(last); t && t.getInput() == m2.getResult()) {
    std::vector<int64_t> z = contiguousStrides(t.getType().getShape());
    auto perm = t.getPerm();
    for (size_t j = 0; j < perm.size(); ++j) oStrides[size_t(perm[j])] = z[j];
  }
  if (v.strides[size_t(rank - 1)] != 1 || oStrides[size_t(rank - 1)] != 1)
    return m2.emitOpError("fused attention: V and the output need contiguous rows");
  // The mask's strides over the scores' dims (broadcast dims: 0).
  Value maskValue = softmax.getMask();
  std::vector<int64_t> mStrides(size_t(rank), 0);
  if (maskValue) {
    auto mShape = llvm::cast<RankedTensorType>(maskValue.getType()).getShape();
    std::vector<int64_t> ms = contiguousStrides(mShape);
    for (size_t i = 0; i < mShape.size(); ++i)
      if (mShape[i] != 1) mStrides[size_t(rank) - mShape.size() + i] = ms[i];
  }
  const float scale = softmax.getScale().convertToFloat();

  auto &sp = ctx.shapes;
  const int64_t nQB = (S + QB - 1) / QB;
  Reg items = sp.constant(batches * nQB);
  auto [groups, perGroup] = ctx.splitRows(items, sp.constant(QB * L * (D + D2)));
  std::string name = dispatchName(m1) + " + " + std::to_string(ops.size() - 1) + " fused (attention)";
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  Type vt = kb->vec(QB);
  Type f32 = kb->f32();
  Value Out = kb->binding(0), Q = kb->binding(1), K = kb->binding(2), V = kb->binding(3);
  Value M = maskValue ? kb->binding(4) : Value();
  Value scratch = kb->scratch();
  const int64_t stOff = D * QB, invOff = (D + L) * QB; // scratch: QT, ST, 1/sum
  auto idxType = VectorType::get({QB}, b.getI64Type());
  auto splatI = [&](Value x) { return b.create<vector::BroadcastOp>(loc, idxType, x).getResult(); };
  Value lanes = kb->iota(QB);
  auto gather = [&](Value base, Value first, int64_t stride, Value mask) -> Value {
    // Elements base[first + lane * stride] where `mask` is set, else 0.
    Value idx = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, lanes, splatI(kb->c(stride))), splatI(first));
    return kb->maskedGather(vt, base, b.create<arith::SelectOp>(loc, mask, idx, splatI(first)), mask);
  };
  auto fma = [&](Value a, Value x, Value acc) { return b.create<vector::FMAOp>(loc, a, x, acc).getResult(); };

  auto [begin, end] = kb->workgroupRange(kb->dim(items), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value item) {
    Value bi = kb->div(item, kb->c(nQB)), s0 = kb->mul(kb->rem(item, kb->c(nQB)), kb->c(QB));
    // Offsets of batch index bi in each operand.
    Value qOff = kb->c(0), kOff = kb->c(0), vOff = kb->c(0), oOff = kb->c(0), mOff = kb->c(0);
    Value rest = bi;
    for (int64_t j = nb; j-- > 0;) {
      Value digit = kb->rem(rest, kb->c(scoresShape[j]));
      rest = kb->div(rest, kb->c(scoresShape[j]));
      qOff = kb->add(qOff, kb->mul(digit, kb->c(q.strides[j])));
      kOff = kb->add(kOff, kb->mul(digit, kb->c(kt.strides[j])));
      vOff = kb->add(vOff, kb->mul(digit, kb->c(v.strides[j])));
      oOff = kb->add(oOff, kb->mul(digit, kb->c(oStrides[j])));
      mOff = kb->add(mOff, kb->mul(digit, kb->c(mStrides[j])));
    }
    const int64_t qS = q.strides[rank - 2], qD = q.strides[rank - 1];
    const int64_t kD = kt.strides[rank - 2], kL = kt.strides[rank - 1];
    const int64_t vL = v.strides[rank - 2], oS = oStrides[rank - 2];
    const int64_t mS = mStrides[rank - 2], mL = mStrides[rank - 1];
    Value valid = kb->min(kb->c(QB), kb->sub(kb->c(S), s0)); // query rows of this block
    Value laneOk = kb->laneMask(valid, QB);
    // A. QT[d][q] = Q[s0 + q, d].
    Value qFirst = kb->add(qOff, kb->mul(s0, kb->c(qS)));
    kb->forLoop(kb->c(0), kb->c(D), kb->c(1), [&](Value d) {
      kb->store(gather(Q, kb->add(qFirst, kb->mul(d, kb->c(qD))), qS, laneOk), scratch, kb->mul(d, kb->c(QB)));
    });
    // B. Scores of keys [l0, l0 + rows) into ST, scaled and masked; the
    // running max per query.
    Value scaleV = kb->cf(scale, vt);
    auto scoreTile = [&](Value l0, int64_t rows, Value runningMax) -> Value {
      SmallVector<Value> init(size_t(rows), kb->cf(0.f, vt));
      auto acc = kb->forLoop(kb->c(0), kb->c(D), kb->c(1), init, [&](Value d, ValueRange a) -> SmallVector<Value> {
        Value qv = kb->load(vt, scratch, kb->mul(d, kb->c(QB)));
        Value kRow = kb->add(kOff, kb->mul(d, kb->c(kD)));
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value kv = kb->load(f32, K, kb->add(kRow, kb->mul(kb->add(l0, kb->c(r)), kb->c(kL))));
          next.push_back(fma(kb->splat(kv, QB), qv, a[size_t(r)]));
        }
        return next;
      });
      Value mx = runningMax;
      for (int64_t r = 0; r < rows; ++r) {
        Value l = kb->add(l0, kb->c(r));
        Value x = b.create<arith::MulFOp>(loc, acc[size_t(r)], scaleV);
        if (M) {
          Value at = kb->add(mOff, kb->mul(l, kb->c(mL)));
          Value m = mS == 0 ? kb->splat(kb->load(f32, M, at), QB)
                            : gather(M, kb->add(at, kb->mul(s0, kb->c(mS))), mS, laneOk);
          x = b.create<arith::AddFOp>(loc, x, m);
        }
        kb->store(x, scratch, kb->add(kb->c(stOff), kb->mul(l, kb->c(QB))));
        mx = b.create<arith::MaxNumFOp>(loc, mx, x);
      }
      return mx;
    };
    constexpr int64_t kKeyRows = 8, kQueryRows = 8;
    const int64_t fullKeys = L / kKeyRows * kKeyRows;
    Value mx = kb->cf(-INFINITY, vt);
    if (fullKeys)
      mx =
          kb->forLoop(kb->c(0), kb->c(fullKeys), kb->c(kKeyRows), ValueRange{mx},
                      [&](Value l0, ValueRange a) -> SmallVector<Value> { return {scoreTile(l0, kKeyRows, a[0])}; })[0];
    if (L > fullKeys) mx = scoreTile(kb->c(fullKeys), L - fullKeys, mx);
    // C. exp(x - max) in place, summed per query; 1 / sum into scratch.
    auto sum = kb->forLoop(
        kb->c(0), kb->c(L), kb->c(1), ValueRange{kb->cf(0.f, vt)}, [&](Value l, ValueRange a) -> SmallVector<Value> {
          Value at = kb->add(kb->c(stOff), kb->mul(l, kb->c(QB)));
          Value e = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, kb->load(vt, scratch, at), mx));
          kb->store(e, scratch, at);
          return {b.create<arith::AddFOp>(loc, a[0], e)};
        });
    kb->store(b.create<arith::DivFOp>(loc, kb->cf(1.f, vt), sum[0]), scratch, kb->c(invOff));
    // D. Output rows [r0, r0 + rows) of the block: probabilities broadcast
    // against rows of V, in chunks of 2 vectors of the head dim.
    const int64_t nr = 2 * QB;
    auto outTile = [&](Value r0, int64_t rows) {
      for (int64_t c0 = 0; c0 < D2; c0 += nr) {
        const int64_t vecs = std::min<int64_t>(2, (D2 - c0 + QB - 1) / QB);
        SmallVector<Value> masks;
        for (int64_t w = 0; w < vecs; ++w)
          masks.push_back(c0 + (w + 1) * QB <= D2 ? Value() : kb->laneMask(kb->c(D2 - c0 - w * QB), QB));
        SmallVector<Value> init(size_t(rows * vecs), kb->cf(0.f, vt));
        auto acc = kb->forLoop(kb->c(0), kb->c(L), kb->c(1), init, [&](Value l, ValueRange a) -> SmallVector<Value> {
          Value vRow = kb->add(vOff, kb->add(kb->mul(l, kb->c(vL)), kb->c(c0)));
          SmallVector<Value> bv;
          for (int64_t w = 0; w < vecs; ++w) {
            Value at = kb->add(vRow, kb->c(w * QB));
            bv.push_back(masks[w] ? kb->maskedLoad(vt, V, at, masks[w]) : kb->load(vt, V, at));
          }
          Value pRow = kb->add(kb->c(stOff), kb->add(kb->mul(l, kb->c(QB)), r0));
          SmallVector<Value> next;
          for (int64_t r = 0; r < rows; ++r) {
            Value p = kb->splat(kb->load(f32, scratch, kb->add(pRow, kb->c(r))), QB);
            for (int64_t w = 0; w < vecs; ++w) next.push_back(fma(p, bv[w], a[size_t(r * vecs + w)]));
          }
          return next;
        });
        for (int64_t r = 0; r < rows; ++r) {
          Value row = kb->add(r0, kb->c(r));
          Value inv = kb->splat(kb->load(f32, scratch, kb->add(kb->c(invOff), row)), QB);
          Value oRow = kb->add(oOff, kb->add(kb->mul(kb->add(s0, row), kb->c(oS)), kb->c(c0)));
          // nan_to_zero: a row whose sum is NaN (every score -inf, or a NaN
          // or +inf score) had all its probabilities NaN, now 0: output 0.
          Value bad = softmax.getNanToZero()
                          ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, inv, inv).getResult()
                          : Value();
          for (int64_t w = 0; w < vecs; ++w) {
            Value y = b.create<arith::MulFOp>(loc, acc[size_t(r * vecs + w)], inv);
            if (bad) y = b.create<arith::SelectOp>(loc, bad, kb->cf(0.f, vt), y);
            Value at = kb->add(oRow, kb->c(w * QB));
            if (masks[w])
              kb->maskedStore(y, Out, at, masks[w]);
            else
              kb->store(y, Out, at);
          }
        }
      }
    };
    for (int64_t r0 = 0; r0 < QB; r0 += kQueryRows) {
      const int64_t rows = std::min(kQueryRows, QB - r0);
      kb->ifThenElse(
          kb->cmp(arith::CmpIPredicate::sle, kb->c(r0 + rows), valid), [&] { outTile(kb->c(r0), rows); },
          [&] {
            // The block's last rows (S not a multiple of QB): one at a time.
            kb->forLoop(kb->c(r0), kb->max(valid, kb->c(r0)), kb->c(1), [&](Value r) { outTile(r, 1); });
          });
    }
  });
  kb->finish();
  std::vector<uint32_t> bindings = {result.buffer, infoOf(q.external).buffer, infoOf(kt.external).buffer,
                                    infoOf(v.external).buffer};
  if (maskValue) bindings.push_back(infoOf(maskValue).buffer);
  ctx.addDispatch(*kb, bindings, groups, name, sp.constant((D + L + 1) * QB * int64_t(sizeof(float))));
  ctx.plan.dispatches.back().flops = sp.constant(2 * batches * S * L * (D + D2));
  return success();
}

void registerAttentionKernels(CPUKernelRegistry &registry) { registry.addRegionKernel(kFusedAttention, emitAttention); }

} // namespace v4f
