//===- CompositeOps.cpp - ONNX ops imported whole as v4f composite ops ----===//
//
// DepthToSpace / SpaceToDepth, InstanceNormalization, MeanVarianceNormalization,
// GroupNormalization, LpNormalization, LRN, RotaryEmbedding, the window
// functions and DFT import 1:1 as the composite ops of V4FCompositeOps.td,
// after the checks that name the node; the v4f-decompose-* passes rewrite
// them. GlobalMaxPool is a v4f.reduce and EyeLike a constant.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

using namespace mlir;

namespace v4f {

namespace {

LogicalResult importDepthSpace(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() != 4) return c.fail("input must be a 4-D tensor");
  int64_t bs = c.attrs.getInt("blocksize", 0);
  if (bs <= 0) return c.fail("blocksize must be positive");
  std::string mode = c.attrs.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") mode = "DCR"; // ONNX: anything but CRD is DCR
  int64_t N = in.getDimSize(0), C = in.getDimSize(1), H = in.getDimSize(2), W = in.getDimSize(3);
  bool toSpace = c.node.op_type() == "DepthToSpace";
  // Dims known only at run time stay so (the plan checks the divisions).
  auto scaled = [](int64_t d, int64_t mul, int64_t div) { return d == kDyn ? kDyn : d * mul / div; };
  SmallVector<int64_t> shape;
  if (toSpace) {
    if (C != kDyn && C % (bs * bs)) return c.fail("channels must be divisible by blocksize^2");
    shape = {N, scaled(C, 1, bs * bs), scaled(H, bs, 1), scaled(W, bs, 1)};
  } else {
    if ((H != kDyn && H % bs) || (W != kDyn && W % bs))
      return c.fail("height and width must be divisible by blocksize");
    shape = {N, scaled(C, bs * bs, 1), scaled(H, 1, bs), scaled(W, 1, bs)};
  }
  c.setOutput(0,
              c.b.create<DepthSpaceOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0),
                                       c.b.getI64IntegerAttr(bs), c.b.getBoolAttr(toSpace), c.b.getStringAttr(mode)));
  return success();
}

LogicalResult importGlobalMaxPool(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes, shape = {in.getDimSize(0), in.getDimSize(1)};
  for (int64_t i = 2; i < in.getRank(); ++i) {
    axes.push_back(i);
    shape.push_back(1);
  }
  c.setOutput(0, c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0), Value(),
                                      c.b.getStringAttr("max"), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(true)));
  return success();
}

/// v4f.moment_norm over `axes` with the optional per-channel scale and bias.
LogicalResult momentNorm(NodeContext &c, ArrayRef<int64_t> axes, float eps, bool withScale) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f) || isStorageOnlyType(f)) return c.fail("input must be a float type");
  Value scale, bias;
  if (withScale) {
    scale = c.input(1), bias = c.input(2);
    for (size_t i : {1, 2}) {
      auto t = c.inputType(i);
      if (t.getElementType() != f) return c.fail("scale and bias must have the input's element type");
      bool ok = t.getRank() >= 1 &&
                (t.getDimSize(0) == kDyn || in.getDimSize(1) == kDyn || t.getDimSize(0) == in.getDimSize(1));
      for (int64_t d = 1; d < t.getRank(); ++d) ok = ok && t.getDimSize(d) == 1;
      if (!ok) return c.fail("scale and bias must have C elements");
    }
  }
  c.setOutput(0, c.b.create<MomentNormOp>(c.loc, in, c.input(0), scale, bias, c.b.getDenseI64ArrayAttr(axes),
                                          c.b.getF32FloatAttr(eps)));
  return success();
}

LogicalResult importInstanceNorm(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() < 3) return c.fail("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < in.getRank(); ++i) axes.push_back(i);
  return momentNorm(c, axes, c.attrs.getFloat("epsilon", 1e-5f), true);
}

LogicalResult importMVN(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : c.attrs.getInts("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank) return c.fail("axis out of range");
    axes.push_back(a < 0 ? a + rank : a);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return momentNorm(c, axes, 1e-9f, false);
}

LogicalResult importEyeLike(NodeContext &c) {
  auto in = c.inputType(0);
  if (in.getRank() != 2) return c.fail("input must be a 2-D tensor");
  Type et = in.getElementType();
  if (c.attrs.has("dtype")) {
    et = importElementType(c.g.ctx, int32_t(c.attrs.getInt("dtype", 1)));
    if (!et || isStorageOnlyType(et)) return c.fail("unsupported dtype");
  }
  int64_t rows = in.getDimSize(0), cols = in.getDimSize(1), k = c.attrs.getInt("k", 0);
  if (!in.hasStaticShape()) {
    // Dims known only at run time: (j - i == k) over a column of row
    // indices [R, 1] and a row of column indices [1, C].
    BuildContext bc(c.b, c.loc);
    auto i64 = c.b.getI64Type();
    auto scalar = [&](int64_t v) {
      return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
    };
    auto indices = [&](int64_t axis) -> FailureOr<Value> {
      Value n = dimOf(bc, c.input(0), axis);
      Value r = c.b.create<RangeOp>(c.loc, RankedTensorType::get({in.getDimSize(axis)}, i64), scalar(0),
                                    reshapeTo(bc, n, {}), scalar(1));
      Value one = dimConstant(bc, 1);
      return reshapeToDims(bc, r, axis == 0 ? SmallVector<Value>{n, one} : SmallVector<Value>{one, n});
    };
    auto ri = indices(0), ci = indices(1);
    if (failed(ri) || failed(ci)) return c.fail(bc.error);
    auto eye = buildElementwise(c, {*ri, *ci}, et, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value d = b.create<arith::SubIOp>(l, a[1], a[0]);
      Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, d,
                                          b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(k)));
      return castScalar(b, l, hit, b.getI1Type(), et);
    });
    if (failed(eye)) return failure();
    c.setOutput(0, *eye);
    return success();
  }
  auto type = RankedTensorType::get({rows, cols}, et);
  std::vector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      bool one = j - i == k;
      if (llvm::isa<FloatType>(et))
        values.push_back(FloatAttr::get(et, one ? 1.0 : 0.0));
      else
        values.push_back(IntegerAttr::get(et, one ? 1 : 0));
    }
  c.setConstantOutput(0, DenseElementsAttr::get(type, values));
  return success();
}

LogicalResult importLpNormalization(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f) || isStorageOnlyType(f)) return c.fail("input must be a float type");
  int64_t rank = in.getRank(), axis = c.attrs.getInt("axis", -1), p = c.attrs.getInt("p", 2);
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  if (p != 1 && p != 2) return c.fail("p must be 1 or 2");
  c.setOutput(0, c.b.create<LpNormOp>(c.loc, in, c.input(0), c.b.getI64IntegerAttr(axis), c.b.getI64IntegerAttr(p)));
  return success();
}

/// GroupNormalization: per-channel (opset 21) or per-group (opset 18) scale
/// and bias.
LogicalResult importGroupNorm(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!f.isF32()) return c.fail("input must be float32");
  int64_t rank = in.getRank(), groups = c.attrs.getInt("num_groups", 0);
  if (rank < 3) return c.fail("input must have rank >= 3");
  // The channel and spatial dims may be known only at run time.
  int64_t C = in.getDimSize(1);
  if (groups <= 0 || (C != kDyn && C % groups)) return c.fail("num_groups must divide the channel count");
  auto st = c.inputType(1), bt = c.inputType(2);
  if (st.getElementType() != f || bt.getElementType() != f) return c.fail("scale and bias must be float32");
  auto isVector = [](RankedTensorType t) { // elements along dim 0, the others 1
    if (t.getRank() < 1) return false;
    for (int64_t d = 1; d < t.getRank(); ++d)
      if (t.getDimSize(d) != 1) return false;
    return true;
  };
  if (!isVector(st) || !isVector(bt)) return c.fail("scale and bias must be vectors");
  int64_t paramSize = st.getDimSize(0);
  if (paramSize == kDyn) paramSize = bt.getDimSize(0);
  // A size known only at run time: per group before opset 21 (the spec's
  // [num_groups]), per channel from 21.
  bool perGroup = paramSize == kDyn ? c.opset < 21 : paramSize == groups && (c.opset < 21 || groups == C);
  if (!perGroup && paramSize != kDyn && C != kDyn && paramSize != C)
    return c.fail("scale and bias must have C (or num_groups) elements");
  c.setOutput(0, c.b.create<GroupNormOp>(c.loc, in, c.input(0), c.input(1), c.input(2), c.b.getI64IntegerAttr(groups),
                                         c.b.getF32FloatAttr(c.attrs.getFloat("epsilon", 1e-5f)),
                                         c.b.getBoolAttr(perGroup)));
  return success();
}

LogicalResult importLRN(NodeContext &c) {
  auto in = c.inputType(0);
  if (!in.getElementType().isF32()) return c.fail("input must be float32");
  int64_t rank = in.getRank(), size = c.attrs.getInt("size", 0);
  if (rank < 3) return c.fail("input must have rank >= 3");
  if (size <= 0) return c.fail("size must be positive");
  c.setOutput(0, c.b.create<LRNOp>(c.loc, in, c.input(0), c.b.getI64IntegerAttr(size),
                                   c.b.getF32FloatAttr(c.attrs.getFloat("alpha", 1e-4f)),
                                   c.b.getF32FloatAttr(c.attrs.getFloat("beta", 0.75f)),
                                   c.b.getF32FloatAttr(c.attrs.getFloat("bias", 1.0f))));
  return success();
}

/// RotaryEmbedding: the checks that need the node; v4f-decompose-rotary
/// builds the rotation.
LogicalResult importRotaryEmbedding(NodeContext &c) {
  auto in = c.inputType(0);
  Type f = in.getElementType();
  if (!llvm::isa<FloatType>(f) || isStorageOnlyType(f)) return c.fail("input must be float32, float16 or float64");
  // Dims may be known only at run time (kDyn): the checks below compare the
  // known ones; v4f-decompose-rotary's views check the others at run time.
  int64_t rank = in.getRank(), heads = c.attrs.getInt("num_heads", 0);
  int64_t B = in.getDimSize(0), S, D;
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDyn || b == kDyn; };
  if (rank == 4) {
    S = in.getDimSize(2), D = in.getDimSize(3);
  } else if (rank == 3) {
    if (heads <= 0 || (!in.isDynamicDim(2) && in.getDimSize(2) % heads))
      return c.fail("3-D input needs num_heads dividing the hidden size");
    S = in.getDimSize(1), D = in.isDynamicDim(2) ? kDyn : in.getDimSize(2) / heads;
  } else {
    return c.fail("input must be 3-D or 4-D");
  }
  int64_t R = c.attrs.getInt("rotary_embedding_dim", 0);
  if (R != 0 && (R < 2 || (D != kDyn && R > D) || R % 2))
    return c.fail("rotary_embedding_dim must be even and at most the head size");
  if (R == 0 && D != kDyn && (D < 2 || D % 2))
    return c.fail("rotary_embedding_dim must be even and at most the head size");
  int64_t half = R ? R / 2 : D == kDyn ? kDyn : D / 2;
  Value positions = c.hasInput(3) ? c.input(3) : Value();
  if (positions) {
    Type pt = c.inputType(3).getElementType();
    if (!pt.isSignlessInteger(32) && !pt.isSignlessInteger(64)) return c.fail("position_ids must be int32 or int64");
  }
  for (size_t i : {1, 2}) {
    auto ct = c.inputType(i);
    if (ct.getElementType() != f) return c.fail("cos_cache and sin_cache must have the input's element type");
    SmallVector<int64_t> given(ct.getShape());
    if (positions) {
      if (ct.getRank() != 2) return c.fail("with position_ids the caches must be 2-D [max_position, dim/2]");
      auto pt = c.inputType(3);
      given.assign(pt.getShape().begin(), pt.getShape().end());
      given.push_back(ct.getDimSize(1));
    }
    if (given.size() != 3 || !agree(given[0], B) || !agree(given[1], S) || !agree(given[2], half))
      return c.fail("the caches must give [batch, sequence, rotary_embedding_dim / 2]");
  }
  c.setOutput(0, c.b.create<RotaryEmbeddingOp>(c.loc, in, c.input(0), c.input(1), c.input(2), positions,
                                               c.b.getI64IntegerAttr(R), c.b.getI64IntegerAttr(heads),
                                               c.b.getBoolAttr(c.attrs.getInt("interleaved", 0) != 0)));
  return success();
}

/// Hann / Hamming / Blackman windows of a run-time length.
LogicalResult importWindow(NodeContext &c) {
  auto st = c.inputType(0);
  Type it = st.getElementType();
  if (!st.hasStaticShape() || st.getNumElements() != 1 || !(it.isSignlessInteger(32) || it.isSignlessInteger(64)))
    return c.fail("size must be an int32 or int64 scalar");
  Type out = importElementType(c.g.ctx, int32_t(c.attrs.getInt("output_datatype", 1)));
  if (!out || !out.isIntOrFloat() || isStorageOnlyType(out)) return c.fail("unsupported output_datatype");
  std::string op = c.node.op_type();
  StringRef kind = op == "HannWindow" ? "hann" : op == "HammingWindow" ? "hamming" : "blackman";
  c.setOutput(0, c.b.create<WindowOp>(c.loc, RankedTensorType::get({kDyn}, out), c.input(0), c.b.getStringAttr(kind),
                                      c.b.getBoolAttr(c.attrs.getInt("periodic", 1) != 0)));
  return success();
}

/// DFT with its axis and length resolved from the (constant) inputs.
LogicalResult importDFT(NodeContext &c) {
  auto in = c.inputType(0);
  if (!in.getElementType().isF32()) return c.fail("input must be float32");
  int64_t rank = in.getRank(), comps = in.getDimSize(rank - 1);
  if (rank >= 1 && in.isDynamicDim(rank - 1)) return c.fail("the last dim (1: real, 2: complex) must be static");
  if (rank < 2 || (comps != 1 && comps != 2)) return c.fail("the last dim must be 1 (real) or 2 (complex)");
  int64_t axis;
  if (c.opset >= 20) {
    axis = -2;
    if (c.hasInput(2)) {
      auto a = c.constantInts(2);
      if (!a || a->size() != 1) return c.fail("axis must be a constant (a run-time axis is not supported)");
      axis = (*a)[0];
    }
  } else {
    axis = c.attrs.getInt("axis", 1);
  }
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  if (axis == rank - 1) return c.fail("axis cannot be the complex dim");
  if (in.isDynamicDim(axis))
    return c.fail("the transformed dim (axis " + std::to_string(axis) +
                  ") must be static (the other dims may be known only at run time)");
  bool inverse = c.attrs.getInt("inverse", 0) != 0, onesided = c.attrs.getInt("onesided", 0) != 0;
  if (onesided && !inverse && comps != 1) return c.fail("a one-sided forward DFT needs a real input");
  int64_t N = in.getDimSize(axis), L;
  if (c.hasInput(1)) {
    auto l = c.constantInts(1);
    if (!l || l->size() != 1 || (*l)[0] <= 0) return c.fail("dft_length must be a positive constant");
    L = (*l)[0];
  } else {
    L = inverse && onesided ? 2 * (N - 1) : N;
  }
  if (L <= 0) return c.fail("the DFT length must be positive");
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] = inverse ? L : (onesided ? L / 2 + 1 : L);
  shape[rank - 1] = inverse && onesided ? 1 : 2;
  c.setOutput(0, c.b.create<DFTOp>(c.loc, RankedTensorType::get(shape, in.getElementType()), c.input(0),
                                   c.b.getI64IntegerAttr(axis), c.b.getI64IntegerAttr(L), c.b.getBoolAttr(inverse),
                                   c.b.getBoolAttr(onesided)));
  return success();
}

/// STFT of a real signal with constant frame_step and frame_length.
LogicalResult importSTFT(NodeContext &c) {
  auto in = c.inputType(0);
  Value signal = c.input(0);
  if (!in.getElementType().isF32()) return c.fail("signal must be float32");
  if (in.getRank() == 2) {
    // [batch, length] (as ONNX Runtime reads it): a real signal.
    int64_t B = in.getDimSize(0), N = in.getDimSize(1);
    signal = reshapeTo(c, signal, {B, N, 1}, {B == kDyn ? 0 : -1, N == kDyn ? 1 : -1, -1});
    in = typeOf(signal);
  }
  if (in.getRank() != 3 || in.getDimSize(2) != 1)
    return c.fail("signal must be a real [batch, length, 1] or [batch, length] (a complex signal is not "
                  "supported yet)");
  auto step = c.constantInts(1);
  if (!step || step->size() != 1 || (*step)[0] <= 0) return c.fail("frame_step must be a positive constant");
  bool hasWindow = c.hasInput(2);
  int64_t L = -1;
  if (c.hasInput(3)) {
    auto l = c.constantInts(3);
    if (!l || l->size() != 1 || (*l)[0] <= 0) return c.fail("frame_length must be a positive constant");
    L = (*l)[0];
  }
  if (hasWindow) {
    auto wt = c.inputType(2);
    if (wt.getElementType() != in.getElementType() || wt.getRank() != 1)
      return c.fail("window must be a 1-D float32 tensor");
    if (L < 0) L = wt.getDimSize(0);
    if (L == kDyn) return c.fail("the window length must be static when frame_length is not given");
    if (!wt.isDynamicDim(0) && wt.getDimSize(0) != L) return c.fail("window and frame_length differ");
  }
  if (L <= 0) return c.fail("frame_length (or a window) is required");
  if (L > 16384) return c.fail("frame_length above 16384 is not supported");
  bool onesided = c.attrs.getInt("onesided", 1) != 0;
  int64_t N = in.getDimSize(1), s = (*step)[0];
  int64_t frames = N == kDyn ? kDyn : (N >= L ? (N - L) / s + 1 : 0);
  if (frames == 0) return c.fail("the signal is shorter than one frame");
  auto type = RankedTensorType::get({in.getDimSize(0), frames, onesided ? L / 2 + 1 : L, 2}, in.getElementType());
  c.setOutput(0, c.b.create<STFTOp>(c.loc, type, signal, hasWindow ? c.input(2) : Value(), c.b.getI64IntegerAttr(s),
                                    c.b.getI64IntegerAttr(L), c.b.getBoolAttr(onesided)));
  return success();
}

} // namespace

void addCompositeImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["DepthToSpace"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["SpaceToDepth"] = {1, kMaxOpset, noCheck, importDepthSpace};
  t["GlobalMaxPool"] = {1, kMaxOpset, noCheck, importGlobalMaxPool};
  t["InstanceNormalization"] = {6, kMaxOpset, noCheck, importInstanceNorm};
  t["MeanVarianceNormalization"] = {9, kMaxOpset, noCheck, importMVN};
  t["EyeLike"] = {9, kMaxOpset, noCheck, importEyeLike};
  t["LpNormalization"] = {1, kMaxOpset, noCheck, importLpNormalization};
  t["GroupNormalization"] = {18, kMaxOpset, noCheck, importGroupNorm};
  t["LRN"] = {1, kMaxOpset, noCheck, importLRN};
  t["RotaryEmbedding"] = {23, kMaxOpset, noCheck, importRotaryEmbedding};
  t["HannWindow"] = {17, kMaxOpset, noCheck, importWindow};
  t["DFT"] = {17, kMaxOpset, noCheck, importDFT};
  t["STFT"] = {17, kMaxOpset, noCheck, importSTFT};
  t["HammingWindow"] = {17, kMaxOpset, noCheck, importWindow};
  t["BlackmanWindow"] = {17, kMaxOpset, noCheck, importWindow};
}

} // namespace v4f
