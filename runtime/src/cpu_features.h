// cpu_features.h - CPU feature names (V4F_CPU_FEATURE_NAMES) and their detection.
#ifndef V4F_RUNTIME_SRC_CPU_FEATURES_H_
#define V4F_RUNTIME_SRC_CPU_FEATURES_H_

#include "internal.h"
#include "v4f/artifact_format.h"

namespace v4f {
namespace rt {

// Index of `name` in V4F_CPU_FEATURE_NAMES, or -1 when unknown.
V4F_INTERNAL int cpuFeatureIndex(const char* name);
V4F_INTERNAL int cpuFeatureIndexN(const char* name, size_t len);
V4F_INTERNAL const char* cpuFeatureName(int index);
// Bit i set when feature i is usable (CPU support + OS-enabled register state).
// AMX is only reported (and its Linux permission requested) when wantAmx.
V4F_INTERNAL uint64_t detectCpuFeatures(bool wantAmx);

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_CPU_FEATURES_H_
