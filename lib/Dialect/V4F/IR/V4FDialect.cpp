//===- V4FDialect.cpp - v4f dialect registration --------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

#include "v4f/Dialect/V4F/IR/V4FOpsDialect.cpp.inc"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#define GET_TYPEDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "v4f/Dialect/V4F/IR/V4FOpsAttrDefs.cpp.inc"

LogicalResult v4f::GemmTilingAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t mr, int64_t nr,
                                          int64_t lanes, int64_t mb, int64_t nb, int64_t kc) {
  if (lanes != 4 && lanes != 8 && lanes != 16)
    return emitError() << "gemm_tiling: lanes must be 4, 8 or 16, got " << lanes;
  if (mr < 1 || mr > 16 || nr < lanes || nr % lanes != 0 || nr / lanes > 4)
    return emitError() << "gemm_tiling: the register tile " << mr << "x" << nr
                       << " must have 1-16 rows and 1-4 vectors of " << lanes << " lanes";
  if (mb < mr || mb % mr != 0 || nb < nr || nb % nr != 0)
    return emitError() << "gemm_tiling: the workgroup tile " << mb << "x" << nb
                       << " must be a multiple of the register tile " << mr << "x" << nr;
  if (kc < 1) return emitError() << "gemm_tiling: the K block must be at least 1, got " << kc;
  return success();
}

void v4f::V4FDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "v4f/Dialect/V4F/IR/V4FOpsAttrDefs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "v4f/Dialect/V4F/IR/V4FOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "v4f/Dialect/V4F/IR/V4FOps.cpp.inc"
      >();
  attachShapeRules(*getContext());
}

Operation *v4f::V4FDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type, Location loc) {
  if (auto elements = llvm::dyn_cast<TypedAttr>(value)) return builder.create<arith::ConstantOp>(loc, type, elements);
  return nullptr;
}
