//===- LLVMEmitter.cpp - kernels -> LLVM dialect -> object -> .so ---------===//
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/kernel_abi.h"
#include "v4f/artifact_format.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "lld/Common/Driver.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

LLD_HAS_DRIVER(elf)

using namespace mlir;

namespace v4f {

namespace {
void initializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const CPUTarget &target, std::string &error) {
  initializeLLVMTargets();
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!t) return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(
      t->createTargetMachine(target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
                             llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive));
}

struct ApproximateMathPass : PassWrapper<ApproximateMathPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<math::MathDialect, vector::VectorDialect, arith::ArithDialect, func::FuncDialect>();
  }
  void runOnOperation() override {
    // MLIR's asin/acos approximations are not accurate enough (errors of
    // ~1e-2 seen near |x| = 1): call libm for those instead.
    ModuleOp module = getOperation();
    SmallVector<Operation *> libmOps;
    module.walk([&](Operation *op) {
      if (isa<math::AsinOp, math::AcosOp>(op) && llvm::isa<FloatType>(op->getResult(0).getType()))
        libmOps.push_back(op);
    });
    for (Operation *op : libmOps) {
      auto type = llvm::cast<FloatType>(op->getResult(0).getType());
      std::string name = isa<math::AsinOp>(op) ? "asin" : "acos";
      if (type.isF32()) name += "f";
      OpBuilder b(op);
      Value arg = op->getOperand(0);
      Type callType = type;
      if (type.isF16()) {
        callType = b.getF32Type();
        arg = b.create<arith::ExtFOp>(op->getLoc(), callType, arg);
        name += "f";
      }
      auto fnType = b.getFunctionType({callType}, {callType});
      if (!module.lookupSymbol(name)) {
        OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
        mb.create<func::FuncOp>(op->getLoc(), name, fnType).setPrivate();
      }
      Value r = b.create<func::CallOp>(op->getLoc(), name, TypeRange{callType}, ValueRange{arg}).getResult(0);
      if (type.isF16()) r = b.create<arith::TruncFOp>(op->getLoc(), type, r);
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};
} // namespace

bool resolveCPUTarget(const std::string &cpu, CPUTarget &target, std::string &error) {
  initializeLLVMTargets();
  target.triple = llvm::sys::getDefaultTargetTriple();
  if (llvm::Triple(target.triple).getArch() != llvm::Triple::x86_64) {
    error = "only x86-64 targets are supported (this machine is " + target.triple + ")";
    return false;
  }
  if (cpu == "host") {
    target.cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features.push_back((f.second ? "+" : "-") + f.first().str());
    std::sort(features.begin(), features.end());
    target.features = llvm::join(features, ",");
  } else {
    target.cpu = cpu;
    target.features = "";
    // Validate the name before building a target machine (which would warn).
    const llvm::Target *t = llvm::TargetRegistry::lookupTarget(target.triple, error);
    if (!t) return false;
    std::unique_ptr<llvm::MCSubtargetInfo> generic(t->createMCSubtargetInfo(target.triple, "", ""));
    if (!generic || !generic->isCPUStringValid(cpu)) {
      error = "unknown --target-cpu '" + cpu + "' (use host, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name such as skylake-avx512, znver3, sapphirerapids)";
      return false;
    }
  }
  auto tm = createTargetMachine(target, error);
  if (!tm) return false;
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  if (!sti->isCPUStringValid(target.cpu)) {
    error = "unknown --target-cpu '" + cpu + "' (use host, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name such as skylake-avx512, znver3, sapphirerapids)";
    return false;
  }
  target.requiredFeatures.clear();
  for (const char *name : {V4F_CPU_FEATURE_NAMES})
    if (sti->checkFeatures(std::string("+") + name)) target.requiredFeatures.push_back(name);
  return true;
}

LogicalResult lowerKernelsToLLVMDialect(ModuleOp kernels, bool printIRAfterAll) {
  PassManager pm(kernels.getContext());
  if (printIRAfterAll) {
    kernels.getContext()->disableMultithreading();
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [](Pass *, Operation *) { return true; }, /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/true);
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(std::make_unique<ApproximateMathPass>());
  // math.ipowi (integer Pow) becomes a loop in a helper function.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (acos, sinh, ...) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  return pm.run(kernels);
}

bool compileKernelsToObject(ModuleOp kernels, const CPUTarget &target, std::vector<uint8_t> &object,
                            std::string *llvmIR, std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  kernels.getContext()->appendDialectRegistry(registry);
  llvm::LLVMContext llvmContext;
  auto module = translateModuleToLLVMIR(kernels, llvmContext, "v4f_kernels");
  if (!module) {
    error = "translation of the kernels to LLVM IR failed";
    return false;
  }
  auto tm = createTargetMachine(target, error);
  if (!tm) return false;
  module->setTargetTriple(target.triple);
  module->setDataLayout(tm->createDataLayout());
  for (llvm::Function &f : *module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", target.cpu);
    if (!target.features.empty()) f.addFnAttr("target-features", target.features);
    f.addFnAttr(llvm::Attribute::NoUnwind);
  }
  auto *i32 = llvm::Type::getInt32Ty(llvmContext);
  new llvm::GlobalVariable(*module, i32, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i32, V4F_KERNEL_ABI_VERSION),
                           V4F_KERNEL_ABI_VERSION_SYMBOL);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(tm.get(), tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*module, mam);

  if (llvmIR) {
    llvm::raw_string_ostream os(*llvmIR);
    module->print(os, nullptr);
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  codegen.run(*module);
  object.assign(buffer.begin(), buffer.end());
  return true;
}

bool linkSharedObject(const std::vector<uint8_t> &object, std::vector<uint8_t> &sharedObject,
                      std::string &error) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("v4f-link", dir)) {
    error = "cannot create a temporary directory: " + ec.message();
    return false;
  }
  std::string objPath = (dir + "/kernels.o").str(), soPath = (dir + "/kernels.so").str();
  auto cleanup = [&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(soPath);
    llvm::sys::fs::remove(dir);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec) {
      error = "cannot write " + objPath + ": " + ec.message();
      cleanup();
      return false;
    }
    os.write(reinterpret_cast<const char *>(object.data()), object.size());
  }
  std::vector<const char *> args = {"ld.lld", "-shared", "--build-id=none", "-z", "noexecstack",
                                    "-z", "now", "-s", "--hash-style=gnu", "-o", soPath.c_str(),
                                    objPath.c_str()};
  // Kernels may call libm (acos, sinh, ...); recorded as DT_NEEDED only
  // when they do.
  static const char *kLibm = "/lib/x86_64-linux-gnu/libm.so.6";
  if (llvm::sys::fs::exists(kLibm)) {
    args.push_back("--as-needed");
    args.push_back(kLibm);
  }
  std::string linkerOutput;
  llvm::raw_string_ostream out(linkerOutput), err(linkerOutput);
  lld::Result result = lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0) {
    error = "linking the kernels failed: " + linkerOutput;
    cleanup();
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(soPath);
  if (!buffer) {
    error = "cannot read the linked shared object";
    cleanup();
    return false;
  }
  sharedObject.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  cleanup();
  return true;
}

} // namespace v4f
