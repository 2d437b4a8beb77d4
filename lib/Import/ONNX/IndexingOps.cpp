//===- IndexingOps.cpp - ONNX scatter, GatherND and TopK ------------------===//
//
// ScatterElements (and the deprecated Scatter), ScatterND, GatherND and TopK
// import one-to-one as v4f ops. TopK's k is always an operand: the opset-1
// attribute becomes a constant, a run-time k is followed by the plan.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

using namespace mlir;

namespace v4f {
namespace {

bool isIndexType(RankedTensorType t) {
  return t.getElementType().isSignlessInteger(64) || t.getElementType().isSignlessInteger(32);
}

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// `reduction`: none before opset 16, none/add/mul before 18, then max/min too.
std::string checkReduction(const NodeAttrs &a, int64_t opset) {
  std::string r = a.getString("reduction", "none");
  if (r == "none") return "";
  if (opset < 16) return "reduction is not part of this opset";
  if (r == "add" || r == "mul") return "";
  if ((r == "max" || r == "min") && opset >= 18) return "";
  return "reduction '" + r + "' is not supported";
}

/// Reductions compute on the element type: not on bool or storage-only types.
LogicalResult checkReducible(NodeContext &c, Type element, StringRef reduction) {
  if (reduction == "none") return success();
  if (element.isInteger(1) || isStorageOnlyType(element))
    return c.fail("reduction '" + reduction.str() + "' on " + typeName(element) + " is not supported");
  return success();
}

LogicalResult importScatterElements(NodeContext &c) {
  auto d = c.inputType(0), i = c.inputType(1), u = c.inputType(2);
  if (!isIndexType(i)) return c.fail("indices must be int32 or int64");
  if (d.getRank() != i.getRank()) return c.fail("data and indices must have the same rank");
  if (u.getRank() != i.getRank()) return c.fail("updates must have the shape of indices");
  for (auto [x, y] : llvm::zip_equal(i.getShape(), u.getShape()))
    if (x != kDyn && y != kDyn && x != y) return c.fail("updates must have the shape of indices");
  if (u.getElementType() != d.getElementType()) return c.fail("updates must have the element type of data");
  int64_t rank = d.getRank(), axis = c.attrs.getInt("axis", 0);
  if (rank == 0) return c.fail("data must have rank >= 1");
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  for (int64_t k = 0; k < rank; ++k)
    if (k != axis && !d.isDynamicDim(k) && !i.isDynamicDim(k) && i.getDimSize(k) > d.getDimSize(k))
      return c.fail("indices dim " + std::to_string(k) + " exceeds the data dim");
  std::string reduction = c.attrs.getString("reduction", "none");
  if (failed(checkReducible(c, d.getElementType(), reduction))) return failure();
  c.setOutput(0, c.b.create<ScatterElementsOp>(c.loc, d, c.input(0), c.input(1), c.input(2),
                                               c.b.getI64IntegerAttr(axis), c.b.getStringAttr(reduction)));
  return success();
}

LogicalResult importScatterND(NodeContext &c) {
  auto d = c.inputType(0), i = c.inputType(1), u = c.inputType(2);
  if (!i.getElementType().isSignlessInteger(64)) return c.fail("indices must be int64");
  if (i.getRank() < 1 || i.isDynamicDim(i.getRank() - 1))
    return c.fail("indices must have rank >= 1 and a static last dim");
  int64_t q = i.getDimSize(i.getRank() - 1);
  if (q < 1 || q > d.getRank()) return c.fail("the index tuple length must be in [1, rank(data)]");
  SmallVector<int64_t> want(i.getShape().drop_back());
  llvm::append_range(want, d.getShape().drop_front(q));
  if ((size_t)u.getRank() != want.size()) return c.fail("updates must have shape indices.shape[:-1] + data.shape[q:]");
  for (auto [x, y] : llvm::zip_equal(u.getShape(), want))
    if (x != kDyn && y != kDyn && x != y) return c.fail("updates must have shape indices.shape[:-1] + data.shape[q:]");
  if (u.getElementType() != d.getElementType()) return c.fail("updates must have the element type of data");
  std::string reduction = c.attrs.getString("reduction", "none");
  if (failed(checkReducible(c, d.getElementType(), reduction))) return failure();
  c.setOutput(0, c.b.create<ScatterNDOp>(c.loc, d, c.input(0), c.input(1), c.input(2), c.b.getStringAttr(reduction)));
  return success();
}

LogicalResult importGatherND(NodeContext &c) {
  auto d = c.inputType(0), i = c.inputType(1);
  if (!i.getElementType().isSignlessInteger(64)) return c.fail("indices must be int64");
  if (i.getRank() < 1 || i.isDynamicDim(i.getRank() - 1))
    return c.fail("indices must have rank >= 1 and a static last dim");
  int64_t b = c.attrs.getInt("batch_dims", 0);
  if (b < 0 || b >= std::min(d.getRank(), i.getRank())) return c.fail("batch_dims must be below both ranks");
  int64_t q = i.getDimSize(i.getRank() - 1);
  if (q < 1 || q > d.getRank() - b) return c.fail("the index tuple length must be in [1, rank(data) - batch_dims]");
  for (int64_t k = 0; k < b; ++k)
    if (!d.isDynamicDim(k) && !i.isDynamicDim(k) && d.getDimSize(k) != i.getDimSize(k))
      return c.fail("batch dims of data and indices must agree");
  SmallVector<int64_t> shape(i.getShape().drop_back());
  llvm::append_range(shape, d.getShape().drop_front(b + q));
  // A batch dim known on either side is known for both.
  for (int64_t k = 0; k < b; ++k)
    if (shape[k] == kDyn) shape[k] = d.getDimSize(k);
  auto type = RankedTensorType::get(shape, d.getElementType());
  c.setOutput(0, c.b.create<GatherNDOp>(c.loc, type, c.input(0), c.input(1), c.b.getI64IntegerAttr(b)));
  return success();
}

std::string checkTopK(const NodeAttrs &a, int64_t opset) {
  if (opset < 10 && !a.has("k")) return "attribute k is required";
  return "";
}

LogicalResult importTopK(NodeContext &c) {
  auto in = c.inputType(0);
  Type et = in.getElementType();
  if (et.isInteger(1) || isStorageOnlyType(et)) return c.fail("TopK of " + typeName(et) + " is not supported");
  int64_t rank = in.getRank(), axis = c.attrs.getInt("axis", -1);
  if (rank == 0) return c.fail("input must have rank >= 1");
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  Value k;
  std::optional<int64_t> kValue;
  if (c.opset < 10) {
    kValue = c.attrs.getInt("k", 0);
    auto type = RankedTensorType::get({1}, c.b.getI64Type());
    k = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(type, ArrayRef<int64_t>{*kValue}));
  } else {
    auto kt = c.inputType(1);
    if (!isIndexType(kt) || !kt.hasStaticShape() || kt.getNumElements() != 1)
      return c.fail("k must be a 1-element int64 tensor");
    if (auto v = c.constantInts(1)) kValue = (*v)[0];
    k = c.input(1);
  }
  if (kValue && *kValue < 0) return c.fail("k must not be negative");
  if (kValue && !in.isDynamicDim(axis) && *kValue > in.getDimSize(axis))
    return c.fail("k (" + std::to_string(*kValue) + ") exceeds the axis length (" +
                  std::to_string(in.getDimSize(axis)) + ")");
  bool largest = c.opset < 11 || c.attrs.getInt("largest", 1) != 0;
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] = kValue ? *kValue : kDyn;
  auto op = c.b.create<TopKOp>(
      c.loc, TypeRange{RankedTensorType::get(shape, et), RankedTensorType::get(shape, c.b.getI64Type())}, c.input(0), k,
      c.b.getI64IntegerAttr(axis), c.b.getBoolAttr(largest));
  if (c.outputUsed(0)) c.setOutput(0, op.getValues());
  if (c.outputUsed(1)) c.setOutput(1, op.getIndices());
  return success();
}

/// Unique: v4f.unique, whose unique count is known only after it runs.
LogicalResult importUnique(NodeContext &c) {
  auto in = c.inputType(0);
  Type et = in.getElementType();
  if (!et.isIntOrFloat() || (isStorageOnlyType(et) && !et.isBF16()))
    return c.fail("Unique of " + typeName(et) + " is not supported");
  auto i64 = c.b.getI64Type();
  int64_t rank = in.getRank();
  std::optional<int64_t> axis;
  SmallVector<int64_t> yShape{kDyn};
  int64_t slices = in.hasStaticShape() ? in.getNumElements() : kDyn;
  if (c.attrs.has("axis")) {
    int64_t a = c.attrs.getInt("axis", 0);
    if (rank == 0) return c.fail("axis is given but the input is a scalar");
    if (a < -rank || a >= rank) return c.fail("axis out of range");
    if (a < 0) a += rank;
    axis = a;
    yShape.assign(in.getShape().begin(), in.getShape().end());
    yShape[a] = kDyn;
    slices = in.getDimSize(a);
  }
  int64_t sortedAttr = c.attrs.getInt("sorted", 1);
  if (sortedAttr != 0 && sortedAttr != 1) return c.fail("sorted must be 0 or 1");
  auto dyn1 = RankedTensorType::get({kDyn}, i64);
  auto op = c.b.create<UniqueOp>(
      c.loc, TypeRange{RankedTensorType::get(yShape, et), dyn1, RankedTensorType::get({slices}, i64), dyn1}, c.input(0),
      axis ? c.b.getI64IntegerAttr(*axis) : IntegerAttr(), c.b.getBoolAttr(sortedAttr != 0));
  for (unsigned i = 0; i < 4; ++i)
    if (c.outputUsed(i)) c.setOutput(i, op->getResult(i));
  return success();
}

std::string checkNonMaxSuppression(const NodeAttrs &a, int64_t) {
  int64_t cpb = a.getInt("center_point_box", 0);
  if (cpb != 0 && cpb != 1) return "center_point_box must be 0 or 1";
  return "";
}

/// NonMaxSuppression: v4f.non_max_suppression. An absent
/// max_output_boxes_per_class is 0 (nothing selected), an absent
/// iou_threshold 0; an absent score_threshold keeps every box a candidate.
LogicalResult importNonMaxSuppression(NodeContext &c) {
  auto boxes = c.inputType(0), scores = c.inputType(1);
  if (!boxes.getElementType().isF32() || !scores.getElementType().isF32())
    return c.fail("boxes and scores must be float32");
  if (boxes.getRank() != 3 || (!boxes.isDynamicDim(2) && boxes.getDimSize(2) != 4))
    return c.fail("boxes must have shape [num_batches, num_boxes, 4]");
  if (scores.getRank() != 3) return c.fail("scores must have shape [num_batches, num_classes, num_boxes]");
  auto differ = [](int64_t a, int64_t b) { return a != kDyn && b != kDyn && a != b; };
  if (differ(boxes.getDimSize(0), scores.getDimSize(0))) return c.fail("boxes and scores have different batch counts");
  if (differ(boxes.getDimSize(1), scores.getDimSize(2))) return c.fail("boxes and scores have different box counts");
  auto oneElement = [&](size_t i, Type want, const char *what) -> LogicalResult {
    auto t = c.inputType(i);
    if (t.getElementType() != want) return c.fail(std::string(what) + " must be " + typeName(want));
    if (t.getRank() == 1 && t.isDynamicDim(0)) refineInput(c, i, {1});
    t = c.inputType(i);
    if (!t.hasStaticShape() || t.getNumElements() != 1 || t.getRank() > 1)
      return c.fail(std::string(what) + " must hold exactly one element");
    return success();
  };
  Type i64 = c.b.getI64Type(), f32 = c.b.getF32Type();
  Value maxOut, iou, score;
  if (c.hasInput(2)) {
    if (failed(oneElement(2, i64, "max_output_boxes_per_class"))) return failure();
    maxOut = c.input(2);
  } else {
    maxOut = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({1}, i64), ArrayRef<int64_t>{0}));
  }
  if (c.hasInput(3)) {
    if (failed(oneElement(3, f32, "iou_threshold"))) return failure();
    iou = c.input(3);
  } else {
    iou = c.constF32({1}, {0.0f});
  }
  if (c.hasInput(4)) {
    if (failed(oneElement(4, f32, "score_threshold"))) return failure();
    score = c.input(4);
  }
  auto type = RankedTensorType::get({kDyn, 3}, i64);
  c.setOutput(0, c.b.create<NonMaxSuppressionOp>(c.loc, type, c.input(0), c.input(1), maxOut, iou, score,
                                                 c.b.getBoolAttr(c.attrs.getInt("center_point_box", 0) != 0)));
  return success();
}

} // namespace

void addIndexingImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Scatter"] = {9, 10, noCheck, importScatterElements};
  t["ScatterElements"] = {11, kMaxOpset, checkReduction, importScatterElements};
  t["ScatterND"] = {11, kMaxOpset, checkReduction, importScatterND};
  t["GatherND"] = {11, kMaxOpset, noCheck, importGatherND};
  t["TopK"] = {1, kMaxOpset, checkTopK, importTopK};
  t["Unique"] = {11, kMaxOpset, noCheck, importUnique};
  t["NonMaxSuppression"] = {10, kMaxOpset, checkNonMaxSuppression, importNonMaxSuppression};
}

} // namespace v4f
