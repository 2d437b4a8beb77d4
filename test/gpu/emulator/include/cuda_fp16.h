// cuda_fp16.h for the host emulator (cuda_emulator.h): __half as _Float16,
// the conversions the generated kernels use.
#pragma once
struct __half {
  _Float16 v;
};
inline __half __float2half_rn(float f) { return __half{static_cast<_Float16>(f)}; }
inline __half __float2half(float f) { return __float2half_rn(f); }
inline float __half2float(__half h) { return static_cast<float>(h.v); }
inline float v4f_emu_to_float(__half h) { return __half2float(h); }
