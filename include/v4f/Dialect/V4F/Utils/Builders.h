//===- Builders.h - v4f IR builders shared by the importer and the passes -*- C++ -*-===//
//
// Small builders of v4f IR used by both the ONNX importer and the
// decomposition passes. They need no ONNX node: a BuildContext holds the
// builder, the location the new ops get (an ONNX node's NameLoc, or the
// location of the op being decomposed) and why the last build failed.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_DIALECT_V4F_UTILS_BUILDERS_H
#define V4F_DIALECT_V4F_UTILS_BUILDERS_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>
#include <string>

namespace v4f {

struct BuildContext {
  BuildContext(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// Why the last failed build failed.
  std::string error;

  mlir::LogicalResult fail(const std::string &msg) {
    error = msg;
    return mlir::failure();
  }
};

mlir::RankedTensorType typeOf(mlir::Value v);
/// Reshape to `shape`; `sources[i] >= 0` takes result dim i from input dim
/// sources[i] (dynamic dims); empty sources mean a static reshape.
mlir::Value reshapeTo(BuildContext &c, mlir::Value in, llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> sources = {});
/// Run-time dims: a dim is a tensor<1xi64> value, a constant when known at
/// compile time (dimConstant, or dimOf a static dim), else computed by the
/// plan's shape program at run time (dimOf a dynamic dim reads it with
/// v4f.shape; dimMul/dimDiv combine dims and fold constants).
mlir::Value dimConstant(BuildContext &c, int64_t v);
mlir::Value dimOf(BuildContext &c, mlir::Value v, int64_t axis);
/// The dim's value when it is a compile-time constant.
std::optional<int64_t> constantDim(mlir::Value dim);
mlir::FailureOr<mlir::Value> dimMul(BuildContext &c, mlir::Value a, mlir::Value b);
/// a / b rounded down (dims are non-negative).
mlir::FailureOr<mlir::Value> dimDiv(BuildContext &c, mlir::Value a, mlir::Value b);
mlir::FailureOr<mlir::Value> dimSub(BuildContext &c, mlir::Value a, mlir::Value b);
mlir::FailureOr<mlir::Value> dimAdd(BuildContext &c, mlir::Value a, mlir::Value b);
/// `in` reshaped to `dims` (see dimOf): a static reshape when every dim is a
/// constant or a dim of `in` itself carried over, else a reshape whose shape
/// the plan computes at run time (checking the element count there).
mlir::FailureOr<mlir::Value> reshapeToDims(BuildContext &c, mlir::Value in, llvm::ArrayRef<mlir::Value> dims);
/// `v` with the type `want`: `v` itself when the types agree, else a
/// reshape stating the dims `want` knows (checked at run time). With
/// `exact`, `v` knowing a dim `want` does not is an error; without it, such
/// dims stay as `v` has them.
mlir::FailureOr<mlir::Value> reshapeToType(BuildContext &c, mlir::Value v, mlir::RankedTensorType want,
                                           bool exact = true);
/// Splits `v` along `axis` into parts of `sizes` (dims as above; run-time
/// sizes give a split whose sizes the plan computes).
mlir::FailureOr<llvm::SmallVector<mlir::Value>> splitByDims(BuildContext &c, mlir::Value v, int64_t axis,
                                                            llvm::ArrayRef<mlir::Value> sizes);
/// Transpose by `perm` (the input itself for the identity).
mlir::Value transposeBy(BuildContext &c, mlir::Value in, llvm::ArrayRef<int64_t> perm);
/// Splits `v` along `axis` into parts of the given sizes.
llvm::SmallVector<mlir::Value> splitBy(BuildContext &c, mlir::Value v, int64_t axis, llvm::ArrayRef<int64_t> sizes);
/// A float32 arith.constant.
mlir::Value constF32(BuildContext &c, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> values);

using ElementwiseBodyFn = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, llvm::ArrayRef<mlir::Value>)>;
/// Builds a v4f.elementwise over `inputs` (broadcast) whose body `body`
/// computes the result element of type `resultElement`.
mlir::FailureOr<mlir::Value> buildElementwise(BuildContext &c, llvm::ArrayRef<mlir::Value> inputs,
                                              mlir::Type resultElement, const ElementwiseBodyFn &body);
/// Mean, deviation (x - mean) and variance of `x` over `axes` (kept as
/// size 1), built from v4f.reduce means and v4f.elementwise ops.
struct MomentValues {
  mlir::Value mean, deviation, variance;
};
mlir::FailureOr<MomentValues> meanAndVariance(BuildContext &c, mlir::Value x, llvm::ArrayRef<int64_t> axes);
/// `v` converted element by element (ONNX Cast rules, castScalar) to
/// element type `to`; `v` itself when it already has it.
mlir::FailureOr<mlir::Value> convertElementType(BuildContext &c, mlir::Value v, mlir::Type to);
/// numpy-style matmul of two float32 values (rank-1 operands handled).
mlir::FailureOr<mlir::Value> buildMatMul(BuildContext &c, mlir::Value a, mlir::Value b);

/// The constant `op` folds to (its fold hook over its constant operands;
/// for a v4f.elementwise: a small one over constants only), the op left in
/// place; nullopt when it does not fold to a constant tensor.
std::optional<mlir::DenseElementsAttr> foldedValue(mlir::Operation *op);

/// ONNX Cast of one body scalar `x` from element type `from` to `to` (tensor
/// element types; storage-only ones are their storage integers in bodies).
/// `saturate` is Cast's attribute for float8 targets, `roundMode` its
/// round_mode for float8e8m0 targets (ScalarCast.cpp).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Type from, mlir::Type to,
                       bool saturate = true, const std::string &roundMode = "up");

} // namespace v4f

#endif // V4F_DIALECT_V4F_UTILS_BUILDERS_H
