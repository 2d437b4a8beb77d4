//===- DecomposeDriver.h - shared driver of the v4f-decompose-* passes -*- C++ -*-===//
//
// A decomposition is a function that builds the replacement values of one
// op at the op (BuildContext: rewriter + the op's location, so new ops keep
// the ONNX node's name) or fails with a reason. The same function serves
// the pattern (populate...Patterns: a failure is a match failure) and the
// pass (a failure is an error on the op and fails the pass).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_TRANSFORMS_DECOMPOSEDRIVER_H
#define V4F_LIB_TRANSFORMS_DECOMPOSEDRIVER_H

#include "v4f/Dialect/V4F/Utils/Builders.h"

#include "mlir/IR/PatternMatch.h"

namespace v4f {

template <typename OpT>
using DecomposeFn = mlir::LogicalResult (*)(BuildContext &, OpT, llvm::SmallVectorImpl<mlir::Value> &);

/// Every decomposition must give one value per result, of the result's
/// type; checked here once for all of them.
inline mlir::LogicalResult checkReplacement(BuildContext &c, mlir::Operation *op, llvm::ArrayRef<mlir::Value> results) {
  if (results.size() != op->getNumResults()) return c.fail("the decomposition gives the wrong number of results");
  for (auto [r, want] : llvm::zip(results, op->getResultTypes()))
    if (r.getType() != want) return c.fail("the decomposition's result type differs from the op's");
  return mlir::success();
}

template <typename OpT>
struct DecomposePattern : mlir::OpRewritePattern<OpT> {
  DecomposePattern(mlir::MLIRContext *ctx, DecomposeFn<OpT> fn) : mlir::OpRewritePattern<OpT>(ctx), fn(fn) {}
  mlir::LogicalResult matchAndRewrite(OpT op, mlir::PatternRewriter &rewriter) const override {
    BuildContext c(rewriter, op.getLoc());
    llvm::SmallVector<mlir::Value> results;
    if (mlir::failed(fn(c, op, results)) || mlir::failed(checkReplacement(c, op, results)))
      return rewriter.notifyMatchFailure(op, c.error);
    rewriter.replaceOp(op, results);
    return mlir::success();
  }
  DecomposeFn<OpT> fn;
};

/// Decomposes every OpT under `root` in order; the first failure is
/// reported on its op (whose location names the ONNX node).
/// Ops for which `skip` is true stay as they are.
template <typename OpT>
mlir::LogicalResult decomposeAll(mlir::Operation *root, DecomposeFn<OpT> fn,
                                 llvm::function_ref<bool(OpT)> skip = nullptr) {
  llvm::SmallVector<OpT> ops;
  root->walk([&](OpT op) {
    if (!skip || !skip(op)) ops.push_back(op);
  });
  mlir::IRRewriter rewriter(root->getContext());
  for (OpT op : ops) {
    rewriter.setInsertionPoint(op);
    BuildContext c(rewriter, op.getLoc());
    llvm::SmallVector<mlir::Value> results;
    if (mlir::failed(fn(c, op, results)) || mlir::failed(checkReplacement(c, op, results)))
      return op.emitOpError(c.error);
    rewriter.replaceOp(op, results);
  }
  return mlir::success();
}

} // namespace v4f

#endif // V4F_LIB_TRANSFORMS_DECOMPOSEDRIVER_H
