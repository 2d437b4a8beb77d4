//===- ShapePatternOps.cpp - ONNX ops built from shape and indexing ops ---===//
//
// Tile, CenterCropPad, OneHot, ReverseSequence, NonZero and Compress: each
// imported as a short pattern of v4f shape/indexing ops (expand + reshape,
// pad/slice, an elementwise compare, gathers), following run-time sizes
// through shape values like the ops in ShapeOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "TensorImport.h"

using namespace mlir;

namespace v4f {
namespace {

bool isIndexTensor(RankedTensorType t) { return t.getElementType().isInteger(64) || t.getElementType().isInteger(32); }

/// Tile: x [d0, ..., dn-1] is viewed as [1, d0, 1, d1, ...], expanded to
/// [r0, d0, r1, d1, ...] and reshaped to [r0*d0, r1*d1, ...]. The repeats may
/// be known only at run time (the plan follows their values).
LogicalResult importTile(NodeContext &c) {
  auto in = c.inputType(0), rt = c.inputType(1);
  if (!rt.getElementType().isInteger(64) || rt.getRank() != 1) return c.fail("repeats must be a 1-D int64 tensor");
  int64_t n = in.getRank();
  if (rt.isDynamicDim(0) || rt.getDimSize(0) != n) return c.fail("repeats must have one entry per input dim");
  if (n == 0) {
    c.setOutput(0, c.input(0));
    return success();
  }
  auto i64 = c.b.getI64Type();
  auto constI64 = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> v) -> Value {
    auto type = RankedTensorType::get(shape, i64);
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(type, v));
  };
  // The input viewed as [1, d0, 1, d1, ...] (dynamic dims carried over).
  SmallVector<int64_t> dims(in.getShape()), unit, unitSources;
  for (int64_t i = 0; i < n; ++i) {
    unit.append({1, dims[i]});
    unitSources.append({-1, in.isDynamicDim(i) ? i : -1});
  }
  Value view = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(unit, in.getElementType()), c.input(0), Value(),
                                     c.b.getDenseI64ArrayAttr(unitSources), c.b.getBoolAttr(false));
  // The input's dims as a tensor: constants, or read at run time.
  Value dimsValue = in.hasStaticShape()
                        ? constI64({n}, dims)
                        : (Value)c.b.create<ShapeOp>(c.loc, RankedTensorType::get({n}, i64), c.input(0),
                                                     c.b.getI64IntegerAttr(0), c.b.getI64IntegerAttr(n));
  // [r0, d0, r1, d1, ...] = gather([r..., d...], [0, n, 1, n + 1, ...]).
  Value cat = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({2 * n}, i64), ValueRange{c.input(1), dimsValue},
                                   c.b.getI64IntegerAttr(0));
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) order.append({i, n + i});
  Value expandShape = c.b.create<GatherOp>(c.loc, cat, constI64({2 * n}, order), c.b.getI64IntegerAttr(0));
  SmallVector<int64_t> expandedType;
  auto reps = c.constantInts(1);
  if (reps)
    for (int64_t i = 0; i < n; ++i) {
      int64_t product;
      if ((*reps)[i] < 0)
        return c.fail("repeats[" + std::to_string(i) + "] is negative (" + std::to_string((*reps)[i]) + ")");
      if (dims[i] != kDyn && (llvm::MulOverflow((*reps)[i], dims[i], product) || product > (int64_t(1) << 40)))
        return c.fail("output dim " + std::to_string(i) + " = " + std::to_string(dims[i]) + " x " +
                      std::to_string((*reps)[i]) + " repeats is larger than 2^40");
    }
  for (int64_t i = 0; i < n; ++i) expandedType.append({reps ? (*reps)[i] : kDyn, dims[i]});
  Value expanded =
      c.b.create<ExpandOp>(c.loc, RankedTensorType::get(expandedType, in.getElementType()), view, expandShape);
  auto outShape =
      buildElementwise(c, {c.input(1), dimsValue}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        return b.create<arith::MulIOp>(l, a[0], a[1]);
      });
  if (failed(outShape)) return failure();
  SmallVector<int64_t> resultShape(n, kDyn), src(n, -1);
  if (reps)
    for (int64_t i = 0; i < n; ++i) resultShape[i] = dims[i] == kDyn ? kDyn : (*reps)[i] * dims[i];
  c.setOutput(0, c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(resultShape, in.getElementType()), expanded,
                                       *outShape, c.b.getDenseI64ArrayAttr(src), c.b.getBoolAttr(false)));
  return success();
}

/// CenterCropPad: per axis, crop (dim > target) or zero-pad (dim < target)
/// around the center; the target shape may be known only at run time.
LogicalResult importCenterCropPad(NodeContext &c) {
  auto in = c.inputType(0), st = c.inputType(1);
  if (!isIndexTensor(st) || st.getRank() != 1 || st.isDynamicDim(0))
    return c.fail("shape must be a 1-D integer tensor");
  int64_t rank = in.getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : c.attrs.getInts("axes")) {
    if (a < -rank || a >= rank) return c.fail("axis out of range");
    axes.push_back(a < 0 ? a + rank : a);
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  int64_t n = axes.size();
  if (st.getDimSize(0) != n) return c.fail("shape must have one entry per axis");
  auto i64 = c.b.getI64Type();
  auto constI64 = [&](ArrayRef<int64_t> v) -> Value {
    return c.b.create<arith::ConstantOp>(c.loc,
                                         DenseElementsAttr::get(RankedTensorType::get({int64_t(v.size())}, i64), v));
  };
  // The input's dims along the axes (read at run time where dynamic).
  BuildContext bc(c.b, c.loc);
  SmallVector<Value> dims;
  for (int64_t a : axes) dims.push_back(dimOf(bc, c.input(0), a));
  Value target = c.input(1);
  if (!st.getElementType().isInteger(64)) {
    auto wide = buildElementwise(c, {target}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
      return b.create<arith::ExtSIOp>(l, b.getI64Type(), v[0]);
    });
    if (failed(wide)) return failure();
    target = *wide;
  }
  Value dimV = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({n}, i64), dims, c.b.getI64IntegerAttr(0)),
        axesV = constI64(axes);
  enum Part { CropStart, CropEnd, PadBegin, PadEnd };
  auto part = [&](Part which) {
    return buildElementwise(c, {target, dimV}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
      Value zero = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
      Value two = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(2));
      Value diff = b.create<arith::SubIOp>(l, v[1], v[0]);
      Value crop = b.create<arith::MaxSIOp>(l, diff, zero);
      Value pad = b.create<arith::MaxSIOp>(l, b.create<arith::SubIOp>(l, zero, diff), zero);
      switch (which) {
      case CropStart: return b.create<arith::DivSIOp>(l, crop, two);
      case CropEnd:
        return b.create<arith::AddIOp>(l, b.create<arith::DivSIOp>(l, crop, two),
                                       b.create<arith::MinSIOp>(l, v[0], v[1]));
      case PadBegin: return b.create<arith::DivSIOp>(l, pad, two);
      case PadEnd: return b.create<arith::SubIOp>(l, pad, b.create<arith::DivSIOp>(l, pad, two));
      }
      return {};
    });
  };
  auto starts = part(CropStart), ends = part(CropEnd), padBegin = part(PadBegin), padEnd = part(PadEnd);
  if (failed(starts) || failed(ends) || failed(padBegin) || failed(padEnd)) return failure();
  SmallVector<int64_t> shape(in.getShape());
  for (int64_t a : axes) shape[a] = kDyn;
  auto type = RankedTensorType::get(shape, in.getElementType());
  Value cropped = c.b.create<SliceOp>(c.loc, type, c.input(0), *starts, *ends, axesV, Value());
  Value pads = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({2 * n}, i64), ValueRange{*padBegin, *padEnd},
                                    c.b.getI64IntegerAttr(0));
  c.setOutput(0, c.b.create<PadOp>(c.loc, type, cropped, pads, Value(), axesV, c.b.getStringAttr("constant")));
  return success();
}

/// OneHot: out[..., j, ...] = (index == j ? on : off) for j in [0, depth),
/// negative indices counting from depth; depth may be a run-time scalar.
LogicalResult importOneHot(NodeContext &c) {
  if (c.inputType(1).getRank() == 1) refineInput(c, 1, {1});
  if (c.inputType(2).getRank() == 1) refineInput(c, 2, {2});
  auto it = c.inputType(0), dt = c.inputType(1), vt = c.inputType(2);
  if (!dt.hasStaticShape() || dt.getNumElements() != 1) return c.fail("depth must have one element");
  if (vt.getRank() != 1 || vt.getDimSize(0) != 2) return c.fail("values must have two elements [off, on]");
  int64_t rank = it.getRank() + 1, axis = c.attrs.getInt("axis", -1);
  if (axis < -rank || axis >= rank) return c.fail("axis out of range");
  if (axis < 0) axis += rank;
  auto i64 = c.b.getI64Type();
  auto scalarI64 = [&](int64_t v) -> Value {
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
  };
  // depth as a 0-D int64 whose value the plan follows.
  Value depth;
  Type det = dt.getElementType();
  if (det.isF32()) {
    Value one = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({1}, c.b.getF32Type()), 1.0f));
    Value sizes = c.b.create<ScaledSizesOp>(c.loc, RankedTensorType::get({1}, i64), one, c.input(1),
                                            c.b.getDenseI64ArrayAttr({0}));
    depth = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({}, i64), sizes, Value(), c.b.getDenseI64ArrayAttr({}),
                                  c.b.getBoolAttr(false));
  } else if (det.isSignlessInteger(64) || det.isSignlessInteger(32)) {
    depth = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({}, det), c.input(1), Value(),
                                  c.b.getDenseI64ArrayAttr({}), c.b.getBoolAttr(false));
    if (det.isSignlessInteger(32)) {
      auto wide = buildElementwise(c, {depth}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
        return b.create<arith::ExtSIOp>(l, b.getI64Type(), v[0]);
      });
      if (failed(wide)) return failure();
      depth = *wide;
    }
  } else {
    return c.fail("depth must be float32, int32 or int64");
  }
  Value j = c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), scalarI64(0), depth, scalarI64(1));
  // j shaped [D, 1, ...] (rank - axis dims); indices get a unit dim at axis.
  SmallVector<int64_t> jShape(rank - axis, 1), jSources(rank - axis, -1);
  jShape[0] = kDyn;
  jSources[0] = 0;
  Value jCol = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(jShape, i64), j, Value(),
                                     c.b.getDenseI64ArrayAttr(jSources), c.b.getBoolAttr(false));
  SmallVector<int64_t> iShape(it.getShape()), iSources;
  iShape.insert(iShape.begin() + axis, 1);
  for (int64_t d = 0; d < rank; ++d) iSources.push_back(d < axis ? d : (d == axis ? -1 : d - 1));
  Value idx = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get(iShape, it.getElementType()), c.input(0), Value(),
                                    c.b.getDenseI64ArrayAttr(iSources), c.b.getBoolAttr(false));
  auto elementAt = [&](int64_t k) -> Value {
    Value at = c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({1}, i64), k));
    return c.b.create<GatherOp>(c.loc, c.input(2), at, c.b.getI64IntegerAttr(0));
  };
  Type itE = it.getElementType();
  auto y = buildElementwise(c, {idx, jCol, depth, elementAt(0), elementAt(1)}, vt.getElementType(),
                            [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
                              Value i = v[0];
                              if (llvm::isa<FloatType>(itE))
                                i = b.create<arith::FPToSIOp>(l, b.getI64Type(), i);
                              else if (itE.getIntOrFloatBitWidth() < 64)
                                i = itE.isUnsignedInteger() ? (Value)b.create<arith::ExtUIOp>(l, b.getI64Type(), i)
                                                            : (Value)b.create<arith::ExtSIOp>(l, b.getI64Type(), i);
                              Value zero = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
                              Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, i, zero);
                              i = b.create<arith::SelectOp>(l, neg, b.create<arith::AddIOp>(l, i, v[2]), i);
                              Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, i, v[1]);
                              return b.create<arith::SelectOp>(l, hit, v[4], v[3]);
                            });
  if (failed(y)) return failure();
  c.setOutput(0, *y);
  return success();
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] elements of
/// batch b are reversed: a GatherElements whose indices are
/// (t < len[b] ? len[b] - 1 - t : t), built elementwise and expanded.
LogicalResult importReverseSequence(NodeContext &c) {
  auto in = c.inputType(0), lt = c.inputType(1);
  int64_t rank = in.getRank();
  if (rank < 2) return c.fail("input must have rank >= 2");
  int64_t batchAxis = c.attrs.getInt("batch_axis", 1), timeAxis = c.attrs.getInt("time_axis", 0);
  if ((batchAxis != 0 && batchAxis != 1) || (timeAxis != 0 && timeAxis != 1) || batchAxis == timeAxis)
    return c.fail("batch_axis and time_axis must be 0 and 1 in some order");
  if (!isIndexTensor(lt) || lt.getRank() != 1 ||
      (!lt.isDynamicDim(0) && !in.isDynamicDim(batchAxis) && lt.getDimSize(0) != in.getDimSize(batchAxis)))
    return c.fail("sequence_lens must be a 1-D integer tensor with one entry per batch");
  // Times [.., T, ..] and lengths [.., B, ..] (1 elsewhere); T and B are
  // read at run time where dynamic.
  auto i64 = c.b.getI64Type();
  BuildContext bc(c.b, c.loc);
  Value x = c.input(0), one = dimConstant(bc, 1);
  Value T = dimOf(bc, x, timeAxis);
  auto scalar = [&](int64_t v) {
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
  };
  Value times;
  if (auto t = constantDim(T)) {
    SmallVector<int64_t> steps;
    for (int64_t k = 0; k < *t; ++k) steps.push_back(k);
    times = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({*t}, i64), ArrayRef<int64_t>(steps)));
  } else {
    times = c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), scalar(0), reshapeTo(bc, T, {}), scalar(1));
  }
  SmallVector<Value> tDims(rank, one), bDims(rank, one);
  tDims[timeAxis] = T;
  bDims[batchAxis] = dimOf(bc, c.input(1), 0);
  auto tV = reshapeToDims(bc, times, tDims);
  auto lens = reshapeToDims(bc, c.input(1), bDims);
  if (failed(tV) || failed(lens)) return c.fail(bc.error);
  Type le = lt.getElementType();
  auto idx = buildElementwise(c, {*tV, *lens}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    Value len = le.isInteger(64) ? a[1] : (Value)b.create<arith::ExtSIOp>(l, b.getI64Type(), a[1]);
    Value one = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1));
    Value rev = b.create<arith::SubIOp>(l, b.create<arith::SubIOp>(l, len, one), a[0]);
    Value inside = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, a[0], len);
    return b.create<arith::SelectOp>(l, inside, rev, a[0]);
  });
  if (failed(idx)) return failure();
  SmallVector<int64_t> full(in.getShape());
  SmallVector<Value> fullDims;
  for (int64_t d = 0; d < rank; ++d) fullDims.push_back(dimOf(bc, x, d));
  Value shapeV = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({rank}, i64), fullDims, c.b.getI64IntegerAttr(0));
  Value expanded = c.b.create<ExpandOp>(c.loc, RankedTensorType::get(full, i64), *idx, shapeV);
  c.setOutput(0, c.b.create<GatherElementsOp>(c.loc, in, c.input(0), expanded, c.b.getI64IntegerAttr(timeAxis)));
  return success();
}

/// NonZero: v4f.nonzero, whose column count is known only after it runs.
LogicalResult importNonZero(NodeContext &c) {
  auto in = c.inputType(0);
  Type et = in.getElementType();
  if (!et.isIntOrFloat() || isStorageOnlyType(et)) return c.fail("input element type is not supported");
  int64_t rows = std::max<int64_t>(in.getRank(), 1);
  c.setOutput(0, c.b.create<NonZeroOp>(c.loc, RankedTensorType::get({rows, kDyn}, c.b.getI64Type()), c.input(0)));
  return success();
}

/// Compress: the positions where the 1-D condition is true (v4f.nonzero),
/// then a gather along axis (of the flattened input without an axis).
LogicalResult importCompress(NodeContext &c) {
  auto in = c.inputType(0), ct = c.inputType(1);
  if (ct.getRank() != 1) return c.fail("condition must be 1-D");
  auto i64 = c.b.getI64Type();
  Value where = c.b.create<NonZeroOp>(c.loc, RankedTensorType::get({1, kDyn}, i64), c.input(1));
  Value positions = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({kDyn}, i64), where, Value(),
                                          c.b.getDenseI64ArrayAttr({1}), c.b.getBoolAttr(false));
  Value x = c.input(0);
  int64_t axis = 0;
  if (c.attrs.has("axis")) {
    int64_t rank = in.getRank();
    axis = c.attrs.getInt("axis", 0);
    if (axis < -rank || axis >= rank) return c.fail("axis out of range");
    if (axis < 0) axis += rank;
    if (!in.isDynamicDim(axis) && !ct.isDynamicDim(0) && ct.getDimSize(0) > in.getDimSize(axis))
      return c.fail("condition is longer than the input along axis");
  } else {
    if (!in.hasStaticShape()) return c.fail("without an axis the input must have a static shape");
    x = c.b.create<ReshapeOp>(c.loc, RankedTensorType::get({in.getNumElements()}, in.getElementType()), x, Value(),
                              c.b.getDenseI64ArrayAttr({-1}), c.b.getBoolAttr(false));
  }
  c.setOutput(0, c.b.create<GatherOp>(c.loc, x, positions, c.b.getI64IntegerAttr(axis)));
  return success();
}

} // namespace

void addShapePatternImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Tile"] = {6, kMaxOpset, noCheck, importTile};
  t["CenterCropPad"] = {18, kMaxOpset, noCheck, importCenterCropPad};
  t["OneHot"] = {9, kMaxOpset, noCheck, importOneHot};
  t["ReverseSequence"] = {10, kMaxOpset, noCheck, importReverseSequence};
  t["NonZero"] = {9, kMaxOpset, noCheck, importNonZero};
  t["Compress"] = {9, kMaxOpset, noCheck, importCompress};
}

} // namespace v4f
