// kernel_library.cpp - loads the artifact's CPU shared object from memory (memfd + dlopen).
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model.h"
#include "v4f/artifact_format.h"

namespace v4f {
namespace rt {

namespace {
bool writeAll(int fd, const uint8_t* p, uint64_t n) {
  while (n > 0) {
    size_t chunk = n > (1u << 30) ? (1u << 30) : static_cast<size_t>(n);
    ssize_t w = write(fd, p, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<uint64_t>(w);
  }
  return true;
}
}  // namespace

v4f_status_t loadKernelLibrary(v4f_model_s* m) {
  const fb::Manifest* mf = m->manifest;
  uint32_t nker = mf->kernels() ? mf->kernels()->size() : 0;
  const fb::Section* lib = nullptr;
  if (mf->sections())
    for (uint32_t i = 0; i < mf->sections()->size(); ++i)
      if (mf->sections()->Get(i)->kind() == V4F_SECTION_CPU_LIBRARY) lib = mf->sections()->Get(i);
  if (!lib) {
    if (nker == 0) return nullptr;
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                      "the plan uses %u kernels but the artifact has no CPU library section", nker);
  }
  if (lib->size() < 4 || memcmp(m->base + lib->offset(), "\x7f" "ELF", 4) != 0)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "the CPU library section is not an ELF file");

  int fd = memfd_create("v4f-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(V4F_STATUS_INTERNAL, "memfd_create failed: %s", strerror(errno));
  m->libraryFd = fd;
  if (!writeAll(fd, m->base + lib->offset(), lib->size()))
    return makeStatus(V4F_STATUS_INTERNAL, "writing the CPU library to memory failed: %s",
                      strerror(errno));
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  m->libraryHandle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!m->libraryHandle) {
    const char* err = dlerror();
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "cannot load the CPU library: %s",
                      err ? err : "dlopen failed");
  }
  const void* abi = dlsym(m->libraryHandle, V4F_KERNEL_ABI_VERSION_SYMBOL);
  if (!abi)
    return makeStatus(V4F_STATUS_UNSUPPORTED, "the CPU library does not export '%s'",
                      V4F_KERNEL_ABI_VERSION_SYMBOL);
  int32_t version;
  memcpy(&version, abi, sizeof(version));
  if (version != V4F_KERNEL_ABI_VERSION)
    return makeStatus(V4F_STATUS_UNSUPPORTED,
                      "the CPU library uses kernel ABI version %d, this runtime supports %d",
                      version, V4F_KERNEL_ABI_VERSION);
  if (!m->kernels.allocate(m->allocator, nker))
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < nker; ++k) {
    const char* name = mf->kernels()->Get(k)->c_str();
    void* sym = dlsym(m->libraryHandle, name);
    if (!sym)
      return makeStatus(V4F_STATUS_NOT_FOUND, "kernel '%s' is not exported by the CPU library",
                        name);
    v4f_kernel_fn_t fn;
    static_assert(sizeof(fn) == sizeof(sym), "function pointers are data pointer sized");
    memcpy(&fn, &sym, sizeof(fn));
    m->kernels[k] = fn;
  }
  return nullptr;
}

void unloadKernelLibrary(v4f_model_s* m) {
  if (m->libraryHandle) dlclose(m->libraryHandle);
  m->libraryHandle = nullptr;
  if (m->libraryFd >= 0) close(m->libraryFd);
  m->libraryFd = -1;
}

}  // namespace rt
}  // namespace v4f
