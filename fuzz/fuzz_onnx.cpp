// libFuzzer target: the ONNX importer and the compiler's graph and codegen
// passes. Bytes are a serialized ModelProto: parsed (protobuf's own limits,
// the node cap), checked (every node's op, opset, attributes, inputs),
// imported into the v4f dialect, then run through the graph optimization
// pipeline (decompositions, folding, fusion) and the CPU codegen front half
// (dispatch regions, strategy, weight packing, kernel and plan generation)
// for the baseline x86-64 target. LLVM lowering and object emission are
// left out: they take no input the plan generation did not already check,
// and would cut the execution rate tenfold.
//
// Every refusal must say why (a non-empty message naming the model); any
// crash, sanitizer report or hang is a bug. External data is read relative
// to an empty directory, so fuzzed `location` fields find nothing.

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Import/ONNXImporter.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {
const std::string &emptyDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/v4f-fuzz-onnx-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return std::string(d ? d : "/nonexistent-v4f-fuzz-dir");
  }();
  return dir;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static v4f::CPUTarget target = [] {
    v4f::CPUTarget t;
    std::string error;
    if (!v4f::resolveCPUTarget("x86-64", t, error)) abort();
    return t;
  }();
  mlir::MLIRContext context;
  context.loadDialect<v4f::V4FDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::scf::SCFDialect,
                      mlir::math::MathDialect, mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect,
                      mlir::cf::ControlFlowDialect>();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    diagnostics += diag.str();
    return mlir::success();
  });
  std::string error;
  v4f::ImportOptions options;
  options.maxLoopIterations = 64; // bounded unrolling keeps one input fast
  std::string bytes(reinterpret_cast<const char *>(data), size);
  auto module = v4f::importONNXModelFromMemory(context, bytes, "fuzz.onnx", emptyDir(), error, options);
  if (!module) {
    if (error.empty()) __builtin_trap(); // a refusal always says why
    return 0;
  }
  mlir::PassManager graph(&context);
  v4f::buildGraphOptimizationPipeline(graph);
  if (mlir::failed(graph.run(*module))) {
    if (diagnostics.empty()) __builtin_trap();
    return 0;
  }
  (*module)->setAttr("v4f.target", v4f::getCPUTargetAttr(&context, target));
  v4f::GeneratedKernels generated;
  mlir::PassManager codegen(&context);
  codegen.addNestedPass<mlir::func::FuncOp>(v4f::createFormDispatchRegionsPass());
  codegen.addPass(v4f::createSelectCPUStrategy());
  codegen.addPass(v4f::createPackWeights());
  codegen.addPass(v4f::createBuildPlanPass(&generated));
  if (mlir::failed(codegen.run(*module)) && diagnostics.empty()) __builtin_trap();
  return 0;
}
