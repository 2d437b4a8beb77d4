//===- GemmEmitter.h - the shared GEMM emitter of matmul and conv -*- C++ -*-===//
//
// GemmKernels.cpp emits C[M,N] = A[M,K] * B[K,N] per batch for a GemmSpec;
// emitMatMul there and emitConv (ConvKernels.cpp) describe their operands
// with one. Internal to lib/Codegen/CPU.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_GEMMEMITTER_H
#define V4F_LIB_CODEGEN_CPU_GEMMEMITTER_H

#include "CPUKernelContext.h"

#include <functional>
#include <optional>
#include <string>

namespace v4f {

enum class BiasMode { None, PerRow, PerColumn };

struct GemmSpec {
  std::string name;
  Reg batches, M, N, K;
  uint32_t aBuf, bBuf, cBuf;
  std::optional<uint32_t> biasBuf, residualBuf;
  BiasMode biasMode = BiasMode::None;
  std::string act = "none";
  float alpha = 0, beta = 0;
  int64_t mr = 0, nr = 0, lanes = 0, mb = 0, nb = 0, kc = 0; // from #v4f.gemm_tiling
  /// A / B are the weight's a_panels / b_panels (v4f-pack-weights).
  bool aPacked = false, bPacked = false;
  /// Prefetch the packed B stream (set by emitGemm for a large packed B).
  bool prefetchB = false;
  /// Within a K block, each MR-row tile runs across all the workgroup's
  /// column panels before the next (only for a B read in place: a 1x1
  /// conv's input). The tile's MR output (and residual) rows are then
  /// written front to back, a few streams the hardware prefetchers follow;
  /// panels outside made MB rows advance NR floats at a time, MB output +
  /// MB residual + K input streams that none followed. The KC x NB block of
  /// B is re-read from L2 per row tile instead of the KC x NR panel from L1
  /// (v4f-select-cpu-strategy sizes NB for that: pointwiseTiling;
  /// measurements: bench/results/history.md, "Measurements behind code
  /// decisions").
  bool rowTilesOuter = false;
  /// Element offsets of A, B, C (and bias) for batch `b`, built in-kernel.
  std::function<mlir::Value(KernelBuilder &, mlir::Value)> aOffset, bOffset, cOffset, biasOffset;
  /// Set when B is not in memory but packed by each workgroup, one K block
  /// at a time, into its scratch (a conv's im2col, never materialized):
  /// packB(kb, batch, k0, k1, n0, n1) writes rows [k0, k1) x columns
  /// [n0, n1) of B as panels of (k1 - k0) x NR, the last zero-padded.
  /// Workgroups then own all M rows of NB columns.
  std::function<void(KernelBuilder &, mlir::Value, mlir::Value, mlir::Value, mlir::Value, mlir::Value)> packB;
  /// A buffer packB reads (bound after the bias and residual).
  std::optional<uint32_t> extraBuf;
  /// Output channels in vector lanes (a conv with v4f.conv_algorithm =
  /// "channel_lanes"; the GEMM is C^T = X^T W^T): A is unpacked with element
  /// (r, k) at aOff + r + k * aKStride (an activation matrix [K, P] read
  /// down its columns), C is stored transposed — element (r, col) at
  /// cOff + col * cColStride + r, one masked scatter per vector, once; the
  /// partial sums of earlier K blocks stay in the worker's scratch (MB x NB
  /// floats, the workgroup's tile). (Workgroups owning all rows instead, each
  /// streaming only its slice of the weight, ran ResNet-50 slower.)
  std::optional<int64_t> aKStride, cColStride;
  /// Implicit channels-in-lanes conv (no im2col matrix): with aKTable set,
  /// element (r, k) of A is at aOff + aRowBase(r) + table[k], the table an
  /// int32 buffer bound as extraBuf (an offset per K row, padded past K for
  /// the prefetch) — the input plane position of output pixel r, plus the
  /// offset of k's (channel, kernel row, kernel column).
  bool aKTable = false;
  /// Entries past K the table holds (the A prefetch reads this far ahead).
  static constexpr int64_t kTablePad = 32;
  std::function<mlir::Value(KernelBuilder &, mlir::Value)> aRowBase;
};

/// Emits the GEMM dispatch(es) of `spec`: workgroups of MB x NB output
/// tiles, MR x NR register tiles over K blocks, the fused epilogue.
void emitGemm(CPUKernelContext &ctx, const GemmSpec &spec);

/// Reads the op's #v4f.gemm_tiling into `s` (an error when it is missing).
mlir::LogicalResult readTiling(mlir::Operation *op, GemmSpec &s);

} // namespace v4f

#endif
