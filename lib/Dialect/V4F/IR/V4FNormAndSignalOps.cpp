//===- V4FNormAndSignalOps.cpp - verifiers of the layout, normalization and signal composites ===//
//
// depth_space, moment_norm, group_norm, lp_norm, lrn, window, dft, stft,
// rotary_embedding and window_conv import whole and decompose in the v4f-decompose-* passes;
// these verifiers state what those decompositions rely on.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

using namespace mlir;
using namespace v4f;

static constexpr int64_t kDyn = ShapedType::kDynamic;

namespace {

RankedTensorType typeOfValue(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

bool isComputedFloat(Type t) { return llvm::isa<FloatType>(t) && !isStorageOnlyType(t); }

/// Static dims must agree; a dynamic dim on either side is accepted.
bool dimsAgree(int64_t a, int64_t b) { return a == kDyn || b == kDyn || a == b; }

/// A per-channel (or per-group) parameter: `n` elements along its first
/// dim, every other dim 1 (when the sizes are known).
LogicalResult verifyVector(Operation *op, Value v, int64_t n, StringRef name) {
  auto t = typeOfValue(v);
  bool ok = t.getRank() >= 1 && dimsAgree(t.getDimSize(0), n);
  for (int64_t d = 1; d < t.getRank(); ++d) ok = ok && t.getDimSize(d) == 1;
  if (!ok) return op->emitOpError() << name << " must hold " << n << " elements along its first dim";
  return success();
}

} // namespace

LogicalResult DepthSpaceOp::verify() {
  auto in = typeOfValue(getInput()), out = typeOfValue(getResult());
  if (in.getRank() != 4 || out.getRank() != 4) return emitOpError("input and result must be 4-D");
  if (in.getElementType() != out.getElementType()) return emitOpError("result element type differs from the input's");
  int64_t bs = getBlocksize();
  if (bs <= 0) return emitOpError("blocksize must be positive");
  if (getMode() != "DCR" && getMode() != "CRD") return emitOpError("mode must be \"DCR\" or \"CRD\"");
  // The dims of the side that is divided must be multiples of the block.
  auto scaled = [&](int64_t d, int64_t mul, int64_t div) -> int64_t {
    if (d == kDyn) return kDyn;
    if (d % div) return -1;
    return d / div * mul;
  };
  bool toSpace = getToSpace();
  int64_t expect[4] = {in.getDimSize(0),
                       toSpace ? scaled(in.getDimSize(1), 1, bs * bs) : scaled(in.getDimSize(1), bs * bs, 1),
                       toSpace ? scaled(in.getDimSize(2), bs, 1) : scaled(in.getDimSize(2), 1, bs),
                       toSpace ? scaled(in.getDimSize(3), bs, 1) : scaled(in.getDimSize(3), 1, bs)};
  for (int d = 0; d < 4; ++d) {
    if (expect[d] == -1) return emitOpError("input dim ") << d << " is not a multiple of the block";
    if (!dimsAgree(expect[d], out.getDimSize(d))) return emitOpError("result dim ") << d << " should be " << expect[d];
  }
  return success();
}

LogicalResult MomentNormOp::verify() {
  auto in = typeOfValue(getInput());
  if (!isComputedFloat(in.getElementType())) return emitOpError("input must be a float tensor");
  int64_t prev = -1;
  for (int64_t a : getAxes()) {
    if (a <= prev || a >= in.getRank()) return emitOpError("axes must be increasing and within the input's rank");
    prev = a;
  }
  if (bool(getScale()) != bool(getBias())) return emitOpError("scale and bias come together");
  if (getScale()) {
    if (in.getRank() < 2) return emitOpError("per-channel scale and bias need a channel dim");
    for (auto [v, name] : {std::make_pair(getScale(), "scale"), std::make_pair(getBias(), "bias")}) {
      if (typeOfValue(v).getElementType() != in.getElementType())
        return emitOpError() << name << " must have the input's element type";
      if (failed(verifyVector(*this, v, in.getDimSize(1), name))) return failure();
    }
  }
  return success();
}

LogicalResult GroupNormOp::verify() {
  auto in = typeOfValue(getInput());
  if (!in.getElementType().isF32()) return emitOpError("input must be float32");
  if (in.getRank() < 3) return emitOpError("input must have rank >= 3");
  int64_t groups = getNumGroups(), C = in.getDimSize(1);
  if (groups <= 0 || (C != kDyn && C % groups)) return emitOpError("num_groups must divide the channel count");
  int64_t n = getPerGroup() ? groups : C;
  if (failed(verifyVector(*this, getScale(), n, "scale")) || failed(verifyVector(*this, getBias(), n, "bias")))
    return failure();
  return success();
}

LogicalResult LpNormOp::verify() {
  auto in = typeOfValue(getInput());
  if (!isComputedFloat(in.getElementType())) return emitOpError("input must be a float tensor");
  if (getAxis() < 0 || getAxis() >= in.getRank()) return emitOpError("axis out of range");
  if (getP() != 1 && getP() != 2) return emitOpError("p must be 1 or 2");
  return success();
}

LogicalResult LRNOp::verify() {
  auto in = typeOfValue(getInput());
  if (!in.getElementType().isF32()) return emitOpError("input must be float32");
  if (in.getRank() < 3) return emitOpError("input must have rank >= 3");
  if (getSize() <= 0) return emitOpError("size must be positive");
  return success();
}

LogicalResult WindowOp::verify() {
  auto size = typeOfValue(getSize()), out = typeOfValue(getResult());
  if (!size.hasStaticShape() || size.getNumElements() != 1) return emitOpError("size must have one element");
  if (out.getRank() != 1) return emitOpError("result must be 1-D");
  if (!out.getElementType().isIntOrFloat() || isStorageOnlyType(out.getElementType()))
    return emitOpError("result element type must be a computed integer or float type");
  if (getKind() != "hann" && getKind() != "hamming" && getKind() != "blackman")
    return emitOpError("kind must be \"hann\", \"hamming\" or \"blackman\"");
  return success();
}

LogicalResult DFTOp::verify() {
  auto in = typeOfValue(getInput()), out = typeOfValue(getResult());
  if (!in.getElementType().isF32() || !out.getElementType().isF32()) return emitOpError("input must be float32");
  int64_t rank = in.getRank(), axis = getAxis(), L = getLength(), comps = in.getDimSize(rank - 1);
  if (rank < 2 || (comps != 1 && comps != 2)) return emitOpError("the last dim must be 1 (real) or 2 (complex)");
  if (axis < 0 || axis >= rank - 1) return emitOpError("axis must be a dim other than the last");
  if (in.isDynamicDim(axis)) return emitOpError("the transformed dim must be static");
  if (L <= 0) return emitOpError("length must be positive");
  bool inverse = getInverse(), onesided = getOnesided();
  if (onesided && !inverse && comps != 1) return emitOpError("a one-sided forward DFT needs a real input");
  SmallVector<int64_t> expect(in.getShape());
  expect[axis] = inverse ? L : (onesided ? L / 2 + 1 : L);
  expect[rank - 1] = inverse && onesided ? 1 : 2;
  if (out.getShape() != ArrayRef<int64_t>(expect)) return emitOpError("result shape does not follow from the input");
  return success();
}

LogicalResult STFTOp::verify() {
  auto in = typeOfValue(getSignal()), out = typeOfValue(getResult());
  if (!in.getElementType().isF32() || !out.getElementType().isF32()) return emitOpError("signal must be float32");
  if (in.getRank() != 3 || in.getDimSize(2) != 1) return emitOpError("signal must be a real [batch, length, 1]");
  int64_t L = getFrameLength(), step = getFrameStep();
  if (L <= 0 || step <= 0) return emitOpError("frame_length and frame_step must be positive");
  if (getWindow() && failed(verifyVector(*this, getWindow(), L, "window"))) return failure();
  int64_t bins = getOnesided() ? L / 2 + 1 : L;
  if (out.getRank() != 4 || !dimsAgree(out.getDimSize(0), in.getDimSize(0)) || out.getDimSize(2) != bins ||
      out.getDimSize(3) != 2)
    return emitOpError("result must be [batch, frames, ") << bins << ", 2]";
  return success();
}

LogicalResult RotaryEmbeddingOp::verify() {
  auto in = typeOfValue(getInput());
  Type f = in.getElementType();
  if (!isComputedFloat(f)) return emitOpError("input must be float32, float16 or float64");
  if (in.getRank() != 3 && in.getRank() != 4) return emitOpError("input must be 3-D or 4-D");
  if (in.getRank() == 3 && getNumHeads() <= 0) return emitOpError("a 3-D input needs num_heads");
  if (typeOfValue(getCosCache()).getElementType() != f || typeOfValue(getSinCache()).getElementType() != f)
    return emitOpError("cos_cache and sin_cache must have the input's element type");
  if (getRotaryDim() < 0 || getRotaryDim() % 2) return emitOpError("rotary_dim must be even (0: the head size)");
  return success();
}

/// The output extent of one window_conv dim, dynamic when a size is.
int64_t v4f::windowConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                                  int64_t padEnd) {
  if (in == ShapedType::kDynamic || kernel == ShapedType::kDynamic) return ShapedType::kDynamic;
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

LogicalResult WindowConvOp::verify() {
  auto in = typeOfValue(getInput()), w = typeOfValue(getWeight()), out = typeOfValue(getResult());
  int64_t rank = in.getRank(), k = rank - 2;
  if (!in.getElementType().isF32() || w.getElementType() != in.getElementType() ||
      out.getElementType() != in.getElementType())
    return emitOpError("input, weight and result must be float32");
  if (rank < 3 || rank > 5 || w.getRank() != rank || out.getRank() != rank)
    return emitOpError("input, weight and result must have rank 3, 4 or 5 (1 to 3 spatial dims), all the same");
  if ((int64_t)getStrides().size() != k || (int64_t)getDilations().size() != k || (int64_t)getPads().size() != 2 * k)
    return emitOpError("strides and dilations need one entry per spatial dim, pads two");
  for (int64_t v : getStrides())
    if (v <= 0) return emitOpError("strides must be positive");
  for (int64_t v : getDilations())
    if (v <= 0) return emitOpError("dilations must be positive");
  for (int64_t v : getPads())
    if (v < 0) return emitOpError("pads must be non-negative");
  int64_t g = getGroups();
  if (g <= 0) return emitOpError("groups must be positive");
  if (!w.isDynamicDim(0) && w.getDimSize(0) % g) return emitOpError("groups must divide the output channels");
  if (!w.isDynamicDim(1) && !in.isDynamicDim(1) && in.getDimSize(1) != w.getDimSize(1) * g)
    return emitOpError("input channels must be the weight's channels times groups");
  if (getBias()) {
    auto b = typeOfValue(getBias());
    if (b.getRank() != 1 || !dimsAgree(b.getDimSize(0), w.getDimSize(0)) || b.getElementType() != in.getElementType())
      return emitOpError("bias must be a float32 [output channels]");
  }
  if (!dimsAgree(out.getDimSize(0), in.getDimSize(0)) || !dimsAgree(out.getDimSize(1), w.getDimSize(0)))
    return emitOpError("result must be [batch, output channels, ...]");
  for (int64_t i = 0; i < k; ++i) {
    int64_t o = windowConvOutputSize(in.getDimSize(2 + i), w.getDimSize(2 + i), getStrides()[i], getDilations()[i],
                                     getPads()[i], getPads()[k + i]);
    if (o == 0) return emitOpError("pads, kernel and strides give an empty output");
    if (!dimsAgree(out.getDimSize(2 + i), o)) return emitOpError("result spatial dim ") << i << " must be " << o;
  }
  return success();
}
