//===- RecurrentMath.h - scalar math of RNN / GRU / LSTM cells --*- C++ -*-===//
//
// The float32 scalar functions of a v4f.recurrent cell, built as arith/math
// ops: used by v4f-decompose-recurrent (inside v4f.elementwise bodies of the
// unrolled steps) and by the CPU backend's time-loop kernel (a run-time
// sequence length), so both compute the same expressions.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_DIALECT_V4F_IR_RECURRENTMATH_H
#define V4F_DIALECT_V4F_IR_RECURRENTMATH_H

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace v4f {

/// One resolved activation of a recurrent cell (lower-case ONNX name).
struct RecurrentActivation {
  std::string name;
  float alpha = 0.f, beta = 0.f;
};

/// `act(x)` for a float32 scalar `x`: relu, tanh, sigmoid, affine,
/// leakyrelu, thresholdedrelu, scaledtanh, hardsigmoid, elu, softsign,
/// softplus (names are checked by the op's verifier).
mlir::Value buildRecurrentActivation(mlir::OpBuilder &b, mlir::Location l, const RecurrentActivation &act,
                                     mlir::Value x);

/// A gate: clips `x` to [-clip, clip] when `clip` is set, then applies `act`.
mlir::Value buildRecurrentGate(mlir::OpBuilder &b, mlir::Location l, std::optional<float> clip,
                               const RecurrentActivation &act, mlir::Value x);

} // namespace v4f

#endif
