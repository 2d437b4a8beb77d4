//===- v4f-opt.cpp - mlir-opt for the v4f dialect and passes --------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<v4f::V4FDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  v4f::registerV4FPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "v4f optimizer driver\n", registry));
}
