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
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

// Element types ONNX has and MLIR 19's builtin types lack. Storage-only, like
// bf16 and the builtin float8 types: moved and converted, never computed on.
class V4F_Type<string name, string typeMnemonic> : TypeDef<V4F_Dialect, name> {
  let mnemonic = typeMnemonic;
}
def V4F_Float4E2M1 : V4F_Type<"Float4E2M1", "f4E2M1"> {
  let summary = "ONNX FLOAT4E2M1: 1 sign, 2 exponent (bias 1), 1 mantissa bit; no Inf/NaN";
}
def V4F_Float8E8M0 : V4F_Type<"Float8E8M0", "f8E8M0"> {
  let summary = "ONNX FLOAT8E8M0: an unsigned power of two 2^(e-127); 0xFF is NaN";
}

class V4F_Op<string mnemonic, list<Trait> traits = []> :
    Op<V4F_Dialect, mnemonic, traits>;

#endif // V4F_DIALECT_TD
