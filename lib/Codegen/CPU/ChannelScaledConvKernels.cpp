//===- ChannelScaledConvKernels.cpp - a per-channel scale fused into a conv -===//
//
// The region v4f-fuse-channel-scale merges (x * s[n, c] -> 1x1 conv, as
// squeeze-and-excitation blocks end): the packed weight is scaled per image
// (its rows of input channel c by s[n, c]) by a prologue dispatch, then the
// conv reads the unscaled input with the scaled weights.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "WeightPacking.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace v4f {

static LogicalResult emitChannelScaledConv(CPUKernelContext &ctx, DispatchOp region, ArrayRef<Operation *> ops,
                                           llvm::function_ref<const TensorInfo &(Value)> infoOf,
                                           const TensorInfo &result) {
  if (ops.size() != 2 || !isa<MulOp>(ops[0]) || !isa<ConvOp>(ops[1]) || ops[1]->getOperand(0) != ops[0]->getResult(0))
    return region.emitOpError("is a fused 'channel_scaled_conv' region whose ops are not a mul feeding a conv");
  auto mul = cast<MulOp>(ops[0]);
  auto conv = cast<ConvOp>(ops[1]);
  // s is the [N or 1, C, 1, 1] operand (v4f-fuse-channel-scale).
  auto isScale = [&](Value v) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    return t.getRank() == 4 && t.getDimSize(2) == 1 && t.getDimSize(3) == 1 && v.getType() != mul.getType();
  };
  Value scale = isScale(mul.getLhs()) ? mul.getLhs() : mul.getRhs();
  Value x = scale == mul.getLhs() ? mul.getRhs() : mul.getLhs();
  auto packing = packingOf(conv);
  const TensorInfo &W = infoOf(conv.getWeight());
  if (!packing || !W.constant)
    return conv.emitOpError("channel-scaled conv: the weight is not a packed constant (run v4f-pack-weights)");
  auto wShape = conv.getWeight().getType().getShape();
  const int64_t OC = wShape[0], C = wShape[1], K = C * wShape[2] * wShape[3], panel = packing->panel;
  const int64_t mat = packedMatrixFloats(OC, K, panel), rowsPerImage = mat / panel;
  const TensorInfo &X = infoOf(x), &S = infoOf(scale);
  auto &sp = ctx.shapes;
  // The prologue: per image, the packed weight with row k of every panel
  // (input channel k / (KH KW)) scaled by s[n, k / (KH KW)].
  uint32_t packed = ctx.packedWeight(W, *packing, 1, K, OC);
  uint32_t scaled = ctx.newTransient(sp.mul(X.dims[0], sp.constant(mat * int64_t(sizeof(float)))));
  Reg rows = sp.mul(X.dims[0], sp.constant(rowsPerImage));
  auto [groups, perGroup] = ctx.splitRows(rows, sp.constant(panel));
  std::string name = dispatchName(conv) + " weight scale";
  auto kb = ctx.newKernel(name);
  constexpr int64_t L = 8;
  Type vt = kb->vec(L);
  Value Out = kb->binding(0), In = kb->binding(1), Sb = kb->binding(2);
  Value sBatch = kb->dim(S.dims[0]);
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value row) {
    Value n = kb->div(row, kb->c(rowsPerImage)), r = kb->rem(row, kb->c(rowsPerImage));
    Value channel = kb->div(kb->rem(r, kb->c(K)), kb->c(wShape[2] * wShape[3]));
    Value sn = kb->select(kb->cmp(arith::CmpIPredicate::eq, sBatch, kb->c(1)), kb->c(0), n);
    Value sv = kb->splat(kb->load(kb->f32(), Sb, kb->add(kb->mul(sn, kb->c(C)), channel)), L);
    for (int64_t j = 0; j < panel; j += L) {
      Value from = kb->add(kb->mul(r, kb->c(panel)), kb->c(j));
      Value to = kb->add(kb->mul(n, kb->c(mat)), from);
      if (j + L <= panel) {
        kb->store(kb->b.create<arith::MulFOp>(kb->loc, kb->load(vt, In, from), sv), Out, to);
      } else {
        Value mask = kb->laneMask(kb->c(panel - j), L);
        kb->maskedStore(kb->b.create<arith::MulFOp>(kb->loc, kb->maskedLoad(vt, In, from, mask), sv), Out, to, mask);
      }
    }
  });
  kb->finish();
  ctx.addDispatch(*kb, {scaled, packed, S.buffer}, groups, name);
  // The conv of x with the scaled weights.
  SmallVector<TensorInfo> operands{X};
  for (Value v : conv->getOperands().drop_front()) operands.push_back(infoOf(v));
  return emitConv(ctx, conv, operands, result, scaled);
}

void registerChannelScaledConvKernels(CPUKernelRegistry &registry) {
  registry.addRegionKernel(kFusedChannelScaledConv, emitChannelScaledConv);
}

} // namespace v4f
