//===- V4FDialect.td - The v4f dialect definition ----------*- tablegen -*-===//
#ifndef V4F_DIALECT_TD
#define V4F_DIALECT_TD

include "mlir/IR/AttrTypeBase.td"
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
  let useDefaultAttributePrinterParser = 1;
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

// Codegen attributes: what the compiler knows of its target, and the
// strategy the strategy pass chose from it. Both are printable IR so the
// choices are visible in --print-ir-after-all and testable with FileCheck.
class V4F_Attr<string name, string attrMnemonic> : AttrDef<V4F_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def V4F_CPUTargetAttr : V4F_Attr<"CPUTarget", "cpu_target"> {
  let summary = "The CPU kernels are generated for (module attribute `v4f.target`)";
  let description = [{
    Set by the compile pipeline from `--target-cpu`: the LLVM CPU name, the
    vector ISA (`sse`, `avx2`, `avx512`), the vector width in bits, the number
    of vector registers, the L1D / L2 cache sizes per core in bytes, and
    whether vpdpbusd is there at that width (AVX-512 VNNI, or AVX-VNNI on
    AVX2 parts: `vnni = true`; omitted when false).
    `v4f-select-cpu-strategy` derives tile and vector sizes from it.
  }];
  let parameters = (ins StringRefParameter<"LLVM CPU name">:$cpu,
                        StringRefParameter<"vector ISA">:$isa,
                        "int64_t":$vector_bits,
                        "int64_t":$vector_registers,
                        "int64_t":$l1_cache_bytes,
                        "int64_t":$l2_cache_bytes,
                        DefaultValuedParameter<"bool", "false",
                          "vpdpbusd (AVX-512 VNNI or AVX-VNNI) for int8 GEMMs">:$vnni);
  let assemblyFormat = "`<` struct(params) `>`";
}

def V4F_GemmTilingAttr : V4F_Attr<"GemmTiling", "gemm_tiling"> {
  let summary = "Register and cache tiles of a GEMM-based dispatch (attribute `v4f.tiling`)";
  let description = [{
    Chosen by `v4f-select-cpu-strategy` for `v4f.matmul` and `v4f.conv`:
    `lanes` f32 lanes per vector, a register tile of `mr` rows by `nr`
    columns (`nr` a multiple of `lanes`) accumulated over blocks of `kc`
    steps of K (a `kc` x `nr` slice of B stays in L1 while the workgroup's
    row tiles pass over it), inside a workgroup tile of `mb` x `nb` output
    elements.
  }];
  let parameters = (ins "int64_t":$mr, "int64_t":$nr, "int64_t":$lanes,
                        "int64_t":$mb, "int64_t":$nb, "int64_t":$kc);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class V4F_Op<string mnemonic, list<Trait> traits = []> :
    Op<V4F_Dialect, mnemonic, traits>;

#endif // V4F_DIALECT_TD
