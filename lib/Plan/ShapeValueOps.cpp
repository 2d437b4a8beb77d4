//===- ShapeValueOps.cpp - ops whose shapes depend on tensor values -------===//
//
// Small integer tensors that hold shapes (ONNX's Shape -> Gather -> Concat ->
// Reshape chains, or shape-like graph inputs) carry their element values as
// shape-program registers (TensorInfo::values). Reshape with a shape operand,
// Expand, Unsqueeze with run-time axes and Slice read those registers, so
// their result dims are computed by the runtime when the inputs are known,
// and their kernels read the resulting extents/offsets as push constants.
//
//===----------------------------------------------------------------------===//
#include "v4f/Plan/ShapeValues.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

constexpr size_t kMaxTrackedValues = 64;

/// Evaluates a v4f.elementwise body over registers, element by element.
std::optional<std::vector<Reg>> interpretBody(ShapeProgramBuilder &sp, ElementwiseOp op, ArrayRef<TensorInfo> operands,
                                              size_t count) {
  Block &body = op.getBody().front();
  std::vector<Reg> out;
  for (size_t e = 0; e < count; ++e) {
    DenseMap<Value, Reg> regs;
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      const auto &vals = *operands[i].values;
      regs[arg] = vals.size() == 1 ? vals[0] : vals[e];
    }
    for (Operation &inner : body.without_terminator()) {
      auto get = [&](unsigned i) { return regs.lookup(inner.getOperand(i)); };
      Reg r;
      if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
        // A float constant takes part only when it is a (small) integer:
        // an integer counter cast to float and back, Add(Cast(i), 1.0).
        if (auto f = llvm::dyn_cast<FloatAttr>(c.getValue())) {
          double v = f.getValueAsDouble();
          if (v != std::floor(v) || std::fabs(v) > double(1 << 24)) return std::nullopt;
          r = sp.constant(int64_t(v));
          regs[inner.getResult(0)] = r;
          continue;
        }
        auto attr = llvm::dyn_cast<IntegerAttr>(c.getValue());
        if (!attr) return std::nullopt;
        // i1 true is 1 (not -1) as a register.
        r = sp.constant(attr.getType().isInteger(1) ? int64_t(attr.getValue().getBoolValue())
                                                    : attr.getValue().getSExtValue());
      } else if (isa<arith::AddIOp>(inner))
        r = sp.add(get(0), get(1));
      else if (isa<arith::SubIOp>(inner))
        r = sp.sub(get(0), get(1));
      else if (isa<arith::MulIOp>(inner))
        r = sp.mul(get(0), get(1));
      else if (isa<arith::MaxSIOp>(inner))
        r = sp.max(get(0), get(1));
      // Shapes are non-negative, where truncating and floor division agree.
      else if (isa<arith::DivSIOp>(inner))
        r = sp.floorDiv(get(0), get(1));
      else if (isa<arith::RemSIOp>(inner)) {
        // Truncating remainder (sign of the dividend), exact for every sign:
        // the floor remainder, moved by y when it is non-zero and the signs
        // of x and y differ. (ONNX Mod over shapes: Mod(dim, heads).)
        Reg x = get(0), y = get(1), zero = sp.constant(0), one = sp.constant(1);
        Reg rf = sp.sub(x, sp.mul(sp.floorDiv(x, y), y));
        Reg nonzero = sp.sub(one, sp.eq(rf, zero));
        Reg signsDiffer = sp.sub(one, sp.eq(sp.lt(x, zero), sp.lt(y, zero)));
        r = sp.sub(rf, sp.mul(sp.mul(nonzero, signsDiffer), y));
      } else if (isa<arith::MinSIOp>(inner))
        r = sp.min(get(0), get(1));
      else if (isa<arith::ExtSIOp, arith::TruncIOp>(inner))
        r = get(0);
      // Integers through float (exact below 2^24: shape arithmetic).
      else if (isa<arith::SIToFPOp, arith::FPToSIOp>(inner))
        r = get(0);
      else if (isa<arith::AddFOp>(inner))
        r = sp.add(get(0), get(1));
      else if (isa<arith::SubFOp>(inner))
        r = sp.sub(get(0), get(1));
      else if (isa<arith::MulFOp>(inner))
        r = sp.mul(get(0), get(1));
      // i1 values are 0/1 registers (canonicalization turns selects of 0/1
      // into these).
      else if (isa<arith::ExtUIOp>(inner) && inner.getOperand(0).getType().isInteger(1))
        r = get(0);
      else if (isa<arith::AndIOp>(inner) && inner.getResult(0).getType().isInteger(1))
        r = sp.mul(get(0), get(1));
      else if (isa<arith::OrIOp>(inner) && inner.getResult(0).getType().isInteger(1))
        r = sp.max(get(0), get(1));
      else if (isa<arith::XOrIOp>(inner) && inner.getResult(0).getType().isInteger(1))
        r = sp.select(get(0), sp.sub(sp.constant(1), get(1)), get(1));
      else if (isa<arith::SelectOp>(inner))
        r = sp.select(get(0), get(1), get(2));
      else if (auto cmp = dyn_cast<arith::CmpIOp>(inner)) {
        switch (cmp.getPredicate()) {
        case arith::CmpIPredicate::eq: r = sp.eq(get(0), get(1)); break;
        case arith::CmpIPredicate::ne: r = sp.eq(sp.eq(get(0), get(1)), sp.constant(0)); break;
        case arith::CmpIPredicate::slt: r = sp.lt(get(0), get(1)); break;
        case arith::CmpIPredicate::sgt: r = sp.lt(get(1), get(0)); break;
        case arith::CmpIPredicate::sle: r = sp.eq(sp.lt(get(1), get(0)), sp.constant(0)); break;
        case arith::CmpIPredicate::sge: r = sp.eq(sp.lt(get(0), get(1)), sp.constant(0)); break;
        default: return std::nullopt;
        }
      } else {
        return std::nullopt; // division semantics etc.: not followed
      }
      regs[inner.getResult(0)] = r;
    }
    out.push_back(regs.lookup(cast<YieldOp>(body.getTerminator()).getValue()));
  }
  return out;
}

} // namespace

/// Registers of an index operand's values, or failure with a clear message.
FailureOr<std::vector<Reg>> valuesOf(Operation *op, const TensorInfo &t, StringRef what) {
  if (!t.values)
    return op->emitOpError() << "its " << what << " is computed at run time in a way the CPU backend cannot follow yet";
  return *t.values;
}

/// d-th entry of `dims` where d is itself a register: sum of selects.
Reg pick(ShapeProgramBuilder &sp, const std::vector<Reg> &dims, Reg index) {
  Reg r = sp.constant(0);
  for (size_t m = 0; m < dims.size(); ++m) r = sp.select(sp.eq(index, sp.constant(m)), dims[m], r);
  return r;
}

/// Per-dim (begin, end) pads of a v4f.pad as registers.
FailureOr<std::pair<std::vector<Reg>, std::vector<Reg>>> padAmounts(PlanContext &ctx, PadOp op,
                                                                    ArrayRef<TensorInfo> operands) {
  auto &sp = ctx.shapes;
  size_t rank = operands[0].dims.size();
  auto pads = valuesOf(op, operands[1], "pads");
  if (failed(pads)) return failure();
  std::vector<Reg> axes;
  if (op.getAxes()) {
    auto v = valuesOf(op, operands[op.getConstantValue() ? 3 : 2], "axes");
    if (failed(v)) return failure();
    axes = *v;
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(sp.constant(d));
  }
  size_t n = axes.size();
  std::vector<Reg> begin(rank, sp.constant(0)), end(rank, sp.constant(0));
  Reg zero = sp.constant(0), rankReg = sp.constant(rank);
  for (size_t i = 0; i < n; ++i) {
    Reg a = sp.select(sp.lt(axes[i], zero), sp.add(axes[i], rankReg), axes[i]);
    for (size_t d = 0; d < rank; ++d) {
      Reg hit = sp.eq(a, sp.constant(d));
      begin[d] = sp.select(hit, (*pads)[i], begin[d]);
      end[d] = sp.select(hit, (*pads)[n + i], end[d]);
    }
  }
  return std::make_pair(begin, end);
}

FailureOr<SliceParams> sliceParams(PlanContext &ctx, SliceOp op, ArrayRef<TensorInfo> operands) {
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  size_t rank = X.dims.size();
  auto starts = valuesOf(op, operands[1], "starts");
  auto ends = valuesOf(op, operands[2], "ends");
  if (failed(starts) || failed(ends)) return failure();
  size_t next = 3, n = starts->size();
  std::vector<Reg> axes, steps;
  if (op.getAxes()) {
    auto v = valuesOf(op, operands[next++], "axes");
    if (failed(v)) return failure();
    axes = *v;
  } else {
    for (size_t i = 0; i < n; ++i) axes.push_back(sp.constant(i));
  }
  if (op.getSteps()) {
    auto v = valuesOf(op, operands[next++], "steps");
    if (failed(v)) return failure();
    steps = *v;
  } else {
    steps.assign(n, sp.constant(1));
  }
  SliceParams p;
  Reg zero = sp.constant(0), one = sp.constant(1), minusOne = sp.constant(-1);
  for (size_t d = 0; d < rank; ++d) {
    p.start.push_back(zero);
    p.step.push_back(one);
    p.count.push_back(X.dims[d]);
  }
  auto clamp = [&](Reg v, Reg lo, Reg hi) { return sp.min(sp.max(v, lo), hi); };
  Reg rankReg = sp.constant(rank);
  for (size_t i = 0; i < n; ++i) {
    Reg axis = sp.select(sp.lt((*&axes)[i], zero), sp.add(axes[i], rankReg), axes[i]);
    for (size_t d = 0; d < rank; ++d) {
      Reg isThis = sp.eq(axis, sp.constant(d));
      if (auto k = sp.constValue(isThis); k && !*k) continue;
      Reg D = X.dims[d];
      // Dims stay below 2^40, so bounds and steps clamped to +-2^41 select
      // the same elements (ends of INT64_MAX, as exporters write `x[1:]`,
      // included) and nothing below can overflow: both arms of a select
      // are evaluated. A step beyond +-2^41 takes at most the first element.
      Reg lo = sp.constant(-(int64_t(1) << 41)), hi = sp.constant(int64_t(1) << 41);
      Reg s = clamp((*starts)[i], lo, hi), e = clamp((*ends)[i], lo, hi);
      Reg st = clamp(steps[i], lo, hi);
      s = sp.select(sp.lt(s, zero), sp.add(s, D), s);
      e = sp.select(sp.lt(e, zero), sp.add(e, D), e);
      Reg dm1 = sp.sub(D, one);
      Reg sPos = clamp(s, zero, D), ePos = clamp(e, zero, D);
      Reg cPos = sp.max(sp.ceilDiv(sp.sub(ePos, sPos), st), zero);
      Reg sNeg = clamp(s, zero, dm1), eNeg = clamp(e, minusOne, dm1);
      Reg cNeg = sp.max(sp.ceilDiv(sp.sub(sNeg, eNeg), sp.sub(zero, st)), zero);
      Reg positive = sp.lt(zero, st);
      p.start[d] = sp.select(isThis, sp.select(positive, sPos, sNeg), p.start[d]);
      p.count[d] = sp.select(isThis, sp.select(positive, cPos, cNeg), p.count[d]);
      p.step[d] = sp.select(isThis, st, p.step[d]);
    }
  }
  return p;
}

std::optional<std::vector<Reg>> propagateValues(PlanContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                                const TensorInfo &result) {
  auto &sp = ctx.shapes;
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  // Shape values are int64/int32; bool tensors (Equal(shape, -1) in the
  // exporters' Expand / Reshape patterns) are followed as 0/1 registers.
  Type et = type.getElementType();
  // (An elementwise op with a float result is followed where its body only
  // moves integers through float: interpretBody refuses anything else.)
  if (!et.isSignlessInteger(64) && !et.isSignlessInteger(32) && !et.isInteger(1) &&
      !(et.isF32() && isa<ElementwiseOp, AddOp, SubOp, MulOp>(op)))
    return std::nullopt;
  auto staticCount = [&]() -> std::optional<size_t> {
    if (!type.hasStaticShape() || (size_t)type.getNumElements() > kMaxTrackedValues) return std::nullopt;
    return (size_t)type.getNumElements();
  };
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    const auto &dims = operands[0].dims;
    return std::vector<Reg>(dims.begin() + shape.getStart(), dims.begin() + shape.getEnd());
  }
  if (auto scaled = dyn_cast<ScaledSizesOp>(op)) {
    // floor(dim * scale): scales from a graph input are read at run time,
    // constant ones fold when the dim is static.
    std::vector<Reg> out;
    auto axes = scaled.getAxes();
    if ((size_t)scaled.getScales().getType().getNumElements() != axes.size()) return std::nullopt;
    // Through reshape views (a scales input refined to its length).
    Value scalesIn = scaled.getScales();
    while (auto view = scalesIn.getDefiningOp<ReshapeOp>()) {
      if (view.getShape()) break;
      scalesIn = view.getInput();
    }
    if (auto arg = llvm::dyn_cast<BlockArgument>(scalesIn)) {
      for (size_t i = 0; i < axes.size(); ++i)
        out.push_back(sp.inputScaledDim(arg.getArgNumber(), i, operands[0].dims[axes[i]]));
      return out;
    }
    auto cst = scaled.getScales().getDefiningOp<arith::ConstantOp>();
    auto attr = cst ? llvm::dyn_cast<DenseElementsAttr>(cst.getValue()) : DenseElementsAttr();
    if (!attr) return std::nullopt;
    auto scales = llvm::to_vector(attr.getValues<float>());
    for (size_t i = 0; i < axes.size(); ++i) {
      Reg dimReg = operands[0].dims[axes[i]];
      if (auto dim = sp.constValue(dimReg)) {
        out.push_back(sp.constant(int64_t(std::floor(double(scales[i]) * double(*dim)))));
        continue;
      }
      // A dynamic dim times a constant scale p/q (q a power of two up to
      // 1024, so that the float32 scale is exactly that ratio: 2, 0.5, 1.25 ...)
      // is floor(dim * p / q) in integers; other scales are not followed.
      std::optional<Reg> scaled;
      for (int64_t q = 1; q <= 1024 && !scaled; q *= 2) {
        double p = double(scales[i]) * double(q);
        if (p >= 0 && p < double(int64_t(1) << 20) && p == std::floor(p))
          scaled = sp.floorDiv(sp.mul(dimReg, sp.constant(int64_t(p))), sp.constant(q));
      }
      if (!scaled) return std::nullopt;
      out.push_back(*scaled);
    }
    return out;
  }
  auto count = staticCount();
  if (!count) return std::nullopt;
  auto allKnown = [&](ArrayRef<TensorInfo> ts) {
    return llvm::all_of(ts, [](const TensorInfo &t) { return t.values.has_value(); });
  };
  if (isa<ReshapeOp, UnsqueezeOp>(op)) {
    if (operands[0].values) return operands[0].values;
    return std::nullopt;
  }
  if (auto cat = dyn_cast<ConcatOp>(op)) {
    if (!allKnown(operands)) return std::nullopt;
    // Row-major: each of the `outer` rows before the axis takes every
    // operand's chunk of that row in turn (one chunk along axis 0).
    int64_t axis = cat.getAxis(), outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= type.getDimSize(d);
    std::vector<Reg> out;
    for (int64_t row = 0; row < outer; ++row)
      for (const auto &t : operands) {
        size_t chunk = t.values->size() / size_t(outer);
        out.insert(out.end(), t.values->begin() + row * chunk, t.values->begin() + (row + 1) * chunk);
      }
    if (out.size() != *count) return std::nullopt;
    return out;
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    if (!operands[0].values || !operands[1].values || operands[0].dims.size() != 1) return std::nullopt;
    const auto &data = *operands[0].values;
    std::vector<Reg> out;
    for (Reg idx : *operands[1].values) {
      Reg n = sp.constant(data.size());
      Reg i = sp.select(sp.lt(idx, sp.constant(0)), sp.add(idx, n), idx);
      out.push_back(pick(sp, data, i));
    }
    return out;
  }
  if (auto red = dyn_cast<ReduceOp>(op)) {
    // A sum / product / max / min of every value (ReduceProd(Shape(x)):
    // an element count in shape arithmetic).
    if (red.getAxesTensor() || !operands[0].values || *count != 1 || operands[0].values->empty()) return std::nullopt;
    auto inType = llvm::cast<RankedTensorType>(red.getInput().getType());
    if ((int64_t)red.getAxes().size() != inType.getRank() && !red.getAxes().empty()) return std::nullopt;
    StringRef kind = red.getKind();
    const auto &vals = *operands[0].values;
    Reg acc = vals[0];
    for (size_t i = 1; i < vals.size(); ++i) {
      if (kind == "sum")
        acc = sp.add(acc, vals[i]);
      else if (kind == "prod")
        acc = sp.mul(acc, vals[i]);
      else if (kind == "max")
        acc = sp.max(acc, vals[i]);
      else if (kind == "min")
        acc = sp.min(acc, vals[i]);
      else
        return std::nullopt;
    }
    if (kind != "sum" && kind != "prod" && kind != "max" && kind != "min") return std::nullopt;
    return std::vector<Reg>{acc};
  }
  if (isa<AddOp, SubOp, MulOp>(op) && et.isF32()) {
    // Float arithmetic on followed (integer-valued) floats: a counter + 1.0.
    if (!allKnown(operands) || operands.size() != 2) return std::nullopt;
    for (const auto &t : operands)
      if (t.values->size() != 1 && t.values->size() != *count) return std::nullopt;
    std::vector<Reg> out;
    for (size_t k = 0; k < *count; ++k) {
      Reg a = (*operands[0].values)[operands[0].values->size() == 1 ? 0 : k];
      Reg b = (*operands[1].values)[operands[1].values->size() == 1 ? 0 : k];
      out.push_back(isa<AddOp>(op) ? sp.add(a, b) : isa<SubOp>(op) ? sp.sub(a, b) : sp.mul(a, b));
    }
    return out;
  }
  if (auto ew = dyn_cast<ElementwiseOp>(op)) {
    if (!allKnown(operands)) return std::nullopt;
    for (const auto &t : operands)
      if (t.values->size() != 1 && t.values->size() != *count) return std::nullopt;
    return interpretBody(sp, ew, operands, *count);
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    if (!operands[0].values || operands[0].dims.size() != 1) return std::nullopt;
    auto p = sliceParams(ctx, slice, operands);
    if (failed(p)) return std::nullopt;
    auto start = sp.constValue(p->start[0]), step = sp.constValue(p->step[0]);
    if (!start || !step) return std::nullopt;
    std::vector<Reg> out;
    for (size_t k = 0; k < *count; ++k) {
      int64_t idx = *start + int64_t(k) * *step;
      if (idx < 0 || idx >= (int64_t)operands[0].values->size()) return std::nullopt;
      out.push_back((*operands[0].values)[idx]);
    }
    return out;
  }
  (void)result;
  return std::nullopt;
}

FailureOr<std::vector<Reg>> valueDependentDims(PlanContext &ctx, Operation *op, ArrayRef<TensorInfo> operands) {
  auto &sp = ctx.shapes;
  const TensorInfo &X = operands[0];
  Reg zero = sp.constant(0), one = sp.constant(1);
  if (auto rs = dyn_cast<ReshapeOp>(op)) {
    auto target = valuesOf(op, operands[1], "shape");
    if (failed(target)) return failure();
    size_t rank = target->size();
    std::vector<Reg> dims(rank);
    std::vector<Reg> inferred(rank);
    Reg known = one;
    for (size_t i = 0; i < rank; ++i) {
      Reg v = (*target)[i];
      if (!rs.getAllowzero() && i < X.dims.size()) v = sp.select(sp.eq(v, zero), X.dims[i], v);
      inferred[i] = sp.eq(v, sp.constant(-1));
      dims[i] = v;
      known = sp.mul(known, sp.select(inferred[i], one, v));
    }
    Reg total = ctx.numel(X);
    // (max with 1: an allowzero target may multiply to 0 when nothing is inferred.)
    for (size_t i = 0; i < rank; ++i) dims[i] = sp.select(inferred[i], sp.floorDiv(total, sp.max(known, one)), dims[i]);
    return dims;
  }
  if (isa<ExpandOp>(op)) {
    auto target = valuesOf(op, operands[1], "shape");
    if (failed(target)) return failure();
    size_t rank = std::max(X.dims.size(), target->size());
    std::vector<Reg> dims(rank);
    for (size_t j = 0; j < rank; ++j) {
      int64_t i = j - (rank - X.dims.size()), k = j - (rank - target->size());
      Reg a = i >= 0 ? X.dims[i] : one, b = k >= 0 ? (*target)[k] : one;
      dims[j] = sp.max(a, b);
    }
    return dims;
  }
  if (isa<UnsqueezeOp>(op)) {
    auto axes = valuesOf(op, operands[1], "axes");
    if (failed(axes)) return failure();
    size_t outRank = X.dims.size() + axes->size();
    Reg outRankReg = sp.constant(outRank);
    std::vector<Reg> normalized;
    for (Reg a : *axes) normalized.push_back(sp.select(sp.lt(a, zero), sp.add(a, outRankReg), a));
    std::vector<Reg> dims(outRank);
    Reg before = zero;
    for (size_t j = 0; j < outRank; ++j) {
      Reg isNew = zero;
      for (Reg a : normalized) isNew = sp.max(isNew, sp.eq(a, sp.constant(j)));
      Reg k = sp.sub(sp.constant(j), before);
      dims[j] = sp.select(isNew, one, pick(sp, X.dims, k));
      before = sp.add(before, isNew);
    }
    return dims;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto p = sliceParams(ctx, slice, operands);
    if (failed(p)) return failure();
    return p->count;
  }
  if (auto pad = dyn_cast<PadOp>(op)) {
    auto amounts = padAmounts(ctx, pad, operands);
    if (failed(amounts)) return failure();
    std::vector<Reg> dims;
    for (size_t d = 0; d < X.dims.size(); ++d)
      dims.push_back(sp.add(sp.add(X.dims[d], amounts->first[d]), amounts->second[d]));
    return dims;
  }
  if (isa<FillOp>(op)) {
    auto target = valuesOf(op, operands[0], "shape");
    if (failed(target)) return failure();
    return *target;
  }
  if (isa<RangeOp>(op)) {
    auto start = valuesOf(op, operands[0], "start"), limit = valuesOf(op, operands[1], "limit"),
         delta = valuesOf(op, operands[2], "delta");
    if (failed(start) || failed(limit) || failed(delta)) return failure();
    return std::vector<Reg>{sp.max(sp.ceilDiv(sp.sub((*limit)[0], (*start)[0]), (*delta)[0]), zero)};
  }
  return op->emitOpError("has no value-dependent shape rule");
}

/// Per-dim "reduced" flags (0/1 registers) of a v4f.reduce.
FailureOr<std::vector<Reg>> reducedFlags(PlanContext &ctx, ReduceOp op, ArrayRef<TensorInfo> operands) {
  auto &sp = ctx.shapes;
  size_t rank = operands[0].dims.size();
  std::vector<Reg> flags(rank, sp.constant(0));
  if (!op.getAxesTensor()) {
    for (int64_t a : op.getAxes()) flags[a] = sp.constant(1);
    return flags;
  }
  if (!operands[1].values)
    return op.emitOpError("its axes are computed at run time in a way the CPU backend cannot follow yet");
  Reg zero = sp.constant(0), rankReg = sp.constant(rank);
  for (Reg a : *operands[1].values) {
    Reg n = sp.select(sp.lt(a, zero), sp.add(a, rankReg), a);
    for (size_t d = 0; d < rank; ++d) flags[d] = sp.max(flags[d], sp.eq(n, sp.constant(d)));
  }
  return flags;
}

FailureOr<std::vector<Reg>> reduceResultDims(PlanContext &ctx, Operation *op, ArrayRef<TensorInfo> operands) {
  auto r = cast<ReduceOp>(op);
  auto flags = reducedFlags(ctx, r, operands);
  if (failed(flags)) return failure();
  auto &sp = ctx.shapes;
  const auto &D = operands[0].dims;
  Reg zero = sp.constant(0), one = sp.constant(1);
  std::vector<Reg> dims;
  if (r.getKeepdims()) {
    for (size_t d = 0; d < D.size(); ++d) dims.push_back(sp.select((*flags)[d], one, D[d]));
    return dims;
  }
  size_t outRank = llvm::cast<RankedTensorType>(r.getType()).getRank();
  // Output dim j is the j-th kept input dim.
  std::vector<Reg> pos(D.size());
  Reg before = zero;
  for (size_t d = 0; d < D.size(); ++d) {
    pos[d] = before;
    before = sp.add(before, sp.eq((*flags)[d], zero));
  }
  for (size_t j = 0; j < outRank; ++j) {
    Reg v = zero;
    for (size_t d = 0; d < D.size(); ++d) {
      Reg hit = sp.mul(sp.eq((*flags)[d], zero), sp.eq(pos[d], sp.constant(j)));
      v = sp.select(hit, D[d], v);
    }
    dims.push_back(v);
  }
  return dims;
}

} // namespace v4f
