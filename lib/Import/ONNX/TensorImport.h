//===- TensorImport.h - ONNX TensorProto -> dense attributes ----*- C++ -*-===//
#ifndef V4F_LIB_IMPORT_ONNX_TENSORIMPORT_H
#define V4F_LIB_IMPORT_ONNX_TENSORIMPORT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "onnx/onnx_pb.h"

#include <string>

namespace v4f {
/// Converts an initializer / Constant tensor to a DenseElementsAttr, reading
/// external data relative to `modelDir` with the traversal and bounds checks
/// of HOSTILE-INPUT.md. Returns null and sets `error` on any inconsistency.
mlir::DenseElementsAttr importTensor(mlir::MLIRContext &ctx, const onnx::TensorProto &tensor,
                                     const std::string &modelDir, std::string &error);
/// Maps an ONNX element type to MLIR (f32, i64, i32 supported); null if not.
mlir::Type importElementType(mlir::MLIRContext &ctx, int32_t onnxType);
/// Human-readable name of an ONNX element type number.
std::string onnxTypeName(int32_t onnxType);
} // namespace v4f

#endif
