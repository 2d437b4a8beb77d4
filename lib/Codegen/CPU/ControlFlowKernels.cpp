//===- ControlFlowKernels.cpp - small kernels of the plan's control flow --===//
//
// One-workgroup kernels the plan uses around run-time Ifs and loops: a
// register written into a buffer (a loop's iteration number as a tensor), a
// run-time check that two shapes agree (a loop-carried value that must keep
// its shape), and a scalar copied out as an int64 the plan reads back (an If
// condition, a trip count computed by kernels).
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "v4f/kernel_abi.h"

using namespace mlir;

namespace v4f {

void emitWriteRegister(CPUKernelContext &ctx, Reg value, uint32_t buffer, const std::string &name) {
  auto kb = ctx.newKernel(name);
  kb->store(kb->dim(value), kb->binding(0), kb->c(0));
  kb->finish();
  ctx.addDispatch(*kb, {buffer}, ctx.shapes.constant(1), name);
}

bool emitDimsCheck(CPUKernelContext &ctx, const std::vector<Reg> &a, const std::vector<Reg> &b,
                   const std::string &name) {
  auto &sp = ctx.shapes;
  std::vector<std::pair<Reg, Reg>> pairs;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d) {
    if (a[d] == b[d]) continue;
    auto ca = sp.constValue(a[d]), cb = sp.constValue(b[d]);
    if (ca && cb && *ca == *cb) continue;
    pairs.push_back({a[d], b[d]});
  }
  if (pairs.empty() && a.size() == b.size()) return false;
  auto kb = ctx.newKernel(name);
  OpBuilder &bld = kb->b;
  Value bad = bld.create<arith::ConstantIntOp>(kb->loc, a.size() != b.size() ? 1 : 0, 1);
  for (auto [x, y] : pairs)
    bad = bld.create<arith::OrIOp>(kb->loc, bad, kb->cmp(arith::CmpIPredicate::ne, kb->dim(x), kb->dim(y)));
  kb->finish(bld.create<arith::SelectOp>(kb->loc, bad,
                                         bld.create<arith::ConstantIntOp>(kb->loc, V4F_KERNEL_ERROR_SHAPE_MISMATCH, 32),
                                         bld.create<arith::ConstantIntOp>(kb->loc, V4F_KERNEL_OK, 32)));
  ctx.addDispatch(*kb, {}, sp.constant(1), name);
  return true;
}

void emitScalarToI64(CPUKernelContext &ctx, const TensorInfo &src, uint32_t buffer, const std::string &name,
                     std::optional<int64_t> clampAbove) {
  auto kb = ctx.newKernel(name);
  OpBuilder &b = kb->b;
  Type scalar = bodyScalarType(src.elementType);
  Value x = kb->load(src.elementType, kb->binding(1), kb->c(0));
  Value v;
  if (llvm::isa<FloatType>(scalar)) {
    // Non-zero test (an If condition given as a float).
    Value nz = b.create<arith::CmpFOp>(kb->loc, arith::CmpFPredicate::UNE, x,
                                       b.create<arith::ConstantOp>(kb->loc, b.getFloatAttr(scalar, 0.0)));
    v = b.create<arith::ExtUIOp>(kb->loc, b.getI64Type(), nz);
  } else if (scalar.getIntOrFloatBitWidth() == 64) {
    v = x;
  } else if (scalar.getIntOrFloatBitWidth() == 1 || src.elementType.isUnsignedInteger()) {
    v = b.create<arith::ExtUIOp>(kb->loc, b.getI64Type(), x);
  } else {
    v = b.create<arith::ExtSIOp>(kb->loc, b.getI64Type(), x);
  }
  if (clampAbove) v = kb->min(v, kb->c(*clampAbove));
  kb->store(v, kb->binding(0), kb->c(0));
  kb->finish();
  ctx.addDispatch(*kb, {buffer, src.buffer}, ctx.shapes.constant(1), name);
}

} // namespace v4f
