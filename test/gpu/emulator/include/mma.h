// mma.h for the host emulator (cuda_emulator.h): nvcuda::wmma 16x16x16
// (FP16/BF16) and 16x16x8 (TF32) with every thread of the warp holding the
// whole tile in `x` (the hardware spreads it over the warp's registers in an
// unspecified layout; kernels may only touch x[0 .. num_elements) all alike,
// e.g. to round them to TF32), products accumulated in float.
#pragma once
#include <cstdint>
#include <cstring>

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {}; // float in memory, 10-bit mantissa in the tensor core
} // namespace precision

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && (K == 16 || K == 8), "the emulator has the 16x16x16 and 16x16x8 shapes");
  // a is M x K, b is K x N, the accumulator M x N; row-major.
  static constexpr int rows = __is_same(Use, matrix_b) ? K : M;
  static constexpr int cols = __is_same(Use, matrix_a) ? K : N;
  enum { num_elements = rows * cols };
  float x[rows * cols];
};

// cvt.rna.tf32.f32: round to nearest, ties away from zero, to a 10-bit
// mantissa (the low 13 bits cleared); NaN and infinities pass unchanged.
inline float __float_to_tf32(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;
  std::memcpy(&v, &b, 4);
  return v;
}

template <typename Use, int M, int N, int K, typename T, typename Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, float v) {
  for (float& e : f.x) e = v;
}

inline float toFloat(float v) { return v; }
template <typename H>
float toFloat(H v) {
  return v4f_emu_to_float(v);
}

// a (M x K) / b (K x N) from memory in the fragment's declared layout.
template <typename Use, int M, int N, int K, typename T, typename Layout, typename P>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const P* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, Layout>;
  constexpr bool colMajor = __is_same(Layout, col_major);
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c) f.x[r * F::cols + c] = toFloat(colMajor ? p[c * ldm + r] : p[r * ldm + c]);
}
template <int K, typename T>
void load_matrix_sync(fragment<accumulator, 16, 16, K, T>& f, const T* p, unsigned ldm, layout_t layout) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) f.x[r * 16 + c] = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
}
template <int K, typename T>
void store_matrix_sync(T* p, const fragment<accumulator, 16, 16, K, T>& f, unsigned ldm, layout_t layout) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) (layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c]) = f.x[r * 16 + c];
}
template <int K, typename TA, typename LA, typename TB, typename LB, typename TC>
void mma_sync(fragment<accumulator, 16, 16, K, TC>& d, const fragment<matrix_a, 16, 16, K, TA, LA>& a,
              const fragment<matrix_b, 16, 16, K, TB, LB>& b, const fragment<accumulator, 16, 16, K, TC>& c) {
  float out[256];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.x[i * 16 + j];
      for (int k = 0; k < K; ++k) s += a.x[i * K + k] * b.x[k * 16 + j];
      out[i * 16 + j] = s;
    }
  for (int i = 0; i < 256; ++i) d.x[i] = out[i];
}
} // namespace wmma
} // namespace nvcuda
