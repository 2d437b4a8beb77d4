//===- ObjectEmitter.cpp - LLVM dialect -> LLVM IR -> O3 -> ELF object -----===//
#include "LLVMTarget.h"

#include "v4f/kernel_abi.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"

using namespace mlir;

namespace v4f {

bool compileKernelsToObject(ModuleOp kernels, const CPUTarget &target, std::vector<uint8_t> &object,
                            std::string *llvmIR, std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  kernels.getContext()->appendDialectRegistry(registry);
  // v4f's own attributes (target, plan summary, dispatch names) are for
  // readers of the IR; LLVM translation does not know them.
  auto stripV4F = [](Operation *op) {
    for (NamedAttribute a : llvm::to_vector(op->getDiscardableAttrs()))
      if (a.getName().strref().starts_with("v4f.")) op->removeDiscardableAttr(a.getName());
  };
  // Kernel ABI 3: each entry point's interface table (KernelBuilder::
  // sealInterface) is exported beside it as NAME_iface.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> interfaces;
  for (Operation &op : *kernels.getBody())
    if (auto table = op.getAttrOfType<DenseI32ArrayAttr>("v4f.interface"))
      if (auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        interfaces.push_back({name.str(), std::vector<uint32_t>(table.asArrayRef().begin(), table.asArrayRef().end())});
  stripV4F(kernels);
  for (Operation &op : *kernels.getBody()) stripV4F(&op);
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
                           llvm::ConstantInt::get(i32, V4F_KERNEL_ABI_VERSION), V4F_KERNEL_ABI_VERSION_SYMBOL);
  for (auto &[name, table] : interfaces) {
    llvm::Constant *init = llvm::ConstantDataArray::get(llvmContext, llvm::ArrayRef<uint32_t>(table));
    new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage, init,
                             name + V4F_KERNEL_INTERFACE_SUFFIX);
  }

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

} // namespace v4f
