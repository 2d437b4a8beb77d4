//===- WeightPacking.h - compile-time panel layouts of GEMM weights -*- C++ -*-===//
//
// The layouts v4f-pack-weights chooses (attribute `v4f.packed_weight`) and
// the functions that write them; the GEMM emitter reads the same layouts.
// Panels are float32, zero-padded to a whole panel:
//   b_panels (MatMul B [K, N] per batch matrix): P = ceil(N / nr) panels,
//     panel p holds B[k][p*nr + j] at (p*K + k)*nr + j;
//   a_panels (Conv W as [M = OC/G, K] per group): P = ceil(M / mr) panels,
//     panel p holds W[p*mr + r][k] at (p*K + k)*mr + r;
//   lane_panels (Conv W of a "channel_lanes" conv): a_panels of nr output
//     channels — the B panels of C^T = X^T W^T, output channels in lanes.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_WEIGHTPACKING_H
#define V4F_LIB_CODEGEN_CPU_WEIGHTPACKING_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace v4f {

inline constexpr const char *kPackedWeightAttr = "v4f.packed_weight";

struct WeightPacking {
  enum Kind { BPanels, APanels } kind;
  int64_t panel; // nr for b_panels, mr for a_panels
};

/// The packing `op` was marked with (and its tiling), if any.
std::optional<WeightPacking> packingOf(mlir::Operation *op);

/// Floats of one packed matrix: ceil(cols / panel) * panel * K, where the
/// packed side has `cols` entries (N for b_panels, M for a_panels).
inline int64_t packedMatrixFloats(int64_t cols, int64_t K, int64_t panel) {
  return (cols + panel - 1) / panel * panel * K;
}

/// Packs `matrices` row-major [K, N] matrices from `src` into b_panels.
void packBPanels(const float *src, int64_t matrices, int64_t K, int64_t N, int64_t nr, float *dst);
/// Packs `matrices` row-major [M, K] matrices from `src` into a_panels.
void packAPanels(const float *src, int64_t matrices, int64_t M, int64_t K, int64_t mr, float *dst);

} // namespace v4f

#endif
