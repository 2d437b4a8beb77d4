//===- InputValue.h - a graph input folded to a constant (--input-value) -*- C++ -*-===//
//
// Plain data, no MLIR: shared by the importer options and the compiler's
// options (which the driver and the Python package fill).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_IMPORT_INPUTVALUE_H
#define V4F_IMPORT_INPUTVALUE_H

#include <cstdint>
#include <string>
#include <vector>

namespace v4f {

/// The value of a graph input known at compile time: dtype is the ONNX
/// TensorProto element type (= the V4F_DTYPE code), the data little-endian
/// in C order.
struct InputValue {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  std::string data;
};

} // namespace v4f

#endif // V4F_IMPORT_INPUTVALUE_H
