//===- TargetResolution.cpp - --target-cpu -> CPUTarget -------------------===//
//
// Resolves the CPU the kernels are compiled for: the LLVM triple, CPU name and
// feature string; the CPU features the runtime must check (the executable's
// requirements); and the kernel-generation facts the strategy pass reads
// (vector width, vector registers, cache sizes).
//
//===----------------------------------------------------------------------===//
#include "LLVMTarget.h"

#include "v4f/artifact_format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <mutex>

namespace v4f {

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
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(target.triple, target.cpu, target.features,
                                                                     options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
                                                                     llvm::CodeGenOptLevel::Aggressive));
}

namespace {

const char *kUnknownCpu = "unknown --target-cpu '%s' (use host, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM "
                          "CPU name such as skylake-avx512, znver3, sapphirerapids)";

std::string unknownCpu(const std::string &cpu) {
  std::string msg = kUnknownCpu;
  return msg.replace(msg.find("%s"), 2, cpu);
}

/// Kernel-generation facts from the features the target has. Cache sizes are
/// typical per-core values of the ISA generation (LLVM does not model them
/// for x86): 48 KiB L1D / 2 MiB L2 for AVX-512 server parts, 32 KiB / 512 KiB
/// otherwise. They steer blocking only; numerics never depend on them.
void describeVectorUnit(CPUTarget &target, const llvm::MCSubtargetInfo &sti) {
  bool avx512 = sti.checkFeatures("+avx512f");
  bool avx2 = sti.checkFeatures("+avx2") && sti.checkFeatures("+fma");
  target.isa = avx512 ? "avx512" : avx2 ? "avx2" : "sse";
  target.vectorBits = avx512 ? 512 : avx2 ? 256 : 128;
  target.vectorRegisters = avx512 ? 32 : 16;
  // vpdpbusd at the target's vector width: AVX-512 VNNI (512-bit) or, on
  // AVX2 parts without AVX-512, AVX-VNNI (256-bit, VEX).
  target.vnni = avx512 ? sti.checkFeatures("+avx512vnni") : avx2 && sti.checkFeatures("+avxvnni");
  target.l1CacheBytes = avx512 ? 48 * 1024 : 32 * 1024;
  target.l2CacheBytes = avx512 ? 2048 * 1024 : 512 * 1024;
}

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
    for (const auto &f : llvm::sys::getHostCPUFeatures()) features.push_back((f.second ? "+" : "-") + f.first().str());
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
      error = unknownCpu(cpu);
      return false;
    }
  }
  auto tm = createTargetMachine(target, error);
  if (!tm) return false;
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  if (!sti->isCPUStringValid(target.cpu)) {
    error = unknownCpu(cpu);
    return false;
  }
  target.requiredFeatures.clear();
  for (const char *name : {V4F_CPU_FEATURE_NAMES})
    if (sti->checkFeatures(std::string("+") + name)) target.requiredFeatures.push_back(name);
  describeVectorUnit(target, *sti);
  return true;
}

} // namespace v4f

namespace v4f {

bool resolveCPUTargetList(const std::string &list, std::vector<CPUTarget> &targets, std::string &error) {
  targets.clear();
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(list).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (llvm::StringRef name : names) {
    name = name.trim();
    if (name.empty()) {
      error = "--target-cpu '" + list + "' has an empty entry (expected CPU[,CPU...])";
      return false;
    }
    CPUTarget target;
    if (!resolveCPUTarget(name.str(), target, error)) return false;
    for (const CPUTarget &other : targets)
      if (other.requiredFeatures == target.requiredFeatures) {
        error = "--target-cpu '" + list + "': '" + name.str() + "' needs the same CPU features as '" + other.cpu +
                "'; a multi-ISA artifact keeps one kernel library per feature set";
        return false;
      }
    targets.push_back(std::move(target));
  }
  if (targets.size() > 8) {
    error = "--target-cpu '" + list + "' names " + std::to_string(targets.size()) + " targets; at most 8";
    return false;
  }
  // The baseline (fewest features) first: it is the plan a runtime that
  // does not know variants runs.
  std::stable_sort(targets.begin(), targets.end(), [](const CPUTarget &a, const CPUTarget &b) {
    return a.requiredFeatures.size() < b.requiredFeatures.size();
  });
  return true;
}

} // namespace v4f
