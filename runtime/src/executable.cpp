// executable.cpp - loads the artifact's executables (CPU: memfd + dlopen).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model.h"
#include "cuda.h"
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

// The interface table NAME_iface of entry point `name` (kernel ABI 3): its
// symbol's size must match the binding count it states.
v4f_status_t findInterface(void* handle, const char* name, uint32_t index, const uint32_t** out) {
  char symbol[512];
  int len = snprintf(symbol, sizeof symbol, "%s%s", name, V4F_KERNEL_INTERFACE_SUFFIX);
  if (len < 0 || static_cast<size_t>(len) >= sizeof symbol)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: kernel name '%.64s...' is too long", index, name);
  void* table = dlsym(handle, symbol);
  Dl_info info;
  void* symInfo = nullptr;
  if (table && !dladdr1(table, &info, &symInfo, RTLD_DL_SYMENT)) symInfo = nullptr;
  const ElfW(Sym)* sym = static_cast<const ElfW(Sym)*>(symInfo);
  if (!sym)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                      "executable %u: kernel '%s' has no interface table '%s' (kernel ABI %d)", index, name, symbol,
                      V4F_KERNEL_ABI_VERSION);
  const uint32_t* t = static_cast<const uint32_t*>(table);
  if (sym->st_size < 8 || t[0] > (1u << 16) || t[1] > (1u << 16) || sym->st_size != 4 * (2 + uint64_t(t[0])))
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: kernel '%s' has a malformed interface table", index,
                      name);
  *out = t;
  return nullptr;
}

// Loads CPU executable `e` (verified by verifyArtifact: section index in
// range, kind CPU library, entry point names non-empty) into `out`.
v4f_status_t loadCpuExecutable(v4f_model_s* m, uint32_t index, const fb::Executable* e, LoadedExecutable* out) {
  const uint8_t* libData = m->sectionData[e->section()];
  const uint64_t libSize = m->sectionSize[e->section()];
  if (libSize < 4 || memcmp(libData,
                            "\x7f"
                            "ELF",
                            4) != 0)
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: the CPU library section is not an ELF file", index);
#ifdef V4F_FUZZING_STUB_KERNELS
  // Fuzzing builds (fuzz/): the artifact target loads with digests off, so
  // a fuzzed ELF must not reach the dynamic loader (whose robustness against
  // hostile ELF files is glibc's, and which digests and signatures exist to
  // protect). Every entry point is a
  // stub that fails cleanly, so sessions, shape resolution and dispatch still
  // run on fuzzed plans.
  {
    uint32_t n = e->entry_points() ? e->entry_points()->size() : 0;
    out->entryPointCount = n;
    if (n == 0) return nullptr;
    out->entryPoints = static_cast<v4f_kernel_fn_t*>(m->allocator.alloc(n * sizeof(v4f_kernel_fn_t), 16));
    if (!out->entryPoints) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t k = 0; k < n; ++k) out->entryPoints[k] = [](const v4f_dispatch_state_t*) -> int32_t { return 1; };
    return nullptr;
  }
#endif
  // The code lives in memory only (never on disk, also when it was
  // decrypted), sealed so nothing can change it once written.
  int fd = memfd_create("v4f-kernels", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return makeStatus(V4F_STATUS_INTERNAL, "memfd_create failed: %s", strerror(errno));
  out->fd = fd;
  if (!writeAll(fd, libData, libSize))
    return makeStatus(V4F_STATUS_INTERNAL, "writing the CPU library to memory failed: %s", strerror(errno));
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return makeStatus(V4F_STATUS_INTERNAL, "sealing the CPU library's memfd failed: %s", strerror(errno));
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  out->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!out->handle) {
    const char* err = dlerror();
    return makeStatus(V4F_STATUS_INVALID_ARTIFACT, "executable %u: cannot load the CPU library: %s", index,
                      err ? err : "dlopen failed");
  }
  const void* abi = dlsym(out->handle, V4F_KERNEL_ABI_VERSION_SYMBOL);
  if (!abi)
    return makeStatus(V4F_STATUS_UNSUPPORTED, "executable %u: the CPU library does not export '%s'", index,
                      V4F_KERNEL_ABI_VERSION_SYMBOL);
  int32_t version;
  memcpy(&version, abi, sizeof(version));
  if (version != V4F_KERNEL_ABI_VERSION)
    return makeStatus(V4F_STATUS_UNSUPPORTED,
                      "executable %u: the CPU library uses kernel ABI version %d, this runtime supports "
                      "%d (recompile the model with a matching v4fc)",
                      index, version, V4F_KERNEL_ABI_VERSION);
  uint32_t n = e->entry_points() ? e->entry_points()->size() : 0;
  out->entryPointCount = n;
  if (n == 0) return nullptr;
  out->entryPoints = static_cast<v4f_kernel_fn_t*>(m->allocator.alloc(n * sizeof(v4f_kernel_fn_t), 16));
  out->interfaces = static_cast<const uint32_t**>(m->allocator.alloc(n * sizeof(const uint32_t*), 16));
  if (!out->entryPoints || !out->interfaces) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < n; ++k) {
    const char* name = e->entry_points()->Get(k)->c_str();
    void* sym = dlsym(out->handle, name);
    if (!sym)
      return makeStatus(V4F_STATUS_NOT_FOUND, "kernel '%s' is not exported by the CPU library of executable %u", name,
                        index);
    v4f_kernel_fn_t fn;
    static_assert(sizeof(fn) == sizeof(sym), "function pointers are data pointer sized");
    memcpy(&fn, &sym, sizeof(fn));
    out->entryPoints[k] = fn;
    if (v4f_status_t s = findInterface(out->handle, name, index, &out->interfaces[k])) return s;
  }
  return nullptr;
}
} // namespace

v4f_status_t loadExecutables(v4f_model_s* m) {
  const fb::Manifest* mf = m->manifest;
  uint32_t n = mf->executables() ? mf->executables()->size() : 0;
  if (!m->executables.allocate(m->allocator, n)) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  // Array zero-fills; fd 0 is stdin, so mark every slot unloaded first.
  for (uint32_t i = 0; i < n; ++i) m->executables[i].fd = -1;
  for (uint32_t i = 0; i < n; ++i) {
    LoadedExecutable& out = m->executables[i];
    const fb::Executable* e = mf->executables()->Get(i);
    if (e->target() == fb::ExecutableTarget::Cuda) {
      // Verified by verifyArtifact; a session loads it on its device (cuda.cpp).
      out.kind = ExecutableKind::Cuda;
      out.cudaModule = m->sectionData[e->section()];
      out.entryPointCount = e->entry_points() ? e->entry_points()->size() : 0;
      continue;
    }
    if (v4f_status_t s = loadCpuExecutable(m, i, e, &out)) return s;
  }
  return nullptr;
}

v4f_status_t verifyKernelInterfaces(v4f_model_s* m) {
  const fb::Manifest* mf = m->manifest;
  uint32_t ndis = mf->dispatches() ? mf->dispatches()->size() : 0;
  for (uint32_t d = 0; d < ndis; ++d) {
    const fb::Dispatch* dis = mf->dispatches()->Get(d);
    const LoadedExecutable& exe = m->executables[dis->executable()];
    if (dis->transfer() != 0) continue; // a copy, no kernel (verifyDispatches checked it)
    if (exe.kind != ExecutableKind::Cuda && !exe.interfaces) continue; // fuzzing builds' stub kernels
    const uint32_t* t = exe.kind == ExecutableKind::Cuda ? cudaModuleInterface(exe.cudaModule, dis->entry_point())
                                                         : exe.interfaces[dis->entry_point()];
    const char* kernel = mf->executables()->Get(dis->executable())->entry_points()->Get(dis->entry_point())->c_str();
    uint32_t nb = dis->bindings() ? dis->bindings()->size() : 0;
    uint32_t np = dis->push_constants() ? dis->push_constants()->size() : 0;
    if (t[0] != nb || t[1] != np)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                        "dispatch %u '%s' binds %u buffers and %u push constants, but its kernel '%s' takes %u and %u",
                        d, str(dis->name()), nb, np, kernel, t[0], t[1]);
    for (uint32_t j = 0; j < nb; ++j) {
      uint32_t b = dis->bindings()->Get(j);
      fb::BufferKind kind = mf->buffers()->Get(b)->kind();
      if ((t[2 + j] & V4F_BINDING_WRITE) && (kind == fb::BufferKind::Input || kind == fb::BufferKind::Constant))
        return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                          "dispatch %u '%s': kernel '%s' writes its binding %u, which is %s buffer %u (read-only)", d,
                          str(dis->name()), kernel, j,
                          kind == fb::BufferKind::Input ? "the caller's input" : "constant", b);
    }
  }
  return nullptr;
}

void unloadExecutables(v4f_model_s* m) {
  for (size_t i = 0; i < m->executables.size(); ++i) {
    LoadedExecutable& e = m->executables[i];
    if (e.handle) dlclose(e.handle);
    e.handle = nullptr;
    if (e.fd >= 0) close(e.fd);
    e.fd = -1;
    if (e.entryPoints) m->allocator.free(e.entryPoints);
    e.entryPoints = nullptr;
    if (e.interfaces) m->allocator.free(e.interfaces);
    e.interfaces = nullptr;
  }
  m->executables.reset();
}

} // namespace rt
} // namespace v4f
