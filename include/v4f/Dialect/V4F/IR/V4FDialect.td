//===- V4FDialect.td - The v4f dialect definition ----------*- tablegen -*-===//
#ifndef V4F_DIALECT_TD
#define V4F_DIALECT_TD

include "mlir/IR/OpBase.td"

def V4F_Dialect : Dialect {
  let name = "v4f";
  let summary = "Normalized tensor operators of the v4f model compiler.";
  let description = [{
    The v4f dialect holds a model after ONNX import: value-semantic tensor ops
    with explicit pads, strides and layouts (no auto_pad, no attribute-vs-input
    opset variants). Dynamic dimensions are `?`; their symbolic names live on
    the entry function's argument attributes (`v4f.dim_names`).
  }];
  let cppNamespace = "::v4f";
  let useDefaultAttributePrinterParser = 0;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

class V4F_Op<string mnemonic, list<Trait> traits = []> :
    Op<V4F_Dialect, mnemonic, traits>;

#endif // V4F_DIALECT_TD
