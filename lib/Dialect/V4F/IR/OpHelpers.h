//===- OpHelpers.h - helpers shared by the v4f op verifiers ------*- C++ -*-===//
#ifndef V4F_LIB_DIALECT_V4F_IR_OPHELPERS_H
#define V4F_LIB_DIALECT_V4F_IR_OPHELPERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace v4f {
namespace detail {

constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

inline mlir::RankedTensorType rankedOrNull(mlir::Value v) {
  return llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
}

inline mlir::LogicalResult emitOptionalError(std::optional<mlir::Location> loc, const llvm::Twine &msg) {
  if (loc) return mlir::emitError(*loc, msg);
  return mlir::failure();
}

} // namespace detail
} // namespace v4f

#endif
