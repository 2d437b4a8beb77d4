//===- AttentionKernel.cpp - fused attention on the GPU (one kernel) ------===//
//
// A region merged by v4f-fuse-attention-regions and placed on the GPU:
// [transpose Q] [transpose KT] matmul(Q, KT) -> softmax(scale, mask) ->
// [transpose V] matmul(P, V) [transpose out], static float32, head dims D
// and D2 at most 128. One kernel, FP32 throughout (whatever --precision says:
// the products are small next to the model's projections, and FP32 keeps the
// softmax exact to the CPU's 1e-4):
//
//   grid   one block per (batch index, block of QB = 4 * R query rows);
//   block  4 warps, each owning R query rows; lane j of a warp owns key j of
//          the current tile and output columns j, j + 32, ... of its rows;
//   shared the block's queries Qs[QB][D] (loaded once), a tile of 32 keys
//          Ks[32][D (+1 against bank conflicts)] and their values Vs[32][D2].
//
// Per tile of 32 keys each lane computes its key's score for each of its
// warp's rows (the query broadcast from shared memory), scales it and adds
// the mask, and the rows' running max and sum are updated in one warp pass
// (online softmax: the accumulators are rescaled by exp(old max - new max)
// when the max grows); then the warp multiplies the tile's probabilities,
// shuffled from their lanes, by the value rows. The [S, L] scores never
// exist in memory, and the absorbed transposes are strides of the reads and
// of the output's writes. A row whose keys are all masked to -inf gives
// 0 / 0 = NaN, as the unfused softmax does (0 under nan_to_zero).
//
//===----------------------------------------------------------------------===//
#include "KernelRegistry.h"
#include "KernelText.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace cudagen {

namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()).getShape(); }

/// The external value an attention operand is read from and the strides of
/// the operand's logical dims in it (an absorbed transpose permutes them).
struct Source {
  Value external;
  std::vector<int64_t> strides;
};

Source sourceOf(Value v, Operation *region) {
  if (auto t = v.getDefiningOp<TransposeOp>(); t && t->getParentOp() == region) {
    std::vector<int64_t> in = contiguousStrides(shapeOf(t.getInput()));
    Source s{t.getInput(), {}};
    for (int64_t p : t.getPerm()) s.strides.push_back(in[size_t(p)]);
    return s;
  }
  return {v, contiguousStrides(shapeOf(v))};
}

/// The fused region's softmax, when its ops and types are what the kernel
/// computes; else null with `why` set.
SoftmaxOp attentionSoftmax(llvm::ArrayRef<Operation *> ops, std::string &why) {
  if (!isAttentionRegion(ops)) return why = "not an attention region", SoftmaxOp();
  SoftmaxOp softmax;
  for (Operation *op : ops) {
    if (auto s = dyn_cast<SoftmaxOp>(op)) softmax = s;
    for (Value v : op->getOperands())
      if (!isF32Tensor(v.getType())) return why = "fused attention over non-float32 or dynamic tensors", SoftmaxOp();
  }
  auto m1 = softmax.getInput().getDefiningOp<MatMulOp>();
  if (!m1 || !softmax->hasOneUse() || !isa<MatMulOp>(*softmax->getUsers().begin()))
    return why = "a fused attention region out of order", SoftmaxOp();
  auto m2 = cast<MatMulOp>(*softmax->getUsers().begin());
  int64_t rank = softmax.getInput().getType().getRank();
  if (softmax.getMode() != "softmax" || (softmax.getAxis() != rank - 1 && softmax.getAxis() != -1))
    return why = "fused attention with a softmax off the keys' axis", SoftmaxOp();
  if (m1.getLhs().getType().getDimSize(rank - 1) > kCudaMaxAttentionHeadDim ||
      m2.getType().getDimSize(rank - 1) > kCudaMaxAttentionHeadDim)
    return why = "fused attention with a head dim over " + std::to_string(kCudaMaxAttentionHeadDim), SoftmaxOp();
  return softmax;
}

} // namespace

bool attentionSupported(llvm::ArrayRef<Operation *> ops, std::string &why) {
  return static_cast<bool>(attentionSoftmax(ops, why));
}

FailureOr<CudaKernel> attentionKernel(llvm::ArrayRef<Operation *> ops, llvm::ArrayRef<Value> externals,
                                      llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                      const std::string &name) {
  std::string why;
  SoftmaxOp softmax = attentionSoftmax(ops, why);
  if (!softmax) return ops.front()->emitOpError("has no CUDA kernel: ") << why, failure();
  Operation *region = ops.front()->getParentOp();
  auto m1 = softmax.getInput().getDefiningOp<MatMulOp>();
  auto m2 = cast<MatMulOp>(*softmax->getUsers().begin());
  auto scoresShape = softmax.getInput().getType().getShape();
  const int64_t rank = scoresShape.size(), nb = rank - 2;
  const int64_t S = scoresShape[rank - 2], L = scoresShape[rank - 1];
  const int64_t D = m1.getLhs().getType().getDimSize(rank - 1), D2 = m2.getType().getDimSize(rank - 1);
  const int64_t batches = product(scoresShape, 0, nb);

  Source q = sourceOf(m1.getLhs(), region), kt = sourceOf(m1.getRhs(), region), v = sourceOf(m2.getRhs(), region);
  // The output: m2's result, or the transpose of it that ends the region.
  std::vector<int64_t> oStrides = contiguousStrides(m2.getType().getShape());
  if (auto t = dyn_cast<TransposeOp>(ops.back()); t && t.getInput() == m2.getResult()) {
    std::vector<int64_t> z = contiguousStrides(t.getType().getShape());
    auto perm = t.getPerm();
    for (size_t j = 0; j < perm.size(); ++j) oStrides[size_t(perm[j])] = z[j];
  }
  // The mask's strides over the scores' dims (broadcast dims: 0).
  Value maskValue = softmax.getMask();
  std::vector<int64_t> mStrides(size_t(rank), 0);
  if (maskValue) {
    auto mShape = shapeOf(maskValue);
    std::vector<int64_t> ms = contiguousStrides(mShape);
    for (size_t i = 0; i < mShape.size(); ++i)
      if (mShape[i] != 1) mStrides[size_t(rank) - mShape.size() + i] = ms[i];
  }

  KernelText t;
  t.bind(-1, 2, product(result.dims) * 4);
  // One binding per distinct external (Q and K may be one tensor).
  std::vector<int> bindingOf(externals.size(), -1);
  auto bindingFor = [&](Value external) {
    size_t e = size_t(llvm::find(externals, external) - externals.begin());
    if (bindingOf[e] < 0) bindingOf[e] = t.bind(int(e), 1, product(ext[e].dims) * 4);
    return bindingOf[e];
  };
  const int bq = bindingFor(q.external), bk = bindingFor(kt.external), bv = bindingFor(v.external);
  const int bm = maskValue ? bindingFor(maskValue) : -1;

  // Rows per warp: 4, or fewer while that leaves under two blocks per SM of
  // an H100/H200 (132 SMs).
  constexpr int64_t kWarps = 4, kKeys = 32, kTargetBlocks = 264;
  int64_t R = 4;
  while (R > 1 && batches * ((S + kWarps * R - 1) / (kWarps * R)) < kTargetBlocks) R /= 2;
  const int64_t QB = kWarps * R, nQB = (S + QB - 1) / QB;
  const int64_t KP = D % 2 == 0 ? D + 1 : D; // odd row pitch: lanes read Ks[lane][d] without bank conflicts
  const int64_t cols = (D2 + 31) / 32;       // output columns per lane and row
  t.k.grid[0] = batches * nQB;
  t.k.block[0] = uint32_t(kWarps * 32);
  t.k.flops = 2.0 * double(batches) * double(S) * double(L) * double(D + D2);

  auto &os = t.os;
  os << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n";
  os << "  const long long bi = (long long)blockIdx.x / " << lit(nQB) << ", s0 = ((long long)blockIdx.x % " << lit(nQB)
     << ") * " << QB << ";\n";
  os << "  const float* Q = (const float*)a.bindings[" << bq << "];\n";
  os << "  const float* K = (const float*)a.bindings[" << bk << "];\n";
  os << "  const float* V = (const float*)a.bindings[" << bv << "];\n";
  if (maskValue) os << "  const float* M = (const float*)a.bindings[" << bm << "];\n";
  os << "  float* O = (float*)a.bindings[0];\n";
  // Offsets of batch index bi in each operand.
  os << "  long long qo = 0, ko = 0, vo = 0, oo = 0, mo = 0, rest = bi;\n";
  for (int64_t j = nb; j-- > 0;) {
    os << "  { const long long c = rest % " << lit(scoresShape[j]) << "; rest /= " << lit(scoresShape[j]) << ";";
    os << " qo += c * " << lit(q.strides[j]) << "; ko += c * " << lit(kt.strides[j]) << "; vo += c * "
       << lit(v.strides[j]) << "; oo += c * " << lit(oStrides[j]) << "; mo += c * " << lit(mStrides[j]) << "; }\n";
  }
  os << "  (void)rest; (void)mo;\n";
  const int64_t qS = q.strides[rank - 2], qD = q.strides[rank - 1];
  const int64_t kD = kt.strides[rank - 2], kL = kt.strides[rank - 1];
  const int64_t vL = v.strides[rank - 2], vC = v.strides[rank - 1];
  const int64_t oS = oStrides[rank - 2], oC = oStrides[rank - 1];
  const int64_t mS = mStrides[rank - 2], mL = mStrides[rank - 1];
  os << "  __shared__ float Qs[" << QB << "][" << D << "];\n";
  os << "  __shared__ float Ks[" << kKeys << "][" << KP << "];\n";
  os << "  __shared__ float Vs[" << kKeys << "][" << D2 << "];\n";
  // A tile load: element (r, c) of a rows x n tile from base + r * rs + c *
  // cs, threads walking the dim of the smaller stride fastest (coalesced).
  auto tileLoad = [&](const std::string &dst, int64_t rows, int64_t n, const std::string &rowOk,
                      const std::string &base, int64_t rs, int64_t cs) {
    os << "  for (int t_ = threadIdx.x; t_ < " << rows * n << "; t_ += " << kWarps * 32 << ") {\n";
    if (cs <= rs)
      os << "    const int r = t_ / " << n << ", c = t_ % " << n << ";\n";
    else
      os << "    const int r = t_ % " << rows << ", c = t_ / " << rows << ";\n";
    os << "    " << dst << "[r][c] = (" << rowOk << ") ? " << base << "[(long long)r * " << lit(rs)
       << " + (long long)c * " << lit(cs) << "] : 0.f;\n  }\n";
  };
  tileLoad("Qs", QB, D, "s0 + r < " + lit(S), "(Q + qo + s0 * " + lit(qS) + ")", qS, qD);
  os << "  float m_[" << R << "], l_[" << R << "], acc[" << R << "][" << cols << "];\n";
  os << "  #pragma unroll\n  for (int r = 0; r < " << R << "; ++r) {\n";
  os << "    m_[r] = " << lit(-INFINITY) << "; l_[r] = 0.f;\n";
  os << "    #pragma unroll\n    for (int c = 0; c < " << cols << "; ++c) acc[r][c] = 0.f;\n  }\n";
  os << "  for (long long l0 = 0; l0 < " << lit(L) << "; l0 += " << kKeys << ") {\n";
  os << "  __syncthreads();\n"; // the previous tile is consumed (and Qs stored)
  tileLoad("Ks", kKeys, D, "l0 + r < " + lit(L), "(K + ko + l0 * " + lit(kL) + ")", kL, kD);
  tileLoad("Vs", kKeys, D2, "l0 + r < " + lit(L), "(V + vo + l0 * " + lit(vL) + ")", vL, vC);
  os << "  __syncthreads();\n";
  os << "  const long long key = l0 + lane;\n";
  os << "  #pragma unroll\n  for (int r = 0; r < " << R << "; ++r) {\n";
  os << "    const int row = warp * " << R << " + r;\n";
  os << "    float x = 0.f;\n";
  os << "    #pragma unroll 8\n    for (int d = 0; d < " << D << "; ++d) x += Qs[row][d] * Ks[lane][d];\n";
  os << "    x *= " << lit(softmax.getScale().convertToFloat()) << ";\n";
  if (maskValue)
    os << "    if (key < " << lit(L) << " && s0 + row < " << lit(S) << ") x += M[mo + (s0 + row) * " << lit(mS)
       << " + key * " << lit(mL) << "];\n";
  os << "    if (key >= " << lit(L) << ") x = " << lit(-INFINITY) << ";\n";
  os << "    const float mx = fmaxf(m_[r], v4f_warp_max(x));\n";
  // With every score so far -inf, subtract 0: exp(-inf) = 0, no NaN.
  os << "    const float base = mx == " << lit(-INFINITY) << " ? 0.f : mx;\n";
  os << "    const float p = expf(x - base), corr = expf(m_[r] - base);\n";
  os << "    l_[r] = l_[r] * corr + v4f_warp_sum(p);\n    m_[r] = mx;\n";
  os << "    #pragma unroll\n    for (int c = 0; c < " << cols << "; ++c) acc[r][c] *= corr;\n";
  os << "    for (int j = 0; j < " << kKeys << "; ++j) {\n";
  os << "      const float pj = __shfl_sync(0xffffffffu, p, j);\n";
  os << "      #pragma unroll\n      for (int c = 0; c < " << cols << "; ++c)\n";
  os << "        if (lane + 32 * c < " << D2 << ") acc[r][c] += pj * Vs[j][lane + 32 * c];\n";
  os << "    }\n  }\n  }\n";
  os << "  #pragma unroll\n  for (int r = 0; r < " << R << "; ++r) {\n";
  os << "    const long long s = s0 + warp * " << R << " + r;\n";
  os << "    if (s >= " << lit(S) << ") continue;\n";
  // nan_to_zero: a row with no positive sum (every score -inf, or a NaN or
  // +inf score) had all its probabilities NaN, now 0: its output is 0.
  os << "    const float inv = 1.f / l_[r];\n";
  const std::string y = softmax.getNanToZero() ? "(l_[r] > 0.f ? acc[r][c] * inv : 0.f)" : "acc[r][c] * inv";
  os << "    #pragma unroll\n    for (int c = 0; c < " << cols << "; ++c)\n";
  os << "      if (lane + 32 * c < " << D2 << ") O[oo + s * " << lit(oS) << " + (long long)(lane + 32 * c) * "
     << lit(oC) << "] = " << y << ";\n";
  os << "  }\n";
  t.k.source = t.finish(name, std::to_string(kWarps * 32));
  return t.k;
}

void registerAttentionKernels(CudaKernelRegistry &registry) {
  registry.addRegionKernel(kFusedAttention, attentionSupported, [](const KernelRequest &r) {
    return attentionKernel(r.ops, r.externals, r.ext, r.result, r.name);
  });
}

} // namespace cudagen
} // namespace v4f
