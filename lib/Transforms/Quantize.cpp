//===- Quantize.cpp - v4f-quantize ----------------------------------------===//
//
// Turns float matmuls with a constant weight into v4f.quantized_matmul (and,
// for static int8, calibrated convolutions into v4f.quantized_conv): the
// weight becomes an int8 constant quantized per output column or per tensor
// (symmetric, [-127, 127]) with its float scales, the activations are
// quantized either per row at run time (dynamic-int8) or with one calibrated
// scale and zero point (int8). Mode int4-weight makes a v4f.int4_matmul
// instead: block-wise int4 weights with a scale per group, float
// activations. The contract is in Passes.td; docs/quantization.md has the
// arithmetic and how the modes are chosen.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"
#include "v4f/Transforms/Passes.h"
#include "v4f/Transforms/QuantizationMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_QUANTIZE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// The ONNX node names `op` came from (its NameLocs; a fused op has several).
SmallVector<std::string> nodeNames(Operation *op) {
  SmallVector<std::string> names;
  op->getLoc()->walk([&](Location l) {
    if (auto named = llvm::dyn_cast<NameLoc>(l)) names.push_back(named.getName().str());
    return WalkResult::advance();
  });
  return names;
}

struct QuantizePass : impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  void runOnOperation() override {
    if (mode != "dynamic-int8" && mode != "int8" && mode != "int4-weight" && mode != "w4a8") {
      getOperation().emitError("v4f-quantize: unknown mode '") << mode << "' (dynamic-int8, int8, int4-weight or w4a8)";
      return signalPassFailure();
    }
    if (groupSize < 1) {
      getOperation().emitError("v4f-quantize: group-size must be positive, not ") << groupSize;
      return signalPassFailure();
    }
    SmallVector<MatMulOp> matmuls;
    SmallVector<ConvOp> convs;
    getOperation().walk([&](MatMulOp mm) { matmuls.push_back(mm); });
    getOperation().walk([&](ConvOp conv) { convs.push_back(conv); });
    for (MatMulOp mm : matmuls) quantize(mm);
    for (ConvOp conv : convs) quantizeConv(conv);
  }

  void keepFloat(Operation *op, StringRef why) {
    op->setAttr("v4f.precision_note", StringAttr::get(op->getContext(), why));
  }

  /// The calibrated activation quantization of `op`, or the reason there is
  /// none.
  std::optional<std::string> staticActivation(Operation *op, ActivationQuant &aq) {
    auto range = op->getAttrOfType<DenseF32ArrayAttr>("v4f.calibration");
    if (!range || range.size() != 2) return std::string("no calibration range");
    if (!std::isfinite(range[0]) || !std::isfinite(range[1])) return std::string("calibration range is not finite");
    aq = activationQuantFromRange(range[0], range[1]);
    return std::nullopt;
  }

  void quantizeConv(ConvOp conv) {
    for (const std::string &name : nodeNames(conv))
      if (llvm::is_contained(exclude, name)) return keepFloat(conv, "excluded (--exclude)");
    if (mode != "int8")
      return keepFloat(conv, "convolutions are quantized by static int8 only (--quantize=int8 with calibration data)");
    if (conv.getGroups() != 1) return keepFloat(conv, "grouped or depthwise convolution (memory-bound; kept float32)");
    DenseElementsAttr weight;
    auto wType = conv.getWeight().getType();
    if (!matchPattern(conv.getWeight(), m_Constant(&weight)) || !wType.getElementType().isF32())
      return keepFloat(conv, "weight is not a float32 constant");
    auto inType = conv.getInput().getType();
    if (!inType.getElementType().isF32()) return keepFloat(conv, "activation is not float32");
    if (inType.isDynamicDim(1) || inType.isDynamicDim(2) || inType.isDynamicDim(3))
      return keepFloat(conv, "input channels, height or width are known only at run time");
    ActivationQuant aq;
    if (auto why = staticActivation(conv, aq)) return keepFloat(conv, *why);
    // OIHW is [O, K] row-major: quantize its transpose [K, O] by columns.
    int64_t O = wType.getDimSize(0), K = wType.getNumElements() / std::max<int64_t>(O, 1);
    std::vector<float> w = floatValues(weight), wt(w.size());
    for (int64_t o = 0; o < O; ++o)
      for (int64_t k = 0; k < K; ++k) wt[k * O + o] = w[o * K + k];
    std::vector<int8_t> qt, q(w.size());
    std::vector<float> scales;
    quantizeWeightColumns(wt.data(), K, O, perChannel, qt, scales);
    for (int64_t o = 0; o < O; ++o)
      for (int64_t k = 0; k < K; ++k) q[o * K + k] = qt[k * O + o];
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto qType = RankedTensorType::get(wType.getShape(), b.getIntegerType(8));
    auto sType = RankedTensorType::get({O}, b.getF32Type());
    Value qW = b.create<arith::ConstantOp>(loc, qType, DenseElementsAttr::get(qType, llvm::ArrayRef(q)));
    Value sW = b.create<arith::ConstantOp>(loc, sType, DenseElementsAttr::get(sType, llvm::ArrayRef(scales)));
    Value result = b.create<QuantizedConvOp>(
        loc, conv.getType(), conv.getInput(), qW, sW, conv.getBias(), conv.getResidual(), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr(), b.getF32FloatAttr(aq.scale), b.getI32IntegerAttr(aq.zeroPoint),
        FloatAttr(), b.getI32IntegerAttr(0), FloatAttr(), b.getI32IntegerAttr(0), conv.getActivationAttr(),
        conv.getActAlphaAttr(), conv.getActBetaAttr());
    conv.replaceAllUsesWith(result);
    Operation *oldWeight = conv.getWeight().getDefiningOp();
    conv.erase();
    if (oldWeight && oldWeight->use_empty()) oldWeight->erase();
  }

  void quantize(MatMulOp mm) {
    for (const std::string &name : nodeNames(mm))
      if (llvm::is_contained(exclude, name)) return keepFloat(mm, "excluded (--exclude)");
    DenseElementsAttr weight;
    auto wType = llvm::dyn_cast<RankedTensorType>(mm.getRhs().getType());
    if (!matchPattern(mm.getRhs(), m_Constant(&weight)) || !wType || wType.getRank() != 2 || !wType.hasStaticShape() ||
        !wType.getElementType().isF32())
      return keepFloat(mm, "weight is not a rank-2 float32 constant");
    if (!mm.getLhs().getType().getElementType().isF32()) return keepFloat(mm, "activation is not float32");
    std::string actQuant = "dynamic";
    float actScale = 1.f;
    int32_t actZeroPoint = 0;
    if (mode == "int8") {
      ActivationQuant aq;
      if (auto why = staticActivation(mm, aq)) return keepFloat(mm, *why);
      actQuant = "static";
      actScale = aq.scale;
      actZeroPoint = aq.zeroPoint;
    }
    int64_t K = wType.getDimSize(0), N = wType.getDimSize(1);
    std::vector<float> w = floatValues(weight);
    std::vector<int8_t> q, zeroPoints;
    std::vector<float> scales;
    bool w4a8 = mode == "w4a8", int4 = mode == "int4-weight" || w4a8;
    int64_t groups = (K + groupSize - 1) / groupSize;
    if (int4)
      quantizeWeightGroupsInt4(w.data(), K, N, groupSize, q, scales, int4ZeroPoints && !w4a8 ? &zeroPoints : nullptr);
    else
      quantizeWeightColumns(w.data(), K, N, perChannel, q, scales);
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    auto qType = RankedTensorType::get({K, N}, b.getIntegerType(8));
    auto sType = int4 ? RankedTensorType::get({groups, N}, b.getF32Type()) : RankedTensorType::get({N}, b.getF32Type());
    Value qW = b.create<arith::ConstantOp>(loc, qType, DenseElementsAttr::get(qType, llvm::ArrayRef(q)));
    Value sW = b.create<arith::ConstantOp>(loc, sType, DenseElementsAttr::get(sType, llvm::ArrayRef(scales)));
    Value result;
    Value zW;
    if (!zeroPoints.empty()) {
      auto zType = RankedTensorType::get({groups, N}, b.getIntegerType(8));
      zW = b.create<arith::ConstantOp>(loc, zType, DenseElementsAttr::get(zType, llvm::ArrayRef(zeroPoints)));
    }
    if (int4)
      result = b.create<Int4MatMulOp>(loc, mm.getType(), mm.getLhs(), qW, sW, zW, mm.getBias(),
                                      b.getI64IntegerAttr(groupSize), w4a8 ? b.getUnitAttr() : UnitAttr(),
                                      mm.getActivationAttr(), mm.getActAlphaAttr(), mm.getActBetaAttr());
    else
      result = b.create<QuantizedMatMulOp>(
          loc, mm.getType(), mm.getLhs(), qW, sW, mm.getBias(), b.getStringAttr(actQuant), b.getF32FloatAttr(actScale),
          b.getI32IntegerAttr(actZeroPoint), mm.getActivationAttr(), mm.getActAlphaAttr(), mm.getActBetaAttr());
    mm.replaceAllUsesWith(result);
    Operation *oldWeight = mm.getRhs().getDefiningOp();
    mm.erase();
    if (oldWeight && oldWeight->use_empty()) oldWeight->erase();
  }
};

} // namespace

std::unique_ptr<Pass> createQuantizePass() { return std::make_unique<QuantizePass>(); }

std::unique_ptr<Pass> createQuantizePass(const std::string &mode, llvm::ArrayRef<std::string> exclude, bool perChannel,
                                         int64_t groupSize, bool int4ZeroPoints) {
  QuantizeOptions options;
  options.int4ZeroPoints = int4ZeroPoints;
  options.mode = mode;
  options.groupSize = groupSize;
  options.perChannel = perChannel;
  // QuantizeOptions::exclude is an ArrayRef: the names must outlive the
  // pass's constructor, which copies them.
  options.exclude = exclude;
  return std::make_unique<QuantizePass>(options);
}

} // namespace v4f
