//===- LLVMTarget.h - LLVM target machines for the CPU backend -*- C++ -*-===//
#ifndef V4F_LIB_CODEGEN_CPU_LLVMTARGET_H
#define V4F_LIB_CODEGEN_CPU_LLVMTARGET_H

#include "v4f/Codegen/CPUCodegen.h"

#include "llvm/Target/TargetMachine.h"

#include <memory>

namespace v4f {

/// Registers the native target with LLVM once per process.
void initializeLLVMTargets();

/// An O3, PIC target machine for `target` (null with `error` on failure).
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const CPUTarget &target, std::string &error);

} // namespace v4f

#endif
