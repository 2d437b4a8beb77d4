// cuda_bf16.h for the host emulator (cuda_emulator.h): __nv_bfloat16 as its
// 16 bits, round-to-nearest-even from float.
#pragma once
#include <stdint.h>
#include <string.h>
struct __nv_bfloat16 {
  uint16_t bits;
};
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{static_cast<uint16_t>((u >> 16) | 0x40u)}; // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{static_cast<uint16_t>(u >> 16)};
}
inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t u = uint32_t(h.bits) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline float v4f_emu_to_float(__nv_bfloat16 h) { return __bfloat162float(h); }
