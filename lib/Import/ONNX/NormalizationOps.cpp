//===- NormalizationOps.cpp - ONNX BatchNormalization / LayerNormalization -===//
//
// BatchNormalization imports as v4f.batch_norm (inference; folded into the
// producing conv by v4f-fold-batch-norm) or, with training_mode=1, as the
// batch statistics and the blended running statistics. LayerNormalization
// and RMSNormalization import whole as v4f.layer_norm, or decomposed into
// reductions when their Mean / InvStdDev outputs are used.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

/// BatchNormalization with training_mode=1: normalizes with the batch's own
/// mean and (population) variance over every axis but 1, and outputs the
/// running statistics blended with `momentum`.
LogicalResult importBatchNormTraining(NodeContext &c) {
  auto in = c.inputType(0);
  int64_t rank = in.getRank();
  if (rank < 2) return c.fail("input must have rank >= 2");
  // The channel count may be known only at run time (the views below are
  // then computed and checked by the plan).
  int64_t C = in.getDimSize(1);
  for (int i = 1; i <= 4; ++i) {
    auto t = c.inputType(i);
    if (t.getRank() != 1 || (C != kDyn && !t.isDynamicDim(0) && t.getDimSize(0) != C) || !t.getElementType().isF32())
      return c.fail("scale, B, mean and var must be float32 [C]");
  }
  BuildContext bc(c.b, c.loc);
  Value Cv = dimOf(bc, c.input(0), 1);
  auto chanView = [&](Value v) -> Value {
    SmallVector<Value> dims(rank - 1, dimConstant(bc, 1));
    dims[0] = Cv;
    auto r = reshapeToDims(bc, v, dims);
    return succeeded(r) ? *r : Value();
  };
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1) axes.push_back(i);
  auto stats = meanAndVariance(c, axes);
  if (failed(stats)) return failure();
  float eps = c.attrs.getFloat("epsilon", 1e-5f), momentum = c.attrs.getFloat("momentum", 0.9f);
  auto f32 = c.b.getF32Type();
  auto y = buildElementwise(c, {stats->deviation, stats->variance, chanView(c.input(1)), chanView(c.input(2))}, f32,
                            [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                              Value e = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(eps));
                              Value n = b.create<arith::DivFOp>(
                                  l, a[0], b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e)));
                              return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, n, a[2]), a[3]);
                            });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  auto blend = [&](Value running, Value batch) {
    return buildElementwise(c, {running, reshapeToDims(bc, batch, {Cv}).value_or(Value())}, f32,
                            [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                              Value m = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(momentum));
                              Value m1 = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.0f - momentum));
                              return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[0], m),
                                                             b.create<arith::MulFOp>(l, a[1], m1));
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
      ins.push_back(reshapeTo(c, c.input(i), chan, sources));
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
  c.setOutput(0, c.b.create<BatchNormOp>(c.loc, c.inputType(0), c.input(0), c.input(1), c.input(2), c.input(3),
                                         c.input(4), c.b.getF32FloatAttr(c.attrs.getFloat("epsilon", 1e-5f))));
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

/// RMSNormalization over dims known only at run time: x / sqrt(mean(x^2) +
/// eps) * scale, from a v4f.reduce mean and elementwise ops (the fused
/// v4f.layer_norm kernel needs static normalized dims).
LogicalResult importRMSNormDynamic(NodeContext &c, int64_t axis) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  SmallVector<int64_t> axes, reduced(in.getShape());
  for (int64_t i = axis; i < in.getRank(); ++i) axes.push_back(i), reduced[i] = 1;
  float eps = c.attrs.getFloat("epsilon", 1e-5f);
  auto sq = buildElementwise(c, {c.input(0)}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulFOp>(l, a[0], a[0]);
  });
  if (failed(sq)) return failure();
  Value ms = c.b.create<ReduceOp>(c.loc, RankedTensorType::get(reduced, f), *sq, Value(), c.b.getStringAttr("mean"),
                                  c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(true));
  auto y =
      buildElementwise(c, {c.input(0), ms, c.input(1)}, f, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value e = b.create<arith::ConstantOp>(l, b.getFloatAttr(f, eps));
        Value r = b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[1], e));
        return b.create<arith::MulFOp>(l, b.create<arith::DivFOp>(l, a[0], r), a[2]);
      });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
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
  // Normalized dims known only at run time: the composition (a reduction
  // and elementwise ops) instead of the fused kernel.
  if (llvm::is_contained(trailing, kDyn)) {
    if (c.node.op_type() == "RMSNormalization") return importRMSNormDynamic(c, *axis);
    return importLayerNormWithStatistics(c, *axis);
  }
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
  c.setOutput(
      0, c.b.create<LayerNormOp>(c.loc, in, c.input(0), c.input(1), rms ? Value() : bias, c.b.getI64IntegerAttr(*axis),
                                 c.b.getF32FloatAttr(c.attrs.getFloat("epsilon", 1e-5f)), c.b.getBoolAttr(rms)));
  return success();
}

} // namespace

void addNormalizationImporters(std::unordered_map<std::string, OpImporter> &t) {
  auto none = [](const NodeAttrs &, int64_t) { return std::string(); };
  // Opsets 7-8 add `spatial` (1: one mean per channel, as from opset 9).
  t["BatchNormalization"] = {7, kMaxOpset,
                             [](const NodeAttrs &a, int64_t opset) {
                               return opset < 9 && a.getInt("spatial", 1) != 1
                                          ? std::string("spatial=0 (statistics per activation) is not supported")
                                          : std::string();
                             },
                             importBatchNorm};
  t["LayerNormalization"] = {17, kMaxOpset, none,
                             [](NodeContext &c) { return importThroughFloat32(c, importLayerNorm); }};
  t["RMSNormalization"] = {23, kMaxOpset, none,
                           [](NodeContext &c) { return importThroughFloat32(c, importLayerNorm); }};
}

} // namespace v4f
