//===- KernelLimits.h - what passes need to know of a target's kernels -*- C++ -*-===//
//
// The limits and sizes of generated kernels that target-independent passes
// decide with (which regions to fuse, where to place them). Each is defined
// once, here, and read both by the kernel that it describes and by the
// pass; header-only, so lib/Transforms needs no codegen library.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_CODEGEN_KERNELLIMITS_H
#define V4F_CODEGEN_KERNELLIMITS_H

#include <cstdint>

namespace v4f {

//===----------------------------------------------------------------------===//
// CUDA
//===----------------------------------------------------------------------===//

/// The fused attention kernel (lib/Codegen/CUDA/AttentionKernel.cpp) keeps a
/// tile of keys and one of values, D and D2 floats wide, in shared memory
/// (48 KB with the query block): head dims up to this.
/// v4f-fuse-attention-regions merges regions placed on the GPU only within it.
inline constexpr int64_t kCudaMaxAttentionHeadDim = 128;

//===----------------------------------------------------------------------===//
// CPU
//===----------------------------------------------------------------------===//

/// Widest vector (float lanes) of any CPU target.
inline constexpr int64_t kCpuMaxVectorLanes = 16;

/// The per-worker scratch of the fused depthwise + 1x1 conv kernel
/// (lib/Codegen/CPU/DepthwisePointwiseKernels.cpp) with vectors of `lanes`
/// floats: padded input rows of one channel (a vector holding the left
/// padding, the row and its right padding rounded up to vectors, two
/// vectors of slack) and one depthwise output row per channel and block
/// row, in whole vectors.
struct DepthwisePointwiseScratch {
  int64_t inputRowFloats;     // one padded input row
  int64_t depthwiseRowFloats; // one depthwise output row
  int64_t window;             // input rows one output row reads: (KH - 1) dh + 1

  /// Floats for blocks of `rows` output rows over `channels` channels at
  /// row stride `sh`.
  int64_t floats(int64_t rows, int64_t channels, int64_t sh) const {
    return ((rows - 1) * sh + window) * inputRowFloats + channels * rows * depthwiseRowFloats;
  }
};

/// For an input row of W floats padded by `padRight`, OW output columns and
/// a KH-row kernel at row dilation `dh`.
inline DepthwisePointwiseScratch depthwisePointwiseScratch(int64_t W, int64_t padRight, int64_t OW, int64_t KH,
                                                           int64_t dh, int64_t lanes) {
  DepthwisePointwiseScratch s;
  s.inputRowFloats = lanes + (W + padRight + lanes - 1) / lanes * lanes + 2 * lanes;
  s.depthwiseRowFloats = (OW + lanes - 1) / lanes * lanes;
  s.window = (KH - 1) * dh + 1;
  return s;
}

/// v4f-fuse-depthwise-pointwise fuses only when the kernel's scratch for
/// one output row per block, at the widest vectors, fits this: beyond L2
/// the rows it re-reads would come from memory, and the unfused kernels are
/// as good.
inline constexpr int64_t kCpuMaxDepthwisePointwiseScratchBytes = 512 << 10;

} // namespace v4f

#endif // V4F_CODEGEN_KERNELLIMITS_H
