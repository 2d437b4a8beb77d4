//===- QuantizedGemm.h - building blocks of the integer GEMMs -*- C++ -*-===//
//
// Shared by the int8 matmul (QuantizedGemmKernels.cpp) and the int8 conv
// (QuantizedConvKernels.cpp): the integer dot-product steps and the
// workgroup/tile loops.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H
#define V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H

#include "CPUKernelContext.h"

#include <functional>

namespace v4f {

/// The op's `v4f.tiling` (#v4f.gemm_tiling), or null after an error saying
/// v4f-select-cpu-strategy has not run.
GemmTilingAttr requireGemmTiling(mlir::Operation *op);

/// What the integer kernels need to know of the module's #v4f.cpu_target at
/// `lanes` float lanes: vpdpbusd at that width (`vnni`), x86 intrinsics.
struct IntegerIsa {
  bool vnni = false, x86 = false;
};
IntegerIsa integerIsa(mlir::Operation *op, int64_t lanes);

/// The stored integer of int8 activation quantization, still in float: q =
/// clamp(roundeven(x * inv) + zp, qmin, 127), stored as q + 128 with `vnni`
/// (the u8 value) or q - zp otherwise (the int16 value). `x` and `inv` have
/// the same type, scalar or vector.
mlir::Value quantizedValue(KernelBuilder &kb, mlir::Value x, mlir::Value inv, int32_t zp, float qmin, bool vnni);

/// A vector<lanes x i32> constant splat of `v`.
mlir::Value splatI32(KernelBuilder &kb, int64_t lanes, int32_t v);

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
Reg emitGemmBlocks(CPUKernelContext &ctx, KernelBuilder &kb, Reg R, Reg N, int64_t mr, int64_t nr, int64_t mb,
                   int64_t nb,
                   const std::function<void(mlir::Value m, mlir::Value n, int rows, mlir::Value edgeCols)> &tile);

/// Stores an MR x NR (or `rows` x NR) float tile at rows [m, m + rows),
/// columns [n, n + vecs * L) of the row-major [R, N] output (binding 0), only
/// the first `edgeCols` columns when set: `value(r, v, col)` gives vector v
/// of row r before bias and activation (`col` is vector v of the [N] binding
/// `colBinding` at those columns, loaded once, or null), then the bias
/// (binding `biasBinding`, [N]) is added and the activation applied.
void emitTileEpilogue(KernelBuilder &kb, int rows, int64_t vecs, int64_t L, mlir::Value m, mlir::Value n, Reg N,
                      mlir::Value edgeCols, std::optional<unsigned> colBinding, std::optional<unsigned> biasBinding,
                      const std::string &act, float alpha, float beta,
                      const std::function<mlir::Value(int r, int64_t v, mlir::Value col)> &value);

/// The "quantize rows" dispatch: rows of `srcBuf` (float, K each) -> int8
/// values into `qBuf` (`rowValues` per row, zero-padded past K), held as
/// int16 q - zp, or with `vnni` as u8 q + 128, and each row's scale into
/// `scaleBuf`. Static with `staticScale` and `staticZp`; dynamic (symmetric,
/// max |row| / 127) when `staticScale` is unset.
void emitQuantizeRows(CPUKernelContext &ctx, std::optional<float> staticScale, int32_t staticZp,
                      const std::string &name, Reg rows, int64_t K, int64_t rowValues, bool vnni, int64_t L,
                      uint32_t srcBuf, uint32_t qBuf, uint32_t scaleBuf);

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_QUANTIZEDGEMM_H
