//===- V4FInterfaces.td - v4f op interfaces ----------------*- tablegen -*-===//
#ifndef V4F_INTERFACES_TD
#define V4F_INTERFACES_TD

include "mlir/IR/OpBase.td"

def V4F_ShapeRuleOpInterface : OpInterface<"ShapeRuleOpInterface"> {
  let cppNamespace = "::v4f";
  let description = [{
    The shape rule of an op whose result dims follow from its operands' dims
    alone (not from operand values): result 0's dims as symbolic dimension
    arithmetic over the operands' dims. Codegen evaluates it for dynamic
    dims, so a new op with such a rule needs no change in codegen's shape
    handling. Ops whose shapes depend on operand values (Reshape with a
    shape operand, Expand, Slice, Range ...) follow them through shape
    values in codegen instead.
  }];
  let methods = [
    InterfaceMethod<[{
        Sets `dims` to result 0's dims (one per result dim; static dims may be
        returned as constants) from `operandDims` (one list per operand).
      }],
      "::mlir::LogicalResult", "reifyResultDims",
      (ins "::v4f::DimBuilder &":$b,
           "::llvm::ArrayRef<::llvm::SmallVector<::v4f::DimBuilder::Dim>>":$operandDims,
           "::llvm::SmallVectorImpl<::v4f::DimBuilder::Dim> &":$dims)>
  ];
}

#endif // V4F_INTERFACES_TD
