//===- DataMovementKernels.cpp - transpose, copy, concat, gather, split ---===//
//
// Kernels that move elements without computing on them, as strided maps
// (StridedMap.h), plus the blocked 8 x 8 transpose where the strided map
// would read one element per cache line.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "StridedMap.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Plan/PlanBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

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
static bool emitBlockedTranspose(CPUKernelContext &ctx, const std::string &name, ArrayRef<int64_t> perm,
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
  std::vector<size_t> rowDims; // out dims other than q and the last
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < r; ++i)
    if (i != q) rowDims.push_back(i), rows *= outExt[i];
  auto &sp = ctx.shapes;
  auto [groups, perGroup] = ctx.splitRows(sp.constant(rows), sp.constant(outExt[q] * outExt[r - 1]));
  auto kb = ctx.newKernel(name);
  Type elem = bodyScalarType(out.elementType);
  auto vt = VectorType::get({8}, elem);
  const int64_t inInner = inNat[perm[r - 1]]; // input stride along the output rows
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

LogicalResult emitTranspose(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                            const TensorInfo &result) {
  auto perm = llvm::to_vector(cast<TransposeOp>(op).getPerm());
  if (emitBlockedTranspose(ctx, dispatchName(op), perm, operands[0], result)) return success();
  std::vector<Reg> inDims = operands[0].dims, outDims = result.dims;
  MapOperand in{operands[0].buffer,
                [inDims, perm](KernelBuilder &kb) {
                  auto natural = naturalStrides(kb, inDims);
                  std::vector<Value> s;
                  for (int64_t p : perm) s.push_back(natural[p]);
                  return s;
                },
                {}};
  MapOperand out{result.buffer, [outDims](KernelBuilder &kb) { return naturalStrides(kb, outDims); }, {}};
  emitStridedMap(ctx, dispatchName(op), result.dims, result.elementType, out, {in},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
  return success();
}

void emitCopy(CPUKernelContext &ctx, const TensorInfo &src, const TensorInfo &dst, const std::string &name) {
  std::vector<Reg> flat = {ctx.numel(dst)};
  auto unit = [](KernelBuilder &kb) { return std::vector<Value>{kb.c(1)}; };
  emitStridedMap(ctx, name, flat, dst.elementType, {dst.buffer, unit, {}}, {{src.buffer, unit, {}}},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
}

void emitCopyAt(CPUKernelContext &ctx, const TensorInfo &src, uint32_t dstBuffer, Reg dstBase,
                const std::string &name) {
  std::vector<Reg> flat = {ctx.numel(src)};
  auto unit = [](KernelBuilder &kb) { return std::vector<Value>{kb.c(1)}; };
  emitStridedMap(ctx, name, flat, src.elementType,
                 {dstBuffer, unit, [dstBase](KernelBuilder &kb) { return kb.dim(dstBase); }}, {{src.buffer, unit, {}}},
                 [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
}

void emitStridedCopy(CPUKernelContext &ctx, const std::string &name, const TensorInfo &src, const TensorInfo &dst,
                     const std::vector<Reg> &srcStrides, Reg srcBase, bool broadcastSource) {
  std::vector<Reg> outDims = dst.dims, inDims = src.dims;
  size_t rank = outDims.size();
  MapOperand in;
  if (broadcastSource)
    in = {src.buffer,
          [inDims, rank](KernelBuilder &kb) { return broadcastStrides(kb, inDims, rank); },
          {},
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

LogicalResult emitConcat(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                         const TensorInfo &result) {
  int64_t axis = cast<ConcatOp>(op).getAxis();
  auto &sp = ctx.shapes;
  bool channelsLast = result.channelsLast;
  for (const TensorInfo &t : operands)
    if (t.channelsLast != channelsLast) return op->emitOpError("concatenates tensors stored in different layouts");
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
                   [outRow](KernelBuilder &kb) {
                     return std::vector<Value>{kb.dim(outRow), kb.c(1)};
                   },
                   [base](KernelBuilder &kb) { return kb.dim(base); }};
    MapOperand in{operands[i].buffer,
                  [inRow](KernelBuilder &kb) {
                    return std::vector<Value>{kb.dim(inRow), kb.c(1)};
                  },
                  {}};
    emitStridedMap(ctx, dispatchName(op), {outer, inRow}, result.elementType, out, {in},
                   [](KernelBuilder &, ArrayRef<Value> v) { return v[0]; });
    offset = sp.add(offset, extent);
  }
  return success();
}

LogicalResult emitGather(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
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
  auto bad =
      kb->forLoop(begin, end, kb->c(1), ValueRange{falseV}, [&](Value row, ValueRange acc) -> SmallVector<Value> {
        Value o = kb->div(row, n), i = kb->rem(row, n);
        Value id = kb->load(idType, kb->binding(2), i);
        if (!idType.isInteger(64)) id = kb->b.create<arith::ExtSIOp>(kb->loc, kb->b.getI64Type(), id);
        Value wrapped = kb->select(kb->cmp(arith::CmpIPredicate::slt, id, kb->c(0)), kb->add(id, extent), id);
        Value outOfRange = kb->b.create<arith::OrIOp>(kb->loc, kb->cmp(arith::CmpIPredicate::slt, wrapped, kb->c(0)),
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
  Value status = kb->b.create<arith::SelectOp>(kb->loc, bad[0], kb->b.create<arith::ConstantIntOp>(kb->loc, 1, 32),
                                               kb->b.create<arith::ConstantIntOp>(kb->loc, 0, 32));
  kb->finish(status);
  ctx.addDispatch(*kb, {result.buffer, data.buffer, ids.buffer}, groups, dispatchName(op));
  return success();
}

/// Split: one strided copy per part, each starting where the last ended.
static LogicalResult emitSplit(CPUKernelContext &ctx, PlanBuilder &pb, Operation *splitOp,
                               ArrayRef<TensorInfo> operands) {
  auto op = cast<SplitOp>(splitOp);
  const TensorInfo &X = operands[0];
  int64_t axis = op.getAxis();
  std::vector<Reg> sizes;
  if (op.getSplit()) {
    if (!operands[1].values)
      return op.emitOpError("its split sizes are computed at run time in a way the CPU backend cannot follow yet");
    sizes = *operands[1].values;
  } else {
    for (int64_t s : op.getSizes()) sizes.push_back(ctx.shapes.constant(s));
  }
  // Channels-last (splitsChannels; checkLayouts saw the parts marked too):
  // each part is copied in the stored order N, H, W, C_k from the input's
  // pixel rows of C floats, at the part's channel offset.
  const bool channelsLast = X.channelsLast;
  if (channelsLast && (axis != 1 || X.dims.size() != 4))
    return op.emitOpError("splits a channels-last tensor other than along its channels");
  // Strides of X's stored dims, and where the split axis is among them.
  const std::vector<Reg> stored = channelsLast ? channelsLastDims(X.dims) : X.dims;
  const size_t storedAxis = channelsLast ? 3 : size_t(axis);
  std::vector<Reg> strides(stored.size());
  Reg natural = ctx.shapes.constant(1);
  for (size_t d = stored.size(); d-- > 0;) {
    strides[d] = natural;
    natural = ctx.shapes.mul(natural, stored[d]);
  }
  Reg offset = ctx.shapes.constant(0);
  for (auto [k, r] : llvm::enumerate(op.getParts())) {
    TensorInfo part;
    part.dims = X.dims;
    part.dims[axis] = sizes[k];
    part.elementType = X.elementType;
    part.channelsLast = channelsLast;
    part.buffer = ctx.newTransient(pb.bytesOf(part));
    pb.infos[r] = part;
    TensorInfo partStored = part; // iterated in its stored order
    if (channelsLast) partStored.dims = channelsLastDims(part.dims);
    emitStridedCopy(ctx, "split part " + std::to_string(k), X, partStored, strides,
                    ctx.shapes.mul(offset, strides[storedAxis]), /*broadcastSource=*/false);
    offset = ctx.shapes.add(offset, sizes[k]);
  }
  return success();
}

void registerDataMovementKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<TransposeOp>(emitTranspose);
  registry.addOpKernel<ConcatOp>(emitConcat);
  registry.addOpKernel<GatherOp>(emitGather);
  registry.addResultsKernel<SplitOp>(emitSplit);
}

} // namespace v4f
