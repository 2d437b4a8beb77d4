//===- V4FDataMovementOps.cpp - verifiers of shape and data-movement ops ---===//
//
// Reshape, reductions over run-time axes, split, gather/scatter, top_k,
// shape values (shape, expand, unsqueeze, slice), transpose, concat, pad ...
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "OpHelpers.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace v4f;
using namespace v4f::detail;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType()) return emitOpError("element type must not change");
  auto src = getDimSources();
  if ((int64_t)src.size() != out.getRank()) return emitOpError("dim_sources must have one entry per result dim");
  if (getShape()) {
    auto shape = llvm::cast<RankedTensorType>(getShape().getType());
    if (shape.getRank() != 1 || shape.getDimSize(0) != out.getRank())
      return emitOpError("shape must be a 1-D tensor with one value per result dim");
    if (llvm::any_of(src, [](int64_t s) { return s != -1; }))
      return emitOpError("dim_sources must be all -1 with a shape operand");
    return success();
  }
  int64_t freeDyn = 0;
  for (int64_t i = 0; i < out.getRank(); ++i) {
    if (src[i] >= in.getRank() || src[i] < -1) return emitOpError("dim_sources entry out of range");
    if (src[i] >= 0 && in.getDimSize(src[i]) != out.getDimSize(i))
      return emitOpError("result dim ") << i << " must equal input dim " << src[i];
    if (src[i] < 0 && out.isDynamicDim(i)) ++freeDyn;
  }
  if (freeDyn > 1) return emitOpError("at most one result dim may be inferred");
  if (in.hasStaticShape() && out.hasStaticShape() && in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ") << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

static LogicalResult verifyIndexVector(Operation *op, Value v, StringRef name, int64_t *length) {
  auto t = llvm::cast<RankedTensorType>(v.getType());
  if (t.getRank() != 1 || t.isDynamicDim(0)) return op->emitOpError(name) << " must be a 1-D tensor of static length";
  *length = t.getDimSize(0);
  return success();
}

LogicalResult ReduceOp::verify() {
  static const char *kinds[] = {"sum", "mean", "max",     "min",         "prod",
                                "l1",  "l2",   "log_sum", "log_sum_exp", "sum_square"};
  if (!llvm::is_contained(kinds, getKind())) return emitOpError("unknown reduction kind '") << getKind() << "'";
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  if (getType().getElementType() != in.getElementType()) return emitOpError("element type must not change");
  if (getAxesTensor()) {
    int64_t n;
    if (failed(verifyIndexVector(*this, getAxesTensor(), "axes_tensor", &n))) return failure();
    int64_t want = getKeepdims() ? in.getRank() : in.getRank() - n;
    if (getType().getRank() != want) return emitOpError("result rank must be ") << want;
    return success();
  }
  int64_t prev = -1;
  for (int64_t a : getAxes()) {
    if (a < 0 || a >= in.getRank()) return emitOpError("axis ") << a << " out of range";
    if (a <= prev) return emitOpError("axes must be sorted and unique");
    prev = a;
  }
  int64_t want = getKeepdims() ? in.getRank() : in.getRank() - (int64_t)getAxes().size();
  if (getType().getRank() != want) return emitOpError("result rank must be ") << want;
  return success();
}

LogicalResult ArgReduceOp::verify() {
  if (getKind() != "max" && getKind() != "min") return emitOpError("kind must be max or min");
  int64_t rank = llvm::cast<RankedTensorType>(getInput().getType()).getRank();
  if (getAxis() < 0 || getAxis() >= rank) return emitOpError("axis out of range");
  if (getType().getRank() != (getKeepdims() ? rank : rank - 1)) return emitOpError("wrong result rank");
  return success();
}

LogicalResult SplitOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in.getRank()) return emitOpError("axis out of range");
  if (getParts().empty()) return emitOpError("needs at least one result");
  if (!getSplit() && getSizes().size() != getParts().size()) return emitOpError("sizes must have one entry per result");
  if (getSplit()) {
    int64_t n;
    if (failed(verifyIndexVector(*this, getSplit(), "split", &n))) return failure();
    if (n != (int64_t)getParts().size()) return emitOpError("split must have one value per result");
  }
  for (Value r : getParts())
    if (llvm::cast<RankedTensorType>(r.getType()).getRank() != in.getRank())
      return emitOpError("results must have the input's rank");
  return success();
}

LogicalResult GatherElementsOp::verify() {
  auto d = llvm::cast<RankedTensorType>(getData().getType());
  auto i = llvm::cast<RankedTensorType>(getIndices().getType());
  if (d.getRank() != i.getRank()) return emitOpError("data and indices must have the same rank");
  if (getAxis() < 0 || getAxis() >= d.getRank()) return emitOpError("axis out of range");
  if (getType().getShape() != i.getShape()) return emitOpError("result must have the shape of indices");
  return success();
}

/// Static dims must agree where both are known.
static bool dimsCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size()) return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (x != kDyn && y != kDyn && x != y) return false;
  return true;
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    return op->emitOpError("reduction must be none, add, mul, max or min");
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto d = llvm::cast<RankedTensorType>(getData().getType());
  auto i = llvm::cast<RankedTensorType>(getIndices().getType());
  auto u = llvm::cast<RankedTensorType>(getUpdates().getType());
  if (failed(verifyReduction(*this, getReduction()))) return failure();
  if (d.getRank() != i.getRank()) return emitOpError("data and indices must have the same rank");
  if (!dimsCompatible(i.getShape(), u.getShape())) return emitOpError("updates must have the shape of indices");
  if (u.getElementType() != d.getElementType()) return emitOpError("updates must have the element type of data");
  if (getAxis() < 0 || getAxis() >= d.getRank()) return emitOpError("axis out of range");
  for (int64_t k = 0; k < d.getRank(); ++k)
    if (k != getAxis() && !d.isDynamicDim(k) && !i.isDynamicDim(k) && i.getDimSize(k) > d.getDimSize(k))
      return emitOpError("indices dim ") << k << " exceeds the data dim";
  if (!dimsCompatible(getType().getShape(), d.getShape()) || getType().getElementType() != d.getElementType())
    return emitOpError("result must have the type of data");
  return success();
}

LogicalResult ScatterNDOp::verify() {
  auto d = llvm::cast<RankedTensorType>(getData().getType());
  auto i = llvm::cast<RankedTensorType>(getIndices().getType());
  auto u = llvm::cast<RankedTensorType>(getUpdates().getType());
  if (failed(verifyReduction(*this, getReduction()))) return failure();
  if (i.getRank() < 1 || i.isDynamicDim(i.getRank() - 1))
    return emitOpError("indices must have rank >= 1 and a static last dim");
  int64_t q = i.getDimSize(i.getRank() - 1);
  if (q < 1 || q > d.getRank()) return emitOpError("the index tuple length must be in [1, rank(data)]");
  SmallVector<int64_t> want(i.getShape().drop_back());
  llvm::append_range(want, d.getShape().drop_front(q));
  if (!dimsCompatible(u.getShape(), want))
    return emitOpError("updates must have shape indices.shape[:-1] + data.shape[q:]");
  if (u.getElementType() != d.getElementType()) return emitOpError("updates must have the element type of data");
  if (!dimsCompatible(getType().getShape(), d.getShape()) || getType().getElementType() != d.getElementType())
    return emitOpError("result must have the type of data");
  return success();
}

LogicalResult GatherNDOp::verify() {
  auto d = llvm::cast<RankedTensorType>(getData().getType());
  auto i = llvm::cast<RankedTensorType>(getIndices().getType());
  int64_t b = getBatchDims();
  if (i.getRank() < 1 || i.isDynamicDim(i.getRank() - 1))
    return emitOpError("indices must have rank >= 1 and a static last dim");
  if (b < 0 || b >= std::min(d.getRank(), i.getRank())) return emitOpError("batch_dims must be below both ranks");
  int64_t q = i.getDimSize(i.getRank() - 1);
  if (q < 1 || q > d.getRank() - b)
    return emitOpError("the index tuple length must be in [1, rank(data) - batch_dims]");
  if (!dimsCompatible(d.getShape().take_front(b), i.getShape().take_front(b)))
    return emitOpError("batch dims of data and indices must agree");
  SmallVector<int64_t> want(i.getShape().drop_back());
  llvm::append_range(want, d.getShape().drop_front(b + q));
  if (!dimsCompatible(getType().getShape(), want) || getType().getElementType() != d.getElementType())
    return emitOpError("result must have shape indices.shape[:-1] + data.shape[batch_dims + q:]");
  return success();
}

LogicalResult TopKOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  auto k = llvm::cast<RankedTensorType>(getK().getType());
  if (!k.hasStaticShape() || k.getNumElements() != 1) return emitOpError("k must hold one element");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in.getRank()) return emitOpError("axis out of range");
  for (Value r : {getValues(), getIndices()}) {
    auto t = llvm::cast<RankedTensorType>(r.getType());
    if (t.getRank() != in.getRank()) return emitOpError("results must have the input's rank");
    for (int64_t d = 0; d < in.getRank(); ++d) {
      if (d == axis) {
        if (!t.isDynamicDim(d) && !in.isDynamicDim(d) && t.getDimSize(d) > in.getDimSize(d))
          return emitOpError("k exceeds the axis length");
      } else if (t.getDimSize(d) != kDyn && in.getDimSize(d) != kDyn && t.getDimSize(d) != in.getDimSize(d)) {
        return emitOpError("results must have the input's dims outside the axis");
      }
    }
  }
  if (getValues().getType().getElementType() != in.getElementType())
    return emitOpError("values must have the input's element type");
  if (getValues().getType().getShape() != getIndices().getType().getShape())
    return emitOpError("values and indices must have the same shape");
  return success();
}

LogicalResult ShapeOp::verify() {
  int64_t rank = llvm::cast<RankedTensorType>(getInput().getType()).getRank();
  if (getStart() < 0 || getStart() > getEnd() || getEnd() > rank)
    return emitOpError("requires 0 <= start <= end <= rank");
  if (getType().getDimSize(0) != getEnd() - getStart()) return emitOpError("result length must be end - start");
  return success();
}

LogicalResult ExpandOp::verify() {
  int64_t n;
  if (failed(verifyIndexVector(*this, getShape(), "shape", &n))) return failure();
  int64_t rank = llvm::cast<RankedTensorType>(getInput().getType()).getRank();
  if (getType().getRank() != std::max(rank, n)) return emitOpError("result rank must be max(input rank, shape length)");
  return success();
}

LogicalResult UnsqueezeOp::verify() {
  int64_t n;
  if (failed(verifyIndexVector(*this, getAxes(), "axes", &n))) return failure();
  int64_t rank = llvm::cast<RankedTensorType>(getInput().getType()).getRank();
  if (getType().getRank() != rank + n) return emitOpError("result rank must be input rank + number of axes");
  return success();
}

LogicalResult SliceOp::verify() {
  int64_t n, m;
  if (failed(verifyIndexVector(*this, getStarts(), "starts", &n)) ||
      failed(verifyIndexVector(*this, getEnds(), "ends", &m)))
    return failure();
  if (n != m) return emitOpError("starts and ends must have the same length");
  for (Value v : {getAxes(), getSteps()}) {
    if (!v) continue;
    if (failed(verifyIndexVector(*this, v, "axes and steps", &m))) return failure();
    if (m != n) return emitOpError("axes and steps must have the length of starts");
  }
  if (getType().getRank() != llvm::cast<RankedTensorType>(getInput().getType()).getRank())
    return emitOpError("result rank must equal the input rank");
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                            DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                            SmallVectorImpl<Type> &inferred) {
  TransposeOp::Adaptor adaptor(operands, attrs, props, regions);
  auto in = rankedOrNull(adaptor.getInput());
  auto perm = adaptor.getPerm();
  if (!in || (int64_t)perm.size() != in.getRank())
    return emitOptionalError(loc, "perm must have one entry per input dim");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank()) return emitOptionalError(loc, "perm entry out of range");
    shape.push_back(in.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult TransposeOp::verify() {
  SmallVector<bool> seen(getPerm().size(), false);
  for (int64_t p : getPerm()) {
    if (seen[p]) return emitOpError("perm must be a permutation");
    seen[p] = true;
  }
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                         DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                         SmallVectorImpl<Type> &inferred) {
  ConcatOp::Adaptor adaptor(operands, attrs, props, regions);
  if (operands.empty()) return emitOptionalError(loc, "concat needs at least one input");
  auto first = rankedOrNull(operands[0]);
  int64_t axis = adaptor.getAxis();
  if (!first || axis < 0 || axis >= first.getRank()) return emitOptionalError(loc, "concat axis out of range");
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : operands.drop_front()) {
    auto t = rankedOrNull(v);
    if (!t || t.getRank() != first.getRank()) return emitOptionalError(loc, "concat inputs must have the same rank");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (i == axis) {
        shape[i] = (shape[i] == kDyn || t.getDimSize(i) == kDyn) ? kDyn : shape[i] + t.getDimSize(i);
      } else if (shape[i] == kDyn) {
        shape[i] = t.getDimSize(i);
      } else if (t.getDimSize(i) != kDyn && t.getDimSize(i) != shape[i]) {
        return emitOptionalError(loc, "concat inputs differ outside the axis");
      }
    }
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult ConcatOp::verify() { return success(); }

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, ValueRange operands,
                                         DictionaryAttr attrs, OpaqueProperties props, RegionRange regions,
                                         SmallVectorImpl<Type> &inferred) {
  GatherOp::Adaptor adaptor(operands, attrs, props, regions);
  auto data = rankedOrNull(adaptor.getData()), ids = rankedOrNull(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (!data || !ids || axis < 0 || axis >= data.getRank()) return emitOptionalError(loc, "gather axis out of range");
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, ids.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult GatherOp::verify() { return success(); }

LogicalResult NonZeroOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  auto out = llvm::cast<RankedTensorType>(getType());
  if (out.getDimSize(0) != std::max<int64_t>(in.getRank(), 1))
    return emitOpError("result must have one row per input dim");
  if (!in.getElementType().isIntOrFloat() || isStorageOnlyType(in.getElementType()))
    return emitOpError("input element type must be a computable integer or float type");
  return success();
}

LogicalResult UniqueOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  auto y = llvm::cast<RankedTensorType>(getY().getType());
  Type et = in.getElementType();
  if (!et.isIntOrFloat() || (isStorageOnlyType(et) && !et.isBF16()))
    return emitOpError("input element type must be a computable integer or float type (or bf16)");
  if (y.getElementType() != et) return emitOpError("y must have the input's element type");
  int64_t slices;
  if (auto axis = getAxis()) {
    int64_t a = *axis;
    if (a < 0 || a >= in.getRank()) return emitOpError("axis out of range");
    if (y.getRank() != in.getRank()) return emitOpError("y must have the input's rank");
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (d != a && !y.isDynamicDim(d) && !in.isDynamicDim(d) && y.getDimSize(d) != in.getDimSize(d))
        return emitOpError("y must have the input's dims outside the axis");
    slices = in.getDimSize(a);
  } else {
    if (y.getRank() != 1) return emitOpError("y must be 1-D without an axis");
    slices = in.hasStaticShape() ? in.getNumElements() : kDyn;
  }
  auto inv = llvm::cast<RankedTensorType>(getInverseIndices().getType());
  if (!inv.isDynamicDim(0) && slices != kDyn && inv.getDimSize(0) != slices)
    return emitOpError("inverse_indices must have one element per input element (or slice)");
  int64_t n = y.getRank() == 1 ? y.getDimSize(0) : y.getDimSize(getAxis() ? *getAxis() : 0);
  for (Value r : {getIndices(), getCounts()}) {
    int64_t m = llvm::cast<RankedTensorType>(r.getType()).getDimSize(0);
    if (m != kDyn && n != kDyn && m != n)
      return emitOpError("indices and counts must have one element per unique value");
    if (m != kDyn && slices != kDyn && m > slices) return emitOpError("more unique values than input elements");
  }
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  auto boxes = llvm::cast<RankedTensorType>(getBoxes().getType());
  auto scores = llvm::cast<RankedTensorType>(getScores().getType());
  if (boxes.getRank() != 3 || (!boxes.isDynamicDim(2) && boxes.getDimSize(2) != 4))
    return emitOpError("boxes must be [batches, boxes, 4]");
  if (scores.getRank() != 3) return emitOpError("scores must be [batches, classes, boxes]");
  auto differ = [](int64_t a, int64_t b) { return a != kDyn && b != kDyn && a != b; };
  if (differ(boxes.getDimSize(0), scores.getDimSize(0)) || differ(boxes.getDimSize(1), scores.getDimSize(2)))
    return emitOpError("boxes and scores disagree on the batch or box count");
  SmallVector<Value> scalars{getMaxOutputBoxesPerClass(), getIouThreshold()};
  if (getScoreThreshold()) scalars.push_back(getScoreThreshold());
  for (Value v : scalars) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape() || t.getNumElements() != 1 || t.getRank() > 1)
      return emitOpError("max_output_boxes_per_class and the thresholds must hold one element");
  }
  auto out = llvm::cast<RankedTensorType>(getType());
  if (!out.isDynamicDim(1) && out.getDimSize(1) != 3) return emitOpError("result must be [selected, 3]");
  return success();
}

//===----------------------------------------------------------------------===//
// Generic elementwise
//===----------------------------------------------------------------------===//

bool v4f::isStorageOnlyType(Type t) {
  if (llvm::isa<BFloat16Type, Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType, Float4E2M1Type,
                Float8E8M0Type>(t))
    return true;
  if (auto i = llvm::dyn_cast<IntegerType>(t)) return i.getWidth() > 1 && i.getWidth() < 8;
  return false;
}

Type v4f::bodyScalarType(Type t) {
  if (isStorageOnlyType(t)) return IntegerType::get(t.getContext(), t.isBF16() ? 16 : 8);
  if (auto i = llvm::dyn_cast<IntegerType>(t); i && !i.isSignless())
    return IntegerType::get(t.getContext(), i.getWidth());
  return t;
}

void ElementwiseOp::build(OpBuilder &builder, OperationState &state, Type resultType, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultType);
  Region *region = state.addRegion();
  auto *block = new Block();
  region->push_back(block);
  for (Value v : inputs)
    block->addArgument(bodyScalarType(llvm::cast<ShapedType>(v.getType()).getElementType()), state.location);
}

namespace {
/// `v4f.elementwise %x, %c { math.powf(a, b) }` with %c a float32 splat
/// constant 2 (or 1, or 3) and the result of %x's type: `v4f.mul %x, %x`
/// (or %x, or `(x * x) * x`). The first two are exact (x * x is pow(x, 2)
/// correctly rounded); the cube rounds twice (within 2 ulp of pow), as
/// x*x*x in the exporters' own source does (GPT-2's tanh GELU). A multiply
/// vectorizes where powf is a long polynomial per element, so BERT's 24
/// LayerNorm squarings cost about what an add does (measurements:
/// bench/results/history.md, "Measurements behind code decisions").
struct PowByConstant : OpRewritePattern<ElementwiseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ElementwiseOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2) return failure();
    Value x = op.getInputs()[0];
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    if (xType != op.getType() || !xType.getElementType().isF32()) return failure();
    Block &body = op.getBody().front();
    if (body.getOperations().size() != 2) return failure();
    auto pow = llvm::dyn_cast<math::PowFOp>(body.front());
    auto yield = llvm::dyn_cast<YieldOp>(body.back());
    if (!pow || !yield || yield.getValue() != pow.getResult() || pow.getLhs() != body.getArgument(0) ||
        pow.getRhs() != body.getArgument(1))
      return failure();
    DenseFPElementsAttr exponent;
    if (!matchPattern(op.getInputs()[1], m_Constant(&exponent)) || !exponent.isSplat() ||
        !exponent.getElementType().isF32())
      return failure();
    float e = exponent.getSplatValue<float>();
    if (e == 1.0f) {
      rewriter.replaceOp(op, x);
      return success();
    }
    if (e != 2.0f && e != 3.0f) return failure();
    Value square = rewriter.create<MulOp>(op.getLoc(), op.getType(), x, x);
    rewriter.replaceOp(op,
                       e == 2.0f ? square : rewriter.create<MulOp>(op.getLoc(), op.getType(), square, x).getResult());
    return success();
  }
};
} // namespace

void ElementwiseOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<PowByConstant>(context);
}

LogicalResult ElementwiseOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size()) return emitOpError("body must have one argument per input");
  SmallVector<int64_t> shape;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (body.getArgument(i).getType() != bodyScalarType(t.getElementType()))
      return emitOpError("body argument ") << i << " must have type " << bodyScalarType(t.getElementType());
    SmallVector<int64_t> next;
    if (failed(broadcastShapes(shape, t.getShape(), next)))
      return emitOpError("input shapes are not broadcast-compatible");
    shape = next;
  }
  auto result = getType();
  if (ArrayRef<int64_t>(shape) != result.getShape()) {
    // Dynamic dims may be refined by the result type, nothing else.
    if ((int64_t)shape.size() != result.getRank()) return emitOpError("result rank must equal the broadcast rank");
    for (int64_t i = 0; i < result.getRank(); ++i)
      if (shape[i] != kDyn && result.getDimSize(i) != shape[i])
        return emitOpError("result shape must equal the broadcast shape");
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield) return emitOpError("body must end with v4f.yield");
  if (yield.getValue().getType() != bodyScalarType(result.getElementType()))
    return emitOpError("body must yield ") << bodyScalarType(result.getElementType());
  return success();
}

LogicalResult SelectBranchOp::verify() {
  auto cond = llvm::cast<RankedTensorType>(getCond().getType());
  if (!cond.hasStaticShape() || cond.getNumElements() != 1)
    return emitOpError("cond must have exactly one element, got ") << cond;
  Type ce = cond.getElementType();
  if (!ce.isIntOrFloat() || isStorageOnlyType(ce))
    return emitOpError("cond must be a computable integer or float tensor");
  auto a = llvm::cast<RankedTensorType>(getThenValue().getType());
  auto b = llvm::cast<RankedTensorType>(getElseValue().getType());
  auto r = llvm::cast<RankedTensorType>(getType());
  if (a.getElementType() != b.getElementType() || a.getElementType() != r.getElementType())
    return emitOpError("then_value, else_value and result must have one element type");
  if (a.getRank() != b.getRank() || a.getRank() != r.getRank())
    return emitOpError("then_value, else_value and result must have one rank");
  for (int64_t d = 0; d < r.getRank(); ++d) {
    if (r.isDynamicDim(d)) continue;
    if (a.getDimSize(d) != r.getDimSize(d) || b.getDimSize(d) != r.getDimSize(d))
      return emitOpError("result dim ") << d << " is " << r.getDimSize(d)
                                        << " but a branch does not give that static size";
  }
  return success();
}
