//===- ConstantValues.h - the elements of a constant, expanded -*- C++ -*-===//
//
// Passes and kernel generation that rewrite constants (quantizing, packing)
// need every element as a plain vector; DenseElementsAttr iteration already
// expands a splat to all its elements.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_DIALECT_V4F_UTILS_CONSTANTVALUES_H
#define V4F_DIALECT_V4F_UTILS_CONSTANTVALUES_H

#include "mlir/IR/BuiltinAttributes.h"

#include <cstdint>
#include <vector>

namespace v4f {

/// Every element of a float32 constant.
inline std::vector<float> floatValues(mlir::DenseElementsAttr attr) {
  return std::vector<float>(attr.value_begin<float>(), attr.value_end<float>());
}

/// Every element of an 8-bit integer constant, as int8 (two's complement).
inline std::vector<int8_t> int8Values(mlir::DenseElementsAttr attr) {
  std::vector<int8_t> out;
  out.reserve(size_t(attr.getNumElements()));
  for (const llvm::APInt &v : attr.getValues<llvm::APInt>()) out.push_back(int8_t(v.getSExtValue()));
  return out;
}

} // namespace v4f

#endif // V4F_DIALECT_V4F_UTILS_CONSTANTVALUES_H
