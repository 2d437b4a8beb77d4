//===- Passes.h - v4f transformation passes ---------------------*- C++ -*-===//
#ifndef V4F_TRANSFORMS_PASSES_H
#define V4F_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "v4f/Transforms/QuantizationMath.h"
#include <memory>

namespace v4f {
std::unique_ptr<mlir::Pass> createFoldBatchNormPass();
std::unique_ptr<mlir::Pass> createFuseEpiloguesPass();
std::unique_ptr<mlir::Pass> createFuseNormalizationsPass();
std::unique_ptr<mlir::Pass> createDecomposeActivationsPass();
std::unique_ptr<mlir::Pass> createDecomposeAttentionPass();
std::unique_ptr<mlir::Pass> createDecomposeDepthSpacePass();
std::unique_ptr<mlir::Pass> createDecomposeEinsumPass();
std::unique_ptr<mlir::Pass> createDecomposeGemmPass();
std::unique_ptr<mlir::Pass> createDecomposeNormalizationsPass();
std::unique_ptr<mlir::Pass> createDecomposeQuantizationPass();
std::unique_ptr<mlir::Pass> createDecomposeRecurrentPass();
std::unique_ptr<mlir::Pass> createDecomposeRotaryPass();
std::unique_ptr<mlir::Pass> createDecomposeWindowConvPass();
std::unique_ptr<mlir::Pass> createDecomposeSignalPass();
std::unique_ptr<mlir::Pass> createFormDispatchRegionsPass();
std::unique_ptr<mlir::Pass> createFuseAttentionRegionsPass();
std::unique_ptr<mlir::Pass> createFusePointwiseDepthwisePass();
std::unique_ptr<mlir::Pass> createFuseDepthwisePointwisePass();
std::unique_ptr<mlir::Pass> createFuseChannelScalePass();
std::unique_ptr<mlir::Pass> createFoldQDQPass();
std::unique_ptr<mlir::Pass> createCarryInt8Pass();
std::unique_ptr<mlir::Pass> createInsertCalibrationTapsPass();
std::unique_ptr<mlir::Pass> createApplyCalibrationPass();
/// v4f-apply-calibration with v4fc's statistics (one per tap, in tap order).
std::unique_ptr<mlir::Pass> createApplyCalibrationPass(const CalibrationMethod &method,
                                                       std::vector<ActivationStatistics> stats);

/// The attribute v4f-insert-calibration-taps puts on each observed op (its
/// tap index), also the prefix of @main's tap result names.
constexpr const char *kCalibrationTapAttr = "v4f.calibration_tap";
/// The float32 activation calibration observes for `op` (a matmul's lhs, an
/// ungrouped conv's input), or null.
mlir::Value calibratedActivation(mlir::Operation *op);
std::unique_ptr<mlir::Pass> createQuantizePass();
std::unique_ptr<mlir::Pass> createQuantizePass(const std::string &mode, llvm::ArrayRef<std::string> exclude,
                                               bool perChannel, int64_t groupSize = 128, bool int4ZeroPoints = false);

/// Patterns, exposed so other pipelines can reuse them.
void populateFoldBatchNormPatterns(mlir::RewritePatternSet &patterns);
void populateFuseEpiloguePatterns(mlir::RewritePatternSet &patterns);
void populateFuseNormalizationPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeActivationsPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeAttentionPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeDepthSpacePatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeEinsumPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeGemmPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeNormalizationsPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeQuantizationPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeRecurrentPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeRotaryPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeWindowConvPatterns(mlir::RewritePatternSet &patterns);
void populateDecomposeSignalPatterns(mlir::RewritePatternSet &patterns);

/// The v4f-decompose-* passes, in order; the graph pipeline runs them first.
void buildDecompositionPipeline(mlir::OpPassManager &pm);
/// The graph-level pipeline v4fc runs before codegen.
void buildGraphOptimizationPipeline(mlir::OpPassManager &pm);

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

#endif // V4F_TRANSFORMS_PASSES_H
