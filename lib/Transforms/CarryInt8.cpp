//===- CarryInt8.cpp - keep int8 values between integer convolutions ------===//
//
// A static int8 convolution (`v4f.quantized_conv`) quantizes its float input
// with its calibrated scale and zero point. When every user of a quantized
// conv's float result is another quantized conv reading it as its input with
// the same scale and zero point, the producer can requantize its result in
// its epilogue and store int8 (1 byte a value instead of 4), and the
// consumers read the int8 values as they are instead of quantizing: the same
// integers reach the integer GEMMs (the producer rounds y * (1 / s) exactly
// as the consumer did), a quarter of the bytes move between the layers, and
// no quantization runs in the consumers.
//
// The same holds through `v4f.max_pool`: quantization is monotonic, so the
// maximum of the quantized values is the quantization of the maximum (and
// the padding never wins a max). A max pool between a quantized conv and
// quantized convs (its only users) pools the int8 values; reshapes and
// transposes (pixel shuffles) move them.
//
// A Concat whose inputs are all quantized convs feeding only it, and whose
// users all quantize alike, concatenates int8: its producers requantize to
// the consumers' scale.
//
// A conv's float result may also reach quantized convs as their fused
// residual (ResNet's skip connection: the block output feeds the next
// block's first conv and its last conv's residual). Then the residual is
// carried in int8 too, with the quantization the input users chose, and
// added back as (q - zp) * s: the one case that is not exact (the skip
// connection is rounded to the next layer's activation grid, as ONNX
// Runtime's QDQ ResNets do); at least one input use must fix the scale.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

namespace v4f {
#define GEN_PASS_DEF_CARRYINT8
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// The activation quantization (scale, zero point) shared by all users of
/// `v`, when each of them is a quantized conv reading `v` as its float input,
/// a data movement op (max pool, reshape, transpose) whose own users all
/// are, recursively (`movers` collects them), or — at the top level only —
/// a quantized conv taking `v` as its float residual (`residuals` collects
/// those: they take the same quantization; at least one input use must fix
/// it); none otherwise.
std::optional<std::pair<float, int32_t>> int8Consumers(Value v, bool top, SmallVectorImpl<Operation *> &movers,
                                                       SmallVectorImpl<QuantizedConvOp> &residuals) {
  std::optional<std::pair<float, int32_t>> quant;
  if (v.use_empty()) return std::nullopt;
  for (OpOperand &use : v.getUses()) {
    std::optional<std::pair<float, int32_t>> here;
    Operation *user = use.getOwner();
    if (auto conv = dyn_cast<QuantizedConvOp>(user)) {
      if (conv.getResidual() && use.get() == conv.getResidual() && use.get() != conv.getInput() &&
          !conv.getResidualScale() && top) {
        residuals.push_back(conv);
        continue;
      }
      if (use.get() != conv.getInput() || use.getOperandNumber() != 0) return std::nullopt;
      here = std::make_pair(conv.getActScale().convertToFloat(), int32_t(conv.getActZeroPoint()));
    } else if (isa<MaxPoolOp, ReshapeOp, TransposeOp>(user) && use.getOperandNumber() == 0) {
      SmallVector<QuantizedConvOp> none;
      here = int8Consumers(user->getResult(0), /*top=*/false, movers, none);
      if (here) movers.push_back(user);
    }
    if (!here || (quant && *quant != *here)) return std::nullopt;
    quant = here;
  }
  return quant;
}

RankedTensorType asInt8(Type t) {
  auto ranked = llvm::cast<RankedTensorType>(t);
  return RankedTensorType::get(ranked.getShape(), IntegerType::get(t.getContext(), 8));
}

struct CarryInt8Pass : v4f::impl::CarryInt8Base<CarryInt8Pass> {
  void runOnOperation() override {
    SmallVector<QuantizedConvOp> convs;
    getOperation().walk([&](QuantizedConvOp op) { convs.push_back(op); });
    for (QuantizedConvOp conv : convs) {
      if (conv.getOutScale()) continue;
      SmallVector<Operation *> movers;
      SmallVector<QuantizedConvOp> residuals;
      auto quant = int8Consumers(conv.getResult(), /*top=*/true, movers, residuals);
      if (!quant) continue;
      Builder b(conv.getContext());
      conv.setOutScaleAttr(b.getF32FloatAttr(quant->first));
      conv.setOutZeroPoint(quant->second);
      conv.getResult().setType(asInt8(conv.getType()));
      for (Operation *mover : movers) mover->getResult(0).setType(asInt8(mover->getResult(0).getType()));
      for (QuantizedConvOp user : residuals) {
        user.setResidualScaleAttr(b.getF32FloatAttr(quant->first));
        user.setResidualZeroPoint(quant->second);
      }
    }
    // Concat: every input a quantized conv whose only user is the concat,
    // every user of the concat an int8 conv of one scale: the producers
    // requantize to that scale (what the consumers would do to the float
    // concatenation: exact) and the concat moves int8.
    SmallVector<ConcatOp> concats;
    getOperation().walk([&](ConcatOp op) { concats.push_back(op); });
    for (ConcatOp concat : concats) {
      if (!concat.getType().getElementType().isF32()) continue;
      SmallVector<Operation *> movers;
      SmallVector<QuantizedConvOp> residuals;
      auto quant = int8Consumers(concat.getResult(), /*top=*/false, movers, residuals);
      if (!quant || !residuals.empty()) continue;
      SmallVector<QuantizedConvOp> producers;
      for (Value in : concat.getInputs()) {
        auto conv = in.getDefiningOp<QuantizedConvOp>();
        if (!conv || conv.getOutScale() || !in.hasOneUse()) break;
        producers.push_back(conv);
      }
      if (producers.size() != concat.getInputs().size()) continue;
      Builder b(concat.getContext());
      for (QuantizedConvOp conv : producers) {
        conv.setOutScaleAttr(b.getF32FloatAttr(quant->first));
        conv.setOutZeroPoint(quant->second);
        conv.getResult().setType(asInt8(conv.getType()));
      }
      concat.getResult().setType(asInt8(concat.getType()));
      for (Operation *mover : movers) mover->getResult(0).setType(asInt8(mover->getResult(0).getType()));
    }
  }
};

} // namespace

std::unique_ptr<Pass> v4f::createCarryInt8Pass() { return std::make_unique<CarryInt8Pass>(); }
