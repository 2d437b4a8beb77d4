//===- ElementwiseKernels.cpp - elementwise maps and fused chains --------===//
//
// All of these are "strided maps": iterate over an index space, read each
// input at a strided offset, write the output at a strided offset. The inner
// loop runs along the last dim so LLVM vectorizes it when strides are 1.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "StridedMap.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace v4f {
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

namespace {

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
    if (isa<math::RoundEvenOp, math::RoundOp, math::FloorOp, math::CeilOp, math::TruncOp, math::SqrtOp, math::RsqrtOp,
            math::AbsFOp, math::ExpOp, math::TanhOp, math::ErfOp, math::FmaOp, math::CopySignOp>(op))
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
        mapping.map(c.getResult(),
                    kb.b.create<arith::ConstantOp>(kb.loc, type, DenseElementsAttr::get(type, c.getValue())));
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

} // namespace

/// Emits one dispatch computing out[idx] = fn(in_k[idx]) over `iterDims`.
/// `fn` gets scalars, or vectors of kMapLanes when `vectorFn` allows it
/// and every inner stride is a constant 0 or 1 (output 1): then the inner
/// loop runs whole vectors (stride-1 inputs loaded, stride-0 ones splat)
/// and the scalar loop does the tail.
void emitStridedMap(CPUKernelContext &ctx, const std::string &name, const std::vector<Reg> &iterDims, Type elementType,
                    const MapOperand &out, const std::vector<MapOperand> &inputs,
                    const std::function<Value(KernelBuilder &, ArrayRef<Value>)> &fn, bool vectorFn) {
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
        vals.push_back(kb->load(t, kb->binding(1 + k), kb->add(inOffs[k], kb->mul(j, inStrides[k][rank - 1]))));
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
      for (size_t k = 0; k < inputs.size(); ++k) inOffs[k] = kb->add(inOffs[k], kb->mul(idx, inStrides[k][d]));
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
  // [N, C, H, W] * [1, C, 1, 1] at 7 x 7 (MobileNetV3-small) otherwise runs
  // 7-element rows, too short for the vectors (measurements:
  // bench/results/history.md, "Measurements behind code decisions").
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
    kb->ifThenElse(
        ok,
        [&] {
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
        },
        rowByRow);
  }
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, name);
}

namespace {

Value unaryBody(KernelBuilder &kb, Operation *op, Value x) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  if (isa<ReluOp>(op)) return applyActivation(kb, x, "relu", 0, 0);
  if (isa<SigmoidOp>(op)) return applyActivation(kb, x, "sigmoid", 0, 0);
  if (isa<TanhOp>(op)) return b.create<math::TanhOp>(loc, x);
  if (isa<ErfOp>(op)) return b.create<math::ErfOp>(loc, x);
  if (isa<ExpOp>(op)) return b.create<math::ExpOp>(loc, x);
  if (isa<SqrtOp>(op)) return b.create<math::SqrtOp>(loc, x);
  if (auto l = dyn_cast<LeakyReluOp>(op)) return applyActivation(kb, x, "leaky_relu", l.getAlpha().convertToFloat(), 0);
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
FailureOr<MapLayout> mapLayout(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
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
  return {result.buffer,
          [out, permuted](KernelBuilder &kb) {
            std::vector<Value> st = out.channelsLast ? layoutStrides(out, 4, false)(kb) : naturalStrides(kb, out.dims);
            if (permuted) st = {st[0], st[2], st[3], st[1]};
            return st;
          },
          {}};
}
} // namespace

LogicalResult emitElementwise(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                              const TensorInfo &result) {
  FailureOr<MapLayout> layout = mapLayout(ctx, op, operands, result);
  if (failed(layout)) return failure();
  size_t rank = result.dims.size();
  std::vector<MapOperand> inputs;
  for (const auto &in : operands)
    inputs.push_back({in.buffer, layoutStrides(in, rank, layout->permuted), {}, in.elementType});
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

LogicalResult emitElementwiseChain(CPUKernelContext &ctx, ArrayRef<Operation *> ops, ArrayRef<Value> externals,
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
  emitStridedMap(
      ctx, name, layout->iterDims, result.elementType, out, inputs,
      [&](KernelBuilder &kb, ArrayRef<Value> v) {
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
      },
      vectorFn);
  return success();
}

void registerElementwiseKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp,
                       HardSigmoidOp, HardSwishOp, ElementwiseOp>(emitElementwise);
}

} // namespace v4f
