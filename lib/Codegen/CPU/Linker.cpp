//===- Linker.cpp - ELF object -> shared object with the embedded LLD ------===//
#include "v4f/Codegen/CPUCodegen.h"

#include "lld/Common/Driver.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

namespace v4f {

bool linkSharedObject(const std::vector<uint8_t> &object, std::vector<uint8_t> &sharedObject, std::string &error) {
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
  std::vector<const char *> args = {"ld.lld", "-shared", "--build-id=none",  "-z", "noexecstack",  "-z",
                                    "now",    "-s",      "--hash-style=gnu", "-o", soPath.c_str(), objPath.c_str()};
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
