//===- DimBuilder.h - symbolic dimension arithmetic for shape rules -*- C++ -*-===//
//
// Shape rules (ShapeRuleOpInterface) compute an op's result dims from its
// operands' dims as opaque handles built with this interface. Codegen's
// shape-program builder implements it (a handle is a shape-program register
// evaluated by the runtime), so the dialect states each op's shape rule once
// and knows nothing about the plan.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_DIALECT_V4F_IR_DIMBUILDER_H
#define V4F_DIALECT_V4F_IR_DIMBUILDER_H

#include <cstdint>

namespace v4f {

class DimBuilder {
public:
  using Dim = uint32_t;
  virtual ~DimBuilder() = default;
  virtual Dim constant(int64_t v) = 0;
  virtual Dim add(Dim a, Dim b) = 0;
  virtual Dim sub(Dim a, Dim b) = 0;
  virtual Dim mul(Dim a, Dim b) = 0;
  virtual Dim floorDiv(Dim a, Dim b) = 0;
  virtual Dim ceilDiv(Dim a, Dim b) = 0;
  virtual Dim max(Dim a, Dim b) = 0;
  virtual Dim min(Dim a, Dim b) = 0;
  /// Numpy broadcasting of two dims: equal, or one of them is 1 (the other
  /// wins). Implementations that evaluate at run time check it there; this
  /// default assumes a valid pair.
  virtual Dim broadcast(Dim a, Dim b) { return max(a, b); }
};

} // namespace v4f

#endif
