//===- Compiler.cpp - the v4f compile pipeline ----------------------------===//
#include "v4f/Compiler/Compiler.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Import/ONNXImporter.h"
#include "v4f/Transforms/Passes.h"
#include "v4f/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

namespace v4f {

namespace {

std::string baseName(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(0, dot);
  return name;
}

void enableIRPrinting(mlir::PassManager &pm) {
  pm.getContext()->disableMultithreading();
  pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                      [](mlir::Pass *, mlir::Operation *) { return true; }, /*printModuleScope=*/true,
                      /*printAfterOnlyOnChange=*/false, /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                      mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
}

struct Phases {
  const CompilerOptions &options;
  void done(const char *phase) const {
    if (options.phaseDone) options.phaseDone(phase);
  }
};

} // namespace

bool compileONNXModel(const std::string &path, const CompilerOptions &options, CompiledModel &out,
                      std::string &error) {
  Phases phases{options};
  mlir::MLIRContext context;
  context.loadDialect<V4FDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::scf::SCFDialect,
                      mlir::math::MathDialect, mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect>();
  // Diagnostics are collected with the op's location (ONNX node, file).
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });

  CPUTarget target;
  if (!resolveCPUTarget(options.targetCpu, target, error)) return false;

  ImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  importOptions.dimValues = options.dimValues;
  importOptions.dimBounds = options.dimBounds;
  importOptions.inputValues = options.inputValues;
  importOptions.maxLoopIterations = options.maxLoopIterations;
  importOptions.notes = &out.notes;
  auto module = importONNXModel(context, path, error, importOptions);
  if (!module) return false;
  phases.done("import");
  if (options.printIRAfterAll) {
    // The import is not a pass; print its result the way the pass manager
    // prints the others, so the whole pipeline reads in order.
    llvm::errs() << "// -----// IR Dump After ImportONNX (" << path << ") //----- //\n";
    module->print(llvm::errs(), mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    llvm::errs() << "\n\n";
  }
  if (options.stopAfter == CompilerOptions::Stage::ImportedIR) {
    llvm::raw_string_ostream os(out.graphIR);
    module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    return true;
  }

  // Graph level (target-independent): decomposition, folding, fusion.
  mlir::PassManager graph(&context);
  if (options.printIRAfterAll) enableIRPrinting(graph);
  buildGraphOptimizationPipeline(graph);
  if (mlir::failed(graph.run(*module))) {
    error = path + ": graph optimization failed:\n" + diagnostics;
    return false;
  }
  phases.done("graph optimization");
  if (options.stopAfter == CompilerOptions::Stage::GraphIR) {
    llvm::raw_string_ostream os(out.graphIR);
    module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
    return true;
  }

  // Codegen: dispatch regions, the target's strategy, kernels + the
  // target-independent plan, then the kernels' lowering to the LLVM dialect.
  (*module)->setAttr("v4f.target", getCPUTargetAttr(&context, target));
  GeneratedKernels generated;
  mlir::PassManager codegen(&context);
  if (options.printIRAfterAll) enableIRPrinting(codegen);
  codegen.addNestedPass<mlir::func::FuncOp>(createFormDispatchRegionsPass());
  codegen.addPass(createSelectCPUStrategy());
  codegen.addPass(createPackWeights());
  codegen.addPass(createGenerateCPUKernelsPass(&generated));
  buildCPULowerToLLVMPipeline(codegen);
  if (mlir::failed(codegen.run(*module))) {
    error = path + ": code generation failed:\n" + diagnostics;
    return false;
  }
  out.plan = std::move(generated.plan);
  out.constants = std::move(generated.constants);
  phases.done("dispatch formation, strategy, kernels, LLVM dialect");

  mlir::ModuleOp kernels = *module;
  if (!compileKernelsToObject(kernels, target, out.object, options.wantLLVMIR ? &out.llvmIR : nullptr, error)) {
    error = path + ": " + error;
    return false;
  }
  phases.done("LLVM O3 + object emission");
  if (options.stopAfter == CompilerOptions::Stage::Object) return true;

  PlanExecutable &exe = out.plan.executables.front();
  if (!linkSharedObject(out.object, exe.image, error)) {
    error = path + ": " + error;
    return false;
  }
  phases.done("link (embedded LLD)");
  exe.target = ExecutableTarget::Cpu;
  exe.format = ExecutableFormat::ElfSharedObject;
  exe.abiVersion = V4F_KERNEL_ABI_VERSION;
  exe.triple = target.triple;
  exe.cpu = target.cpu;
  exe.features = target.requiredFeatures;
  out.plan.producer = options.producer;
  out.plan.modelName = baseName(path);
  return true;
}

} // namespace v4f
