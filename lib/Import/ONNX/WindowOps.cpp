//===- WindowOps.cpp - Conv, ConvTranspose and pooling importers --------===//
//
// Conv/pooling windows: explicit pads from pads/auto_pad, 2-D Conv and pooling,
// 1-D forms lifted to 2-D, 3-D pooling as two separable 2-D pools, LpPool,
// MaxPool of small integers through float32, ConvTranspose as a convolution
// of the zero-inserted input with the flipped kernel.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include <limits>

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Verifier.h"

#include <type_traits>

using namespace mlir;

namespace v4f {
namespace {

/// Explicit [top, left, bottom, right] pads from pads/auto_pad.
/// A SAME auto_pad over a spatial dim known only at run time: with stride 1
/// the total pad is (kernel - 1) * dilation whatever the size; otherwise,
/// when `runtimeAxes` is given, the axis is marked (its pads left 0) for
/// the caller to pad at run time (padSameAtRunTime), else an error.
FailureOr<SmallVector<int64_t>> windowPads(NodeContext &c, RankedTensorType in, ArrayRef<int64_t> kernel,
                                           ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                                           SmallVectorImpl<bool> *runtimeAxes = nullptr) {
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
  if (runtimeAxes) runtimeAxes->assign(2, false);
  for (int i = 0; i < 2; ++i) {
    int64_t size = in.getDimSize(2 + i);
    if (size == kDyn && strides[i] != 1) {
      if (!runtimeAxes)
        return c.fail("auto_pad " + autoPad + " needs static spatial dims (or stride 1) for this operator");
      (*runtimeAxes)[i] = true;
      continue;
    }
    int64_t total;
    if (size == kDyn) {
      total = (kernel[i] - 1) * dilations[i];
    } else {
      int64_t out = (size + strides[i] - 1) / strides[i];
      total = std::max<int64_t>((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0);
    }
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[2 + i] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

} // namespace

FailureOr<Value> padSameAtRunTime(NodeContext &c, Value x, ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations, ArrayRef<bool> axes, float padValue) {
  bool upper = c.attrs.getString("auto_pad", "NOTSET") == "SAME_UPPER";
  auto xt = llvm::cast<RankedTensorType>(x.getType());
  auto i64 = c.b.getI64Type();
  auto one = RankedTensorType::get({1}, i64);
  Value zero = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(one, ArrayRef<int64_t>{0}));
  SmallVector<Value> begins(4, zero), ends(4, zero);
  SmallVector<int64_t> shape(xt.getShape());
  for (int i = 0; i < 2; ++i) {
    if (!axes[i]) continue;
    shape[2 + i] = kDyn;
    Value size = c.b.create<ShapeOp>(c.loc, one, x, c.b.getI64IntegerAttr(2 + i), c.b.getI64IntegerAttr(3 + i));
    int64_t s = strides[i], span = (kernel[i] - 1) * dilations[i] + 1;
    for (bool begin : {true, false}) {
      // total = max((ceil(size / s) - 1) * s + span - size, 0), split with
      // the larger half at the end (SAME_UPPER) or the beginning.
      auto amount = buildElementwise(c, {size}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        auto cst = [&](int64_t v) -> Value { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
        Value out = b.create<arith::DivSIOp>(l, b.create<arith::AddIOp>(l, a[0], cst(s - 1)), cst(s));
        Value covered = b.create<arith::AddIOp>(
            l, b.create<arith::MulIOp>(l, b.create<arith::SubIOp>(l, out, cst(1)), cst(s)), cst(span));
        Value total = b.create<arith::MaxSIOp>(l, b.create<arith::SubIOp>(l, covered, a[0]), cst(0));
        Value small = b.create<arith::DivSIOp>(l, total, cst(2));
        return begin == upper ? small : (Value)b.create<arith::SubIOp>(l, total, small);
      });
      if (failed(amount)) return failure();
      (begin ? begins : ends)[2 + i] = *amount;
    }
  }
  SmallVector<Value> all(begins);
  all.append(ends.begin(), ends.end());
  Value pads = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({8}, i64), all, c.b.getI64IntegerAttr(0));
  Value value;
  if (padValue != 0.f)
    value = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({}, xt.getElementType()), padValue));
  return (Value)c.b.create<PadOp>(c.loc, RankedTensorType::get(shape, xt.getElementType()), x, pads, value, Value(),
                                  c.b.getStringAttr("constant"));
}

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

FailureOr<ConvWindow> convWindow(NodeContext &c, RankedTensorType in, RankedTensorType w, bool allowRuntimeSame) {
  if (in.getRank() != 4 || w.getRank() != 4)
    return c.fail("only 2-D convolution (rank-4 input and weight) is supported");
  if (!w.hasStaticShape()) return c.fail("the weight must have a static shape");
  auto kernel = c.attrs.getInts("kernel_shape", {w.getDimSize(2), w.getDimSize(3)});
  if (kernel.size() != 2 || kernel[0] != w.getDimSize(2) || kernel[1] != w.getDimSize(3))
    return c.fail("kernel_shape disagrees with the weight's shape");
  ConvWindow win;
  auto strides = c.attrs.getInts("strides", {1, 1});
  auto dilations = c.attrs.getInts("dilations", {1, 1});
  if (strides.size() != 2 || dilations.size() != 2) return c.fail("strides/dilations must have 2 entries");
  win.strides.assign(strides.begin(), strides.end());
  win.dilations.assign(dilations.begin(), dilations.end());
  auto pads = windowPads(c, in, kernel, strides, dilations, allowRuntimeSame ? &win.runtimeSame : nullptr);
  if (failed(pads)) return failure();
  win.pads = *pads;
  win.group = c.attrs.getInt("group", 1);
  if (win.group <= 0 || w.getDimSize(0) % win.group != 0)
    return c.fail("group " + std::to_string(win.group) + " does not divide the output channels");
  if (!in.isDynamicDim(1) && in.getDimSize(1) != w.getDimSize(1) * win.group)
    return c.fail("input has " + std::to_string(in.getDimSize(1)) + " channels but weight*group expects " +
                  std::to_string(w.getDimSize(1) * win.group));
  win.shape = {in.getDimSize(0), w.getDimSize(0)};
  for (int i = 0; i < 2; ++i) {
    int64_t out = windowOutputSize(in.getDimSize(2 + i), kernel[i], strides[i], dilations[i], win.pads[i],
                                   win.pads[2 + i], false);
    if (out == 0) return c.fail("kernel, strides and pads give an empty output");
    win.shape.push_back(out);
  }
  return win;
}

FailureOr<Value> buildConv2D(NodeContext &c, Value x, Value weight, Value bias) {
  auto w = llvm::cast<RankedTensorType>(weight.getType());
  auto win = convWindow(c, llvm::cast<RankedTensorType>(x.getType()), w, /*allowRuntimeSame=*/true);
  if (failed(win)) return failure();
  if (llvm::is_contained(win->runtimeSame, true)) {
    auto padded =
        padSameAtRunTime(c, x, {w.getDimSize(2), w.getDimSize(3)}, win->strides, win->dilations, win->runtimeSame, 0.f);
    if (failed(padded)) return failure();
    x = *padded;
  }
  if (bias) {
    auto bt = llvm::cast<RankedTensorType>(bias.getType());
    if (bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0)) return c.fail("bias must have shape [M]");
  }
  auto op = c.b.create<ConvOp>(c.loc, x, weight, bias, Value(), c.b.getDenseI64ArrayAttr(win->strides),
                               c.b.getDenseI64ArrayAttr(win->dilations), c.b.getDenseI64ArrayAttr(win->pads),
                               c.b.getI64IntegerAttr(win->group), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                               c.b.getF32FloatAttr(0));
  return op.getResult();
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
  // auto_pad SAME over a dim known only at run time pads there: MaxPool
  // with -inf (pads never win a max), AveragePool with zeros; an average
  // that leaves those pads out of its count is the average of the padded
  // input over the average of a padded tensor of ones (the share of real
  // elements in each window).
  constexpr bool isMax = std::is_same_v<PoolOp, MaxPoolOp>;
  SmallVector<bool> runtimeSame;
  auto pads = windowPads(c, in, kernel, strides, dilations, &runtimeSame);
  if (failed(pads)) return failure();
  Value x = c.input(0), ones;
  bool includePad = c.attrs.getInt("count_include_pad", 0) != 0;
  if (llvm::is_contained(runtimeSame, true)) {
    if (!isMax && !includePad) {
      auto one = buildElementwise(c, {x}, c.b.getF32Type(), [](OpBuilder &b, Location l, ArrayRef<Value>) -> Value {
        return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.f));
      });
      if (failed(one)) return failure();
      auto padded = padSameAtRunTime(c, *one, kernel, strides, dilations, runtimeSame, 0.f);
      if (failed(padded)) return failure();
      ones = *padded;
    }
    auto padded = padSameAtRunTime(c, x, kernel, strides, dilations, runtimeSame,
                                   isMax ? -std::numeric_limits<float>::infinity() : 0.f);
    if (failed(padded)) return failure();
    x = *padded;
    in = typeOf(x);
  }
  for (int i = 0; i < 2; ++i)
    if ((*pads)[i] >= kernel[i] || (*pads)[2 + i] >= kernel[i]) return c.fail("pads must be smaller than the kernel");
  bool ceil = c.attrs.getInt("ceil_mode", 0) != 0;
  for (int i = 0; i < 2; ++i)
    if (windowOutputSize(in.getDimSize(2 + i), kernel[i], strides[i], dilations[i], (*pads)[i], (*pads)[2 + i], ceil) ==
        0)
      return c.fail("kernel, strides and pads give an empty output");
  auto pool = [&](Value v) -> Value {
    return c.b.create<PoolOp>(c.loc, v, c.b.getDenseI64ArrayAttr(kernel), c.b.getDenseI64ArrayAttr(strides),
                              c.b.getDenseI64ArrayAttr(dilations), c.b.getDenseI64ArrayAttr(*pads),
                              c.b.getBoolAttr(ceil), c.b.getBoolAttr(includePad));
  };
  Value y = pool(x);
  if (ones) {
    auto ratio = buildElementwise(
        c, {y, pool(ones)}, c.b.getF32Type(),
        [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value { return b.create<arith::DivFOp>(l, a[0], a[1]); });
    if (failed(ratio)) return failure();
    y = *ratio;
  }
  c.setOutput(0, y);
  return success();
}

LogicalResult importGlobalAveragePool(NodeContext &c) {
  if (failed(requireF32(c, 0))) return failure();
  int64_t rank = c.inputType(0).getRank();
  if (rank < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
  c.setOutput(0, c.b.create<ReduceMeanOp>(c.loc, c.input(0), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(true)));
  return success();
}

/// Imports a 1-D Conv / pooling node through its 2-D form: the inputs in
/// `lift` get a unit dim at index 2, the window attributes a leading 1 (pads
/// a 0 on each side), and the output drops the unit dim again.
LogicalResult importLifted1D(NodeContext &c, LogicalResult (*import2D)(NodeContext &), ArrayRef<size_t> lift) {
  onnx::NodeProto n = c.node;
  auto unitAt2 = [&](Value v, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> s = {shape[0], shape[1], 1, shape[2]}, src = {0, 1, -1, 2};
    return reshapeTo(c, v, s, src);
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
  c.setOutput(0, reshapeTo(c, y, shape, src));
  return success();
}

/// A Conv that v4f.conv does not take (3-D, or a weight whose dims are
/// known only at run time) as a v4f.window_conv (decomposed into gathers and
/// a matmul by v4f-decompose-window-conv).
LogicalResult importWindowConv(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  if (c.hasInput(2) && failed(requireF32(c, 2))) return failure();
  auto in = c.inputType(0), w = c.inputType(1);
  int64_t rank = in.getRank(), k = rank - 2;
  if (rank < 3 || rank > 5 || w.getRank() != rank)
    return c.fail("input and weight must both have rank 3, 4 or 5 (1 to 3 spatial dims)");
  std::vector<int64_t> ones(k, 1);
  auto kernel = c.attrs.getInts("kernel_shape", {});
  if (!kernel.empty()) {
    if ((int64_t)kernel.size() != k) return c.fail("kernel_shape must have one entry per spatial dim");
    for (int64_t i = 0; i < k; ++i)
      if (!w.isDynamicDim(2 + i) && w.getDimSize(2 + i) != kernel[i])
        return c.fail("kernel_shape disagrees with the weight's shape");
  }
  auto strides = c.attrs.getInts("strides", ones), dilations = c.attrs.getInts("dilations", ones);
  if ((int64_t)strides.size() != k || (int64_t)dilations.size() != k)
    return c.fail("strides and dilations must have one entry per spatial dim");
  std::vector<int64_t> pads(2 * k, 0);
  std::string autoPad = c.attrs.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    auto p = c.attrs.getInts("pads", pads);
    if ((int64_t)p.size() != 2 * k) return c.fail("pads must have two entries per spatial dim");
    for (int64_t v : p)
      if (v < 0) return c.fail("pads must be non-negative");
    pads.assign(p.begin(), p.end());
  } else if (autoPad != "VALID") {
    for (int64_t i = 0; i < k; ++i) {
      int64_t size = in.getDimSize(2 + i), K = kernel.empty() ? w.getDimSize(2 + i) : kernel[i];
      if (K == kDyn || (size == kDyn && strides[i] != 1))
        return c.fail("auto_pad " + autoPad + " of a " + std::to_string(k) +
                      "-D conv needs a static kernel and, with strides > 1, static spatial dims");
      int64_t out = size == kDyn ? 0 : (size + strides[i] - 1) / strides[i];
      int64_t total = size == kDyn ? (K - 1) * dilations[i]
                                   : std::max<int64_t>((out - 1) * strides[i] + (K - 1) * dilations[i] + 1 - size, 0);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[k + i] = autoPad == "SAME_UPPER" ? big : small;
    }
  }
  int64_t group = c.attrs.getInt("group", 1);
  if (group <= 0) return c.fail("group must be positive");
  SmallVector<int64_t> shape = {in.getDimSize(0), w.getDimSize(0)};
  for (int64_t i = 0; i < k; ++i) {
    int64_t o =
        windowConvOutputSize(in.getDimSize(2 + i), w.getDimSize(2 + i), strides[i], dilations[i], pads[i], pads[k + i]);
    if (o == 0) return c.fail("kernel, strides and pads give an empty output");
    shape.push_back(o);
  }
  auto op = c.b.create<WindowConvOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), c.input(1),
                                     c.hasInput(2) ? c.input(2) : Value(), c.b.getDenseI64ArrayAttr(strides),
                                     c.b.getDenseI64ArrayAttr(dilations), c.b.getDenseI64ArrayAttr(pads),
                                     c.b.getI64IntegerAttr(group));
  if (failed(mlir::verify(op))) return c.fail("the convolution's operands do not fit (see above)");
  c.setOutput(0, op.getResult());
  return success();
}

LogicalResult importConvAnyRank(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  if (rank == 5 || (c.hasInput(1) && !c.inputType(1).hasStaticShape())) return importWindowConv(c);
  if (rank == 3) return importLifted1D(c, importConv, {0, 1});
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
/// kernel flipped and its in/out channels swapped per group. N, H and W may
/// be dynamic (the channels must be static); the pads then come from the
/// attributes alone (SAME: from the kernel, strides and output_padding,
/// which is what SAME's total padding reduces to), and output_shape needs a
/// static input.
LogicalResult importConvTranspose2D(NodeContext &c) {
  if (failed(requireF32(c, 0)) || failed(requireF32(c, 1))) return failure();
  auto in = c.inputType(0), wt = c.inputType(1);
  if (in.getRank() != 4 || wt.getRank() != 4) return c.fail("only 1-D and 2-D ConvTranspose are supported");
  if (in.isDynamicDim(1) || !wt.hasStaticShape()) return importConvTransposeRuntime(c);
  auto wAttr = c.constantInput(1);
  if (!wt.hasStaticShape()) return c.fail("the weight must have a static shape");
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  int64_t group = c.attrs.getInt("group", 1);
  if (group <= 0 || C % group || wt.getDimSize(0) != C)
    return c.fail("weight must be [C, M/group, kH, kW] with group dividing C");
  int64_t Mg = wt.getDimSize(1), M = Mg * group, Cg = C / group;
  int64_t k[2] = {wt.getDimSize(2), wt.getDimSize(3)};
  auto strides = c.attrs.getInts("strides", {1, 1}), dil = c.attrs.getInts("dilations", {1, 1});
  auto outPad = c.attrs.getInts("output_padding", {0, 0});
  if (strides.size() != 2 || dil.size() != 2 || outPad.size() != 2)
    return c.fail("strides/dilations/output_padding must have 2 entries");
  if (c.attrs.has("kernel_shape") && c.attrs.getInts("kernel_shape") != std::vector<int64_t>{k[0], k[1]})
    return c.fail("kernel_shape disagrees with the weight's shape");
  int64_t inSize[2] = {H, W}, padBegin[2], padEnd[2], out[2];
  std::string autoPad = c.attrs.getString("auto_pad", "NOTSET");
  auto outputShape = c.attrs.getInts("output_shape");
  if (!outputShape.empty() && (H == kDyn || W == kDyn))
    return c.fail("output_shape needs a static input height and width");
  for (int i = 0; i < 2; ++i) {
    bool dyn = inSize[i] == kDyn;
    // full = s*(in-1) + output_padding + (k-1)*d + 1; SAME's target is in*s,
    // so its total padding does not depend on the input size.
    int64_t full = dyn ? kDyn : strides[i] * (inSize[i] - 1) + outPad[i] + (k[i] - 1) * dil[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t total = outputShape.empty() ? outPad[i] + (k[i] - 1) * dil[i] + 1 - strides[i]
                                          : full - outputShape[outputShape.size() - 2 + i];
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
    out[i] = dyn ? kDyn : full - padBegin[i] - padEnd[i];
    if (!dyn && out[i] <= 0) return c.fail("the attributes give an empty output");
  }
  auto f32 = c.b.getF32Type();
  auto i64 = c.b.getI64Type();
  auto constI64 = [&](ArrayRef<int64_t> v) -> Value {
    return c.b.create<arith::ConstantOp>(c.loc,
                                         DenseElementsAttr::get(RankedTensorType::get({int64_t(v.size())}, i64), v));
  };
  Value x = c.input(0);
  // Zero insertion, one spatial axis at a time (so that a dynamic axis is
  // the only inferred dim of each reshape): [.., n, ..] viewed as
  // [.., n, 1, ..], padded to [.., n, s, ..], viewed as [.., n*s, ..].
  auto mulDim = [&](int64_t d, int64_t m) { return d == kDyn ? kDyn : d * m; };
  auto insertZeros = [&](Value v, int axis, int64_t s) -> Value {
    if (s == 1) return v;
    auto t = typeOf(v);
    SmallVector<int64_t> shape(t.getShape()), view, sources, padded, viewSources;
    for (int d = 0; d < 4; ++d) {
      view.push_back(shape[d]);
      sources.push_back(t.isDynamicDim(d) ? d : -1);
      if (d == axis) view.push_back(1), sources.push_back(-1);
    }
    Value v5 = reshapeTo(c, v, view, sources);
    padded = view;
    padded[axis + 1] = s;
    SmallVector<int64_t> pads(10, 0);
    pads[5 + axis + 1] = s - 1;
    Value p = c.b.create<PadOp>(c.loc, RankedTensorType::get(padded, f32), v5, constI64(pads), Value(), Value(),
                                c.b.getStringAttr("constant"));
    SmallVector<int64_t> result(shape);
    result[axis] = mulDim(shape[axis], s);
    for (int d = 0; d < 4; ++d) viewSources.push_back(d != axis && t.isDynamicDim(d) ? (d < axis ? d : d + 1) : -1);
    return reshapeTo(c, p, result, viewSources);
  };
  x = insertZeros(x, 3, strides[1]);
  x = insertZeros(x, 2, strides[0]);
  // The zero-inserted input has (in-1)*s+1 elements plus the s-1 trailing
  // zeros the padding above left; pad (or crop) to the convolution's input.
  int64_t before[2], after[2], have[2] = {mulDim(H, strides[0]), mulDim(W, strides[1])};
  for (int i = 0; i < 2; ++i) {
    before[i] = dil[i] * (k[i] - 1) - padBegin[i];
    after[i] = dil[i] * (k[i] - 1) - padEnd[i] + outPad[i] - (strides[i] - 1);
  }
  if (before[0] < 0 || before[1] < 0 || after[0] < 0 || after[1] < 0) {
    // Crop by slicing [lo, -cropEnd) (a negative end counts from the end, so
    // a dynamic size needs no run-time bound).
    int64_t lo[2] = {std::max<int64_t>(-before[0], 0), std::max<int64_t>(-before[1], 0)};
    int64_t cropEnd[2] = {std::max<int64_t>(-after[0], 0), std::max<int64_t>(-after[1], 0)};
    SmallVector<int64_t> ends, sliced = {N, C, 0, 0};
    for (int i = 0; i < 2; ++i) {
      ends.push_back(cropEnd[i] ? -cropEnd[i] : std::numeric_limits<int64_t>::max());
      if (have[i] != kDyn && have[i] - cropEnd[i] <= lo[i]) return c.fail("the pads crop away the whole input");
      have[i] = have[i] == kDyn ? kDyn : have[i] - lo[i] - cropEnd[i];
      sliced[2 + i] = have[i];
      before[i] = std::max<int64_t>(before[i], 0);
      after[i] = std::max<int64_t>(after[i], 0);
    }
    x = c.b.create<SliceOp>(c.loc, RankedTensorType::get(sliced, f32), x, constI64({lo[0], lo[1]}), constI64(ends),
                            constI64({2, 3}), Value());
  }
  if (before[0] || before[1] || after[0] || after[1]) {
    auto grown = [&](int i) { return have[i] == kDyn ? kDyn : have[i] + before[i] + after[i]; };
    x = c.b.create<PadOp>(c.loc, RankedTensorType::get({N, C, grown(0), grown(1)}, f32), x,
                          constI64({0, 0, before[0], before[1], 0, 0, after[0], after[1]}), Value(), Value(),
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
    Value w5 = reshapeTo(c, c.input(1), {group, Cg, Mg, k[0], k[1]}, {-1, -1, -1, -1, -1});
    Value t = c.b.create<TransposeOp>(c.loc, w5, c.b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    weight = reshapeTo(c, t, {M, Cg, k[0], k[1]}, {-1, -1, -1, -1});
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
  if (c.outputUsed(1)) return c.fail("the Indices output of MaxPool is not supported");
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
      if (a.name() == "kernel_shape")
        set(k);
      else if (a.name() == "strides")
        set(st);
      else if (a.name() == "dilations")
        set(dl);
      else if (a.name() == "pads")
        set(pd);
    }
    NodeContext c2(n, c.opset, c.g, c.loc);
    if (failed(import2D(c2))) return c.fail(c2.error);
    return c.g.values.at(outName);
  };
  // The views' dims are run-time values where the input's are (Builders.h).
  BuildContext bc(c.b, c.loc);
  Value in0 = c.input(0);
  Value N = dimOf(bc, in0, 0), C = dimOf(bc, in0, 1), D = dimOf(bc, in0, 2);
  auto CD = dimMul(bc, C, D);
  if (failed(CD)) return c.fail(bc.error);
  auto x = reshapeToDims(bc, in0, {N, *CD, dimOf(bc, in0, 3), dimOf(bc, in0, 4)});
  if (failed(x)) return c.fail(bc.error);
  auto hw = stage(*x, {kernel[1], kernel[2]}, {strides[1], strides[2]}, {dil[1], dil[2]},
                  {pads[1], pads[2], pads[4], pads[5]}, "#v4f-hw");
  if (failed(hw)) return failure();
  Value OH = dimOf(bc, *hw, 2), OW = dimOf(bc, *hw, 3);
  auto plane = dimMul(bc, OH, OW);
  if (failed(plane)) return c.fail(bc.error);
  auto xd = reshapeToDims(bc, *hw, {N, C, D, *plane});
  if (failed(xd)) return c.fail(bc.error);
  auto dd = stage(*xd, {kernel[0], 1}, {strides[0], 1}, {dil[0], 1}, {pads[0], 0, pads[3], 0}, "#v4f-d");
  if (failed(dd)) return failure();
  auto y = reshapeToDims(bc, *dd, {N, C, dimOf(bc, *dd, 2), OH, OW});
  if (failed(y)) return c.fail(bc.error);
  c.setOutput(0, *y);
  return success();
}

} // namespace

void addWindowImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Conv"] = {1, kMaxOpset, checkWindowAttrs,
               [](NodeContext &c) { return importThroughFloat32(c, importConvAnyRank); }};
  t["ConvTranspose"] = {1, kMaxOpset, checkWindowAttrs, importConvTranspose};
  t["LpPool"] = {2, kMaxOpset, checkWindowAttrs, importLpPool};
  t["MaxPool"] = {1, kMaxOpset, checkWindowAttrs, importPoolAnyRank<MaxPoolOp>};
  t["AveragePool"] = {1, kMaxOpset, checkWindowAttrs, importPoolAnyRank<AvgPoolOp>};
  t["GlobalAveragePool"] = {1, kMaxOpset, [](const NodeAttrs &, int64_t) { return std::string(); },
                            importGlobalAveragePool};
}

} // namespace v4f
