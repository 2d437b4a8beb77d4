//===- V4FDialect.cpp - v4f dialect registration --------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

#include "v4f/Dialect/V4F/IR/V4FOpsDialect.cpp.inc"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#define GET_TYPEDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.cpp.inc"

void v4f::V4FDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "v4f/Dialect/V4F/IR/V4FOps.cpp.inc"
      >();
}

Operation *v4f::V4FDialect::materializeConstant(OpBuilder &builder,
                                                 Attribute value, Type type,
                                                 Location loc) {
  if (auto elements = llvm::dyn_cast<TypedAttr>(value))
    return builder.create<arith::ConstantOp>(loc, type, elements);
  return nullptr;
}
