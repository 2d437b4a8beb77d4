//===- V4FOps.h - v4f dialect and operations --------------------*- C++ -*-===//
#ifndef V4F_DIALECT_V4F_IR_V4FOPS_H
#define V4F_DIALECT_V4F_IR_V4FOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "v4f/Dialect/V4F/IR/DimBuilder.h"

#include "v4f/Dialect/V4F/IR/V4FOpsDialect.h.inc"
#include "v4f/Dialect/V4F/IR/V4FInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOps.h.inc"

namespace v4f {
/// Numpy-style broadcast of two shapes (dynamic dims as ShapedType::kDynamic).
/// Returns failure when two static dims differ and neither is 1.
mlir::LogicalResult broadcastShapes(llvm::ArrayRef<int64_t> a,
                                    llvm::ArrayRef<int64_t> b,
                                    llvm::SmallVectorImpl<int64_t> &out);
/// Output extent of a conv/pool window along one axis; kDynamic if `in` is.
/// The scalar type an element of type `t` has inside a v4f.elementwise body:
/// unsigned integers become signless of the same width.
mlir::Type bodyScalarType(mlir::Type t);
/// Storage-only element types: bfloat16, the float8 formats and the 2/4-bit
/// integers. Kernels see them as their storage integers (bf16 -> i16, float8
/// -> i8, [u]int4/[u]int2 -> i8 holding the sign- or zero-extended value);
/// only conversions (Cast, QuantizeLinear, ...) and data movement act on them.
bool isStorageOnlyType(mlir::Type t);
/// Dispatch formation: ops computed element by element that may share a
/// fused kernel with their producer, and ops that only alias a buffer
/// (no kernel; they stay outside v4f.dispatch regions).
bool isFusibleElementwise(mlir::Operation *op);
bool isBufferView(mlir::Operation *op);
/// Attaches the shape rules (ShapeRuleOpInterface) to the ops that have one
/// (V4FShapeRules.cpp); called when the dialect is loaded.
void attachShapeRules(mlir::MLIRContext &ctx);
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBegin, int64_t padEnd,
                         bool ceilMode);
} // namespace v4f

#endif // V4F_DIALECT_V4F_IR_V4FOPS_H
