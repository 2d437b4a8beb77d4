//===- ImportBuilders.cpp - small builders shared by composite importers --===//
#include "NodeContext.h"

using namespace mlir;

namespace v4f {

LogicalResult requireF32(NodeContext &c, size_t i) {
  auto t = c.inputType(i);
  if (!t.getElementType().isF32())
    return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                  "') must be float32 (other element types are not supported yet)");
  return success();
}

Value reshapeTo(NodeContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  BuildContext bc(c.b, c.loc);
  return reshapeTo(bc, in, shape, sources);
}

Value transposeBy(NodeContext &c, Value in, ArrayRef<int64_t> perm) {
  BuildContext bc(c.b, c.loc);
  return transposeBy(bc, in, perm);
}

SmallVector<Value> splitBy(NodeContext &c, Value v, int64_t axis, ArrayRef<int64_t> sizes) {
  BuildContext bc(c.b, c.loc);
  return splitBy(bc, v, axis, sizes);
}

FailureOr<Value> buildElementwise(NodeContext &c, ArrayRef<Value> inputs, Type resultElement,
                                  const ElementwiseBodyFn &body) {
  BuildContext bc(c.b, c.loc);
  auto r = buildElementwise(bc, inputs, resultElement, body);
  if (failed(r)) return c.fail(bc.error);
  return r;
}

LogicalResult importMatMulValues(NodeContext &c, Value a, Value b, Value &out) {
  BuildContext bc(c.b, c.loc);
  auto r = buildMatMul(bc, a, b);
  if (failed(r)) return c.fail(bc.error);
  out = *r;
  return success();
}

} // namespace v4f
