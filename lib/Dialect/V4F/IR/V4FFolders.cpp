//===- V4FFolders.cpp - constant folding for v4f ops ----------------------===//
//
// Folds what the importer leaves behind when weights are constants: Gemm's
// alpha/beta scaling, transposed weights, reshaped initializers, and any
// arithmetic between initializers (a small v4f.elementwise over constants
// is evaluated element by element with its body ops' own folders).
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace v4f;

namespace {
/// Broadcast-folds `fn` over two static f32 constants into `resultType`.
template <typename Fn>
OpFoldResult foldBinary(Attribute lhs, Attribute rhs, RankedTensorType resultType, Fn fn) {
  auto a = llvm::dyn_cast_or_null<DenseElementsAttr>(lhs);
  auto b = llvm::dyn_cast_or_null<DenseElementsAttr>(rhs);
  if (!a || !b || !resultType.hasStaticShape() || !resultType.getElementType().isF32()) return {};
  // Avoid materializing huge splat results (keeps folding cheap).
  if (resultType.getNumElements() > (int64_t(1) << 24)) return {};
  auto outShape = resultType.getShape();
  int64_t rank = outShape.size();
  auto stridesFor = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> strides(rank, 0);
    int64_t s = 1;
    for (int64_t i = shape.size() - 1, o = rank - 1; i >= 0; --i, --o) {
      strides[o] = shape[i] == 1 ? 0 : s;
      s *= shape[i];
    }
    return strides;
  };
  auto sa = stridesFor(a.getType().getShape()), sb = stridesFor(b.getType().getShape());
  auto va = llvm::to_vector(a.getValues<float>());
  auto vb = llvm::to_vector(b.getValues<float>());
  SmallVector<float> out(resultType.getNumElements());
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t n = 0, e = out.size(); n < e; ++n) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    out[n] = fn(va[a.isSplat() ? 0 : oa], vb[b.isSplat() ? 0 : ob]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d]) break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, ArrayRef<float>(out));
}
/// Evaluates an elementwise op whose inputs are the constants `operands`,
/// element by element with the body ops' own folders.
DenseElementsAttr evaluateElementwise(ElementwiseOp op, ArrayRef<Attribute> operands) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  if (!type.hasStaticShape() || type.getNumElements() > 4096) return {};
  // Storage-only element types are integers inside the body; not folded.
  if (isStorageOnlyType(type.getElementType())) return {};
  for (Value in : op.getInputs())
    if (isStorageOnlyType(llvm::cast<ShapedType>(in.getType()).getElementType())) return {};
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute operand : operands) {
    auto attr = llvm::dyn_cast_if_present<DenseElementsAttr>(operand);
    if (!attr) return {};
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
      SmallVector<Attribute> innerOperands;
      for (Value o : inner.getOperands()) innerOperands.push_back(env.lookup(o));
      SmallVector<OpFoldResult> results;
      if (failed(inner.fold(innerOperands, results)) || results.size() != 1) return {};
      Attribute r = llvm::dyn_cast_if_present<Attribute>(results[0]);
      if (!r) {
        // Folded to one of its operands.
        Value same = llvm::dyn_cast_if_present<Value>(results[0]);
        r = same ? env.lookup(same) : Attribute();
      }
      if (!r) return {};
      env[inner.getResult(0)] = r;
    }
    Attribute y = env.lookup(cast<YieldOp>(body.getTerminator()).getValue());
    if (!y) return {};
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
} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), [](float x, float y) { return x + y; });
}
OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), [](float x, float y) { return x - y; });
}
OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), [](float x, float y) { return x * y; });
}
OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), [](float x, float y) { return x / y; });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getShape()) return {};
  if (getInput().getType() == getType() && getType().hasStaticShape()) return getInput();
  if (auto c = llvm::dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape()) return c.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  auto perm = getPerm();
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
  if (identity) return getInput();
  auto c = llvm::dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (!c || !getType().hasStaticShape()) return {};
  auto inShape = c.getType().getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) inStrides[i] = inStrides[i + 1] * inShape[i + 1];
  if (!getType().getElementType().isF32()) {
    // Small integer constants (shapes and pad amounts exporters compute).
    if (!getType().getElementType().isSignlessInteger() || getType().getNumElements() > 4096) return {};
    auto values = llvm::to_vector(c.getValues<Attribute>());
    SmallVector<Attribute> out;
    SmallVector<int64_t> idx(rank, 0);
    auto outShape = getType().getShape();
    for (int64_t n = 0, e = getType().getNumElements(); n < e; ++n) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) off += idx[d] * inStrides[perm[d]];
      out.push_back(values[c.isSplat() ? 0 : off]);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < outShape[d]) break;
        idx[d] = 0;
      }
    }
    return DenseElementsAttr::get(getType(), out);
  }
  auto values = llvm::to_vector(c.getValues<float>());
  auto outShape = getType().getShape();
  SmallVector<float> out(getType().getNumElements());
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t n = 0, e = out.size(); n < e; ++n) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += idx[d] * inStrides[perm[d]];
    out[n] = values[c.isSplat() ? 0 : off];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d]) break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(getType(), ArrayRef<float>(out));
}

/// A constant condition picks its side; equal sides need no condition (a
/// side that cannot run is never picked or merged away). Only
/// when the picked value has the result's type (else the types differ and
/// the op stays until codegen, which picks at run time anyway).
OpFoldResult SelectBranchOp::fold(FoldAdaptor adaptor) {
  Value picked;
  bool thenRuns = !getThenError(), elseRuns = !getElseError();
  if (getThenValue() == getElseValue() && thenRuns && elseRuns) {
    picked = getThenValue();
  } else if (auto c = llvm::dyn_cast_or_null<DenseElementsAttr>(adaptor.getCond())) {
    if (c.getNumElements() != 1) return {};
    Type et = c.getElementType();
    bool taken;
    if (llvm::isa<FloatType>(et))
      taken = !(*c.value_begin<APFloat>()).isZero();
    else if (llvm::isa<IntegerType>(et))
      taken = !(*c.value_begin<APInt>()).isZero();
    else
      return {};
    if (!(taken ? thenRuns : elseRuns)) return {}; // the plan refuses the run
    picked = taken ? getThenValue() : getElseValue();
  }
  if (picked && picked.getType() == getType()) return picked;
  return {};
}

OpFoldResult ElementwiseOp::fold(FoldAdaptor adaptor) { return evaluateElementwise(*this, adaptor.getInputs()); }
