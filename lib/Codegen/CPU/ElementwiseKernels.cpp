//===- ElementwiseKernels.cpp - elementwise, transpose, concat, gather ----===//
//
// All of these are "strided maps": iterate over an index space, read each
// input at a strided offset, write the output at a strided offset. The inner
// loop runs along the last dim so LLVM vectorizes it when strides are 1.
//
//===----------------------------------------------------------------------===//
#include "DispatchContext.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace v4f {
namespace {

using StrideFn = std::function<std::vector<Value>(KernelBuilder &)>;

struct MapOperand {
  uint32_t buffer;
  StrideFn strides;                          // one stride per iteration dim
  std::function<Value(KernelBuilder &)> base; // element offset, may be null
  Type type = {};                             // element type; null: the map's
};

/// Natural row-major strides of `dims`, broadcast (stride 0 where the dim is
/// 1) and right-aligned to `rank` iteration dims.
std::vector<Value> broadcastStrides(KernelBuilder &kb, const std::vector<Reg> &dims, size_t rank) {
  std::vector<Value> strides(rank, kb.c(0));
  Value running = kb.c(1);
  for (size_t i = dims.size(); i-- > 0;) {
    Value d = kb.dim(dims[i]);
    size_t o = rank - dims.size() + i;
    // A static dim decides here (the vector path needs constant inner strides).
    if (auto k = kb.constDim(dims[i]))
      strides[o] = *k == 1 ? kb.c(0) : running;
    else
      strides[o] = kb.select(kb.cmp(arith::CmpIPredicate::eq, d, kb.c(1)), kb.c(0), running);
    running = kb.mul(running, d);
  }
  return strides;
}

std::vector<Value> naturalStrides(KernelBuilder &kb, const std::vector<Reg> &dims) {
  std::vector<Value> strides(dims.size());
  Value running = kb.c(1);
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = running;
    running = kb.mul(running, kb.dim(dims[i]));
  }
  return strides;
}

/// Lanes of the explicit vector path of the strided maps.
constexpr int64_t kMapLanes = 8;

/// Element types the vector path loads and stores as vectors.
bool vectorizableElement(Type t) {
  return t.isF32() || t.isF64() || t.isInteger(8) || t.isInteger(16) || t.isInteger(32) || t.isInteger(64);
}

/// Whether `body` (a v4f.elementwise region) can run on vectors: arith ops
/// and the math ops every backend lowers on vectors.
bool vectorizableBody(Block &body) {
  for (Operation &op : body.without_terminator()) {
    StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : StringRef();
    if (dialect == "arith") continue;
    if (isa<math::RoundEvenOp, math::RoundOp, math::FloorOp, math::CeilOp, math::TruncOp, math::SqrtOp,
            math::RsqrtOp, math::AbsFOp, math::ExpOp, math::TanhOp, math::ErfOp, math::FmaOp, math::CopySignOp>(op))
      continue;
    return false;
  }
  return true;
}

/// The body of `body` applied to `args` (scalars, or vectors of `lanes`
/// when the map runs its vector path: constants become splats and every
/// result its vector type).
Value applyBody(KernelBuilder &kb, Block &body, ArrayRef<Value> args) {
  IRMapping mapping;
  for (auto [arg, val] : llvm::zip(body.getArguments(), args)) mapping.map(arg, val);
  auto vt = args.empty() ? VectorType() : llvm::dyn_cast<VectorType>(args.front().getType());
  for (Operation &inner : body.without_terminator()) {
    if (vt) {
      if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
        auto type = VectorType::get(vt.getShape(), c.getType());
        mapping.map(c.getResult(), kb.b.create<arith::ConstantOp>(
                                        kb.loc, type, DenseElementsAttr::get(type, c.getValue())));
        continue;
      }
      Operation *op = kb.b.clone(inner, mapping);
      for (Value r : op->getResults()) r.setType(VectorType::get(vt.getShape(), r.getType()));
      continue;
    }
    kb.b.clone(inner, mapping);
  }
  return mapping.lookup(cast<YieldOp>(body.getTerminator()).getValue());
}

/// Emits one dispatch computing out[idx] = fn(in_k[idx]) over `iterDims`.
/// `fn` gets scalars, or vectors of kMapLanes when `vectorFn` allows it
/// and every inner stride is a constant 0 or 1 (output 1): then the inner
/// loop runs whole vectors (stride-1 inputs loaded, stride-0 ones splat)
/// and the scalar loop does the tail.
void emitStridedMap(DispatchContext &ctx, const std::string &name, const std::vector<Reg> &iterDims,
                    Type elementType, const MapOperand &out, const std::vector<MapOperand> &inputs,
                    const std::function<Value(KernelBuilder &, ArrayRef<Value>)> &fn, bool vectorFn = true) {
  size_t rank = iterDims.size();
  std::vector<Reg> dims = iterDims;
  if (rank == 0) dims.push_back(ctx.shapes.constant(1));
  rank = dims.size();
  auto kb = ctx.newKernel(name);
  std::vector<Value> outStrides = out.strides(*kb);
  if (outStrides.empty()) outStrides.push_back(kb->c(1));
  std::vector<std::vector<Value>> inStrides;
  for (const auto &in : inputs) {
    auto s = in.strides(*kb);
    if (s.empty()) s.push_back(kb->c(0));
    inStrides.push_back(s);
  }
  // Adjacent dims every operand walks as one (stride[d] = stride[d + 1] *
  // extent[d + 1], all known at compile time: contiguous or broadcast
  // along both) merge, so that short rows (a 14-wide plane, a per-channel
  // operand) make one long inner loop instead of many short ones — up to
  // one workgroup's grain, so that the rows still spread over the threads.
  constexpr int64_t kMergedRowLimit = 16384;
  for (size_t d = rank - 1; d-- > 0;) {
    auto extent = kb->constDim(dims[d + 1]), outerExtent = kb->constDim(dims[d]);
    if (!extent || !outerExtent || *extent * *outerExtent > kMergedRowLimit) break;
    auto mergeable = [&](const std::vector<Value> &st) {
      auto outer = getConstantIntValue(st[d]), innerS = getConstantIntValue(st[d + 1]);
      return outer && innerS && *outer == *innerS * *extent;
    };
    bool ok = mergeable(outStrides);
    for (const auto &st : inStrides) ok = ok && mergeable(st);
    if (!ok) break;
    dims[d] = ctx.shapes.mul(dims[d], dims[d + 1]);
    dims.erase(dims.begin() + d + 1);
    auto drop = [&](std::vector<Value> &st) {
      st[d] = st[d + 1];
      st.erase(st.begin() + d + 1);
    };
    drop(outStrides);
    for (auto &st : inStrides) drop(st);
    --rank;
  }
  Reg rowsReg = ctx.shapes.product(dims, 0, rank - 1);
  auto [groups, rowsPerGroup] = ctx.splitRows(rowsReg, dims[rank - 1]);
  Value inner = kb->dim(dims[rank - 1]);
  auto [begin, end] = kb->workgroupRange(kb->dim(rowsReg), kb->dim(rowsPerGroup));
  Value outBase = out.base ? out.base(*kb) : kb->c(0);
  std::vector<Value> inBases;
  for (const auto &in : inputs) inBases.push_back(in.base ? in.base(*kb) : kb->c(0));
  std::vector<uint32_t> bindings = {out.buffer};
  for (const auto &in : inputs) bindings.push_back(in.buffer);
  // The vector path: constant inner strides (0 or 1 in, 1 out), element
  // types loaded as they are (no bool / sub-byte storage).
  std::vector<int64_t> innerStride;
  bool vector = vectorFn && !elementType.isInteger(1) && vectorizableElement(bodyScalarType(elementType)) &&
                getConstantIntValue(outStrides[rank - 1]) == std::optional<int64_t>(1);
  // A stride known only at run time (run-time shapes: broadcast or not)
  // gets a run-time check instead: the vector loop runs when every such
  // stride is 0 or 1 (kRuntimeStride marks them).
  constexpr int64_t kRuntimeStride = -1;
  Value runtimeOk;
  for (size_t k = 0; vector && k < inputs.size(); ++k) {
    Type t = inputs[k].type ? inputs[k].type : elementType;
    auto c = getConstantIntValue(inStrides[k][rank - 1]);
    vector = (!c || *c == 0 || *c == 1) && !t.isInteger(1) && vectorizableElement(bodyScalarType(t));
    innerStride.push_back(c.value_or(kRuntimeStride));
    if (vector && !c) {
      Value s = inStrides[k][rank - 1];
      Value ok = kb->b.create<arith::OrIOp>(kb->loc, kb->cmp(arith::CmpIPredicate::eq, s, kb->c(0)),
                                            kb->cmp(arith::CmpIPredicate::eq, s, kb->c(1)));
      runtimeOk = runtimeOk ? kb->b.create<arith::AndIOp>(kb->loc, runtimeOk, ok).getResult() : ok;
    }
  }
  // Elements [lo, hi) of one run along the inner dim from the given
  // offsets: whole vectors, then the scalar tail.
  auto innerRange = [&](Value outOff, const std::vector<Value> &inOffs, Value lo, Value hi) {
    Value scalarFrom = lo;
    if (vector) {
      const int64_t L = kMapLanes;
      scalarFrom = kb->add(lo, kb->mul(kb->div(kb->sub(hi, lo), kb->c(L)), kb->c(L)));
      if (runtimeOk) scalarFrom = kb->select(runtimeOk, scalarFrom, lo);
      kb->forLoop(lo, scalarFrom, kb->c(L), [&](Value j) {
        SmallVector<Value> vals;
        for (size_t k = 0; k < inputs.size(); ++k) {
          Type t = bodyScalarType(inputs[k].type ? inputs[k].type : elementType);
          auto vt = VectorType::get({L}, t);
          if (innerStride[k] == 1) {
            vals.push_back(kb->load(vt, kb->binding(1 + k), kb->add(inOffs[k], j)));
          } else if (innerStride[k] == kRuntimeStride) {
            // Stride 1: the whole vector; stride 0: only lane 0 is read
            // (the mask keeps the load inside a one-element operand), then
            // splat.
            OpBuilder &b = kb->b;
            Value s = inStrides[k][rank - 1];
            Value unit = kb->cmp(arith::CmpIPredicate::eq, s, kb->c(1));
            auto maskType = VectorType::get({L}, b.getI1Type());
            SmallVector<bool> first(L, false);
            first[0] = true;
            Value lane0 = b.create<arith::ConstantOp>(kb->loc, DenseElementsAttr::get(maskType, ArrayRef<bool>(first)));
            Value all = b.create<arith::ConstantOp>(kb->loc, DenseElementsAttr::get(maskType, true));
            Value mask = b.create<arith::SelectOp>(kb->loc, unit, all, lane0);
            Value v = kb->maskedLoad(vt, kb->binding(1 + k), kb->add(inOffs[k], kb->mul(j, s)), mask);
            Value splat = b.create<vector::BroadcastOp>(kb->loc, vt, b.create<vector::ExtractOp>(kb->loc, v, 0));
            vals.push_back(b.create<arith::SelectOp>(kb->loc, unit, v, splat));
          } else {
            Value x = kb->load(t, kb->binding(1 + k), inOffs[k]);
            vals.push_back(kb->b.create<vector::BroadcastOp>(kb->loc, VectorType::get({L}, t), x));
          }
        }
        kb->store(fn(*kb, vals), kb->binding(0), kb->add(outOff, j));
      });
    }
    kb->forLoop(scalarFrom, hi, kb->c(1), [&](Value j) {
      SmallVector<Value> vals;
      for (size_t k = 0; k < inputs.size(); ++k) {
        Type t = bodyScalarType(inputs[k].type ? inputs[k].type : elementType);
        vals.push_back(kb->load(t, kb->binding(1 + k),
                                kb->add(inOffs[k], kb->mul(j, inStrides[k][rank - 1]))));
      }
      Value r = fn(*kb, vals);
      kb->store(r, kb->binding(0), kb->add(outOff, kb->mul(j, outStrides[rank - 1])));
    });
  };
  // Offsets of outer index `row` over dims [0, outerRank).
  auto outerOffsets = [&](Value row, size_t outerRank, Value &outOff, std::vector<Value> &inOffs) {
    Value rest = row;
    outOff = outBase;
    inOffs = inBases;
    for (size_t d = outerRank; d-- > 0;) {
      Value extent = kb->dim(dims[d]);
      Value idx = kb->rem(rest, extent);
      rest = kb->div(rest, extent);
      outOff = kb->add(outOff, kb->mul(idx, outStrides[d]));
      for (size_t k = 0; k < inputs.size(); ++k)
        inOffs[k] = kb->add(inOffs[k], kb->mul(idx, inStrides[k][d]));
    }
  };
  auto rowByRow = [&] {
    kb->forLoop(begin, end, kb->c(1), [&](Value row) {
      Value outOff;
      std::vector<Value> inOffs;
      outerOffsets(row, rank - 1, outOff, inOffs);
      innerRange(outOff, inOffs, kb->c(0), inner);
    });
  };
  // Extents known only at run time (exported models' symbolic H, W) cannot
  // merge above; the last two dims merge at run time instead when every
  // operand walks them as one (stride[-2] = stride[-1] * extent[-1]): the
  // rows of one outer index then run as one stretch. A squeeze-excite scale
  // [N, C, H, W] * [1, C, 1, 1] at 7 x 7 ran 7-element rows, 18 us for
  // 14 K elements in MobileNetV3-small.
  bool runtimeMerge = rank >= 2 && (!kb->constDim(dims[rank - 1]) || !kb->constDim(dims[rank - 2]));
  if (!runtimeMerge) {
    rowByRow();
  } else {
    Value H = kb->dim(dims[rank - 2]);
    auto walksAsOne = [&](const std::vector<Value> &st) {
      return kb->cmp(arith::CmpIPredicate::eq, st[rank - 2], kb->mul(st[rank - 1], inner));
    };
    Value ok = walksAsOne(outStrides);
    for (const auto &st : inStrides) ok = kb->b.create<arith::AndIOp>(kb->loc, ok, walksAsOne(st));
    kb->ifThenElse(ok, [&] {
      // Outer index g owns rows [g * H, (g + 1) * H) of the workgroup's
      // range [begin, end).
      Value hPos = kb->max(H, kb->c(1));
      Value gBegin = kb->div(begin, hPos);
      Value gEnd = kb->div(kb->add(end, kb->sub(hPos, kb->c(1))), hPos);
      kb->forLoop(gBegin, gEnd, kb->c(1), [&](Value g) {
        Value first = kb->mul(g, hPos);
        Value r0 = kb->max(begin, first), r1 = kb->min(end, kb->add(first, hPos));
        Value outOff;
        std::vector<Value> inOffs;
        outerOffsets(g, rank - 2, outOff, inOffs);
        innerRange(outOff, inOffs, kb->mul(kb->sub(r0, first), inner), kb->mul(kb->sub(r1, first), inner));
      });
    }, rowByRow);
  }
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name);
}

Value unaryBody(KernelBuilder &kb, Operation *op, Value x) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  if (isa<ReluOp>(op)) return applyActivation(kb, x, "relu", 0, 0);
  if (isa<SigmoidOp>(op)) return applyActivation(kb, x, "sigmoid", 0, 0);
  if (isa<TanhOp>(op)) return b.create<math::TanhOp>(loc, x);
  if (isa<ErfOp>(op)) return b.create<math::ErfOp>(loc, x);
  if (isa<ExpOp>(op)) return b.create<math::ExpOp>(loc, x);
  if (isa<SqrtOp>(op)) return b.create<math::SqrtOp>(loc, x);
  if (auto l = dyn_cast<LeakyReluOp>(op))
    return applyActivation(kb, x, "leaky_relu", l.getAlpha().convertToFloat(), 0);
  if (auto c = dyn_cast<ClipOp>(op))
    return applyActivation(kb, x, "clip", c.getMin().convertToFloat(), c.getMax().convertToFloat());
  if (auto h = dyn_cast<HardSigmoidOp>(op))
    return applyActivation(kb, x, "hard_sigmoid", h.getAlpha().convertToFloat(), h.getBeta().convertToFloat());
  if (isa<HardSwishOp>(op)) return applyActivation(kb, x, "hard_swish", 0, 0);
  return {};
}

Value binaryBody(KernelBuilder &kb, Operation *op, Value x, Value y) {
  if (isa<AddOp>(op)) return kb.b.create<arith::AddFOp>(kb.loc, x, y);
  if (isa<SubOp>(op)) return kb.b.create<arith::SubFOp>(kb.loc, x, y);
  if (isa<MulOp>(op)) return kb.b.create<arith::MulFOp>(kb.loc, x, y);
  if (isa<DivOp>(op)) return kb.b.create<arith::DivFOp>(kb.loc, x, y);
  return {};
}


} // namespace

Value applyActivation(KernelBuilder &kb, Value v, ConvOp conv) {
  return applyActivation(kb, v, conv.getActivation(), conv.getActAlpha().convertToFloat(),
                         conv.getActBeta().convertToFloat());
}

Value applyActivation(KernelBuilder &kb, Value v, StringRef act, float alpha, float beta) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type t = v.getType();
  if (act == "none") return v;
  if (act == "relu") return b.create<arith::MaximumFOp>(loc, v, kb.cf(0.f, t));
  if (act == "leaky_relu") {
    Value neg = b.create<arith::MulFOp>(loc, v, kb.cf(alpha, t));
    Value ge = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, v, kb.cf(0.f, t));
    return b.create<arith::SelectOp>(loc, ge, v, neg);
  }
  if (act == "clip") {
    Value lo = b.create<arith::MaximumFOp>(loc, v, kb.cf(alpha, t));
    return b.create<arith::MinimumFOp>(loc, lo, kb.cf(beta, t));
  }
  if (act == "sigmoid") {
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, v));
    return b.create<arith::DivFOp>(loc, kb.cf(1.f, t), b.create<arith::AddFOp>(loc, kb.cf(1.f, t), e));
  }
  if (act == "silu") { // v * sigmoid(v), rounded as the unfused mul(x, sigmoid(x))
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, v));
    Value sig = b.create<arith::DivFOp>(loc, kb.cf(1.f, t), b.create<arith::AddFOp>(loc, kb.cf(1.f, t), e));
    return b.create<arith::MulFOp>(loc, v, sig);
  }
  if (act == "tanh") return b.create<math::TanhOp>(loc, v);
  // min(max(alpha * v + beta, 0), 1), and v times that with alpha 1/6, beta 1/2.
  auto hardSigmoid = [&](float a, float c) -> Value {
    Value y = b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, v, kb.cf(a, t)), kb.cf(c, t));
    return b.create<arith::MinimumFOp>(loc, b.create<arith::MaximumFOp>(loc, y, kb.cf(0.f, t)), kb.cf(1.f, t));
  };
  if (act == "hard_sigmoid") return hardSigmoid(alpha, beta);
  if (act == "hard_swish") return b.create<arith::MulFOp>(loc, v, hardSigmoid(float(1.0 / 6.0), 0.5f));
  if (act == "gelu") { // v * 0.5 * (1 + erf(v / sqrt(2))), as exporters write it (FuseEpilogues.cpp)
    Value e = b.create<math::ErfOp>(loc, b.create<arith::MulFOp>(loc, v, kb.cf(float(M_SQRT1_2), t)));
    Value half = b.create<arith::MulFOp>(loc, v, kb.cf(0.5f, t));
    return b.create<arith::MulFOp>(loc, half, b.create<arith::AddFOp>(loc, kb.cf(1.f, t), e));
  }
  if (act == "gelu_tanh") { // v * 0.5 * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v^3)))
    Value cube = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, v, v), v);
    Value inner = b.create<arith::AddFOp>(loc, v, b.create<arith::MulFOp>(loc, kb.cf(0.044715f, t), cube));
    Value th = b.create<math::TanhOp>(loc, b.create<arith::MulFOp>(loc, kb.cf(0.7978845608f, t), inner));
    Value half = b.create<arith::MulFOp>(loc, v, kb.cf(0.5f, t));
    return b.create<arith::MulFOp>(loc, half, b.create<arith::AddFOp>(loc, kb.cf(1.f, t), th));
  }
  return {};
}

namespace {
/// The iteration space and operand strides of an elementwise map over
/// `result`. With a channels-last tensor among the operands or the result
/// (v4f-assign-cpu-layouts; 4-D, and a channels-last operand has the
/// result's dims) the map iterates in the order those are stored — (n, h,
/// w, c) — so that their elements are contiguous in the inner dims (the
/// vector path), and every operand's strides follow that order: a
/// channels-last one (H W C, 1, W C, C for n, c, h, w), a broadcast
/// channels-first one (a per-channel [1, C, 1, 1] scale: stride 1 along c).
struct MapLayout {
  std::vector<Reg> iterDims;
  bool permuted = false;
};
FailureOr<MapLayout> mapLayout(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                               const TensorInfo &result) {
  MapLayout l{result.dims, false};
  bool any = result.channelsLast || llvm::any_of(operands, [](const TensorInfo &t) { return t.channelsLast; });
  if (!any) return l;
  if (result.dims.size() != 4) return op->emitOpError("a channels-last elementwise result must be 4-D");
  // A channels-last operand has the result's C, H, W (static: convs that
  // store channels-last have static planes); its batch may be a run-time
  // dim of another source, broadcast when it is 1 (layoutStrides).
  auto &sp = ctx.shapes;
  auto sameDim = [&](Reg a, Reg b) {
    return a == b || (sp.constValue(a) && sp.constValue(b) && *sp.constValue(a) == *sp.constValue(b));
  };
  for (const TensorInfo &t : operands)
    if (t.channelsLast && (t.dims.size() != 4 || !sameDim(t.dims[1], result.dims[1]) ||
                           !sameDim(t.dims[2], result.dims[2]) || !sameDim(t.dims[3], result.dims[3])))
      return op->emitOpError("a channels-last operand must have the result's channels and planes (no broadcast)");
  l.permuted = true;
  l.iterDims = channelsLastDims(result.dims);
  return l;
}
StrideFn layoutStrides(const TensorInfo &t, size_t rank, bool permuted) {
  std::vector<Reg> dims = t.dims;
  bool channelsLast = t.channelsLast;
  return [dims, rank, channelsLast, permuted](KernelBuilder &kb) {
    std::vector<Value> st;
    if (channelsLast) {
      Value C = kb.dim(dims[1]), W = kb.dim(dims[3]);
      // The batch broadcasts when it is 1 (like broadcastStrides).
      Value image = kb.mul(kb.mul(kb.dim(dims[2]), W), C);
      Value n = kb.dim(dims[0]);
      st = {kb.select(kb.cmp(arith::CmpIPredicate::eq, n, kb.c(1)), kb.c(0), image), kb.c(1), kb.mul(W, C), C};
    } else {
      st = broadcastStrides(kb, dims, rank);
    }
    if (permuted) st = {st[0], st[2], st[3], st[1]};
    return st;
  };
}
MapOperand mapOutput(const TensorInfo &result, bool permuted) {
  TensorInfo out = result;
  return {result.buffer, [out, permuted](KernelBuilder &kb) {
            std::vector<Value> st = out.channelsLast ? layoutStrides(out, 4, false)(kb) : naturalStrides(kb, out.dims);
            if (permuted) st = {st[0], st[2], st[3], st[1]};
            return st;
          }, {}};
}
} // namespace

LogicalResult emitElementwise(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                              const TensorInfo &result) {
  FailureOr<MapLayout> layout = mapLayout(ctx, op, operands, result);
  if (failed(layout)) return failure();
  size_t rank = result.dims.size();
  std::vector<MapOperand> inputs;
  for (const auto &in : operands) inputs.push_back({in.buffer, layoutStrides(in, rank, layout->permuted), {}, in.elementType});
  MapOperand out = mapOutput(result, layout->permuted);
  if (auto generic = dyn_cast<ElementwiseOp>(op)) {
    Block &body = generic.getBody().front();
    emitStridedMap(
        ctx, dispatchName(op), layout->iterDims, result.elementType, out, inputs,
        [&](KernelBuilder &kb, ArrayRef<Value> v) { return applyBody(kb, body, v); }, vectorizableBody(body));
    return success();
  }
  bool unary = operands.size() == 1;
  emitStridedMap(ctx, dispatchName(op), layout->iterDims, result.elementType, out, inputs,
                 [&](KernelBuilder &kb, ArrayRef<Value> v) {
                   return unary ? unaryBody(kb, op, v[0]) : binaryBody(kb, op, v[0], v[1]);
                 });
  return success();
}

LogicalResult emitElementwiseChain(DispatchContext &ctx, ArrayRef<Operation *> ops, ArrayRef<Value> externals,
                                   ArrayRef<TensorInfo> externalInfos, const TensorInfo &result,
                                   const std::string &name) {
  FailureOr<MapLayout> layout = mapLayout(ctx, ops.back(), externalInfos, result);
  if (failed(layout)) return failure();
  size_t rank = result.dims.size();
  std::vector<MapOperand> inputs;
  for (const auto &in : externalInfos)
    inputs.push_back({in.buffer, layoutStrides(in, rank, layout->permuted), {}, in.elementType});
  MapOperand out = mapOutput(result, layout->permuted);
  bool vectorFn = llvm::all_of(ops, [](Operation *op) {
    auto generic = dyn_cast<ElementwiseOp>(op);
    return !generic || vectorizableBody(generic.getBody().front());
  });
  emitStridedMap(ctx, name, layout->iterDims, result.elementType, out, inputs, [&](KernelBuilder &kb, ArrayRef<Value> v) {
    // Every op of the chain evaluated on this element's values (scalars or
    // vectors), in order.
    DenseMap<Value, Value> scalar;
    for (auto [ext, val] : llvm::zip(externals, v)) scalar[ext] = val;
    for (Operation *op : ops) {
      SmallVector<Value> args;
      for (Value operand : op->getOperands()) args.push_back(scalar.lookup(operand));
      Value r;
      if (auto generic = dyn_cast<ElementwiseOp>(op))
        r = applyBody(kb, generic.getBody().front(), args);
      else
        r = args.size() == 1 ? unaryBody(kb, op, args[0]) : binaryBody(kb, op, args[0], args[1]);
      scalar[op->getResult(0)] = r;
    }
    return scalar.lookup(ops.back()->getResult(0));
  }, vectorFn);
  return success();
}

/// The 8 x 8 transpose of the rows `v` (v[t][s] -> w[s][t]) with shuffles
/// LLVM lowers to unpack / shuffle / lane-permute instructions.
static SmallVector<Value> transpose8x8(KernelBuilder &kb, ArrayRef<Value> v) {
  auto shuffle = [&](Value a, Value b, ArrayRef<int64_t> idx) -> Value {
    return kb.b.create<vector::ShuffleOp>(kb.loc, a, b, idx);
  };
  SmallVector<Value> t(8), u(8), w(8);
  for (int i = 0; i < 8; i += 2) {
    t[i] = shuffle(v[i], v[i + 1], {0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = shuffle(v[i], v[i + 1], {2, 10, 3, 11, 6, 14, 7, 15});
  }
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = shuffle(t[i + h], t[i + h + 2], {0, 1, 8, 9, 4, 5, 12, 13});
      u[i + 2 * h + 1] = shuffle(t[i + h], t[i + h + 2], {2, 3, 10, 11, 6, 7, 14, 15});
    }
  for (int s = 0; s < 4; ++s) {
    w[s] = shuffle(u[s], u[s + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    w[s + 4] = shuffle(u[s], u[s + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return w;
}

/// A transpose whose output rows run along an input dim of stride > 1 (the
/// strided map would read one element per cache line): static shapes,
/// 4-byte elements, the two dims involved multiples of 8. Tiles of 8 x 8:
/// eight contiguous input vectors, transposed in registers, eight
/// contiguous output vectors. False when it does not apply.
static bool emitBlockedTranspose(DispatchContext &ctx, const std::string &name, ArrayRef<int64_t> perm,
                          const TensorInfo &in, const TensorInfo &out) {
  const size_t r = perm.size();
  if (r < 2 || perm[r - 1] == int64_t(r - 1) || bodyScalarType(out.elementType).getIntOrFloatBitWidth() != 32)
    return false;
  std::vector<int64_t> inExt(r), outExt(r);
  for (size_t i = 0; i < r; ++i) {
    auto a = ctx.shapes.constValue(in.dims[i]), b = ctx.shapes.constValue(out.dims[i]);
    if (!a || !b) return false;
    inExt[i] = *a;
    outExt[i] = *b;
  }
  size_t q = size_t(std::find(perm.begin(), perm.end(), int64_t(r - 1)) - perm.begin());
  if (outExt[q] % 8 || outExt[r - 1] % 8) return false;
  std::vector<int64_t> inNat(r), outNat(r);
  for (size_t i = r, a = 1, b = 1; i-- > 0;) {
    inNat[i] = int64_t(a);
    outNat[i] = int64_t(b);
    a *= size_t(inExt[i]);
    b *= size_t(outExt[i]);
  }
  std::vector<size_t> rowDims;  // out dims other than q and the last
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < r; ++i)
    if (i != q) rowDims.push_back(i), rows *= outExt[i];
  auto &sp = ctx.shapes;
  auto [groups, perGroup] = ctx.splitRows(sp.constant(rows), sp.constant(outExt[q] * outExt[r - 1]));
  auto kb = ctx.newKernel(name);
  Type elem = bodyScalarType(out.elementType);
  auto vt = VectorType::get({8}, elem);
  const int64_t inInner = inNat[perm[r - 1]];  // input stride along the output rows
  auto [begin, end] = kb->workgroupRange(kb->c(rows), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value rest = row, inBase = kb->c(0), outBase = kb->c(0);
    for (size_t k = rowDims.size(); k-- > 0;) {
      size_t d = rowDims[k];
      Value idx = kb->rem(rest, kb->c(outExt[d]));
      rest = kb->div(rest, kb->c(outExt[d]));
      inBase = kb->add(inBase, kb->mul(idx, kb->c(inNat[perm[d]])));
      outBase = kb->add(outBase, kb->mul(idx, kb->c(outNat[d])));
    }
    kb->forLoop(kb->c(0), kb->c(outExt[q]), kb->c(8), [&](Value q0) {
      kb->forLoop(kb->c(0), kb->c(outExt[r - 1]), kb->c(8), [&](Value j0) {
        SmallVector<Value> v;
        Value src = kb->add(kb->add(inBase, q0), kb->mul(j0, kb->c(inInner)));
        for (int64_t t = 0; t < 8; ++t) v.push_back(kb->load(vt, kb->binding(1), kb->add(src, kb->c(t * inInner))));
        SmallVector<Value> w = transpose8x8(*kb, v);
        Value dst = kb->add(kb->add(outBase, kb->mul(q0, kb->c(outNat[q]))), j0);
        for (int64_t t = 0; t < 8; ++t) kb->store(w[t], kb->binding(0), kb->add(dst, kb->c(t * outNat[q])));
      });
    });
  });
  kb->finish();
  ctx.addDispatch(*kb, {out.buffer, in.buffer}, groups, name);
  return true;
}

LogicalResult emitTranspose(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                            const TensorInfo &result) {
  auto perm = llvm::to_vector(cast<TransposeOp>(op).getPerm());
  if (emitBlockedTranspose(ctx, dispatchName(op), perm, operands[0], result)) return success();
  std::vector<Reg> inDims = operands[0].dims, outDims = result.dims;
  MapOperand in{operands[0].buffer, [inDims, perm](KernelBuilder &kb) {
                  auto natural = naturalStrides(kb, inDims);
                  std::vector<Value> s;
                  for (int64_t p : perm) s.push_back(natural[p]);
                  return s;
                }, {}};
  MapOperand out{result.buffer, [outDims](KernelBuilder &kb) { return naturalStrides(kb, outDims); }, {}};
  emitStridedMap(ctx, dispatchName(op), result.dims, result.elementType, out, {in},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
  return success();
}

void emitCopy(DispatchContext &ctx, const TensorInfo &src, const TensorInfo &dst, const std::string &name) {
  std::vector<Reg> flat = {ctx.numel(dst)};
  auto unit = [](KernelBuilder &kb) { return std::vector<Value>{kb.c(1)}; };
  emitStridedMap(ctx, name, flat, dst.elementType, {dst.buffer, unit, {}}, {{src.buffer, unit, {}}},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
}

void emitCopyAt(DispatchContext &ctx, const TensorInfo &src, uint32_t dstBuffer, Reg dstBase,
                const std::string &name) {
  std::vector<Reg> flat = {ctx.numel(src)};
  auto unit = [](KernelBuilder &kb) { return std::vector<Value>{kb.c(1)}; };
  emitStridedMap(ctx, name, flat, src.elementType,
                 {dstBuffer, unit, [dstBase](KernelBuilder &kb) { return kb.dim(dstBase); }},
                 {{src.buffer, unit, {}}}, [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
}

void emitStridedCopy(DispatchContext &ctx, const std::string &name, const TensorInfo &src,
                     const TensorInfo &dst, const std::vector<Reg> &srcStrides, Reg srcBase,
                     bool broadcastSource) {
  std::vector<Reg> outDims = dst.dims, inDims = src.dims;
  size_t rank = outDims.size();
  MapOperand in;
  if (broadcastSource)
    in = {src.buffer, [inDims, rank](KernelBuilder &kb) { return broadcastStrides(kb, inDims, rank); }, {},
          src.elementType};
  else
    in = {src.buffer,
          [srcStrides](KernelBuilder &kb) {
            std::vector<Value> v;
            for (Reg r : srcStrides) v.push_back(kb.dim(r));
            return v;
          },
          [srcBase](KernelBuilder &kb) { return kb.dim(srcBase); }, src.elementType};
  MapOperand out{dst.buffer, [outDims](KernelBuilder &kb) { return naturalStrides(kb, outDims); }, {}};
  emitStridedMap(ctx, name, outDims, dst.elementType, out, {in},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
}

LogicalResult emitConcat(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  int64_t axis = cast<ConcatOp>(op).getAxis();
  auto &sp = ctx.shapes;
  bool channelsLast = result.channelsLast;
  for (const TensorInfo &t : operands)
    if (t.channelsLast != channelsLast)
      return op->emitOpError("concatenates tensors stored in different layouts");
  if (channelsLast && (axis != 1 || result.dims.size() != 4))
    return op->emitOpError("a channels-last concat must join channels of 4-D tensors");
  // Channels-last, the channels are the innermost dim: each pixel's row of
  // C floats takes every input's C_i channels at its offset.
  std::vector<Reg> physical = channelsLast ? channelsLastDims(result.dims) : result.dims;
  if (channelsLast) axis = 3;
  Reg outer = sp.product(physical, 0, axis);
  Reg inner = sp.product(physical, axis + 1, physical.size());
  Reg outRow = sp.mul(physical[axis], inner);
  Reg offset = sp.constant(0);
  for (size_t i = 0; i < operands.size(); ++i) {
    Reg extent = channelsLast ? operands[i].dims[1] : operands[i].dims[axis];
    Reg inRow = sp.mul(extent, inner);
    Reg base = sp.mul(offset, inner);
    MapOperand out{result.buffer,
                   [outRow](KernelBuilder &kb) { return std::vector<Value>{kb.dim(outRow), kb.c(1)}; },
                   [base](KernelBuilder &kb) { return kb.dim(base); }};
    MapOperand in{operands[i].buffer,
                  [inRow](KernelBuilder &kb) { return std::vector<Value>{kb.dim(inRow), kb.c(1)}; }, {}};
    emitStridedMap(ctx, dispatchName(op), {outer, inRow}, result.elementType, out, {in},
                   [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
    offset = sp.add(offset, extent);
  }
  return success();
}

LogicalResult emitGather(DispatchContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  auto gather = cast<GatherOp>(op);
  int64_t axis = gather.getAxis();
  auto &sp = ctx.shapes;
  const TensorInfo &data = operands[0], &ids = operands[1];
  // A channels-last 4-D data tensor (followsDataLayout: axis H or W, 1-D
  // indices, the result channels-last too) is gathered in its stored order
  // N, H, W, C, where H and W are axes 1 and 2.
  std::vector<Reg> dims = data.dims;
  if (data.channelsLast) {
    if (dims.size() != 4 || ids.dims.size() != 1 || (axis != 2 && axis != 3) || !result.channelsLast)
      return op->emitOpError("gathers a channels-last tensor other than along H or W with 1-D indices");
    dims = channelsLastDims(data.dims);
    axis -= 1;
  }
  Reg outer = sp.product(dims, 0, axis);
  Reg axisDim = dims[axis];
  Reg inner = sp.product(dims, axis + 1, dims.size());
  Reg count = sp.product(ids.dims, 0, ids.dims.size());
  Reg rows = sp.mul(outer, count);
  auto [groups, rowsPerGroup] = ctx.splitRows(rows, inner);
  Type idType = ids.elementType;
  auto kb = ctx.newKernel(dispatchName(op));
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(rowsPerGroup));
  Value n = kb->dim(count), extent = kb->dim(axisDim), in = kb->dim(inner);
  auto i1 = kb->b.getI1Type();
  Value falseV = kb->b.create<arith::ConstantIntOp>(kb->loc, 0, 1);
  auto bad = kb->forLoop(begin, end, kb->c(1), ValueRange{falseV},
                         [&](Value row, ValueRange acc) -> SmallVector<Value> {
    Value o = kb->div(row, n), i = kb->rem(row, n);
    Value id = kb->load(idType, kb->binding(2), i);
    if (!idType.isInteger(64)) id = kb->b.create<arith::ExtSIOp>(kb->loc, kb->b.getI64Type(), id);
    Value wrapped = kb->select(kb->cmp(arith::CmpIPredicate::slt, id, kb->c(0)), kb->add(id, extent), id);
    Value outOfRange = kb->b.create<arith::OrIOp>(
        kb->loc, kb->cmp(arith::CmpIPredicate::slt, wrapped, kb->c(0)),
        kb->cmp(arith::CmpIPredicate::sge, wrapped, extent));
    Value safe = kb->select(outOfRange, kb->c(0), wrapped);
    Value src = kb->mul(kb->add(kb->mul(o, extent), safe), in);
    Value dst = kb->mul(row, in);
    kb->forLoop(kb->c(0), in, kb->c(1), [&](Value j) {
      kb->store(kb->load(data.elementType, kb->binding(1), kb->add(src, j)), kb->binding(0), kb->add(dst, j));
    });
    return {kb->b.create<arith::OrIOp>(kb->loc, acc[0], outOfRange)};
  });
  (void)i1;
  Value status = kb->b.create<arith::SelectOp>(
      kb->loc, bad[0], kb->b.create<arith::ConstantIntOp>(kb->loc, 1, 32),
      kb->b.create<arith::ConstantIntOp>(kb->loc, 0, 32));
  kb->finish(status);
  ctx.addDispatch(*kb, {result.buffer, data.buffer, ids.buffer}, groups, dispatchName(op));
  return success();
}

} // namespace v4f
