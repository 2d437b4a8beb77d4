//===- FuseAttentionRegions.cpp - v4f-fuse-attention-regions -------------===//
//
// Attention as exporters write it — scores = Q @ K^T, softmax over the keys
// (with the scale and additive mask v4f-fuse-normalizations folded into it),
// then probabilities @ V — is three dispatch regions whose intermediates (the
// [.., S, L] scores and probabilities) make a round trip through memory, plus
// the transposes that put Q, K, V into head-major order and the output back.
// This pass merges those regions into one, which the kernel generators
// lower as one fused kernel: on the CPU (lib/Codegen/CPU/AttentionKernels.cpp)
// per block of query rows the scores stay in the worker's scratch (L1/L2);
// on the GPU (lib/Codegen/CUDA/AttentionKernel.cpp) per block of query rows
// an online softmax runs over tiles of keys in shared memory. Either way the
// absorbed transposes become strided reads and writes.
//
// It runs after v4f-form-dispatch-regions and v4f-assign-placement and
// merges only regions placed alike (all on the CPU or all on the GPU), within
// the limits of that side's kernel.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"
#include "RegionFusion.h"
#include "v4f/Codegen/KernelLimits.h"

#include "mlir/IR/Builders.h"

namespace v4f {
#define GEN_PASS_DEF_FUSEATTENTIONREGIONS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// Scratch the fused kernel keeps per query block (scores and the
/// transposed query block): beyond this the scores would not stay in cache
/// and the unfused kernels are as good.
constexpr int64_t kMaxScoreBytes = 1 << 20;

/// The op computing region result `v` when `v` is the result of a
/// one-op region used exactly once, else null.
template <typename OpT>
OpT soleProducer(Value v) {
  auto region = v.getDefiningOp<DispatchOp>();
  if (!region || !v.hasOneUse()) return {};
  auto op = dyn_cast<OpT>(&*region.getBodyOps().begin());
  return op && soleRegion(op) == region ? op : OpT();
}

bool staticF32(Value v, int64_t rank) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() && t.getRank() == rank;
}

bool plainMatMul(MatMulOp m) { return !m.getBias() && m.getActivation() == "none"; }

/// A transpose of a rank-4 tensor that keeps dim 0 (batch) in place and
/// moves `contiguous` — the dim the fused kernel reads or writes in vector
/// runs — to `at`; such a transpose is absorbed as strided access.
bool absorbable(TransposeOp t, int64_t contiguous, int64_t at) {
  auto perm = t.getPerm();
  return perm.size() == 4 && perm[0] == 0 && perm[at] == contiguous;
}

struct Attention {
  SmallVector<DispatchOp> regions; // in program order
};

/// Matches scores = matmul(Q, KT) -> softmax (last axis) -> matmul(P, V)
/// around `softmax`, each a one-op region with a single-use result, all
/// static float32 of one rank with equal batch dims; plus the transposes
/// producing Q, KT, V and consuming the output where they are one-op regions
/// of single use, rank 4, keeping the batch dim (Q and KT: any other
/// permutation, they are read element by element; V and the output: their
/// last dim stays last, their rows are read and written as vectors).
std::optional<Attention> match(SoftmaxOp softmax) {
  DispatchOp softmaxRegion = soleRegion(softmax);
  if (!softmaxRegion || softmax.getMode() != "softmax") return std::nullopt;
  auto scoresType = softmax.getInput().getType();
  int64_t rank = scoresType.getRank();
  if (rank < 3 || softmax.getAxis() != rank - 1 || !staticF32(softmax.getInput(), rank)) return std::nullopt;
  auto m1 = soleProducer<MatMulOp>(softmax.getInput());
  if (!m1 || !plainMatMul(m1) || !staticF32(m1.getLhs(), rank) || !staticF32(m1.getRhs(), rank)) return std::nullopt;
  Value probs = softmaxRegion.getResult(0);
  if (!probs.hasOneUse()) return std::nullopt;
  // (Regions are not isolated: the use is the consuming op inside its region.)
  auto m2 = dyn_cast<MatMulOp>(probs.getUses().begin()->getOwner());
  DispatchOp m2Region = soleRegion(m2);
  if (!m2Region) return std::nullopt;
  if (!m2 || !plainMatMul(m2) || m2.getLhs() != probs || !staticF32(m2.getRhs(), rank) ||
      !staticF32(m2.getResult(), rank))
    return std::nullopt;
  // Equal batch dims everywhere (no broadcasting), S x D @ D x L, S x L @ L x D2.
  auto q = m1.getLhs().getType(), kt = m1.getRhs().getType(), v = m2.getRhs().getType();
  auto batch = [&](RankedTensorType t) { return t.getShape().drop_back(2); };
  if (batch(q) != batch(scoresType) || batch(kt) != batch(scoresType) || batch(v) != batch(scoresType))
    return std::nullopt;
  int64_t S = q.getDimSize(rank - 2), D = q.getDimSize(rank - 1), L = kt.getDimSize(rank - 1);
  if (kt.getDimSize(rank - 2) != D || v.getDimSize(rank - 2) != L || S < 1 || D < 1 || L < 1) return std::nullopt;
  const StringRef placement = placementOf(softmaxRegion);
  if (placement == "cuda" ? D > kCudaMaxAttentionHeadDim || v.getDimSize(rank - 1) > kCudaMaxAttentionHeadDim
                          : int64_t(sizeof(float)) * (L + D + 1) * 16 > kMaxScoreBytes)
    return std::nullopt;
  if (auto mask = softmax.getMask(); mask && !llvm::cast<RankedTensorType>(mask.getType()).hasStaticShape())
    return std::nullopt;
  Attention a;
  // Producers: the query may come from any transpose keeping the batch dim;
  // K^T read by scalar broadcasts, also any; V must keep its last dim last
  // (its rows are read as vectors).
  auto addProducer = [&](Value operand, bool needLastDim) {
    if (auto t = soleProducer<TransposeOp>(operand);
        t && staticF32(t.getInput(), 4) && rank == 4 && (!needLastDim || absorbable(t, 3, 3)) && t.getPerm()[0] == 0)
      a.regions.push_back(cast<DispatchOp>(t->getParentOp()));
  };
  addProducer(m1.getLhs(), false);
  addProducer(m1.getRhs(), false);
  a.regions.push_back(cast<DispatchOp>(m1->getParentOp()));
  a.regions.push_back(softmaxRegion);
  addProducer(m2.getRhs(), true);
  a.regions.push_back(m2Region);
  // The output's transpose, when its last dim stays last.
  Value out = m2Region.getResult(0);
  if (out.hasOneUse() && rank == 4)
    if (auto t = dyn_cast<TransposeOp>(out.getUses().begin()->getOwner()); t && absorbable(t, 3, 3))
      if (DispatchOp outRegion = soleRegion(t)) a.regions.push_back(outRegion);
  // Program order, every region in the same block and placed alike (a
  // transpose placed elsewhere stays outside; the core must agree).
  Block *block = softmaxRegion->getBlock();
  if (llvm::any_of(a.regions, [&](DispatchOp r) { return r->getBlock() != block; })) return std::nullopt;
  if (placementOf(cast<DispatchOp>(m1->getParentOp())) != placement || placementOf(m2Region) != placement)
    return std::nullopt;
  llvm::erase_if(a.regions, [&](DispatchOp r) { return placementOf(r) != placement; });
  llvm::sort(a.regions, [](DispatchOp x, DispatchOp y) { return x->isBeforeInBlock(y); });
  return a;
}

struct FuseAttentionRegionsPass : impl::FuseAttentionRegionsBase<FuseAttentionRegionsPass> {
  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp s) { softmaxes.push_back(s); });
    for (SoftmaxOp s : softmaxes)
      if (auto a = match(s)) mergeRegions(a->regions, kFusedAttention);
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFuseAttentionRegionsPass() { return std::make_unique<FuseAttentionRegionsPass>(); }
