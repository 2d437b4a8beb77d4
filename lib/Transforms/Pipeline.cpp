//===- Pipeline.cpp - the graph-level optimization pipeline ---------------===//
#include "v4f/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

void v4f::buildDecompositionPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeDepthSpacePass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeNormalizationsPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeSignalPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeRotaryPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeWindowConvPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeGemmPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeActivationsPass());
  // QDQ matmuls become integer kernels before the quantization ops they are
  // written with decompose into float arithmetic.
  pm.addNestedPass<mlir::func::FuncOp>(createFoldQDQPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeQuantizationPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeEinsumPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeAttentionPass());
  pm.addNestedPass<mlir::func::FuncOp>(createDecomposeRecurrentPass());
}

void v4f::buildGraphOptimizationPipeline(mlir::OpPassManager &pm) {
  // The importer keeps composite ops whole; they decompose before anything
  // else so that the canonicalizer folds their constant parts.
  buildDecompositionPipeline(pm);
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFoldBatchNormPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseNormalizationsPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseEpiloguesPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCSEPass());
  // Integer convs of QDQ models (v4f-fold-qdq) pass int8 to each other once
  // their epilogues are fused; v4fc's --quantize runs it after v4f-quantize.
  pm.addNestedPass<mlir::func::FuncOp>(createCarryInt8Pass());
}
