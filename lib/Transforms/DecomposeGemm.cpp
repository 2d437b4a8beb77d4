//===- DecomposeGemm.cpp - v4f.gemm -> transpose / mul / matmul / add -----===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEGEMM
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

/// op(a) x (alpha * op(b)) + beta * c. Alpha scales b (not the product) so
/// that constant folding folds it into a constant weight.
LogicalResult decomposeGemm(BuildContext &c, GemmOp op, SmallVectorImpl<Value> &results) {
  Value a = op.getA(), b = op.getB();
  if (op.getTransA()) a = transposeBy(c, a, {1, 0});
  if (op.getTransB()) b = transposeBy(c, b, {1, 0});
  float alpha = op.getAlpha().convertToFloat(), beta = op.getBeta().convertToFloat();
  if (alpha != 1.f) b = c.b.create<MulOp>(c.loc, b, constF32(c, {}, {alpha}));
  auto y = buildMatMul(c, a, b);
  if (failed(y)) return failure();
  Value r = *y;
  if (op.getC() && beta != 0.f) {
    Value cv = op.getC();
    if (beta != 1.f) cv = c.b.create<MulOp>(c.loc, cv, constF32(c, {}, {beta}));
    r = c.b.create<AddOp>(c.loc, r, cv);
  }
  results.push_back(r);
  return success();
}

struct DecomposeGemmPass : v4f::impl::DecomposeGemmBase<DecomposeGemmPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<GemmOp>(getOperation(), decomposeGemm))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeGemmPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<GemmOp>>(patterns.getContext(), decomposeGemm);
}

std::unique_ptr<Pass> v4f::createDecomposeGemmPass() { return std::make_unique<DecomposeGemmPass>(); }
