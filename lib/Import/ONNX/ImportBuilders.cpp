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

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Value reshapeTo(NodeContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  SmallVector<int64_t> src(sources.begin(), sources.end());
  if (src.empty()) src.assign(shape.size(), -1);
  auto type = RankedTensorType::get(shape, typeOf(in).getElementType());
  return c.b.create<ReshapeOp>(c.loc, type, in, Value(), c.b.getDenseI64ArrayAttr(src), c.b.getBoolAttr(false));
}

Value transposeBy(NodeContext &c, Value in, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
  if (identity) return in;
  return c.b.create<TransposeOp>(c.loc, in, c.b.getDenseI64ArrayAttr(perm));
}

SmallVector<Value> splitBy(NodeContext &c, Value v, int64_t axis, ArrayRef<int64_t> sizes) {
  if (sizes.size() == 1) return {v};
  auto t = typeOf(v);
  SmallVector<Type> types;
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = s;
    types.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  auto op = c.b.create<SplitOp>(c.loc, types, v, Value(), c.b.getI64IntegerAttr(axis), c.b.getDenseI64ArrayAttr(sizes));
  return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

} // namespace v4f
