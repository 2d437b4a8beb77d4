//===- StridedMap.h - the strided map kernel shared by data movement -*- C++ -*-===//
//
// A "strided map" iterates over an index space, reads each input at a
// strided offset and writes the output at a strided offset; the inner loop
// runs along the last dim so it vectorizes when strides are 1. Elementwise
// maps (ElementwiseKernels.cpp) and transposes, copies, concats and gathers
// (DataMovementKernels.cpp) are all strided maps.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_STRIDEDMAP_H
#define V4F_LIB_CODEGEN_CPU_STRIDEDMAP_H

#include "CPUKernelContext.h"

#include <functional>

namespace v4f {

using StrideFn = std::function<std::vector<mlir::Value>(KernelBuilder &)>;

struct MapOperand {
  uint32_t buffer;
  StrideFn strides;                                 // one stride per iteration dim
  std::function<mlir::Value(KernelBuilder &)> base; // element offset, may be null
  mlir::Type type = {};                             // element type; null: the map's
};

/// Natural row-major strides of `dims`, broadcast (stride 0 where the dim is
/// 1) and right-aligned to `rank` iteration dims.
std::vector<mlir::Value> broadcastStrides(KernelBuilder &kb, const std::vector<Reg> &dims, size_t rank);
std::vector<mlir::Value> naturalStrides(KernelBuilder &kb, const std::vector<Reg> &dims);

/// Emits one dispatch computing out[idx] = fn(in_k[idx]) over `iterDims`.
/// `fn` gets scalars, or vectors when `vectorFn` allows it and every inner
/// stride is a constant 0 or 1 (output 1): then the inner loop runs whole
/// vectors (stride-1 inputs loaded, stride-0 ones splat) and the scalar loop
/// does the tail.
void emitStridedMap(CPUKernelContext &ctx, const std::string &name, const std::vector<Reg> &iterDims,
                    mlir::Type elementType, const MapOperand &out, const std::vector<MapOperand> &inputs,
                    const std::function<mlir::Value(KernelBuilder &, llvm::ArrayRef<mlir::Value>)> &fn,
                    bool vectorFn = true);

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_STRIDEDMAP_H
