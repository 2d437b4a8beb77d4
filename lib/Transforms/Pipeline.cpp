//===- Pipeline.cpp - the graph-level optimization pipeline ---------------===//
#include "v4f/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

void v4f::buildGraphOptimizationPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFoldBatchNormPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseEpiloguesPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCSEPass());
}
