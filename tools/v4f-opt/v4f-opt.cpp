//===- v4f-opt.cpp - mlir-opt for the v4f dialect and passes --------------===//
//
// Runs every v4f pass (graph transforms and codegen) on textual IR, for the
// lit tests and for reproducing a pipeline step by hand.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/Passes.h"
#include "v4f/Codegen/Pipelines.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<v4f::V4FDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::scf::SCFDialect,
                  mlir::math::MathDialect, mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect,
                  mlir::cf::ControlFlowDialect>();
  v4f::registerV4FPasses();
  v4f::registerV4FCodegenPasses();
  v4f::registerV4FPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "v4f optimizer driver\n", registry));
}
