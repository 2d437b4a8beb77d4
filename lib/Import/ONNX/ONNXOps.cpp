//===- ONNXOps.cpp - per-operator ONNX -> v4f importers -------------------===//
//
// Each entry maps one ONNX operator (opset range) to v4f ops, normalizing
// attribute/input variants across opsets: auto_pad becomes explicit pads,
// Gemm imports whole as v4f.gemm (v4f-decompose-gemm lowers it), Flatten
// and GlobalAveragePool become reshape and reduce_mean.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "TensorImport.h"

#include <cfloat>
#include <cmath>
#include <type_traits>

using namespace mlir;

namespace v4f {

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

namespace {

Value makeReshape(NodeContext &c, Value in, ArrayRef<int64_t> shape, ArrayRef<int64_t> sources) {
  auto type = RankedTensorType::get(shape, llvm::cast<RankedTensorType>(in.getType()).getElementType());
  return c.b.create<ReshapeOp>(c.loc, type, in, Value(), c.b.getDenseI64ArrayAttr(sources), c.b.getBoolAttr(false));
}

/// Flattens `in` to 2-D around `axis`: [prod(dims[:axis]), prod(dims[axis:])].
FailureOr<Value> flatten2D(NodeContext &c, Value in, int64_t axis) {
  auto t = llvm::cast<RankedTensorType>(in.getType());
  int64_t shape[2], sources[2] = {-1, -1};
  for (int g = 0; g < 2; ++g) {
    int64_t lo = g == 0 ? 0 : axis, hi = g == 0 ? axis : t.getRank();
    int64_t prod = 1;
    bool dynamic = false;
    for (int64_t i = lo; i < hi; ++i) {
      if (t.isDynamicDim(i))
        dynamic = true;
      else
        prod *= t.getDimSize(i);
    }
    if (hi - lo == 1) sources[g] = lo;
    shape[g] = dynamic ? kDyn : prod;
  }
  // Dynamic dims on both sides, neither side a single dim: the products are
  // computed at run time.
  if (shape[0] == kDyn && shape[1] == kDyn && sources[0] < 0 && sources[1] < 0)
    return reshapeToDimProducts(c, in, {0, axis, t.getRank()});
  return makeReshape(c, in, shape, sources);
}

} // namespace

namespace {

template <typename BinOp>
LogicalResult importBinary(NodeContext &c) {
  if (!c.inputType(0).getElementType().isF32() || !c.inputType(1).getElementType().isF32())
    return importGenericArith(c, c.node.op_type());
  SmallVector<int64_t> shape;
  if (failed(broadcastShapes(c.inputType(0).getShape(), c.inputType(1).getShape(), shape)))
    return c.fail("input shapes are not broadcast-compatible");
  c.setOutput(0, c.b.create<BinOp>(c.loc, c.input(0), c.input(1)));
  return success();
}

template <typename UnOp>
LogicalResult importUnary(NodeContext &c) {
  if (!c.inputType(0).getElementType().isF32()) return importGenericUnary(c, c.node.op_type());
  c.setOutput(0, c.b.create<UnOp>(c.loc, c.input(0)));
  return success();
}

LogicalResult importLeakyRelu(NodeContext &c) {
  if (!c.inputType(0).getElementType().isF32()) return importGenericUnary(c, "LeakyRelu");
  c.setOutput(0, c.b.create<LeakyReluOp>(c.loc, c.input(0), c.b.getF32FloatAttr(c.attrs.getFloat("alpha", 0.01f))));
  return success();
}

LogicalResult importClip(NodeContext &c) {
  if (c.opset >= 11 && (!c.inputType(0).getElementType().isF32() || (c.hasInput(1) && !c.constantScalar(1)) ||
                        (c.hasInput(2) && !c.constantScalar(2))))
    return importGenericClip(c);
  if (failed(requireF32(c, 0))) return failure();
  float lo = -INFINITY, hi = INFINITY;
  if (c.opset < 11) {
    lo = c.attrs.getFloat("min", -FLT_MAX);
    hi = c.attrs.getFloat("max", FLT_MAX);
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!c.hasInput(i)) continue;
      auto v = c.constantScalar(i);
      if (!v) return c.fail("Clip min/max must be constant scalars");
      (i == 1 ? lo : hi) = *v;
    }
  }
  if (lo > hi) return c.fail("Clip min exceeds max");
  c.setOutput(0, c.b.create<ClipOp>(c.loc, c.input(0), c.b.getF32FloatAttr(lo), c.b.getF32FloatAttr(hi)));
  return success();
}

LogicalResult importMatMul(NodeContext &c) {
  Type ta = c.inputType(0).getElementType(), tb = c.inputType(1).getElementType();
  // float16 / bfloat16: computed in float32 (the float32 GEMM accumulates in
  // float32, as numpy does for float16) and rounded back once.
  bool half = ta == tb && (ta.isF16() || ta.isBF16());
  if (!half && (failed(requireF32(c, 0)) || failed(requireF32(c, 1)))) return failure();
  Value a = c.input(0), b = c.input(1);
  auto convert = [&](Value v, Type from, Type to) -> FailureOr<Value> {
    return buildElementwise(c, {v}, to, [&](OpBuilder &bb, Location l, ArrayRef<Value> x) -> Value {
      return castScalar(bb, l, x[0], from, to);
    });
  };
  if (half) {
    auto fa = convert(a, ta, c.b.getF32Type()), fb = convert(b, tb, c.b.getF32Type());
    if (failed(fa) || failed(fb)) return failure();
    a = *fa;
    b = *fb;
  }
  Value out;
  if (failed(importMatMulValues(c, a, b, out))) return failure();
  if (half) {
    auto back = convert(out, c.b.getF32Type(), ta);
    if (failed(back)) return failure();
    out = *back;
  }
  c.setOutput(0, out);
  return success();
}

/// Gemm imports whole (v4f.gemm, decomposed by v4f-decompose-gemm); C is
/// dropped when beta is 0 (it does not contribute).
LogicalResult importGemm(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  if (c.inputType(0).getRank() != 2 || c.inputType(1).getRank() != 2) return c.fail("Gemm inputs A and B must be 2-D");
  bool transA = c.attrs.getInt("transA", 0) != 0, transB = c.attrs.getInt("transB", 0) != 0;
  int64_t ka = c.inputType(0).getDimSize(transA ? 0 : 1), kb = c.inputType(1).getDimSize(transB ? 1 : 0);
  if (ka != kDyn && kb != kDyn && ka != kb)
    return c.fail("contraction dims differ (" + std::to_string(ka) + " vs " + std::to_string(kb) + ")");
  float alpha = c.attrs.getFloat("alpha", 1.f), beta = c.attrs.getFloat("beta", 1.f);
  Value cv;
  if (c.hasInput(2) && beta != 0.f) {
    if (failed(requireF32(c, 2))) return failure();
    cv = c.input(2);
    SmallVector<int64_t> mn = {c.inputType(0).getDimSize(transA ? 1 : 0), c.inputType(1).getDimSize(transB ? 0 : 1)},
                         shape;
    if (failed(broadcastShapes(mn, c.inputType(2).getShape(), shape)) || shape.size() != 2)
      return c.fail("C is not broadcastable to [M, N]");
  }
  c.setOutput(0, c.b.create<GemmOp>(c.loc, c.input(0), c.input(1), cv, c.b.getF32FloatAttr(alpha),
                                    c.b.getF32FloatAttr(beta), c.b.getBoolAttr(transA), c.b.getBoolAttr(transB)));
  return success();
}

LogicalResult importReshape(NodeContext &c) {
  auto in = c.inputType(0);
  auto target = c.constantInts(1);
  if (!target) return importRuntimeReshape(c);
  bool allowZero = c.attrs.getInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape, sources;
  int64_t inferAt = -1, knownProduct = 1;
  bool knownDynamic = false;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t s = (*target)[i];
    if (s == 0 && !allowZero) {
      if ((int64_t)i >= in.getRank()) return c.fail("shape entry 0 refers past the input's rank");
      shape.push_back(in.getDimSize(i));
      sources.push_back(i);
      if (in.isDynamicDim(i))
        knownDynamic = true;
      else if (__builtin_mul_overflow(knownProduct, in.getDimSize(i), &knownProduct))
        return c.fail("the shape's element count overflows int64");
    } else if (s == -1) {
      if (inferAt >= 0) return c.fail("shape has more than one -1");
      inferAt = i;
      shape.push_back(kDyn);
      sources.push_back(-1);
    } else if (s < 0) {
      return c.fail("shape entry " + std::to_string(s) + " is invalid");
    } else {
      shape.push_back(s);
      sources.push_back(-1);
      if (__builtin_mul_overflow(knownProduct, s, &knownProduct))
        return c.fail("the shape's element count overflows int64");
    }
  }
  if (inferAt >= 0) {
    // Static when every input dim not carried over in place is static.
    int64_t inProduct = 1;
    bool inDynamic = false;
    for (int64_t i = 0; i < in.getRank(); ++i) {
      if (llvm::is_contained(sources, i)) continue;
      if (in.isDynamicDim(i))
        inDynamic = true;
      else
        inProduct *= in.getDimSize(i);
    }
    int64_t carried = 1;
    for (int64_t src : sources)
      if (src >= 0 && !in.isDynamicDim(src)) carried *= in.getDimSize(src);
    int64_t rest = knownProduct / std::max<int64_t>(carried, 1);
    if (!inDynamic) {
      if (rest == 0 || inProduct % rest != 0)
        return c.fail("cannot reshape " + std::to_string(inProduct) + " elements with the given shape");
      shape[inferAt] = inProduct / rest;
    }
  } else if (in.hasStaticShape() && !knownDynamic) {
    if (in.getNumElements() != knownProduct)
      return c.fail("reshape changes the element count from " + std::to_string(in.getNumElements()) + " to " +
                    std::to_string(knownProduct));
  }
  if (auto cst = c.constantInput(0); cst && RankedTensorType::get(shape, in.getElementType()).hasStaticShape()) {
    c.setConstantOutput(0, cst->reshape(RankedTensorType::get(shape, in.getElementType())));
    return success();
  }
  c.setOutput(0, makeReshape(c, c.input(0), shape, sources));
  return success();
}

LogicalResult importFlatten(NodeContext &c) {
  auto in = c.inputType(0);
  // Flatten's axis lies in [-r, r] (r: the rank), unlike most axes.
  int64_t rawAxis = c.attrs.getInt("axis", 1), rank = in.getRank();
  if (rawAxis < -rank || rawAxis > rank) return c.fail("axis out of range");
  std::optional<int64_t> axis = rawAxis < 0 ? rawAxis + rank : rawAxis;
  auto r = flatten2D(c, c.input(0), *axis);
  if (failed(r)) return failure();
  c.setOutput(0, *r);
  return success();
}

LogicalResult importTranspose(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  std::vector<int64_t> dflt;
  for (int64_t i = rank - 1; i >= 0; --i) dflt.push_back(i);
  auto perm = c.attrs.getInts("perm", dflt);
  if ((int64_t)perm.size() != rank) return c.fail("perm must have one entry per input dim");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) return c.fail("perm is not a permutation");
    seen[p] = true;
  }
  c.setOutput(0, c.b.create<TransposeOp>(c.loc, c.input(0), c.b.getDenseI64ArrayAttr(perm)));
  return success();
}

LogicalResult importConcat(NodeContext &c) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i)) continue;
    inputs.push_back(c.input(i));
  }
  if (inputs.empty()) return c.fail("Concat needs at least one input");
  int64_t rank = llvm::cast<RankedTensorType>(inputs[0].getType()).getRank();
  auto axis = normalizeAxis(c.attrs.getInt("axis", 0), rank);
  if (!axis) return c.fail("axis out of range");
  auto first = llvm::cast<RankedTensorType>(inputs[0].getType());
  for (Value v : inputs) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank) return c.fail("inputs differ in rank");
    for (int64_t i = 0; i < rank; ++i)
      if (i != *axis && t.getDimSize(i) != first.getDimSize(i) && !t.isDynamicDim(i) && !first.isDynamicDim(i))
        return c.fail("inputs differ in dim " + std::to_string(i) + ", which is not the axis");
  }
  // Constant inputs (shape arithmetic) concatenate at import.
  SmallVector<DenseElementsAttr> constants;
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i))
      if (auto cst = c.constantInput(i)) constants.push_back(*cst);
  if (constants.size() == inputs.size() && llvm::all_of(constants, [](DenseElementsAttr a) {
        return a.getType().hasStaticShape() && a.getNumElements() <= 4096;
      })) {
    auto first = constants[0].getType();
    SmallVector<int64_t> shape(first.getShape());
    shape[*axis] = 0;
    for (auto a : constants) shape[*axis] += a.getType().getDimSize(*axis);
    int64_t outer = 1;
    for (int64_t i = 0; i < *axis; ++i) outer *= shape[i];
    SmallVector<Attribute> out;
    for (int64_t o = 0; o < outer; ++o)
      for (auto a : constants) {
        auto vals = a.getValues<Attribute>();
        int64_t chunk = a.getNumElements() / std::max<int64_t>(outer, 1);
        for (int64_t k = 0; k < chunk; ++k) out.push_back(vals[o * chunk + k]);
      }
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get(shape, first.getElementType()), out));
    return success();
  }
  c.setOutput(0, c.b.create<ConcatOp>(c.loc, inputs, c.b.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importSoftmax(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  StringAttr mode = c.b.getStringAttr(c.node.op_type() == "LogSoftmax" ? "log_softmax"
                                      : c.node.op_type() == "Hardmax"  ? "hardmax"
                                                                       : "softmax");
  auto in = c.inputType(0);
  auto axis = normalizeAxis(c.attrs.getInt("axis", c.opset < 13 ? 1 : -1), in.getRank());
  if (!axis) return c.fail("axis out of range");
  if (c.opset >= 13 || *axis == in.getRank() - 1) {
    c.setOutput(0, c.b.create<SoftmaxOp>(c.loc, c.input(0), Value(), c.b.getI64IntegerAttr(*axis), mode,
                                         c.b.getF32FloatAttr(1.f), c.b.getBoolAttr(false)));
    return success();
  }
  // Before opset 13 the input is coerced to 2-D around `axis`.
  int64_t dynamicDims = 0;
  for (int64_t d : in.getShape()) dynamicDims += d == kDyn;
  if (dynamicDims > 1) return c.fail("opset<13 Softmax on more than one dynamic dim is not supported");
  auto flat = flatten2D(c, c.input(0), *axis);
  if (failed(flat)) return failure();
  Value s = c.b.create<SoftmaxOp>(c.loc, *flat, Value(), c.b.getI64IntegerAttr(1), mode, c.b.getF32FloatAttr(1.f),
                                  c.b.getBoolAttr(false));
  SmallVector<int64_t> sources(in.getRank(), -1);
  c.setOutput(0, makeReshape(c, s, in.getShape(), sources));
  return success();
}

LogicalResult importGather(NodeContext &c) {
  auto ids = c.inputType(1);
  if (!ids.getElementType().isInteger(64) && !ids.getElementType().isInteger(32))
    return c.fail("indices must be int32 or int64");
  auto axis = normalizeAxis(c.attrs.getInt("axis", 0), c.inputType(0).getRank());
  if (!axis) return c.fail("axis out of range");
  // Constant data and indices (shape lookups) gather at import.
  auto data = c.constantInput(0), idConst = c.constantInput(1);
  if (data && idConst && data->getType().hasStaticShape() && data->getNumElements() <= 4096 &&
      idConst->getNumElements() <= 4096) {
    auto dt = data->getType();
    int64_t outer = 1, inner = 1, extent = dt.getDimSize(*axis);
    for (int64_t i = 0; i < *axis; ++i) outer *= dt.getDimSize(i);
    for (int64_t i = *axis + 1; i < dt.getRank(); ++i) inner *= dt.getDimSize(i);
    auto vals = data->getValues<Attribute>();
    SmallVector<Attribute> out;
    for (int64_t o = 0; o < outer; ++o)
      for (const APInt &idv : idConst->getValues<APInt>()) {
        int64_t id = idv.getSExtValue();
        if (id < 0) id += extent;
        if (id < 0 || id >= extent) return c.fail("index " + std::to_string(idv.getSExtValue()) + " is out of range");
        for (int64_t k = 0; k < inner; ++k) out.push_back(vals[(o * extent + id) * inner + k]);
      }
    SmallVector<int64_t> shape(dt.getShape().take_front(*axis));
    llvm::append_range(shape, idConst->getType().getShape());
    llvm::append_range(shape, dt.getShape().drop_front(*axis + 1));
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get(shape, dt.getElementType()), out));
    return success();
  }
  c.setOutput(0, c.b.create<GatherOp>(c.loc, c.input(0), c.input(1), c.b.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importIdentity(NodeContext &c) {
  if (c.node.op_type() == "Dropout" && c.hasInput(2)) {
    auto mode = c.constantInput(2);
    if (!mode || mode->getNumElements() != 1 || *mode->getValues<bool>().begin())
      return c.fail("training_mode must be a constant false (inference only)");
  }
  if (c.outputUsed(1)) {
    // Inference Dropout keeps every element: the mask is all true.
    auto mask =
        buildElementwise(c, {c.input(0)}, c.b.getI1Type(), [&](OpBuilder &b, Location l, ArrayRef<Value>) -> Value {
          return b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
        });
    if (failed(mask)) return failure();
    c.setOutput(1, *mask);
  }
  if (auto cst = c.constantInput(0))
    c.setConstantOutput(0, *cst);
  else
    c.setOutput(0, c.input(0));
  return success();
}

LogicalResult importConstant(NodeContext &c) {
  if (const auto *a = c.attrs.get("value")) {
    std::string err;
    auto attr = importTensor(c.g.ctx, a->t(), c.g.modelDir, err);
    if (!attr) return c.fail(err);
    c.setConstantOutput(0, attr);
    return success();
  }
  if (c.attrs.has("value_float")) {
    c.setConstantOutput(0, llvm::cast<DenseElementsAttr>(DenseElementsAttr::get(
                               RankedTensorType::get({}, c.b.getF32Type()), c.attrs.getFloat("value_float", 0))));
    return success();
  }
  if (const auto *a = c.attrs.get("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    c.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, c.b.getF32Type()), ArrayRef<float>(v)));
    return success();
  }
  if (c.attrs.has("value_int")) {
    c.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({}, c.b.getI64Type()), c.attrs.getInt("value_int", 0)));
    return success();
  }
  if (c.attrs.has("value_ints")) {
    auto v = c.attrs.getInts("value_ints");
    c.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, c.b.getI64Type()), ArrayRef<int64_t>(v)));
    return success();
  }
  return c.fail("Constant without a supported value attribute (sparse/string values are not supported)");
}

std::string checkConstant(const NodeAttrs &a, int64_t) {
  if (a.has("sparse_value") || a.has("value_string") || a.has("value_strings"))
    return "sparse and string constants are not supported";
  return "";
}

} // namespace

LogicalResult importThroughFloat32(NodeContext &c, LogicalResult (*Import)(NodeContext &)) {
  Type half;
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i)) {
      Type t = c.inputType(i).getElementType();
      if (t.isF16() || t.isBF16()) half = t;
    }
  if (!half) return Import(c);
  auto f32 = c.b.getF32Type();
  onnx::NodeProto n = c.node;
  for (size_t i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i) || c.inputType(i).getElementType() != half) continue;
    auto wide = buildElementwise(c, {c.input(i)}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return castScalar(b, l, a[0], half, f32);
    });
    if (failed(wide)) return failure();
    std::string name = c.node.input(i) + "#v4f-f32";
    c.g.values[name] = *wide;
    n.set_input(int(i), name);
  }
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty()) n.set_output(i, c.node.output(i) + "#v4f-f32");
  NodeContext c2(n, c.opset, c.g, c.loc);
  if (failed(Import(c2))) return c.fail(c2.error);
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    Value v = c.g.values.at(n.output(i));
    // Output 0 is the data; LayerNormalization's Mean/InvStdDev stay float32 (stash_type).
    if (i == 0 && typeOf(v).getElementType().isF32()) {
      auto narrow = buildElementwise(c, {v}, half, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        return castScalar(b, l, a[0], f32, half);
      });
      if (failed(narrow)) return failure();
      v = *narrow;
    }
    c.setOutput(size_t(i), v);
  }
  return success();
}

const std::unordered_map<std::string, OpImporter> &opImporters() {
  static std::unordered_map<std::string, OpImporter> table = {
      {"Gemm", {1, kMaxOpset, noCheck, [](NodeContext &c) { return importThroughFloat32(c, importGemm); }}},
      {"MatMul", {1, kMaxOpset, noCheck, importMatMul}},
      {"Add", {7, kMaxOpset, noCheck, importBinary<AddOp>}},
      {"Sub", {7, kMaxOpset, noCheck, importBinary<SubOp>}},
      {"Mul", {7, kMaxOpset, noCheck, importBinary<MulOp>}},
      {"Div", {7, kMaxOpset, noCheck, importBinary<DivOp>}},
      {"Relu", {1, kMaxOpset, noCheck, importUnary<ReluOp>}},
      {"Sigmoid", {1, kMaxOpset, noCheck, importUnary<SigmoidOp>}},
      {"Tanh", {1, kMaxOpset, noCheck, importUnary<TanhOp>}},
      {"Erf", {9, kMaxOpset, noCheck, importUnary<ErfOp>}},
      {"Exp", {1, kMaxOpset, noCheck, importUnary<ExpOp>}},
      {"Sqrt", {1, kMaxOpset, noCheck, importUnary<SqrtOp>}},
      {"LeakyRelu", {1, kMaxOpset, noCheck, importLeakyRelu}},
      {"Clip", {6, kMaxOpset, noCheck, importClip}},
      {"Reshape", {5, kMaxOpset, noCheck, importReshape}},
      {"Flatten", {1, kMaxOpset, noCheck, importFlatten}},
      {"Transpose", {1, kMaxOpset, noCheck, importTranspose}},
      {"Concat", {4, kMaxOpset, noCheck, importConcat}},
      {"Softmax", {1, kMaxOpset, noCheck, [](NodeContext &c) { return importThroughFloat32(c, importSoftmax); }}},
      {"LogSoftmax", {1, kMaxOpset, noCheck, [](NodeContext &c) { return importThroughFloat32(c, importSoftmax); }}},
      {"Hardmax", {1, kMaxOpset, noCheck, [](NodeContext &c) { return importThroughFloat32(c, importSoftmax); }}},
      {"Gather", {1, kMaxOpset, noCheck, importGather}},
      {"Identity", {1, kMaxOpset, noCheck, importIdentity}},
      {"Dropout", {1, kMaxOpset, noCheck, importIdentity}},
      {"Constant", {1, kMaxOpset, checkConstant, importConstant}},
  };
  static const bool extended =
      (addElementwiseImporters(table), addActivationImporters(table), addNormalizationImporters(table),
       addShapeImporters(table), addReductionImporters(table), addLossImporters(table), addCompositeImporters(table),
       addAttentionImporters(table), addResizeImporters(table), addRecurrentImporters(table), addEinsumImporters(table),
       addQuantizationImporters(table), addGridSampleImporters(table), addIndexingImporters(table),
       addWindowImporters(table), addControlFlowImporters(table), addTreeEnsembleImporters(table),
       addQuantizedRecurrentImporters(table), addMLImporters(table), addLegacyTreeEnsembleImporters(table),
       addContribImporters(table), true);
  (void)extended;
  return table;
}

std::string importerKey(const onnx::NodeProto &node) {
  if (node.domain().empty() || node.domain() == "ai.onnx") return node.op_type();
  return node.domain() + ":" + node.op_type();
}

std::vector<SupportedOp> supportedONNXOps() {
  std::vector<SupportedOp> ops;
  for (const auto &[name, imp] : opImporters()) ops.push_back({name.c_str(), imp.minOpset, imp.maxOpset});
  std::sort(ops.begin(), ops.end(),
            [](const SupportedOp &a, const SupportedOp &b) { return std::string(a.opType) < b.opType; });
  return ops;
}

} // namespace v4f
