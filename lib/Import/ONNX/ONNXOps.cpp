//===- ONNXOps.cpp - per-operator ONNX -> v4f importers -------------------===//
//
// Each entry maps one ONNX operator (opset range) to v4f ops, normalizing
// attribute/input variants across opsets: auto_pad becomes explicit pads,
// Gemm becomes transpose/scale/matmul/add, Flatten and GlobalAveragePool
// become reshape and reduce_mean.
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
namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr int64_t kMaxOpset = 28;

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::string noCheck(const NodeAttrs &, int64_t) { return ""; }

LogicalResult requireF32(NodeContext &c, size_t i) {
  auto t = c.inputType(i);
  if (!t.getElementType().isF32())
    return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                  "') must be float32 (other element types are not supported yet)");
  return success();
}

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
      if (t.isDynamicDim(i)) dynamic = true;
      else prod *= t.getDimSize(i);
    }
    if (hi - lo == 1) sources[g] = lo;
    shape[g] = dynamic ? kDyn : prod;
  }
  if (shape[0] == kDyn && shape[1] == kDyn && !(sources[0] >= 0 || sources[1] >= 0))
    return c.fail("cannot flatten a tensor with dynamic dims on both sides of the axis");
  if (shape[0] == kDyn && shape[1] == kDyn && (sources[0] < 0 || sources[1] < 0) &&
      sources[0] < 0 && sources[1] < 0)
    return c.fail("cannot flatten a tensor with dynamic dims on both sides of the axis");
  return makeReshape(c, in, shape, sources);
}

/// Explicit [top, left, bottom, right] pads from pads/auto_pad.
FailureOr<SmallVector<int64_t>> windowPads(NodeContext &c, RankedTensorType in,
                                           ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                           ArrayRef<int64_t> dilations) {
  std::string autoPad = c.attrs.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> pads(4, 0);
  if (autoPad == "NOTSET") {
    auto p = c.attrs.getInts("pads", {0, 0, 0, 0});
    if (p.size() != 4) return c.fail("pads must have 4 entries for a 2-D window");
    for (int64_t v : p)
      if (v < 0) return c.fail("pads must be non-negative");
    pads.assign(p.begin(), p.end());
    return pads;
  }
  if (autoPad == "VALID") return pads;
  for (int i = 0; i < 2; ++i) {
    int64_t size = in.getDimSize(2 + i);
    if (size == kDyn) return c.fail("auto_pad " + autoPad + " needs static spatial dims");
    int64_t out = (size + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[2 + i] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

} // namespace

std::string checkWindowAttrs(const NodeAttrs &a, int64_t) {
  std::string autoPad = a.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return "auto_pad '" + autoPad + "' is not a valid value";
  if (a.has("kernel_shape") && (a.getInts("kernel_shape").size() < 1 || a.getInts("kernel_shape").size() > 3))
    return "only 1-D, 2-D and 3-D windows are supported (kernel_shape has " +
           std::to_string(a.getInts("kernel_shape").size()) + " dims)";
  for (const char *name : {"strides", "dilations", "kernel_shape"})
    for (int64_t v : a.getInts(name))
      if (v <= 0) return std::string(name) + " must be positive";
  return "";
}

FailureOr<Value> buildConv2D(NodeContext &c, Value x, Value weight, Value bias) {
  auto in = llvm::cast<RankedTensorType>(x.getType()), w = llvm::cast<RankedTensorType>(weight.getType());
  if (in.getRank() != 4 || w.getRank() != 4)
    return c.fail("only 2-D convolution (rank-4 input and weight) is supported");
  if (!w.hasStaticShape()) return c.fail("the weight must have a static shape");
  auto kernel = c.attrs.getInts("kernel_shape", {w.getDimSize(2), w.getDimSize(3)});
  if (kernel.size() != 2 || kernel[0] != w.getDimSize(2) || kernel[1] != w.getDimSize(3))
    return c.fail("kernel_shape disagrees with the weight's shape");
  auto strides = c.attrs.getInts("strides", {1, 1});
  auto dilations = c.attrs.getInts("dilations", {1, 1});
  if (strides.size() != 2 || dilations.size() != 2) return c.fail("strides/dilations must have 2 entries");
  auto pads = windowPads(c, in, kernel, strides, dilations);
  if (failed(pads)) return failure();
  int64_t group = c.attrs.getInt("group", 1);
  if (group <= 0 || w.getDimSize(0) % group != 0)
    return c.fail("group " + std::to_string(group) + " does not divide the output channels");
  if (!in.isDynamicDim(1) && in.getDimSize(1) != w.getDimSize(1) * group)
    return c.fail("input has " + std::to_string(in.getDimSize(1)) + " channels but weight*group expects " +
                  std::to_string(w.getDimSize(1) * group));
  if (bias) {
    auto bt = llvm::cast<RankedTensorType>(bias.getType());
    if (bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0)) return c.fail("bias must have shape [M]");
  }
  for (int i = 0; i < 2; ++i) {
    int64_t out = windowOutputSize(in.getDimSize(2 + i), kernel[i], strides[i], dilations[i],
                                   (*pads)[i], (*pads)[2 + i], false);
    if (out == 0) return c.fail("kernel, strides and pads give an empty output");
  }
  auto op = c.b.create<ConvOp>(c.loc, x, weight, bias, Value(),
                               c.b.getDenseI64ArrayAttr(strides), c.b.getDenseI64ArrayAttr(dilations),
                               c.b.getDenseI64ArrayAttr(*pads), c.b.getI64IntegerAttr(group),
                               c.b.getStringAttr("none"), c.b.getF32FloatAttr(0), c.b.getF32FloatAttr(0));
  return op.getResult();
}

LogicalResult importMatMulValues(NodeContext &c, Value a, Value b, Value &out) {
  auto ta = llvm::cast<RankedTensorType>(a.getType()), tb = llvm::cast<RankedTensorType>(b.getType());
  bool squeezeA = ta.getRank() == 1, squeezeB = tb.getRank() == 1;
  if (squeezeA) a = makeReshape(c, a, {1, ta.getDimSize(0)}, {-1, 0});
  if (squeezeB) b = makeReshape(c, b, {tb.getDimSize(0), 1}, {0, -1});
  ta = llvm::cast<RankedTensorType>(a.getType());
  tb = llvm::cast<RankedTensorType>(b.getType());
  int64_t ka = ta.getDimSize(ta.getRank() - 1), kb = tb.getDimSize(tb.getRank() - 2);
  if (ka != kDyn && kb != kDyn && ka != kb)
    return c.fail("contraction dims differ (" + std::to_string(ka) + " vs " + std::to_string(kb) + ")");
  SmallVector<int64_t> batch;
  if (failed(broadcastShapes(ta.getShape().drop_back(2), tb.getShape().drop_back(2), batch)))
    return c.fail("batch dims are not broadcast-compatible");
  Value r = c.b.create<MatMulOp>(c.loc, a, b, Value(), c.b.getStringAttr("none"),
                                 c.b.getF32FloatAttr(0), c.b.getF32FloatAttr(0));
  if (squeezeA || squeezeB) {
    auto rt = llvm::cast<RankedTensorType>(r.getType());
    SmallVector<int64_t> shape, sources;
    for (int64_t i = 0; i < rt.getRank(); ++i) {
      if ((squeezeA && i == rt.getRank() - 2) || (squeezeB && i == rt.getRank() - 1)) continue;
      shape.push_back(rt.getDimSize(i));
      sources.push_back(i);
    }
    r = makeReshape(c, r, shape, sources);
  }
  out = r;
  return success();
}

namespace {

LogicalResult importConv(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  if (c.hasInput(2) && failed(requireF32(c, 2))) return failure();
  auto r = buildConv2D(c, c.input(0), c.input(1), c.hasInput(2) ? c.input(2) : Value());
  if (failed(r)) return failure();
  c.setOutput(0, *r);
  return success();
}

template <typename PoolOp>
LogicalResult importPool(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  auto in = c.inputType(0);
  if (in.getRank() != 4) return c.fail("only 2-D pooling (rank-4 input) is supported");
  if (c.outputUsed(1)) return c.fail("the Indices output of MaxPool is not supported");
  auto kernel = c.attrs.getInts("kernel_shape");
  if (kernel.size() != 2) return c.fail("kernel_shape must have 2 entries");
  auto strides = c.attrs.getInts("strides", {1, 1});
  auto dilations = c.attrs.getInts("dilations", {1, 1});
  if (strides.size() != 2 || dilations.size() != 2) return c.fail("strides/dilations must have 2 entries");
  auto pads = windowPads(c, in, kernel, strides, dilations);
  if (failed(pads)) return failure();
  for (int i = 0; i < 2; ++i)
    if ((*pads)[i] >= kernel[i] || (*pads)[2 + i] >= kernel[i])
      return c.fail("pads must be smaller than the kernel");
  bool ceil = c.attrs.getInt("ceil_mode", 0) != 0;
  for (int i = 0; i < 2; ++i)
    if (windowOutputSize(in.getDimSize(2 + i), kernel[i], strides[i], dilations[i], (*pads)[i],
                         (*pads)[2 + i], ceil) == 0)
      return c.fail("kernel, strides and pads give an empty output");
  bool includePad = c.attrs.getInt("count_include_pad", 0) != 0;
  auto op = c.b.create<PoolOp>(c.loc, c.input(0), c.b.getDenseI64ArrayAttr(kernel),
                               c.b.getDenseI64ArrayAttr(strides), c.b.getDenseI64ArrayAttr(dilations),
                               c.b.getDenseI64ArrayAttr(*pads), c.b.getBoolAttr(ceil),
                               c.b.getBoolAttr(includePad));
  c.setOutput(0, op);
  return success();
}

LogicalResult importGlobalAveragePool(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  int64_t rank = c.inputType(0).getRank();
  if (rank < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
  c.setOutput(0, c.b.create<ReduceMeanOp>(c.loc, c.input(0), c.b.getDenseI64ArrayAttr(axes),
                                          c.b.getBoolAttr(true)));
  return success();
}

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
  c.setOutput(0, c.b.create<LeakyReluOp>(c.loc, c.input(0),
                                         c.b.getF32FloatAttr(c.attrs.getFloat("alpha", 0.01f))));
  return success();
}

LogicalResult importClip(NodeContext &c) {
  if (c.opset >= 11 && (!c.inputType(0).getElementType().isF32() ||
                        (c.hasInput(1) && !c.constantScalar(1)) || (c.hasInput(2) && !c.constantScalar(2))))
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

LogicalResult importGemm(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  if (c.inputType(0).getRank() != 2 || c.inputType(1).getRank() != 2)
    return c.fail("Gemm inputs A and B must be 2-D");
  Value a = c.input(0), b = c.input(1);
  if (c.attrs.getInt("transA", 0)) a = c.b.create<TransposeOp>(c.loc, a, c.b.getDenseI64ArrayAttr({1, 0}));
  if (c.attrs.getInt("transB", 0)) b = c.b.create<TransposeOp>(c.loc, b, c.b.getDenseI64ArrayAttr({1, 0}));
  float alpha = c.attrs.getFloat("alpha", 1.f), beta = c.attrs.getFloat("beta", 1.f);
  if (alpha != 1.f) b = c.b.create<MulOp>(c.loc, b, c.constF32({}, {alpha}));
  Value y;
  if (failed(importMatMulValues(c, a, b, y))) return failure();
  if (c.hasInput(2) && beta != 0.f) {
    if (failed(requireF32(c, 2))) return failure();
    Value cv = c.input(2);
    if (beta != 1.f) cv = c.b.create<MulOp>(c.loc, cv, c.constF32({}, {beta}));
    SmallVector<int64_t> shape;
    if (failed(broadcastShapes(llvm::cast<RankedTensorType>(y.getType()).getShape(),
                               llvm::cast<RankedTensorType>(cv.getType()).getShape(), shape)))
      return c.fail("C is not broadcastable to [M, N]");
    y = c.b.create<AddOp>(c.loc, y, cv);
  }
  c.setOutput(0, y);
  return success();
}

/// BatchNormalization with training_mode=1: normalizes with the batch's own
/// mean and (population) variance over every axis but 1, and outputs the
/// running statistics blended with `momentum`.
LogicalResult importBatchNormTraining(NodeContext &c) {
  auto in = c.inputType(0);
  int64_t rank = in.getRank();
  if (rank < 2 || in.isDynamicDim(1)) return c.fail("input must have rank >= 2 and a static channel dim");
  int64_t C = in.getDimSize(1);
  for (int i = 1; i <= 4; ++i) {
    auto t = c.inputType(i);
    if (t.getRank() != 1 || t.getDimSize(0) != C || !t.getElementType().isF32())
      return c.fail("scale, B, mean and var must be float32 [C]");
  }
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1) axes.push_back(i);
  auto stats = meanAndVariance(c, axes);
  if (failed(stats)) return failure();
  SmallVector<int64_t> chan(rank - 1, 1);
  chan[0] = C;
  float eps = c.attrs.getFloat("epsilon", 1e-5f), momentum = c.attrs.getFloat("momentum", 0.9f);
  auto f32 = c.b.getF32Type();
  auto y = buildElementwise(c, {stats->deviation, stats->variance, reshapeTo(c, c.input(1), chan), reshapeTo(c, c.input(2), chan)},
                            f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value e = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(eps));
    Value n = b.create<arith::DivFOp>(l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
    return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, n, a[2]), a[3]);
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  auto blend = [&](Value running, Value batch) {
    return buildElementwise(c, {running, reshapeTo(c, batch, {C})}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value m = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(momentum));
      Value m1 = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.0f - momentum));
      return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[0], m), b.create<arith::MulFOp>(l, a[1], m1));
    });
  };
  if (c.outputUsed(1)) {
    auto m = blend(c.input(3), stats->mean);
    if (failed(m)) return failure();
    c.setOutput(1, *m);
  }
  if (c.outputUsed(2)) {
    auto v = blend(c.input(4), stats->variance);
    if (failed(v)) return failure();
    c.setOutput(2, *v);
  }
  return success();
}

LogicalResult importBatchNorm(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  if (c.attrs.getInt("training_mode", 0) != 0) return importBatchNormTraining(c);
  for (size_t i = 1; i < (size_t)c.node.output_size(); ++i)
    if (c.outputUsed(i)) return c.fail("only the Y output is supported (inference)");
  bool constantParams = true;
  for (int i = 1; i <= 4; ++i) constantParams &= c.constantInput(i).has_value();
  if (!constantParams) {
    // Parameters known only at run time: (x - mean) / sqrt(var + eps) * scale + B,
    // each [C] broadcast as [C, 1, ..., 1].
    auto in = c.inputType(0);
    if (in.getRank() < 2) return c.fail("input must have rank >= 2");
    SmallVector<Value> ins = {c.input(0)};
    for (int i = 1; i <= 4; ++i) {
      auto t = c.inputType(i);
      if (t.getRank() != 1 || !t.getElementType().isF32()) return c.fail("scale, B, mean and var must be float32 [C]");
      SmallVector<int64_t> chan(in.getRank() - 1, 1);
      chan[0] = t.getDimSize(0);
      SmallVector<int64_t> sources(chan.size(), -1);
      if (chan[0] == kDyn) sources[0] = 0;
      ins.push_back(makeReshape(c, c.input(i), chan, sources));
    }
    float eps = c.attrs.getFloat("epsilon", 1e-5f);
    auto y = buildElementwise(c, ins, c.b.getF32Type(), [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value e = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(eps));
      Value inv = b.create<math::RsqrtOp>(l, b.create<arith::AddFOp>(l, a[4], e));
      Value n = b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, a[0], a[3]), inv);
      return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, n, a[1]), a[2]);
    });
    if (failed(y)) return failure();
    c.setOutput(0, *y);
    return success();
  }
  c.setOutput(0, c.b.create<BatchNormOp>(c.loc, c.inputType(0), c.input(0), c.input(1), c.input(2),
                                         c.input(3), c.input(4),
                                         c.b.getF32FloatAttr(c.attrs.getFloat("epsilon", 1e-5f))));
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
      if (in.isDynamicDim(i)) knownDynamic = true;
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
      if (in.isDynamicDim(i)) inDynamic = true;
      else inProduct *= in.getDimSize(i);
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
      return c.fail("reshape changes the element count from " + std::to_string(in.getNumElements()) +
                    " to " + std::to_string(knownProduct));
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
      if (i != *axis && t.getDimSize(i) != first.getDimSize(i) && !t.isDynamicDim(i) &&
          !first.isDynamicDim(i))
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
    c.setOutput(0, c.b.create<SoftmaxOp>(c.loc, c.input(0), c.b.getI64IntegerAttr(*axis), mode));
    return success();
  }
  // Before opset 13 the input is coerced to 2-D around `axis`.
  int64_t dynamicDims = 0;
  for (int64_t d : in.getShape()) dynamicDims += d == kDyn;
  if (dynamicDims > 1) return c.fail("opset<13 Softmax on more than one dynamic dim is not supported");
  auto flat = flatten2D(c, c.input(0), *axis);
  if (failed(flat)) return failure();
  Value s = c.b.create<SoftmaxOp>(c.loc, *flat, c.b.getI64IntegerAttr(1), mode);
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

/// LayerNormalization whose Mean / InvStdDev outputs are used: decomposed
/// into reductions and elementwise ops so the statistics are values too.
LogicalResult importLayerNormWithStatistics(NodeContext &c, int64_t axis) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  SmallVector<int64_t> axes;
  for (int64_t i = axis; i < in.getRank(); ++i) axes.push_back(i);
  float eps = c.attrs.getFloat("epsilon", 1e-5f);
  auto stats = meanAndVariance(c, axes);
  if (failed(stats)) return failure();
  Value mu = stats->mean, var = stats->variance;
  auto inv = buildElementwise(c, {var}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value e = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, eps));
    Value one = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, 1.0));
    return b.create<arith::DivFOp>(l, one, b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[0], e)));
  });
  if (failed(inv)) return failure();
  SmallVector<Value> ins = {stats->deviation, *inv, c.input(1)};
  if (c.hasInput(2)) ins.push_back(c.input(2));
  auto y = buildElementwise(c, ins, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value r = b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
    return a.size() > 3 ? (Value)b.create<arith::AddFOp>(l, r, a[3]) : r;
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  if (c.outputUsed(1)) c.setOutput(1, mu);
  if (c.outputUsed(2)) c.setOutput(2, *inv);
  return success();
}

LogicalResult importLayerNorm(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  if (c.outputUsed(1) || c.outputUsed(2)) {
    if (c.node.op_type() != "LayerNormalization") return c.fail("only the Y output is supported");
    auto axis = normalizeAxis(c.attrs.getInt("axis", -1), c.inputType(0).getRank());
    if (!axis) return c.fail("axis out of range");
    return importLayerNormWithStatistics(c, *axis);
  }
  auto in = c.inputType(0);
  auto axis = normalizeAxis(c.attrs.getInt("axis", -1), in.getRank());
  if (!axis) return c.fail("axis out of range");
  auto trailing = in.getShape().drop_front(*axis);
  for (int64_t d : trailing)
    if (d == kDyn) return c.fail("normalized dims must be static");
  Value bias = c.hasInput(2) ? c.input(2) : Value();
  for (size_t i = 1; i <= 2; ++i) {
    if (!c.hasInput(i)) continue;
    auto t = c.inputType(i);
    SmallVector<int64_t> b;
    if (!t.hasStaticShape() || t.getRank() > (int64_t)trailing.size() ||
        failed(broadcastShapes(trailing, t.getShape(), b)) || ArrayRef<int64_t>(b) != trailing)
      return c.fail("Scale/B must broadcast to the normalized dims");
  }
  bool rms = c.node.op_type() == "RMSNormalization";
  c.setOutput(0, c.b.create<LayerNormOp>(c.loc, in, c.input(0), c.input(1), rms ? Value() : bias,
                                         c.b.getI64IntegerAttr(*axis),
                                         c.b.getF32FloatAttr(c.attrs.getFloat("epsilon", 1e-5f)),
                                         c.b.getBoolAttr(rms)));
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
    auto mask = buildElementwise(c, {c.input(0)}, c.b.getI1Type(), [&](OpBuilder &b, Location l, ArrayRef<Value>) -> Value {
      return b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
    });
    if (failed(mask)) return failure();
    c.setOutput(1, *mask);
  }
  if (auto cst = c.constantInput(0)) c.setConstantOutput(0, *cst);
  else c.setOutput(0, c.input(0));
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
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, c.b.getF32Type()),
                                                  ArrayRef<float>(v)));
    return success();
  }
  if (c.attrs.has("value_int")) {
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get({}, c.b.getI64Type()),
                                                  c.attrs.getInt("value_int", 0)));
    return success();
  }
  if (c.attrs.has("value_ints")) {
    auto v = c.attrs.getInts("value_ints");
    c.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, c.b.getI64Type()),
                                                  ArrayRef<int64_t>(v)));
    return success();
  }
  return c.fail("Constant without a supported value attribute (sparse/string values are not supported)");
}

std::string checkConstant(const NodeAttrs &a, int64_t) {
  if (a.has("sparse_value") || a.has("value_string") || a.has("value_strings"))
    return "sparse and string constants are not supported";
  return "";
}

/// Imports a 1-D Conv / pooling node through its 2-D form: the inputs in
/// `lift` get a unit dim at index 2, the window attributes a leading 1 (pads
/// a 0 on each side), and the output drops the unit dim again.
LogicalResult importLifted1D(NodeContext &c, LogicalResult (*import2D)(NodeContext &), ArrayRef<size_t> lift) {
  onnx::NodeProto n = c.node;
  auto unitAt2 = [&](Value v, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> s = {shape[0], shape[1], 1, shape[2]}, src = {0, 1, -1, 2};
    return makeReshape(c, v, s, src);
  };
  for (size_t i : lift) {
    if (!c.hasInput(i)) continue;
    auto t = c.inputType(i);
    if (t.getRank() != 3) return c.fail("input " + std::to_string(i) + " of a 1-D window must have rank 3");
    std::string name = c.node.input(i) + "#v4f-2d";
    c.g.values[name] = unitAt2(c.input(i), t.getShape());
    n.set_input(int(i), name);
  }
  for (auto &a : *n.mutable_attribute()) {
    if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
        a.name() == "output_padding" || a.name() == "output_shape") {
      if (a.ints_size() != 1) return c.fail(a.name() + " must have 1 entry for a 1-D window");
      int64_t v = a.ints(0);
      a.clear_ints();
      a.add_ints(1);
      a.add_ints(v);
    } else if (a.name() == "pads") {
      if (a.ints_size() != 2) return c.fail("pads must have 2 entries for a 1-D window");
      int64_t b = a.ints(0), e = a.ints(1);
      a.clear_ints();
      for (int64_t v : {int64_t(0), b, int64_t(0), e}) a.add_ints(v);
    }
  }
  std::string out = c.node.output(0) + "#v4f-2d";
  n.set_output(0, out);
  NodeContext c2(n, c.opset, c.g, c.loc);
  if (failed(import2D(c2))) return c.fail(c2.error);
  Value y = c.g.values.at(out);
  auto yt = llvm::cast<RankedTensorType>(y.getType());
  SmallVector<int64_t> shape = {yt.getDimSize(0), yt.getDimSize(1), yt.getDimSize(3)}, src = {0, 1, 3};
  c.setOutput(0, makeReshape(c, y, shape, src));
  return success();
}

LogicalResult importConvAnyRank(NodeContext &c) {
  if (c.inputType(0).getRank() == 3) return importLifted1D(c, importConv, {0, 1});
  return importConv(c);
}

LogicalResult importPool3D(NodeContext &c, LogicalResult (*import2D)(NodeContext &));

LogicalResult importPoolByRank(NodeContext &c, LogicalResult (*import2D)(NodeContext &)) {
  if (c.inputType(0).getRank() == 3) return importLifted1D(c, import2D, {0});
  if (c.inputType(0).getRank() == 5) return importPool3D(c, import2D);
  return import2D(c);
}

/// MaxPool of 8/16-bit integers or float16: through float32, which holds
/// every such value exactly (max only selects, so the result is exact).
LogicalResult importMaxPoolConverted(NodeContext &c) {
  Type et = c.inputType(0).getElementType();
  if (c.outputUsed(1)) return c.fail("the Indices output of MaxPool is not supported");
  auto f32 = c.b.getF32Type();
  auto wide = buildElementwise(c, {c.input(0)}, f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return castScalar(b, l, a[0], et, f32);
  });
  if (failed(wide)) return failure();
  onnx::NodeProto n = c.node;
  std::string in = c.node.input(0) + "#v4f-f32", out = c.node.output(0) + "#v4f-f32";
  c.g.values[in] = *wide;
  n.set_input(0, in);
  n.set_output(0, out);
  NodeContext c2(n, c.opset, c.g, c.loc);
  if (failed(importPoolByRank(c2, importPool<MaxPoolOp>))) return c.fail(c2.error);
  auto y = buildElementwise(c, {c.g.values.at(out)}, et, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return castScalar(b, l, a[0], f32, et);
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

template <typename PoolOp>
LogicalResult importPoolAnyRank(NodeContext &c) {
  Type et = c.inputType(0).getElementType();
  if (std::is_same<PoolOp, MaxPoolOp>::value && (et.isF16() || ((et.isInteger(8) || et.isInteger(16)))))
    return importMaxPoolConverted(c);
  return importPoolByRank(c, importPool<PoolOp>);
}

/// LpPool: (sum over the window of |x|^p)^(1/p), the sum taken as an
/// average pool that counts the padding (zeros) times the window size.
LogicalResult importLpPool2D(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  float p = float(c.attrs.getInt("p", 2));
  if (p <= 0) return c.fail("p must be positive");
  auto f = c.b.getF32Type();
  auto powered = buildElementwise(c, {c.input(0)}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value ax = b.create<math::AbsFOp>(l, a[0]);
    if (p == 1) return ax;
    if (p == 2) return b.create<arith::MulFOp>(l, a[0], a[0]);
    return b.create<math::PowFOp>(l, ax, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(p)));
  });
  if (failed(powered)) return failure();
  onnx::NodeProto n = c.node;
  n.set_op_type("AveragePool");
  std::string in = c.node.input(0) + "#v4f-lp", out = c.node.output(0) + "#v4f-lp";
  c.g.values[in] = *powered;
  n.set_input(0, in);
  n.set_output(0, out);
  int64_t window = 1;
  for (int64_t k : c.attrs.getInts("kernel_shape")) window *= k;
  auto *attrs = n.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == "p" || attrs->Get(i).name() == "count_include_pad") attrs->DeleteSubrange(i, 1);
  auto *cip = n.add_attribute();
  cip->set_name("count_include_pad");
  cip->set_type(onnx::AttributeProto::INT);
  cip->set_i(1);
  NodeContext c2(n, c.opset, c.g, c.loc);
  if (failed(importPool<AvgPoolOp>(c2))) return c.fail(c2.error);
  auto y = buildElementwise(c, {c.g.values.at(out)}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value sum = b.create<arith::MulFOp>(l, a[0], b.create<arith::ConstantOp>(l, b.getF32FloatAttr(float(window))));
    if (p == 1) return sum;
    if (p == 2) return b.create<math::SqrtOp>(l, sum);
    return b.create<math::PowFOp>(l, sum, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.0f / p)));
  });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

LogicalResult importLpPool(NodeContext &c) {
  if (c.inputType(0).getRank() == 3) return importLifted1D(c, importLpPool2D, {0});
  if (c.inputType(0).getRank() == 5) return importPool3D(c, importLpPool2D);
  return importLpPool2D(c);
}

/// ConvTranspose (2-D): the input with stride-1 zeros inserted between
/// elements, padded by dilation*(k-1) minus the pads (plus output_padding at
/// the end; negative amounts crop), then convolved at stride 1 with the
/// kernel flipped and its in/out channels swapped per group. The weight must
/// be a constant (it is rearranged at import).
LogicalResult importConvTranspose2D(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  auto in = c.inputType(0), wt = c.inputType(1);
  if (in.getRank() != 4 || wt.getRank() != 4) return c.fail("only 1-D and 2-D ConvTranspose are supported");
  if (!in.hasStaticShape()) return c.fail("the input must have a static shape");
  auto wAttr = c.constantInput(1);
  if (!wt.hasStaticShape()) return c.fail("the weight must have a static shape");
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  int64_t group = c.attrs.getInt("group", 1);
  if (group <= 0 || C % group || wt.getDimSize(0) != C) return c.fail("weight must be [C, M/group, kH, kW] with group dividing C");
  int64_t Mg = wt.getDimSize(1), M = Mg * group, Cg = C / group;
  int64_t k[2] = {wt.getDimSize(2), wt.getDimSize(3)};
  auto strides = c.attrs.getInts("strides", {1, 1}), dil = c.attrs.getInts("dilations", {1, 1});
  auto outPad = c.attrs.getInts("output_padding", {0, 0});
  if (strides.size() != 2 || dil.size() != 2 || outPad.size() != 2) return c.fail("strides/dilations/output_padding must have 2 entries");
  if (c.attrs.has("kernel_shape") && c.attrs.getInts("kernel_shape") != std::vector<int64_t>{k[0], k[1]})
    return c.fail("kernel_shape disagrees with the weight's shape");
  int64_t inSize[2] = {H, W}, padBegin[2], padEnd[2], out[2];
  std::string autoPad = c.attrs.getString("auto_pad", "NOTSET");
  auto outputShape = c.attrs.getInts("output_shape");
  for (int i = 0; i < 2; ++i) {
    int64_t full = strides[i] * (inSize[i] - 1) + outPad[i] + (k[i] - 1) * dil[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t target = outputShape.empty() ? inSize[i] * strides[i] : outputShape[outputShape.size() - 2 + i];
      int64_t total = full - target;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor(total / 2)
      padBegin[i] = autoPad == "SAME_UPPER" ? half : total - half;
      padEnd[i] = total - padBegin[i];
    } else {
      padBegin[i] = padEnd[i] = 0;
      if (autoPad != "VALID" && c.attrs.has("pads")) {
        auto p = c.attrs.getInts("pads");
        if (p.size() != 4) return c.fail("pads must have 4 entries");
        padBegin[i] = p[i];
        padEnd[i] = p[2 + i];
      }
      // An explicit output_shape crops or zero-extends the end.
      if (!outputShape.empty()) padEnd[i] = full - padBegin[i] - outputShape[outputShape.size() - 2 + i];
    }
    out[i] = full - padBegin[i] - padEnd[i];
    if (out[i] <= 0) return c.fail("the attributes give an empty output");
  }
  auto f32 = c.b.getF32Type();
  auto i64 = c.b.getI64Type();
  auto constI64 = [&](ArrayRef<int64_t> v) -> Value {
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({int64_t(v.size())}, i64), v));
  };
  Value x = c.input(0);
  // Zero insertion: [N,C,H,1,W,1] padded to [N,C,H,s0,W,s1], viewed as [N,C,H*s0,W*s1].
  int64_t s0 = strides[0], s1 = strides[1];
  if (s0 > 1 || s1 > 1) {
    x = makeReshape(c, x, {N, C, H, 1, W, 1}, {-1, -1, -1, -1, -1, -1});
    Value pads = constI64({0, 0, 0, 0, 0, 0, 0, 0, 0, s0 - 1, 0, s1 - 1});
    x = c.b.create<PadOp>(c.loc, RankedTensorType::get({N, C, H, s0, W, s1}, f32), x, pads, Value(), Value(),
                          c.b.getStringAttr("constant"));
    x = makeReshape(c, x, {N, C, H * s0, W * s1}, {-1, -1, -1, -1});
  }
  // The zero-inserted input has (in-1)*s+1 elements plus the s-1 trailing
  // zeros the padding above left; pad (or crop) to the convolution's input.
  int64_t before[2], after[2], have[2] = {H * s0, W * s1};
  for (int i = 0; i < 2; ++i) {
    before[i] = dil[i] * (k[i] - 1) - padBegin[i];
    after[i] = dil[i] * (k[i] - 1) - padEnd[i] + outPad[i] - (strides[i] - 1);
  }
  if (before[0] < 0 || before[1] < 0 || after[0] < 0 || after[1] < 0) {
    int64_t lo[2] = {std::max<int64_t>(-before[0], 0), std::max<int64_t>(-before[1], 0)};
    int64_t hi[2] = {have[0] - std::max<int64_t>(-after[0], 0), have[1] - std::max<int64_t>(-after[1], 0)};
    if (hi[0] <= lo[0] || hi[1] <= lo[1]) return c.fail("the pads crop away the whole input");
    x = c.b.create<SliceOp>(c.loc, RankedTensorType::get({N, C, hi[0] - lo[0], hi[1] - lo[1]}, f32), x,
                            constI64({lo[0], lo[1]}), constI64({hi[0], hi[1]}), constI64({2, 3}), Value());
    for (int i = 0; i < 2; ++i) {
      have[i] = hi[i] - lo[i];
      before[i] = std::max<int64_t>(before[i], 0);
      after[i] = std::max<int64_t>(after[i], 0);
    }
  }
  if (before[0] || before[1] || after[0] || after[1]) {
    x = c.b.create<PadOp>(c.loc, RankedTensorType::get({N, C, have[0] + before[0] + after[0], have[1] + before[1] + after[1]}, f32),
                          x, constI64({0, 0, before[0], before[1], 0, 0, after[0], after[1]}), Value(), Value(),
                          c.b.getStringAttr("constant"));
  }
  // Weight [C, M/g, kH, kW] -> [M, C/g, kH, kW], spatially flipped: folded
  // at import for a constant weight, else reshape/transpose/gathers.
  auto wType = RankedTensorType::get({M, Cg, k[0], k[1]}, f32);
  Value weight;
  if (wAttr) {
    auto src = llvm::to_vector(wAttr->getValues<float>());
    std::vector<float> flipped(src.size());
    for (int64_t g = 0; g < group; ++g)
      for (int64_t m = 0; m < Mg; ++m)
        for (int64_t ci = 0; ci < Cg; ++ci)
          for (int64_t i = 0; i < k[0]; ++i)
            for (int64_t j = 0; j < k[1]; ++j)
              flipped[(((g * Mg + m) * Cg + ci) * k[0] + i) * k[1] + j] =
                  src[(((g * Cg + ci) * Mg + m) * k[0] + (k[0] - 1 - i)) * k[1] + (k[1] - 1 - j)];
    weight = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(wType, ArrayRef<float>(flipped)));
  } else {
    Value w5 = makeReshape(c, c.input(1), {group, Cg, Mg, k[0], k[1]}, {-1, -1, -1, -1, -1});
    Value t = c.b.create<TransposeOp>(c.loc, w5, c.b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    weight = makeReshape(c, t, {M, Cg, k[0], k[1]}, {-1, -1, -1, -1});
    for (int axis = 2; axis < 4; ++axis) {
      SmallVector<int64_t> rev;
      for (int64_t i = k[axis - 2] - 1; i >= 0; --i) rev.push_back(i);
      weight = c.b.create<GatherOp>(c.loc, weight, constI64(rev), c.b.getI64IntegerAttr(axis));
    }
  }
  Value bias;
  if (c.hasInput(2)) {
    bias = c.input(2);
    if (c.inputType(2).getRank() != 1 || c.inputType(2).getDimSize(0) != M) return c.fail("bias must have shape [M]");
  }
  auto op = c.b.create<ConvOp>(c.loc, x, weight, bias, Value(), c.b.getDenseI64ArrayAttr({1, 1}),
                               c.b.getDenseI64ArrayAttr(dil), c.b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                               c.b.getI64IntegerAttr(group), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                               c.b.getF32FloatAttr(0));
  auto rt = llvm::cast<RankedTensorType>(op.getType());
  if (rt.getDimSize(2) != out[0] || rt.getDimSize(3) != out[1]) return c.fail("internal: unexpected output size");
  c.setOutput(0, op);
  return success();
}

LogicalResult importConvTranspose(NodeContext &c) {
  if (c.inputType(0).getRank() == 3) return importLifted1D(c, importConvTranspose2D, {0, 1});
  return importConvTranspose2D(c);
}

/// A 3-D pooling node as two 2-D pools (max, average and Lp pooling are
/// separable over a box window): first over (H, W) with the input viewed as
/// [N, C*D, H, W], then over D with the result viewed as [N, C, D, OH*OW].
LogicalResult importPool3D(NodeContext &c, LogicalResult (*import2D)(NodeContext &)) {
  auto in = c.inputType(0);
  if (in.getRank() != 5) return c.fail("a 3-D window needs a rank-5 input");
  for (int64_t d = 1; d < 5; ++d)
    if (in.isDynamicDim(d)) return c.fail("3-D pooling needs static channel and spatial dims");
  if (c.outputUsed(1)) return c.fail("the Indices output of MaxPool is not supported");
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), D = in.getDimSize(2), H = in.getDimSize(3), W = in.getDimSize(4);
  auto kernel = c.attrs.getInts("kernel_shape");
  auto strides = c.attrs.getInts("strides", {1, 1, 1}), dil = c.attrs.getInts("dilations", {1, 1, 1});
  auto pads = c.attrs.getInts("pads", {0, 0, 0, 0, 0, 0});
  if (kernel.size() != 3 || strides.size() != 3 || dil.size() != 3 || pads.size() != 6)
    return c.fail("kernel_shape/strides/dilations must have 3 entries and pads 6");
  auto stage = [&](Value x, ArrayRef<int64_t> k, ArrayRef<int64_t> st, ArrayRef<int64_t> dl, ArrayRef<int64_t> pd,
                   const std::string &tag) -> FailureOr<Value> {
    onnx::NodeProto n = c.node;
    n.clear_output();
    std::string inName = c.node.input(0) + tag, outName = c.node.output(0) + tag;
    c.g.values[inName] = x;
    n.set_input(0, inName);
    n.add_output(outName);
    for (auto &a : *n.mutable_attribute()) {
      auto set = [&](ArrayRef<int64_t> v) {
        a.clear_ints();
        for (int64_t e : v) a.add_ints(e);
      };
      if (a.name() == "kernel_shape") set(k);
      else if (a.name() == "strides") set(st);
      else if (a.name() == "dilations") set(dl);
      else if (a.name() == "pads") set(pd);
    }
    NodeContext c2(n, c.opset, c.g, c.loc);
    if (failed(import2D(c2))) return c.fail(c2.error);
    return c.g.values.at(outName);
  };
  Value x = makeReshape(c, c.input(0), {N, C * D, H, W}, {0, -1, -1, -1});
  auto hw = stage(x, {kernel[1], kernel[2]}, {strides[1], strides[2]}, {dil[1], dil[2]},
                  {pads[1], pads[2], pads[4], pads[5]}, "#v4f-hw");
  if (failed(hw)) return failure();
  auto ht = llvm::cast<RankedTensorType>(hw->getType());
  int64_t OH = ht.getDimSize(2), OW = ht.getDimSize(3);
  x = makeReshape(c, *hw, {N, C, D, OH * OW}, {0, -1, -1, -1});
  auto dd = stage(x, {kernel[0], 1}, {strides[0], 1}, {dil[0], 1}, {pads[0], 0, pads[3], 0}, "#v4f-d");
  if (failed(dd)) return failure();
  int64_t OD = llvm::cast<RankedTensorType>(dd->getType()).getDimSize(2);
  c.setOutput(0, makeReshape(c, *dd, {N, C, OD, OH, OW}, {0, -1, -1, -1, -1}));
  return success();
}

/// Imports a float32-only op whose inputs are float16/bfloat16 by converting
/// those inputs to float32, importing the node, and rounding its data output
/// back to the inputs' type (numpy computes these in float32 too, up to the final
/// rounding).
template <LogicalResult (*Import)(NodeContext &)>
LogicalResult importThroughFloat32(NodeContext &c) {
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

std::string checkBatchNorm(const NodeAttrs &, int64_t) { return ""; }

} // namespace

const std::unordered_map<std::string, OpImporter> &opImporters() {
  static std::unordered_map<std::string, OpImporter> table = {
      {"Conv", {1, kMaxOpset, checkWindowAttrs, importThroughFloat32<importConvAnyRank>}},
      {"LpPool", {2, kMaxOpset, checkWindowAttrs, importLpPool}},
      {"ConvTranspose", {1, kMaxOpset, checkWindowAttrs, importConvTranspose}},
      {"MaxPool", {1, kMaxOpset, checkWindowAttrs, importPoolAnyRank<MaxPoolOp>}},
      {"AveragePool", {1, kMaxOpset, checkWindowAttrs, importPoolAnyRank<AvgPoolOp>}},
      {"GlobalAveragePool", {1, kMaxOpset, noCheck, importGlobalAveragePool}},
      {"Gemm", {1, kMaxOpset, noCheck, importThroughFloat32<importGemm>}},
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
      {"BatchNormalization", {9, kMaxOpset, checkBatchNorm, importBatchNorm}},
      {"Reshape", {5, kMaxOpset, noCheck, importReshape}},
      {"Flatten", {1, kMaxOpset, noCheck, importFlatten}},
      {"Transpose", {1, kMaxOpset, noCheck, importTranspose}},
      {"Concat", {4, kMaxOpset, noCheck, importConcat}},
      {"Softmax", {1, kMaxOpset, noCheck, importThroughFloat32<importSoftmax>}},
      {"LogSoftmax", {1, kMaxOpset, noCheck, importThroughFloat32<importSoftmax>}},
      {"Hardmax", {1, kMaxOpset, noCheck, importThroughFloat32<importSoftmax>}},
      {"Gather", {1, kMaxOpset, noCheck, importGather}},
      {"LayerNormalization", {17, kMaxOpset, noCheck, importThroughFloat32<importLayerNorm>}},
      {"RMSNormalization", {23, kMaxOpset, noCheck, importThroughFloat32<importLayerNorm>}},
      {"Identity", {1, kMaxOpset, noCheck, importIdentity}},
      {"Dropout", {1, kMaxOpset, noCheck, importIdentity}},
      {"Constant", {1, kMaxOpset, checkConstant, importConstant}},
  };
  static const bool extended =
      (addElementwiseImporters(table), addShapeImporters(table), addReductionImporters(table),
       addLossImporters(table), addDecomposedImporters(table), addAttentionImporters(table), addResizeImporters(table),
       addRecurrentImporters(table), addEinsumImporters(table), addQuantizationImporters(table),
       addGridSampleImporters(table), addIndexingImporters(table), addControlFlowImporters(table), true);
  (void)extended;
  return table;
}

std::vector<SupportedOp> supportedONNXOps() {
  std::vector<SupportedOp> ops;
  for (const auto &[name, imp] : opImporters()) ops.push_back({name.c_str(), imp.minOpset, imp.maxOpset});
  std::sort(ops.begin(), ops.end(), [](const SupportedOp &a, const SupportedOp &b) {
    return std::string(a.opType) < b.opType;
  });
  return ops;
}

} // namespace v4f
