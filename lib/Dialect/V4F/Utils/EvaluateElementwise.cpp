//===- EvaluateElementwise.cpp - compile-time evaluation of v4f.elementwise ===//
//
// Evaluates a small v4f.elementwise over constants element by element with
// the body ops' own folders (the importer folds shape arithmetic with it;
// the decompositions use it to see constant masks).
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/Utils/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace v4f;

std::optional<DenseElementsAttr> v4f::evaluateElementwise(ElementwiseOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  if (!type.hasStaticShape() || type.getNumElements() > 4096) return std::nullopt;
  // Storage-only element types are integers inside the body; not folded.
  if (isStorageOnlyType(type.getElementType())) return std::nullopt;
  for (Value in : op.getInputs())
    if (isStorageOnlyType(llvm::cast<ShapedType>(in.getType()).getElementType())) return std::nullopt;
  SmallVector<DenseElementsAttr> inputs;
  for (Value in : op.getInputs()) {
    auto cst = in.getDefiningOp<arith::ConstantOp>();
    auto attr = cst ? llvm::dyn_cast<DenseElementsAttr>(cst.getValue()) : DenseElementsAttr();
    if (!attr) return std::nullopt;
    inputs.push_back(attr);
  }
  // Evaluate the body element by element with the ops' own folders.
  auto shape = type.getShape();
  int64_t rank = shape.size();
  SmallVector<SmallVector<Attribute>> values;
  SmallVector<SmallVector<int64_t>> strides;
  for (auto in : inputs) {
    values.push_back(SmallVector<Attribute>(in.getValues<Attribute>()));
    auto inShape = llvm::cast<ShapedType>(in.getType()).getShape();
    SmallVector<int64_t> st(rank, 0);
    int64_t run = 1;
    for (int64_t i = inShape.size() - 1, o = rank - 1; i >= 0; --i, --o) {
      st[o] = inShape[i] == 1 ? 0 : run;
      run *= inShape[i];
    }
    strides.push_back(st);
  }
  Block &body = op.getBody().front();
  SmallVector<Attribute> out;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    DenseMap<Value, Attribute> env;
    for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) off += idx[d] * strides[k][d];
      Attribute a = values[k][inputs[k].isSplat() ? 0 : off];
      // Unsigned tensors are signless inside the body.
      if (auto i = llvm::dyn_cast<IntegerAttr>(a); i && !i.getType().isSignlessInteger())
        a = IntegerAttr::get(arg.getType(), i.getValue());
      env[arg] = a;
    }
    for (Operation &inner : body.without_terminator()) {
      SmallVector<Attribute> operands;
      for (Value o : inner.getOperands()) operands.push_back(env.lookup(o));
      SmallVector<OpFoldResult> results;
      if (failed(inner.fold(operands, results)) || results.size() != 1) return std::nullopt;
      Attribute r = llvm::dyn_cast_if_present<Attribute>(results[0]);
      if (!r) {
        // Folded to one of its operands.
        Value same = llvm::dyn_cast_if_present<Value>(results[0]);
        r = same ? env.lookup(same) : Attribute();
      }
      if (!r) return std::nullopt;
      env[inner.getResult(0)] = r;
    }
    Attribute y = env.lookup(cast<YieldOp>(body.getTerminator()).getValue());
    if (!y) return std::nullopt;
    if (auto i = llvm::dyn_cast<IntegerAttr>(y); i && type.getElementType() != i.getType())
      y = IntegerAttr::get(type.getElementType(), i.getValue());
    out.push_back(y);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, out);
}
