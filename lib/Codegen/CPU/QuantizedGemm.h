//===- QuantizedGemm.h - building blocks of the integer GEMMs -*- C++ -*-===//
//
// Shared by the int8 matmul (QuantizedGemmKernels.cpp) and the int8 conv
// (QuantizedConvKernels.cpp): the integer dot-product steps and the
// workgroup/tile loops.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H
#define V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H

#include "DispatchContext.h"

#include <functional>

namespace v4f {

/// vpdpbusd (AVX-512 VNNI, or AVX-VNNI at 256 bits): lane i of the result is
/// acc[i] plus the four products of the unsigned bytes of a[i] by the signed
/// bytes of b[i] (exact: no intermediate saturation). All three are
/// vector<16xi32> or vector<8xi32>.
mlir::Value dotU8S8(KernelBuilder &kb, mlir::Value acc, mlir::Value a, mlir::Value b);

/// pmaddwd: lane i of the result is a[2i] * b[2i] + a[2i+1] * b[2i+1] in
/// int32, for vector<2L x i16> operands (the x86 instruction of the vector
/// width when `x86`, generic vector ops otherwise).
mlir::Value pairwiseMulAdd(KernelBuilder &kb, mlir::Value a, mlir::Value b16, int64_t lanes, bool x86);

/// The work split and loops shared by the integer GEMMs: workgroups over
/// blocks of MB rows x NB columns (NB shrinking, in multiples of NR, until
/// there are at least 8 workgroups), and in each block `tile(m, n, rows,
/// edgeCols)` over MR-row tiles (then the power-of-two row edges) of every
/// NR-column panel (the last one with `edgeCols` valid columns, null when
/// the panel is whole). Returns the workgroup count.
Reg emitGemmBlocks(DispatchContext &ctx, KernelBuilder &kb, Reg R, Reg N, int64_t mr, int64_t nr, int64_t mb,
                   int64_t nb, const std::function<void(mlir::Value m, mlir::Value n, int rows, mlir::Value edgeCols)> &tile);

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H
