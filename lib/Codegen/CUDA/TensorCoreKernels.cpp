//===- TensorCoreKernels.cpp - matmul and conv as CUDA C++ ---------------===//
//
// Matrix products (FP32 SIMT 64x64 tiles, or WMMA tensor cores with FP32
// accumulation from FP16, BF16 or TF32 operands: 128x128 tiles for large
// FP16/BF16 products, 64x64 / 32x32 otherwise, the next K slice prefetched
// into registers) and convolutions (implicit GEMM on tensor cores for
// FP16/BF16/TF32 and groups 1, else direct).
//
//===----------------------------------------------------------------------===//
#include "KernelRegistry.h"
#include "KernelText.h"

using namespace mlir;

namespace v4f {
namespace cudagen {

namespace {

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// Statements setting aOff / bOff / cOff for batch blockIdx.z of a batched
/// product (numpy broadcasting of the leading dims).
std::string batchOffsets(llvm::ArrayRef<int64_t> aDims, llvm::ArrayRef<int64_t> bDims, llvm::ArrayRef<int64_t> cDims) {
  size_t rank = cDims.size();
  int64_t M = cDims[rank - 2], N = cDims[rank - 1];
  int64_t K = aDims[aDims.size() - 1];
  std::string s = "  long long aOff = 0, bOff = 0;\n  const long long cOff = (long long)blockIdx.z * " + lit(M * N) +
                  ";\n  long long z_ = blockIdx.z;\n";
  int64_t aStride = M * K, bStride = K * N;
  size_t ab = aDims.size() - 2, bb = bDims.size() - 2, cb = rank - 2;
  for (size_t d = cb; d-- > 0;) {
    s += "  { const long long c_ = z_ % " + lit(cDims[d]) + "; z_ /= " + lit(cDims[d]) + ";\n";
    size_t back = cb - 1 - d;
    if (back < ab) {
      int64_t ad = aDims[ab - 1 - back];
      if (ad != 1) s += "    aOff += c_ * " + lit(aStride) + ";\n";
      aStride *= ad;
    }
    if (back < bb) {
      int64_t bd = bDims[bb - 1 - back];
      if (bd != 1) s += "    bOff += c_ * " + lit(bStride) + ";\n";
      bStride *= bd;
    }
    s += "    (void)c_; }\n";
  }
  return s;
}

/// The tensor-core formats of --precision: the element type tiles are stored
/// in (shared memory), the conversion from float, the WMMA fragment's
/// element type, the K slice of a tile and the fragment's K.
struct WmmaFormat {
  std::string storage, cvt, fragment;
  int sliceK, fragmentK;
};

WmmaFormat wmmaFormat(const std::string &precision) {
  if (precision == "tf32") // float tiles rounded to TF32 as they are stored; 16x16x8 fragments
    return {"float", "nvcuda::wmma::__float_to_tf32", "nvcuda::wmma::precision::tf32", 16, 8};
  if (precision == "bf16") return {"__nv_bfloat16", "__float2bfloat16_rn", "__nv_bfloat16", 32, 16};
  return {"__half", "__float2half_rn", "__half", 32, 16};
}

/// The body of a tensor-core product over TxT output tiles (4 warps in 2x2,
/// each a quarter as WMMA fragments, K in slices of 32 (16 for TF32: its
/// float tiles take twice the shared memory) converted to FP16/BF16/TF32 in
/// double-buffered shared memory with the next slice prefetched into
/// registers, FP32 accumulators staged through shared memory for the
/// epilogue). `aLoad` / `bLoad` are the float values of
/// A[gm][gk] / B[gkb][gn] (in range; zero is loaded outside), `epilogue`
/// stores `acc_` of output (gm, gn); M, N, K, m0 and n0 are in scope.
/// T = 64, or 32 when 64x64 tiles would leave most of a 132-SM GPU idle.
void emitWmmaTiles(KernelText &t, const CudaOptions &options, int64_t M, int64_t N, int64_t batch,
                   const std::string &aLoad, const std::string &bLoad, const std::string &epilogue) {
  const WmmaFormat f = wmmaFormat(options.precision);
  int64_t T64 = ((M + 63) / 64) * ((N + 63) / 64) * batch;
  const int Tt = T64 < 132 ? 32 : 64, F = Tt / 32, Bld = Tt + 8, Cld = Tt + 4;
  t.k.grid[0] = (N + Tt - 1) / Tt;
  t.k.grid[1] = (M + Tt - 1) / Tt;
  t.k.block[0] = 128;
  t.k.precision = options.precision;
  auto sub = [&](std::string text) {
    auto rep = [&](const std::string &from, const std::string &to) {
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    };
    rep("@T@", std::to_string(Tt));
    rep("@H@", std::to_string(Tt / 2));
    rep("@F@", std::to_string(F));
    rep("@BLD@", std::to_string(Bld));
    rep("@CLD@", std::to_string(Cld));
    rep("@AN@", std::to_string(Tt * f.sliceK));
    rep("@CN@", std::to_string(Tt * Tt));
    rep("@KS@", std::to_string(f.sliceK));
    rep("@KF@", std::to_string(f.fragmentK));
    rep("@ALD@", std::to_string(f.sliceK + 8));
    rep("@FT@", f.fragment);
    rep("@CVT@", f.cvt);
    rep("@ALOAD@", aLoad);
    rep("@BLOAD@", bLoad);
    return text;
  };
  t.os << sub("  const int m0 = blockIdx.y * @T@, n0 = blockIdx.x * @T@;\n");
  t.os << "  typedef " << f.storage << " T;\n";
  t.os << sub("  __shared__ __align__(32) T As[2][@T@][@ALD@];\n  __shared__ __align__(32) T Bs[2][@KS@][@BLD@];\n"
              "  __shared__ __align__(32) float Cs[@T@][@CLD@];\n");
  // The next K slice is loaded into registers while the tensor cores work on
  // the current one (double-buffered shared memory, one barrier per slice):
  // small grids are latency-bound, so the loads must overlap the math.
  t.os << sub(R"(  const int warp = threadIdx.x / 32, wm = (warp / 2) * @H@, wn = (warp % 2) * @H@;
  float ra[@AN@ / 128], rb[@AN@ / 128];
  auto load = [&](int k0) {
    #pragma unroll
    for (int i_ = 0; i_ < @AN@ / 128; ++i_) {
      const int e = threadIdx.x + 128 * i_;
      { const int m = e / @KS@, k = e % @KS@, gm = m0 + m, gk = k0 + k;
        ra[i_] = (gm < M && gk < K) ? @ALOAD@ : 0.f; }
      { const int kb = e / @T@, n = e % @T@, gkb = k0 + kb, gn = n0 + n;
        rb[i_] = (gkb < K && gn < N) ? @BLOAD@ : 0.f; }
    }
  };
  auto store = [&](int buf) {
    #pragma unroll
    for (int i_ = 0; i_ < @AN@ / 128; ++i_) {
      const int e = threadIdx.x + 128 * i_;
      As[buf][e / @KS@][e % @KS@] = @CVT@(ra[i_]);
      Bs[buf][e / @T@][e % @T@] = @CVT@(rb[i_]);
    }
  };
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, @KF@, float> acc[@F@][@F@];
  #pragma unroll
  for (int r = 0; r < @F@; ++r)
    #pragma unroll
    for (int c = 0; c < @F@; ++c) nvcuda::wmma::fill_fragment(acc[r][c], 0.f);
  const int slices = (K + @KS@ - 1) / @KS@;
  load(0);
  store(0);
  __syncthreads();
  for (int s = 0; s < slices; ++s) {
    const int buf = s & 1;
    if (s + 1 < slices) load((s + 1) * @KS@);
    #pragma unroll
    for (int kk = 0; kk < @KS@; kk += @KF@) {
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, @KF@, @FT@, nvcuda::wmma::row_major> af[@F@];
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, @KF@, @FT@, nvcuda::wmma::row_major> bf[@F@];
      #pragma unroll
      for (int r = 0; r < @F@; ++r) nvcuda::wmma::load_matrix_sync(af[r], &As[buf][wm + 16 * r][kk], @ALD@);
      #pragma unroll
      for (int c = 0; c < @F@; ++c) nvcuda::wmma::load_matrix_sync(bf[c], &Bs[buf][kk][wn + 16 * c], @BLD@);
      #pragma unroll
      for (int r = 0; r < @F@; ++r)
        #pragma unroll
        for (int c = 0; c < @F@; ++c) nvcuda::wmma::mma_sync(acc[r][c], af[r], bf[c], acc[r][c]);
    }
    if (s + 1 < slices) store(buf ^ 1);
    __syncthreads();
  }
  #pragma unroll
  for (int r = 0; r < @F@; ++r)
    #pragma unroll
    for (int c = 0; c < @F@; ++c)
      nvcuda::wmma::store_matrix_sync(&Cs[wm + 16 * r][wn + 16 * c], acc[r][c], @CLD@, nvcuda::wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < @CN@; e += 128) {
    const int gm = m0 + e / @T@, gn = n0 + e % @T@;
    if (gm < M && gn < N) {
      const float acc_ = Cs[e / @T@][e % @T@];
)") << epilogue
       << "    }\n  }\n";
}

} // namespace

FailureOr<CudaKernel> matmulKernel(MatMulOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                   const std::string &name, const CudaOptions &options) {
  const CudaTensor &A = ext[0], &B = ext[1];
  size_t rank = result.dims.size();
  int64_t M = result.dims[rank - 2], N = result.dims[rank - 1], K = A.dims.back();
  int64_t batch = product(result.dims, 0, rank - 2);
  KernelText t;
  t.bind(-1, 2, product(result.dims) * 4);
  t.bind(0, 1, product(A.dims) * 4);
  t.bind(1, 1, product(B.dims) * 4);
  bool bias = op.getBias() != nullptr;
  if (bias) t.bind(2, 1, N * 4);
  t.k.grid[0] = (N + 63) / 64;
  t.k.grid[1] = (M + 63) / 64;
  t.k.grid[2] = batch;
  t.k.flops = 2.0 * double(batch) * M * N * K;
  std::string act =
      activation(op.getActivation(), "v", op.getActAlpha().convertToFloat(), op.getActBeta().convertToFloat());
  t.os << "  float* C = (float*)a.bindings[0];\n  const float* A = (const float*)a.bindings[1];\n"
          "  const float* B = (const float*)a.bindings[2];\n";
  if (bias) t.os << "  const float* bias = (const float*)a.bindings[3];\n";
  t.os << "  const int M = " << M << ", N = " << N << ", K = " << K << ";\n";
  t.os << batchOffsets(A.dims, B.dims, result.dims);
  std::string tile64 = "  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;\n";
  std::string epilogue = std::string("      float v = acc_;\n") + (bias ? "      v += bias[gn];\n" : "") +
                         "      v = " + act + ";\n      C[cOff + (long long)gm * N + gn] = v;\n";
  bool tensorCores = options.precision != "fp32";
  if (!tensorCores) {
    t.k.block[0] = 256;
    t.os << tile64;
    t.os << R"(  __shared__ float As[16][68];
  __shared__ float Bs[16][68];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4];
  #pragma unroll
  for (int r = 0; r < 4; ++r)
    #pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    #pragma unroll
    for (int i_ = 0; i_ < 4; ++i_) {
      const int e = threadIdx.x + 256 * i_;
      const int m = e / 16, k = e % 16, gm = m0 + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? A[aOff + (long long)gm * K + gk] : 0.f;
      const int kb = e / 64, n = e % 64, gkb = k0 + kb, gn = n0 + n;
      Bs[kb][n] = (gkb < K && gn < N) ? B[bOff + (long long)gkb * N + gn] : 0.f;
    }
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < 16; ++k) {
      float ar[4], br[4];
      #pragma unroll
      for (int r = 0; r < 4; ++r) ar[r] = As[k][ty + 16 * r];
      #pragma unroll
      for (int c = 0; c < 4; ++c) br[c] = Bs[k][tx + 16 * c];
      #pragma unroll
      for (int r = 0; r < 4; ++r)
        #pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(ar[r], br[c], acc[r][c]);
    }
    __syncthreads();
  }
  #pragma unroll
  for (int r = 0; r < 4; ++r)
    #pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int gm = m0 + ty + 16 * r, gn = n0 + tx + 16 * c;
      if (gm >= M || gn >= N) continue;
      const float acc_ = acc[r][c];
)" << epilogue
         << "    }\n";
    t.k.source = t.finish(name);
    return t.k;
  }
  const WmmaFormat f = wmmaFormat(options.precision);
  const std::string &T = f.storage, &cvt = f.cvt;
  // Large products (at least two waves of 128x128 tiles on a 132-SM GPU):
  // 128x128x32 tiles, 8 warps of 64x32 (4x2 WMMA fragments), the next K
  // slice loaded into registers while the tensor cores work on the current
  // one (double-buffered shared memory, one barrier per slice).
  // (FP16/BF16: TF32's float tiles would not fit its shared memory.)
  int64_t bigTiles = ((M + 127) / 128) * ((N + 127) / 128) * batch;
  if (bigTiles >= 264 && options.precision != "tf32") {
    bool exact = M % 128 == 0 && N % 128 == 0 && K % 32 == 0;
    t.k.grid[0] = (N + 127) / 128;
    t.k.grid[1] = (M + 127) / 128;
    t.k.block[0] = 256;
    t.k.precision = options.precision;
    std::string gA = exact
                         ? "A[aOff + (long long)(m0 + r) * K + k0 + c + q]"
                         : "((m0 + r) < M && (k0 + c + q) < K ? A[aOff + (long long)(m0 + r) * K + k0 + c + q] : 0.f)";
    std::string gB = exact
                         ? "B[bOff + (long long)(k0 + r) * N + n0 + c + q]"
                         : "((k0 + r) < K && (n0 + c + q) < N ? B[bOff + (long long)(k0 + r) * N + n0 + c + q] : 0.f)";
    t.os << "  typedef " << T << " T;\n";
    t.os << "  const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;\n";
    t.os << "  __shared__ __align__(32) T As[2][128][40];\n  __shared__ __align__(32) T Bs[2][32][136];\n"
            "  __shared__ __align__(32) float Cw[8][16][20];\n";
    t.os << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = (warp / 4) * 64, wn = (warp % 4) * "
            "32;\n";
    t.os << "  float ra[16], rb[16];\n";
    t.os << "  auto load = [&](int k0) {\n"
            "    #pragma unroll\n    for (int i = 0; i < 4; ++i) {\n"
            "      const int idx = threadIdx.x + 256 * i;\n"
            "      { const int r = idx / 8, c = (idx % 8) * 4;\n"
            "        #pragma unroll\n        for (int q = 0; q < 4; ++q) ra[4 * i + q] = "
         << gA
         << "; }\n"
            "      { const int r = idx / 32, c = (idx % 32) * 4;\n"
            "        #pragma unroll\n        for (int q = 0; q < 4; ++q) rb[4 * i + q] = "
         << gB << "; }\n    }\n  };\n";
    t.os << "  auto store = [&](int buf) {\n"
            "    #pragma unroll\n    for (int i = 0; i < 4; ++i) {\n"
            "      const int idx = threadIdx.x + 256 * i;\n"
            "      { const int r = idx / 8, c = (idx % 8) * 4;\n"
            "        #pragma unroll\n        for (int q = 0; q < 4; ++q) As[buf][r][c + q] = "
         << cvt
         << "(ra[4 * i + q]); }\n"
            "      { const int r = idx / 32, c = (idx % 32) * 4;\n"
            "        #pragma unroll\n        for (int q = 0; q < 4; ++q) Bs[buf][r][c + q] = "
         << cvt << "(rb[4 * i + q]); }\n    }\n  };\n";
    t.os << R"(  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc[4][2];
  #pragma unroll
  for (int r = 0; r < 4; ++r)
    #pragma unroll
    for (int c = 0; c < 2; ++c) nvcuda::wmma::fill_fragment(acc[r][c], 0.f);
  const int slices = (K + 31) / 32;
  load(0);
  store(0);
  __syncthreads();
  for (int s = 0; s < slices; ++s) {
    const int buf = s & 1;
    if (s + 1 < slices) load((s + 1) * 32);
    #pragma unroll
    for (int kk = 0; kk < 32; kk += 16) {
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major> af[4];
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::row_major> bf[2];
      #pragma unroll
      for (int r = 0; r < 4; ++r) nvcuda::wmma::load_matrix_sync(af[r], &As[buf][wm + 16 * r][kk], 40);
      #pragma unroll
      for (int c = 0; c < 2; ++c) nvcuda::wmma::load_matrix_sync(bf[c], &Bs[buf][kk][wn + 16 * c], 136);
      #pragma unroll
      for (int r = 0; r < 4; ++r)
        #pragma unroll
        for (int c = 0; c < 2; ++c) nvcuda::wmma::mma_sync(acc[r][c], af[r], bf[c], acc[r][c]);
    }
    if (s + 1 < slices) store(buf ^ 1);
    __syncthreads();
  }
  #pragma unroll
  for (int r = 0; r < 4; ++r)
    #pragma unroll
    for (int c = 0; c < 2; ++c) {
      nvcuda::wmma::store_matrix_sync(&Cw[warp][0][0], acc[r][c], 20, nvcuda::wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int gm = m0 + wm + 16 * r + e / 16, gn = n0 + wn + 16 * c + e % 16;
        if (gm < M && gn < N) {
          const float acc_ = Cw[warp][e / 16][e % 16];
)" << epilogue
         << "        }\n      }\n      __syncwarp();\n    }\n";
    t.k.source = t.finish(name);
    return t.k;
  }
  // Smaller products: 64x64 tiles, or 32x32 when 64x64 tiles would leave
  // most of a 132-SM GPU idle (BERT's [128 x 768] products: 24 tiles of 64, 96 of 32).
  emitWmmaTiles(t, options, M, N, batch, "A[aOff + (long long)gm * K + gk]", "B[bOff + (long long)gkb * N + gn]",
                epilogue);
  t.k.source = t.finish(name, "128");
  return t.k;
}

//===----------------------------------------------------------------------===//
// Convolution (direct, one output element per thread) and pooling
//===----------------------------------------------------------------------===//

FailureOr<CudaKernel> convKernel(ConvOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                 const std::string &name, const CudaOptions &options) {
  const CudaTensor &X = ext[0], &W = ext[1];
  int64_t Nb = result.dims[0], OC = result.dims[1], OH = result.dims[2], OW = result.dims[3];
  int64_t IC = X.dims[1], H = X.dims[2], Wd = X.dims[3], KH = W.dims[2], KW = W.dims[3];
  int64_t groups = op.getGroups(), ICg = IC / groups, OCg = OC / groups;
  auto s = op.getStrides(), dl = op.getDilations(), p = op.getPads();
  KernelText t;
  int64_t total = product(result.dims);
  t.bind(-1, 2, total * 4);
  t.bind(0, 1, product(X.dims) * 4);
  t.bind(1, 1, product(W.dims) * 4);
  int next = 2;
  int biasBinding = -1, resBinding = -1;
  if (op.getBias()) biasBinding = t.bind(next++, 1, OC * 4);
  if (op.getResidual()) resBinding = t.bind(next++, 1, total * 4);
  t.k.flops = 2.0 * double(total) * ICg * KH * KW;
  std::string act =
      activation(op.getActivation(), "v", op.getActAlpha().convertToFloat(), op.getActBeta().convertToFloat());
  if (options.precision != "fp32" && groups == 1) {
    // Implicit GEMM on tensor cores: C[oc][n] = W[oc][c,kh,kw] x im2col(X)[c,kh,kw][n]
    // with n = (image, oh, ow); the im2col matrix is never stored, each
    // B tile element is read from X where the tile load needs it.
    int64_t OHW = OH * OW;
    t.os << "  const float* X = (const float*)a.bindings[1];\n  const float* Wt = (const float*)a.bindings[2];\n"
            "  float* Y = (float*)a.bindings[0];\n";
    t.os << "  const int M = " << OC << ", N = " << (Nb * OHW) << ", K = " << (IC * KH * KW) << ";\n";
    t.os << "  auto im2col = [&](int k, int n) -> float {\n"
         << "    const int c = k / " << (KH * KW) << ", r = k % " << (KH * KW) << ", kh = r / " << KW << ", kw = r % "
         << KW << ";\n"
         << "    const int img = n / " << OHW << ", p = n % " << OHW << ", oh = p / " << OW << ", ow = p % " << OW
         << ";\n"
         << "    const int ih = oh * " << s[0] << " - " << p[0] << " + kh * " << dl[0] << ", iw = ow * " << s[1]
         << " - " << p[1] << " + kw * " << dl[1] << ";\n"
         << "    return (ih >= 0 && ih < " << H << " && iw >= 0 && iw < " << Wd << ") ? X[(((long long)img * " << IC
         << " + c) * " << H << " + ih) * " << Wd << " + iw] : 0.f;\n  };\n";
    std::string epilogue = "      const long long o_ = ((long long)(gn / " + std::to_string(OHW) + ") * " +
                           std::to_string(OC) + " + gm) * " + std::to_string(OHW) + " + gn % " + std::to_string(OHW) +
                           ";\n      float v = acc_;\n";
    if (biasBinding >= 0)
      epilogue += "      v += ((const float*)a.bindings[" + std::to_string(biasBinding) + "])[gm];\n";
    if (resBinding >= 0) epilogue += "      v += ((const float*)a.bindings[" + std::to_string(resBinding) + "])[o_];\n";
    epilogue += "      v = " + act + ";\n      Y[o_] = v;\n";
    emitWmmaTiles(t, options, OC, Nb * OHW, 1, "Wt[(long long)gm * K + gk]", "im2col(gkb, gn)", epilogue);
    t.k.source = t.finish(name, "128");
    return t.k;
  }
  t.linear(total);
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << "  const float* X = (const float*)a.bindings[1];\n  const float* Wt = (const float*)a.bindings[2];\n";
  t.os << "  const int ow = (int)(i % " << OW << "), oh = (int)((i / " << OW << ") % " << OH << "), oc = (int)((i / "
       << (OW * OH) << ") % " << OC << ");\n";
  t.os << "  const long long n = i / " << lit(OW * OH * OC) << ";\n";
  t.os << "  const int g = oc / " << OCg << ";\n  float acc = 0.f;\n";
  t.os << "  for (int ic = 0; ic < " << ICg << "; ++ic) {\n";
  t.os << "    const float* xp = X + ((n * " << IC << " + g * " << ICg << " + ic) * " << lit(H * Wd) << ");\n";
  t.os << "    const float* wp = Wt + ((long long)(oc * " << ICg << " + ic) * " << (KH * KW) << ");\n";
  t.os << "    #pragma unroll 4\n    for (int kh = 0; kh < " << KH << "; ++kh) {\n";
  t.os << "      const int ih = oh * " << s[0] << " - " << p[0] << " + kh * " << dl[0] << ";\n";
  t.os << "      if (ih < 0 || ih >= " << H << ") continue;\n";
  t.os << "      #pragma unroll 4\n      for (int kw = 0; kw < " << KW << "; ++kw) {\n";
  t.os << "        const int iw = ow * " << s[1] << " - " << p[1] << " + kw * " << dl[1] << ";\n";
  t.os << "        if (iw < 0 || iw >= " << Wd << ") continue;\n";
  t.os << "        acc = fmaf(xp[ih * " << Wd << " + iw], wp[kh * " << KW << " + kw], acc);\n      }\n    }\n  }\n";
  t.os << "  float v = acc;\n";
  if (biasBinding >= 0) t.os << "  v += ((const float*)a.bindings[" << biasBinding << "])[oc];\n";
  if (resBinding >= 0) t.os << "  v += ((const float*)a.bindings[" << resBinding << "])[i];\n";
  t.os << "  v = " << act << ";\n";
  t.os << "  ((float*)a.bindings[0])[i] = v;\n";
  t.k.source = t.finish(name);
  return t.k;
}

namespace {

bool matmulSupported(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  if (activation(cast<MatMulOp>(op).getActivation(), "v", 0, 0).empty()) return why = "an unknown activation", false;
  return true;
}

bool convSupported(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  auto c = cast<ConvOp>(op);
  if (llvm::cast<RankedTensorType>(c.getInput().getType()).getRank() != 4) return why = "a conv that is not 2-D", false;
  if (activation(c.getActivation(), "v", 0, 0).empty()) return why = "an unknown activation", false;
  return true;
}

} // namespace

void registerMatrixProductsKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<MatMulOp>(matmulSupported, [](const KernelRequest &r) {
    return matmulKernel(cast<MatMulOp>(r.ops.front()), r.ext, r.result, r.name, r.options);
  });
  registry.addOpKernel<ConvOp>(convSupported, [](const KernelRequest &r) {
    return convKernel(cast<ConvOp>(r.ops.front()), r.ext, r.result, r.name, r.options);
  });
}

} // namespace cudagen
} // namespace v4f
