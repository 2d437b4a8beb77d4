// mma.h for the host emulator (cuda_emulator.h): nvcuda::wmma 16x16x16 with
// every thread of the warp holding the whole tile (the hardware spreads it
// over the warp's registers in an unspecified layout, which the generated
// kernels never look into), products accumulated in float.
#pragma once
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulator has the 16x16x16 shape only");
  float e[256];  // row-major: a is M x K, b is K x N, accumulator M x N
  enum { num_elements = 256 };
};

template <typename Use, typename T, typename Layout>
void fill_fragment(fragment<Use, 16, 16, 16, T, Layout>& f, float v) {
  for (float& x : f.e) x = v;
}

inline float toFloat(float v) { return v; }
template <typename H>
float toFloat(H v) { return v4f_emu_to_float(v); }

// a (M x K) / b (K x N) from memory in the fragment's declared layout.
template <typename Use, typename T, typename Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& f, const T* p, unsigned ldm) {
  constexpr bool colMajor = __is_same(Layout, col_major);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) f.e[r * 16 + c] = toFloat(colMajor ? p[c * ldm + r] : p[r * ldm + c]);
}
template <typename T>
void load_matrix_sync(fragment<accumulator, 16, 16, 16, T>& f, const T* p, unsigned ldm, layout_t layout) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) f.e[r * 16 + c] = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
}
template <typename T>
void store_matrix_sync(T* p, const fragment<accumulator, 16, 16, 16, T>& f, unsigned ldm, layout_t layout) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) (layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c]) = f.e[r * 16 + c];
}
template <typename TA, typename LA, typename TB, typename LB, typename TC>
void mma_sync(fragment<accumulator, 16, 16, 16, TC>& d, const fragment<matrix_a, 16, 16, 16, TA, LA>& a,
              const fragment<matrix_b, 16, 16, 16, TB, LB>& b, const fragment<accumulator, 16, 16, 16, TC>& c) {
  float out[256];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.e[i * 16 + j];
      for (int k = 0; k < 16; ++k) s += a.e[i * 16 + k] * b.e[k * 16 + j];
      out[i * 16 + j] = s;
    }
  for (int i = 0; i < 256; ++i) d.e[i] = out[i];
}
}  // namespace wmma
}  // namespace nvcuda
