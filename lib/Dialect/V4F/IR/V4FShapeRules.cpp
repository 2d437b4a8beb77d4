//===- V4FShapeRules.cpp - ShapeRuleOpInterface for v4f ops ---------------===//
//
// Each op's result dims as arithmetic over its operands' dims. Codegen asks
// for them where a dim is dynamic (a symbolic batch, say) and turns the
// arithmetic into shape-program instructions the runtime evaluates.
// Attached as external models so the rules live in one place.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "v4f/Dialect/V4F/IR/V4FInterfaces.cpp.inc"

using namespace mlir;

namespace v4f {
namespace {

using Dim = DimBuilder::Dim;
using OperandDims = ArrayRef<SmallVector<Dim>>;

int64_t resultRank(Operation *op) { return llvm::cast<RankedTensorType>(op->getResult(0).getType()).getRank(); }

/// Numpy broadcasting: per dim, the broadcast of the operands that have it
/// (N pairs with N or 1; the plan refuses other pairs at run time).
LogicalResult broadcastRule(Operation *op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  int64_t rank = resultRank(op);
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<Dim> acc;
    for (const auto &operand : in) {
      int64_t i = d - (rank - (int64_t)operand.size());
      if (i < 0) continue;
      acc = acc ? b.broadcast(*acc, operand[i]) : operand[i];
    }
    if (!acc) return op->emitOpError("has no operand providing result dim ") << d;
    dims.push_back(*acc);
  }
  return success();
}

/// The result has operand 0's dims.
LogicalResult sameAsFirstRule(Operation *, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  dims.append(in[0].begin(), in[0].end());
  return success();
}

/// Output extent of a conv/pool window: floor or ceil((in + pads - span) / stride) + 1.
Dim windowDim(DimBuilder &b, Dim in, int64_t padBegin, int64_t padEnd, int64_t dilation, int64_t kernel, int64_t stride,
              bool ceil) {
  Dim span = b.add(in, b.constant(padBegin + padEnd - dilation * (kernel - 1) - 1));
  Dim s = b.constant(stride);
  if (!ceil) return b.add(b.floorDiv(span, s), b.constant(1));
  // A window may not start in the end padding.
  Dim r = b.add(b.ceilDiv(span, s), b.constant(1));
  return b.min(r, b.ceilDiv(b.add(in, b.constant(padBegin)), s));
}

template <typename Conv>
LogicalResult convRule(Conv conv, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  auto w = conv.getWeight().getType().getShape();
  auto s = conv.getStrides(), dl = conv.getDilations(), p = conv.getPads();
  dims.push_back(in[0][0]);
  dims.push_back(b.constant(w[0]));
  for (int i = 0; i < 2; ++i) dims.push_back(windowDim(b, in[0][2 + i], p[i], p[2 + i], dl[i], w[2 + i], s[i], false));
  return success();
}

LogicalResult shapeRule(ConvOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  return convRule(op, b, in, dims);
}
LogicalResult shapeRule(QuantizedConvOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  return convRule(op, b, in, dims);
}

template <typename PoolOp>
LogicalResult poolRule(PoolOp pool, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  auto k = pool.getKernelShape(), s = pool.getStrides(), dl = pool.getDilations(), p = pool.getPads();
  dims.push_back(in[0][0]);
  dims.push_back(in[0][1]);
  for (int i = 0; i < 2; ++i)
    dims.push_back(windowDim(b, in[0][2 + i], p[i], p[2 + i], dl[i], k[i], s[i], pool.getCeilMode()));
  return success();
}
LogicalResult shapeRule(MaxPoolOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  return poolRule(op, b, in, dims);
}
LogicalResult shapeRule(AvgPoolOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  return poolRule(op, b, in, dims);
}

/// [..., M, K] x [..., K, N] with broadcast batch dims.
LogicalResult shapeRule(MatMulOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  int64_t rank = resultRank(op);
  const auto &x = in[0], &y = in[1];
  for (int64_t d = 0; d < rank - 2; ++d) {
    int64_t ia = d - (rank - (int64_t)x.size()), ib = d - (rank - (int64_t)y.size());
    dims.push_back(ia >= 0 && ib >= 0 ? b.broadcast(x[ia], y[ib]) : ia >= 0 ? x[ia] : y[ib]);
  }
  dims.push_back(x[x.size() - 2]);
  dims.push_back(y[y.size() - 1]);
  return success();
}

/// [..., K] x [K, N] -> [..., N].
LogicalResult shapeRule(QuantizedMatMulOp, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  dims.append(in[0].begin(), in[0].end() - 1);
  dims.push_back(in[1][1]);
  return success();
}

LogicalResult shapeRule(Int4MatMulOp, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  dims.append(in[0].begin(), in[0].end() - 1);
  dims.push_back(in[1][1]);
  return success();
}

LogicalResult shapeRule(IntegerMatMulOp, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  dims.append(in[0].begin(), in[0].end() - 1);
  dims.push_back(in[1][1]);
  return success();
}

LogicalResult shapeRule(ReduceMeanOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  for (int64_t d = 0; d < (int64_t)in[0].size(); ++d) {
    if (!llvm::is_contained(op.getAxes(), d))
      dims.push_back(in[0][d]);
    else if (op.getKeepdims())
      dims.push_back(b.constant(1));
  }
  return success();
}

LogicalResult shapeRule(ArgReduceOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  for (int64_t d = 0; d < (int64_t)in[0].size(); ++d) {
    if (d != op.getAxis())
      dims.push_back(in[0][d]);
    else if (op.getKeepdims())
      dims.push_back(b.constant(1));
  }
  return success();
}

LogicalResult shapeRule(TransposeOp op, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  for (int64_t p : op.getPerm()) dims.push_back(in[0][p]);
  return success();
}

LogicalResult shapeRule(ConcatOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  int64_t axis = op.getAxis();
  for (int64_t d = 0; d < (int64_t)in[0].size(); ++d) {
    if (d != axis) {
      dims.push_back(in[0][d]);
      continue;
    }
    Dim sum = b.constant(0);
    for (const auto &operand : in) sum = b.add(sum, operand[d]);
    dims.push_back(sum);
  }
  return success();
}

/// data[:axis] + indices + data[axis+1:]
LogicalResult shapeRule(GatherOp op, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  int64_t axis = op.getAxis();
  dims.append(in[0].begin(), in[0].begin() + axis);
  dims.append(in[1].begin(), in[1].end());
  dims.append(in[0].begin() + axis + 1, in[0].end());
  return success();
}

/// indices.shape[:-1] + data.shape[batch_dims + q:]
LogicalResult shapeRule(GatherNDOp op, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  int64_t q = op.getIndices().getType().getShape().back();
  dims.append(in[1].begin(), in[1].end() - 1);
  dims.append(in[0].begin() + op.getBatchDims() + q, in[0].end());
  return success();
}

LogicalResult shapeRule(GatherElementsOp, DimBuilder &, OperandDims in, SmallVectorImpl<Dim> &dims) {
  dims.append(in[1].begin(), in[1].end());
  return success();
}

/// A reshape without a shape operand: each result dim is an input dim
/// (dim_sources) or, for one dim, the element count divided by the others.
LogicalResult shapeRule(ReshapeOp op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) {
  if (op.getShape()) return op.emitOpError("with a shape operand has no static shape rule");
  auto type = llvm::cast<RankedTensorType>(op.getType());
  auto sources = op.getDimSources();
  // Every dynamic dim needs an input dim to copy, but for one inferred dim.
  int64_t inferred = 0;
  for (int64_t j = 0; j < type.getRank(); ++j) {
    if (j >= int64_t(sources.size()) || sources[j] >= int64_t(in[0].size()))
      return op.emitOpError("dim_sources does not name an input dim for result dim ") << j;
    if (sources[j] < 0 && type.isDynamicDim(j)) ++inferred;
  }
  if (inferred > 1) return op.emitOpError("more than one result dim is inferred from the element count");
  auto dimAt = [&](int64_t j) { return type.isDynamicDim(j) ? in[0][sources[j]] : b.constant(type.getDimSize(j)); };
  Dim numel = b.constant(1);
  for (Dim d : in[0]) numel = b.mul(numel, d);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (sources[d] >= 0) {
      dims.push_back(in[0][sources[d]]);
      continue;
    }
    if (!type.isDynamicDim(d)) { // known: nothing to infer
      dims.push_back(b.constant(type.getDimSize(d)));
      continue;
    }
    Dim others = b.constant(1);
    for (int64_t j = 0; j < type.getRank(); ++j)
      if (j != d) others = b.mul(others, dimAt(j));
    dims.push_back(b.floorDiv(numel, others));
  }
  return success();
}

template <typename OpT>
struct OpRule : public ShapeRuleOpInterface::ExternalModel<OpRule<OpT>, OpT> {
  LogicalResult reifyResultDims(Operation *op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) const {
    return shapeRule(cast<OpT>(op), b, in, dims);
  }
};
template <typename OpT>
struct BroadcastRule : public ShapeRuleOpInterface::ExternalModel<BroadcastRule<OpT>, OpT> {
  LogicalResult reifyResultDims(Operation *op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) const {
    return broadcastRule(op, b, in, dims);
  }
};
template <typename OpT>
struct SameAsFirstRule : public ShapeRuleOpInterface::ExternalModel<SameAsFirstRule<OpT>, OpT> {
  LogicalResult reifyResultDims(Operation *op, DimBuilder &b, OperandDims in, SmallVectorImpl<Dim> &dims) const {
    return sameAsFirstRule(op, b, in, dims);
  }
};

template <template <typename> class Model, typename... Ops>
void attach(MLIRContext &ctx) {
  (Ops::template attachInterface<Model<Ops>>(ctx), ...);
}

} // namespace

void attachShapeRules(MLIRContext &ctx) {
  attach<BroadcastRule, AddOp, SubOp, MulOp, DivOp, ElementwiseOp>(ctx);
  attach<SameAsFirstRule, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp, HardSigmoidOp,
         HardSwishOp, SoftmaxOp, LayerNormOp, BatchNormOp, TriluOp, CumSumOp, ScatterElementsOp, ScatterNDOp>(ctx);
  attach<OpRule, ConvOp, QuantizedConvOp, MaxPoolOp, AvgPoolOp, MatMulOp, QuantizedMatMulOp, Int4MatMulOp,
         IntegerMatMulOp, ReduceMeanOp, ArgReduceOp, TransposeOp, ConcatOp, GatherOp, GatherNDOp, GatherElementsOp,
         ReshapeOp>(ctx);
}

} // namespace v4f
