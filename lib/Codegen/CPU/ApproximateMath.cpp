//===- ApproximateMath.cpp - v4f-cpu-approximate-math ---------------------===//
//
// Replaces transcendental math ops in kernels with MLIR's polynomial
// approximations so the shared object calls no libm for them; asin/acos
// (whose approximations are not accurate enough) become libm calls.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace v4f {
#define GEN_PASS_DEF_CPUAPPROXIMATEMATH
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {
namespace {

struct CPUApproximateMathPass : impl::CPUApproximateMathBase<CPUApproximateMathPass> {
  void runOnOperation() override {
    // MLIR's asin/acos approximations are not accurate enough (errors of
    // ~1e-2 seen near |x| = 1): call libm for those instead.
    ModuleOp module = getOperation();
    SmallVector<Operation *> libmOps;
    module.walk([&](Operation *op) {
      if (isa<math::AsinOp, math::AcosOp>(op) && llvm::isa<FloatType>(op->getResult(0).getType()))
        libmOps.push_back(op);
    });
    for (Operation *op : libmOps) {
      auto type = llvm::cast<FloatType>(op->getResult(0).getType());
      std::string name = isa<math::AsinOp>(op) ? "asin" : "acos";
      if (type.isF32()) name += "f";
      OpBuilder b(op);
      Value arg = op->getOperand(0);
      Type callType = type;
      if (type.isF16()) {
        callType = b.getF32Type();
        arg = b.create<arith::ExtFOp>(op->getLoc(), callType, arg);
        name += "f";
      }
      auto fnType = b.getFunctionType({callType}, {callType});
      if (!module.lookupSymbol(name)) {
        OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
        mb.create<func::FuncOp>(op->getLoc(), name, fnType).setPrivate();
      }
      Value r = b.create<func::CallOp>(op->getLoc(), name, TypeRange{callType}, ValueRange{arg}).getResult(0);
      if (type.isF16()) r = b.create<arith::TruncFOp>(op->getLoc(), type, r);
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

} // namespace
} // namespace v4f
