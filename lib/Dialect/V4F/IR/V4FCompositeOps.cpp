//===- V4FCompositeOps.cpp - verifiers of the ops kept whole until decomposed ===//
//
// Gemm, Gelu and the quantization ops import whole (see the "Composite ops"
// section of V4FOps.td); these are their verifiers and shape rules, plus the
// helpers the importer shares to report the same problems at import.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Builders.h"

#include <cctype>
#include <map>

using namespace mlir;
using namespace v4f;

static constexpr int64_t kDyn = ShapedType::kDynamic;

bool v4f::isFloat8Type(Type t) {
  return llvm::isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType>(t);
}

std::optional<std::pair<int64_t, int64_t>> v4f::quantizedIntRange(Type t) {
  auto it = llvm::dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() == 1 || it.getWidth() > 16) return std::nullopt;
  unsigned w = it.getWidth();
  if (it.isUnsigned()) return std::make_pair<int64_t, int64_t>(0, (int64_t(1) << w) - 1);
  return std::make_pair(-(int64_t(1) << (w - 1)), (int64_t(1) << (w - 1)) - 1);
}

std::string v4f::quantParamShapeError(RankedTensorType x, RankedTensorType t, int64_t axis, int64_t blockSize,
                                      StringRef whatRef) {
  std::string what = whatRef.str();
  if (t.hasStaticShape() && t.getNumElements() == 1) return "";
  if (axis < 0 || axis >= x.getRank())
    return "axis is out of range for the rank-" + std::to_string(x.getRank()) + " input (" + what +
           " is not a single value)";
  int64_t rank = x.getRank(), D = x.getDimSize(axis);
  if (blockSize > 0) {
    if (t.getRank() != rank)
      return "blocked quantization: " + what + " must have the input's rank (" + std::to_string(rank) + ")";
    if (D == kDyn) return "blocked quantization needs a static input dim along the axis";
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && (t.getDimSize(d) == kDyn || t.getDimSize(d) != x.getDimSize(d)))
        return "blocked quantization: " + what + " must match the input's static shape except along axis " +
               std::to_string(axis);
    int64_t blocks = (D + blockSize - 1) / blockSize;
    if (t.getDimSize(axis) != blocks)
      return "blocked quantization: " + what + " has " + std::to_string(t.getDimSize(axis)) + " blocks along axis " +
             std::to_string(axis) + ", expected ceil(" + std::to_string(D) + " / " + std::to_string(blockSize) +
             ") = " + std::to_string(blocks);
    return "";
  }
  if (t.getRank() != 1)
    return what + " must be a scalar or a 1-D tensor (per-axis quantization) unless block_size is set";
  int64_t n = t.getDimSize(0);
  if (D != kDyn && n != kDyn && D != n)
    return what + " has " + std::to_string(n) + " elements but the input has " + std::to_string(D) + " along axis " +
           std::to_string(axis);
  return "";
}

LogicalResult v4f::matmulResultShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b, SmallVectorImpl<int64_t> &out) {
  if (a.empty() || b.empty()) return failure();
  SmallVector<int64_t> sa(a), sb(b);
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA) sa.insert(sa.begin(), 1);
  if (vecB) sb.push_back(1);
  int64_t ka = sa.back(), kb = sb[sb.size() - 2];
  if (ka != kDyn && kb != kDyn && ka != kb) return failure();
  if (failed(broadcastShapes(ArrayRef(sa).drop_back(2), ArrayRef(sb).drop_back(2), out))) return failure();
  if (!vecA) out.push_back(sa[sa.size() - 2]);
  if (!vecB) out.push_back(sb.back());
  return success();
}

/// One term of an Einsum equation: letters, with -1 where "..." stood.
static std::string parseEinsumTerm(StringRef term, SmallVectorImpl<int> &labels) {
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (std::isalpha((unsigned char)ch)) {
      labels.push_back((int)ch);
    } else if (ch == '.') {
      if (ellipsis || !term.substr(i).starts_with("..."))
        return "malformed ellipsis in Einsum term '" + term.str() + "'";
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
    } else {
      return std::string("unexpected character '") + ch + "' in the Einsum equation";
    }
  }
  return "";
}

std::string v4f::parseEinsumEquation(StringRef equation, ArrayRef<ArrayRef<int64_t>> shapes, EinsumEquation &out) {
  std::string eq;
  for (char ch : equation)
    if (!std::isspace((unsigned char)ch)) eq.push_back(ch);
  if (eq.empty()) return "the equation is empty";
  size_t arrow = eq.find("->");
  SmallVector<StringRef> terms;
  StringRef(eq).substr(0, arrow).split(terms, ',');
  if (terms.size() != shapes.size())
    return "the equation has " + std::to_string(terms.size()) + " input term(s) but the node has " +
           std::to_string(shapes.size()) + " input(s)";
  int64_t ellipsisRank = 0;
  SmallVector<SmallVector<int>> parsed(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    if (std::string e = parseEinsumTerm(terms[k], parsed[k]); !e.empty()) return e;
    int64_t rank = shapes[k].size(), letters = llvm::count_if(parsed[k], [](int l) { return l >= 0; });
    bool ell = letters != (int64_t)parsed[k].size();
    if (ell ? letters > rank : letters != rank)
      return "term '" + terms[k].str() + "' does not match input " + std::to_string(k) + "'s rank " +
             std::to_string(rank);
    if (ell) ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  // Right-align the ellipsis dims across operands.
  out.operandLabels.clear();
  for (size_t k = 0; k < terms.size(); ++k) {
    int64_t e = shapes[k].size() - llvm::count_if(parsed[k], [](int l) { return l >= 0; });
    SmallVector<int> labels;
    for (int l : parsed[k]) {
      if (l >= 0) {
        labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < e; ++j) labels.push_back(kEinsumEllipsisLabel + (int)(ellipsisRank - e + j));
    }
    out.operandLabels.push_back(labels);
  }
  // Sizes: a label repeated in one operand spans equal dims; across operands
  // dims agree or are 1 (broadcast).
  // A dim known only at run time (kDynamic) agrees with any; the label's
  // size is then the static one unless that is 1 (it may broadcast).
  std::map<int, int64_t> sizes;
  for (size_t k = 0; k < terms.size(); ++k) {
    std::map<int, int64_t> own;
    for (auto [i, l] : llvm::enumerate(out.operandLabels[k])) {
      int64_t n = shapes[k][i];
      if (own.count(l) && own[l] != n && own[l] != kDyn && n != kDyn)
        return "a repeated Einsum label spans dims of different sizes";
      own[l] = own.count(l) && own[l] != kDyn ? own[l] : n;
      auto [it, fresh] = sizes.try_emplace(l, n);
      if (fresh) continue;
      int64_t &s = it->second;
      if (s == kDyn || n == kDyn) {
        int64_t known = s == kDyn ? n : s;
        s = known == kDyn || known == 1 ? kDyn : known;
        continue;
      }
      if (s != n && s != 1 && n != 1) return "Einsum dims labelled alike have different sizes";
      s = std::max(s, n);
    }
  }
  out.outputLabels.clear();
  if (arrow != std::string::npos) {
    SmallVector<int> labels;
    if (std::string e = parseEinsumTerm(StringRef(eq).substr(arrow + 2), labels); !e.empty()) return e;
    for (int l : labels) {
      if (l < 0) {
        for (int64_t j = 0; j < ellipsisRank; ++j) out.outputLabels.push_back(kEinsumEllipsisLabel + (int)j);
        continue;
      }
      if (llvm::is_contained(out.outputLabels, l)) return std::string("output label '") + (char)l + "' is repeated";
      if (!sizes.count(l)) return std::string("output label '") + (char)l + "' appears in no input";
      out.outputLabels.push_back(l);
    }
  } else {
    for (int64_t j = 0; j < ellipsisRank; ++j) out.outputLabels.push_back(kEinsumEllipsisLabel + (int)j);
    std::map<int, int> counts;
    for (const auto &labels : out.operandLabels)
      for (int l : labels)
        if (l < kEinsumEllipsisLabel) counts[l]++;
    for (auto [l, n] : counts)
      if (n == 1) out.outputLabels.push_back(l);
  }
  out.resultShape.clear();
  for (int l : out.outputLabels) out.resultShape.push_back(sizes.count(l) ? sizes[l] : 1);
  return "";
}

namespace {
bool isScaleType(Type t) { return t.isF16() || t.isF32() || t.isF64() || t.isBF16(); }
Type elementOf(Value v) { return llvm::cast<ShapedType>(v.getType()).getElementType(); }
RankedTensorType rankedOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
bool isSingleValue(Value v) {
  auto t = rankedOf(v);
  return t.hasStaticShape() && t.getNumElements() == 1;
}

/// Scale and zero point shapes of quantize / dequantize.
LogicalResult verifyQuantParams(Operation *op, RankedTensorType x, Value scale, Value zp, int64_t axis,
                                int64_t blockSize) {
  if (blockSize < 0) return op->emitOpError("block_size must be non-negative");
  if (axis < 0) return op->emitOpError("axis must be non-negative");
  for (auto [v, what] : {std::pair<Value, const char *>{scale, "scale"}, {zp, "zero point"}}) {
    if (!v) continue;
    std::string error = quantParamShapeError(x, rankedOf(v), axis, blockSize, what);
    if (!error.empty()) return op->emitOpError(error);
  }
  return success();
}

/// 8-bit integer operand check shared by the integer matmul / conv ops.
LogicalResult verify8Bit(Operation *op, Value v, StringRef name) {
  if (!elementOf(v).isInteger(8)) return op->emitOpError(name) << " must be int8 or uint8, got " << elementOf(v);
  return success();
}

LogicalResult verifyZeroPointType(Operation *op, Value zp, Value of, StringRef name) {
  if (zp && elementOf(zp) != elementOf(of))
    return op->emitOpError(name) << " must have element type " << elementOf(of) << ", got " << elementOf(zp);
  return success();
}

/// A zero point or scale that the decomposition broadcasts against `target`
/// (one value; with `rowsAsColumn` a 1-D one is per row, [M] -> [M, 1]; else
/// used as is).
LogicalResult verifyBroadcastParam(Operation *op, Value v, ArrayRef<int64_t> target, bool rowsAsColumn,
                                   StringRef name) {
  if (!v || isSingleValue(v)) return success();
  auto t = rankedOf(v);
  SmallVector<int64_t> shape(t.getShape()), out;
  if (t.getRank() == 1 && rowsAsColumn) shape.push_back(1);
  if (failed(broadcastShapes(target, shape, out)))
    return op->emitOpError(name) << " of type " << t << " does not broadcast where it is used";
  return success();
}

/// Window attributes, channels and the result shape of the integer convs.
LogicalResult verifyIntegerConv(Operation *op, RankedTensorType x, RankedTensorType w, ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, int64_t group,
                                RankedTensorType result) {
  if (x.getRank() != 4 || w.getRank() != 4) return op->emitOpError("expects rank-4 x and w (2-D convolution)");
  if (!w.hasStaticShape()) return op->emitOpError("w must have a static shape");
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return op->emitOpError("expects 2 strides, 2 dilations and 4 pads");
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d <= 0; }) || llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op->emitOpError("strides and dilations must be positive, pads non-negative");
  if (group <= 0 || w.getDimSize(0) % group != 0)
    return op->emitOpError("group ") << group << " does not divide the output channels";
  if (!x.isDynamicDim(1) && x.getDimSize(1) != w.getDimSize(1) * group)
    return op->emitOpError("input has ") << x.getDimSize(1) << " channels but w * group expects "
                                         << w.getDimSize(1) * group;
  SmallVector<int64_t> shape = {x.getDimSize(0), w.getDimSize(0)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(windowOutputSize(x.getDimSize(2 + i), w.getDimSize(2 + i), strides[i], dilations[i], pads[i],
                                     pads[2 + i], false));
  if (result.getShape() != ArrayRef<int64_t>(shape))
    return op->emitOpError("result shape must be ") << RankedTensorType::get(shape, result.getElementType());
  return success();
}

/// A per-output-channel parameter: one value or [M].
LogicalResult verifyChannelParam(Operation *op, Value v, int64_t channels, StringRef name) {
  if (!v || isSingleValue(v)) return success();
  auto t = rankedOf(v);
  if (t.getRank() != 1 || t.getDimSize(0) != channels)
    return op->emitOpError(name) << " must be a single value or have shape [" << channels << "]";
  return success();
}

LogicalResult verifyScales(Operation *op, ArrayRef<std::pair<Value, const char *>> scales) {
  for (auto [v, name] : scales)
    if (!isScaleType(elementOf(v))) return op->emitOpError(name) << " must be a float type, got " << elementOf(v);
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// gemm, gelu
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                       DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                       SmallVectorImpl<Type> &inferred) {
  GemmOp::Adaptor adaptor(operands, attrs, props, regions);
  auto a = llvm::dyn_cast<RankedTensorType>(adaptor.getA().getType());
  auto b = llvm::dyn_cast<RankedTensorType>(adaptor.getB().getType());
  if (!a || !b || a.getRank() != 2 || b.getRank() != 2) return emitOptionalError(loc, "gemm expects 2-D a and b");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0), n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  SmallVector<int64_t> shape = {m, n};
  // c refines the shape: a static dim of c fixes a dynamic M or N.
  if (auto c = adaptor.getC(); c && !adaptor.getBeta().isZero()) {
    SmallVector<int64_t> withC;
    if (failed(broadcastShapes(shape, llvm::cast<RankedTensorType>(c.getType()).getShape(), withC)) ||
        withC.size() != 2)
      return emitOptionalError(loc, "gemm: C is not broadcastable to [M, N]");
    shape = withC;
  }
  inferred.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = getA().getType(), b = getB().getType();
  int64_t ka = a.getDimSize(getTransA() ? 0 : 1), kb = b.getDimSize(getTransB() ? 1 : 0);
  if (ka != kDyn && kb != kDyn && ka != kb) return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  if (getC() && !getBeta().isZero()) {
    SmallVector<int64_t> shape;
    if (failed(broadcastShapes(getType().getShape(), rankedOf(getC()).getShape(), shape)) || shape.size() != 2)
      return emitOpError("C is not broadcastable to [M, N]");
  }
  return success();
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"") << getApproximate() << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// quantize, dequantize
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  auto x = rankedOf(getInput());
  Type xe = x.getElementType(), se = elementOf(getScale()), out = elementOf(getResult());
  if (!isScaleType(xe) && !xe.isInteger(32))
    return emitOpError("input must be float16, bfloat16, float32, float64 or int32, got ") << xe;
  if (!isScaleType(se)) return emitOpError("scale must be a float type, got ") << se;
  if (!isFloat8Type(out) && !quantizedIntRange(out))
    return emitOpError("result element type must be a 2/4/8/16-bit integer or float8, got ") << out;
  if (rankedOf(getResult()).getShape() != x.getShape()) return emitOpError("result must have the input's shape");
  if (getZeroPoint() && elementOf(getZeroPoint()) != out)
    return emitOpError("zero point must have the result's element type");
  if (auto p = getPrecision(); p && !isScaleType(*p)) return emitOpError("precision must be a float type");
  return verifyQuantParams(*this, x, getScale(), getZeroPoint(), getAxis(), getBlockSize());
}

LogicalResult DequantizeOp::verify() {
  auto x = rankedOf(getInput());
  Type xe = x.getElementType(), se = elementOf(getScale()), out = elementOf(getResult());
  if (!isFloat8Type(xe) && !quantizedIntRange(xe) && !xe.isInteger(32))
    return emitOpError("input must be a 2/4/8/16/32-bit integer or float8, got ") << xe;
  if (!isScaleType(se)) return emitOpError("scale must be a float type, got ") << se;
  if (!isScaleType(out)) return emitOpError("result element type must be a float type, got ") << out;
  if (rankedOf(getResult()).getShape() != x.getShape()) return emitOpError("result must have the input's shape");
  if (getZeroPoint() && elementOf(getZeroPoint()) != xe)
    return emitOpError("zero point must have the input's element type");
  return verifyQuantParams(*this, x, getScale(), getZeroPoint(), getAxis(), getBlockSize());
}

//===----------------------------------------------------------------------===//
// Integer matmul / conv
//===----------------------------------------------------------------------===//

/// Operands and result shape of matmul_integer / qlinear_matmul.
static LogicalResult verifyIntegerMatMul(Operation *op, Value a, Value b, Value za, Value zb, Value result) {
  if (failed(verify8Bit(op, a, "a")) || failed(verify8Bit(op, b, "b")) ||
      failed(verifyZeroPointType(op, za, a, "a_zero_point")) || failed(verifyZeroPointType(op, zb, b, "b_zero_point")))
    return failure();
  SmallVector<int64_t> shape;
  if (failed(matmulResultShape(rankedOf(a).getShape(), rankedOf(b).getShape(), shape)))
    return op->emitOpError("a and b do not multiply: ") << a.getType() << " x " << b.getType();
  if (rankedOf(result).getShape() != ArrayRef<int64_t>(shape))
    return op->emitOpError("result shape must be ") << RankedTensorType::get(shape, elementOf(result));
  bool rows = rankedOf(a).getRank() >= 2;
  if (failed(verifyBroadcastParam(op, za, rankedOf(a).getShape(), rows, "a_zero_point"))) return failure();
  return verifyBroadcastParam(op, zb, rankedOf(b).getShape(), false, "b_zero_point");
}

LogicalResult MatMulIntegerOp::verify() {
  return verifyIntegerMatMul(*this, getA(), getB(), getAZeroPoint(), getBZeroPoint(), getResult());
}

LogicalResult QLinearMatMulOp::verify() {
  if (failed(verifyIntegerMatMul(*this, getA(), getB(), getAZeroPoint(), getBZeroPoint(), getResult())))
    return failure();
  if (failed(verifyScales(*this, {{getAScale(), "a_scale"}, {getBScale(), "b_scale"}, {getYScale(), "y_scale"}})))
    return failure();
  Type out = getYZeroPoint() ? elementOf(getYZeroPoint()) : elementOf(getA());
  if (elementOf(getResult()) != out) return emitOpError("result element type must be ") << out;
  if (!out.isInteger(8)) return emitOpError("y_zero_point must be int8 or uint8");
  // a's and y's scales (and y's zero point) are per row of the result, b's per column.
  ArrayRef<int64_t> shape = rankedOf(getResult()).getShape();
  bool rows = rankedOf(getA()).getRank() >= 2;
  if (failed(verifyBroadcastParam(*this, getAScale(), shape, rows, "a_scale")) ||
      failed(verifyBroadcastParam(*this, getBScale(), shape, false, "b_scale")) ||
      failed(verifyBroadcastParam(*this, getYScale(), shape, rows, "y_scale")) ||
      failed(verifyBroadcastParam(*this, getYZeroPoint(), shape, rows, "y_zero_point")))
    return failure();
  return success();
}

LogicalResult ConvIntegerOp::verify() {
  if (failed(verify8Bit(*this, getX(), "x")) || failed(verify8Bit(*this, getW(), "w")) ||
      failed(verifyZeroPointType(*this, getXZeroPoint(), getX(), "x_zero_point")) ||
      failed(verifyZeroPointType(*this, getWZeroPoint(), getW(), "w_zero_point")))
    return failure();
  auto w = rankedOf(getW());
  if (failed(verifyIntegerConv(*this, rankedOf(getX()), w, getStrides(), getDilations(), getPads(), getGroup(),
                               getResult().getType())))
    return failure();
  if (getXZeroPoint() && !isSingleValue(getXZeroPoint())) return emitOpError("x_zero_point must be a single value");
  return verifyChannelParam(*this, getWZeroPoint(), w.getDimSize(0), "w_zero_point");
}

LogicalResult QLinearConvOp::verify() {
  if (failed(verify8Bit(*this, getX(), "x")) || failed(verify8Bit(*this, getW(), "w")) ||
      failed(verifyZeroPointType(*this, getXZeroPoint(), getX(), "x_zero_point")) ||
      failed(verifyZeroPointType(*this, getWZeroPoint(), getW(), "w_zero_point")))
    return failure();
  if (failed(verifyScales(*this, {{getXScale(), "x_scale"}, {getWScale(), "w_scale"}, {getYScale(), "y_scale"}})))
    return failure();
  Type out = getYZeroPoint() ? elementOf(getYZeroPoint()) : elementOf(getX());
  if (elementOf(getResult()) != out) return emitOpError("result element type must be ") << out;
  if (!out.isInteger(8)) return emitOpError("y_zero_point must be int8 or uint8");
  auto w = rankedOf(getW());
  if (failed(verifyIntegerConv(*this, rankedOf(getX()), w, getStrides(), getDilations(), getPads(), getGroup(),
                               rankedOf(getResult()))))
    return failure();
  for (Value v : {getXScale(), getXZeroPoint(), getYScale(), getYZeroPoint()})
    if (v && !isSingleValue(v)) return emitOpError("x's and y's scales and zero points must be single values");
  if (failed(verifyChannelParam(*this, getWScale(), w.getDimSize(0), "w_scale")) ||
      failed(verifyChannelParam(*this, getWZeroPoint(), w.getDimSize(0), "w_zero_point")))
    return failure();
  if (getBias()) {
    auto bt = rankedOf(getBias());
    if (!bt.getElementType().isInteger(32) || bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must be an int32 tensor of shape [") << w.getDimSize(0) << "]";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

LogicalResult EinsumOp::verify() {
  if (getInputs().empty()) return emitOpError("needs at least one input");
  Type io = elementOf(getInputs()[0]);
  if (!llvm::isa<FloatType>(io)) return emitOpError("inputs must have a float element type, got ") << io;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : getInputs()) {
    if (elementOf(v) != io) return emitOpError("inputs must share one element type");
    shapes.push_back(rankedOf(v).getShape());
  }
  EinsumEquation eq;
  if (std::string error = parseEinsumEquation(getEquation(), shapes, eq); !error.empty()) return emitOpError(error);
  auto expected = RankedTensorType::get(eq.resultShape, io);
  if (getResult().getType() != expected) return emitOpError("result type must be ") << expected;
  return success();
}
