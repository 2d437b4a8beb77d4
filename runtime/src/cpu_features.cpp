// cpu_features.cpp - CPU feature detection (CPUID + XGETBV) for artifact requirements.
#include "cpu_features.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define V4F_X86 1
#endif

namespace v4f {
namespace rt {

namespace {
const char* const kFeatureNames[] = {V4F_CPU_FEATURE_NAMES};
constexpr int kFeatureCount = sizeof(kFeatureNames) / sizeof(kFeatureNames[0]);
static_assert(kFeatureCount <= 64, "feature mask is 64 bits");

#if V4F_X86
uint64_t readXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Linux gates AMX tile data behind a per-process permission request.
bool requestAmxPermission() {
#if defined(__linux__) && defined(__x86_64__)
  const long kArchReqXcompPerm = 0x1023;
  const long kXfeatureXtileData = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
#else
  return false;
#endif
}
#endif

void set(uint64_t* mask, const char* name, bool present) {
  int i = cpuFeatureIndex(name);
  if (present && i >= 0) *mask |= uint64_t(1) << i;
}
} // namespace

int cpuFeatureIndex(const char* name) {
  for (int i = 0; i < kFeatureCount; ++i)
    if (strcmp(kFeatureNames[i], name) == 0) return i;
  return -1;
}

int cpuFeatureIndexN(const char* name, size_t len) {
  for (int i = 0; i < kFeatureCount; ++i)
    if (strlen(kFeatureNames[i]) == len && memcmp(kFeatureNames[i], name, len) == 0) return i;
  return -1;
}

const char* cpuFeatureName(int index) { return index >= 0 && index < kFeatureCount ? kFeatureNames[index] : "?"; }

uint64_t detectCpuFeatures(bool wantAmx) {
  uint64_t mask = 0;
#if V4F_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  const unsigned c1 = c;
  bool osxsave = (c1 >> 27) & 1;
  uint64_t xcr0 = osxsave ? readXcr0() : 0;
  bool osAvx = (xcr0 & 0x6) == 0x6;
  bool osAvx512 = osAvx && (xcr0 & 0xE0) == 0xE0;
  bool osAmx = (xcr0 & 0x60000) == 0x60000;

  set(&mask, "sse4.1", (c1 >> 19) & 1);
  set(&mask, "sse4.2", (c1 >> 20) & 1);
  set(&mask, "avx", osAvx && ((c1 >> 28) & 1));
  set(&mask, "fma", osAvx && ((c1 >> 12) & 1));
  set(&mask, "f16c", osAvx && ((c1 >> 29) & 1));

  unsigned maxLeaf = __get_cpuid_max(0, nullptr);
  if (maxLeaf >= 7) {
    unsigned a7, b7, c7, d7;
    __cpuid_count(7, 0, a7, b7, c7, d7);
    set(&mask, "bmi", (b7 >> 3) & 1);
    set(&mask, "bmi2", (b7 >> 8) & 1);
    set(&mask, "avx2", osAvx && ((b7 >> 5) & 1));
    set(&mask, "avx512f", osAvx512 && ((b7 >> 16) & 1));
    set(&mask, "avx512dq", osAvx512 && ((b7 >> 17) & 1));
    set(&mask, "avx512bw", osAvx512 && ((b7 >> 30) & 1));
    set(&mask, "avx512vl", osAvx512 && ((b7 >> 31) & 1));
    set(&mask, "avx512vnni", osAvx512 && ((c7 >> 11) & 1));
    set(&mask, "avx512fp16", osAvx512 && ((d7 >> 23) & 1));
    bool amxTile = (d7 >> 24) & 1;
    if (a7 >= 1) {
      unsigned a71, b71, c71, d71;
      __cpuid_count(7, 1, a71, b71, c71, d71);
      set(&mask, "avx512bf16", osAvx512 && ((a71 >> 5) & 1));
      set(&mask, "avxvnni", osAvx && ((a71 >> 4) & 1));
    }
    if (amxTile && osAmx && wantAmx && requestAmxPermission()) {
      set(&mask, "amx-tile", true);
      set(&mask, "amx-bf16", (d7 >> 22) & 1);
      set(&mask, "amx-int8", (d7 >> 25) & 1);
    }
  }
#else
  (void)wantAmx;
#endif
  return mask;
}

} // namespace rt
} // namespace v4f

extern "C" V4F_API int v4f_cpu_has_feature(const char* name) {
  if (!name) return -1;
  int i = v4f::rt::cpuFeatureIndex(name);
  if (i < 0) return -1;
  bool amx = strncmp(name, "amx", 3) == 0;
  return (v4f::rt::detectCpuFeatures(amx) >> i) & 1 ? 1 : 0;
}
