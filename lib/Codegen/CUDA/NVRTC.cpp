//===- NVRTC.cpp - CUDA C++ -> cubins + PTX, packed as a v4f CUDA module -===//
//
// NVRTC is loaded with dlopen when a model is compiled for the GPU, so v4fc
// builds and runs (for the CPU) on machines without the CUDA toolkit; a GPU
// compile there fails with a message naming what is missing.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/kernel_abi.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <sys/stat.h>

namespace v4f {

namespace {

using nvrtcProgram = struct _nvrtcProgram *;
using nvrtcResult = int;

struct Nvrtc {
  void *handle = nullptr;
  std::string includeDir;
  std::string loadError;
  const char *(*getErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram *) = nullptr;
  nvrtcResult (*logSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*log)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*ptxSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*ptx)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*cubinSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*cubin)(nvrtcProgram, char *) = nullptr;
};

bool isDir(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Nvrtc &nvrtc() {
  static Nvrtc n;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("V4F_NVRTC")) candidates.push_back(env);
    for (const char *name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) candidates.push_back(name);
    for (const char *dir : {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/"})
      for (const char *name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        candidates.push_back(std::string(dir) + name);
    std::string tried;
    for (const std::string &c : candidates) {
      n.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.handle) break;
      tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!n.handle) {
      n.loadError = "NVRTC (the CUDA runtime compiler) was not found (tried " + tried +
                    "): install the CUDA toolkit or set V4F_NVRTC to libnvrtc.so";
      return;
    }
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(n.handle, name));
      if (!fn && n.loadError.empty()) n.loadError = std::string("NVRTC lacks ") + name;
    };
    sym(n.getErrorString, "nvrtcGetErrorString");
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.logSize, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.ptxSize, "nvrtcGetPTXSize");
    sym(n.ptx, "nvrtcGetPTX");
    sym(n.cubinSize, "nvrtcGetCUBINSize");
    sym(n.cubin, "nvrtcGetCUBIN");
    // The toolkit's headers (cuda_fp16.h, mma.h) for the tensor-core kernels:
    // beside the library (lib64/../include), or $CUDA_HOME/include.
    Dl_info info;
    if (n.create && dladdr(reinterpret_cast<void *>(n.create), &info) && info.dli_fname) {
      std::string lib = info.dli_fname;
      std::string dir = lib.substr(0, lib.find_last_of('/'));
      for (std::string up : {dir + "/../include", dir + "/../../include", dir + "/../../../include"})
        if (isDir(up) && n.includeDir.empty()) n.includeDir = up;
    }
    if (n.includeDir.empty())
      if (const char *home = std::getenv("CUDA_HOME")) n.includeDir = std::string(home) + "/include";
    if (n.includeDir.empty() && isDir("/usr/local/cuda/include")) n.includeDir = "/usr/local/cuda/include";
  });
  return n;
}

/// One NVRTC compile: `arch` 90 with `cubin` true gives sm_90 SASS, false compute_90 PTX.
bool compileOnce(Nvrtc &n, const std::string &source, int arch, bool cubin, std::vector<uint8_t> &out,
                 std::string &error) {
  nvrtcProgram prog = nullptr;
  nvrtcResult r = n.create(&prog, source.c_str(), "v4f_kernels.cu", 0, nullptr, nullptr);
  if (r != 0) {
    error = std::string("NVRTC could not create the program: ") + n.getErrorString(r);
    return false;
  }
  std::string archOpt =
      std::string(cubin ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") + std::to_string(arch);
  std::string include = "--include-path=" + n.includeDir;
  std::vector<const char *> opts = {archOpt.c_str(), "--std=c++17", "--fmad=true", "--extra-device-vectorization"};
  if (!n.includeDir.empty()) opts.push_back(include.c_str());
  r = n.compile(prog, int(opts.size()), opts.data());
  size_t logSize = 0;
  n.logSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) n.log(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != 0) {
    error = "NVRTC failed to compile the generated CUDA kernels for " + std::string(cubin ? "sm_" : "compute_") +
            std::to_string(arch) + " (" + n.getErrorString(r) + "):\n" + log;
    n.destroy(&prog);
    return false;
  }
  size_t size = 0;
  r = cubin ? n.cubinSize(prog, &size) : n.ptxSize(prog, &size);
  if (r == 0) {
    out.resize(size);
    r = cubin ? n.cubin(prog, reinterpret_cast<char *>(out.data())) : n.ptx(prog, reinterpret_cast<char *>(out.data()));
  }
  n.destroy(&prog);
  if (r != 0 || out.empty()) {
    error = std::string("NVRTC produced no ") + (cubin ? "cubin" : "PTX") + " for arch " + std::to_string(arch);
    return false;
  }
  return true;
}

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

} // namespace

bool buildCudaModule(const std::string &source, const std::vector<std::vector<uint32_t>> &interfaces,
                     const CudaOptions &options, std::vector<uint8_t> &image, std::string &error) {
  Nvrtc &n = nvrtc();
  if (!n.loadError.empty()) {
    error = n.loadError;
    return false;
  }
  struct Image {
    uint32_t kind, arch;
    std::vector<uint8_t> bytes;
  };
  std::vector<Image> images;
  for (int arch : options.archs) {
    images.push_back({V4F_CUDA_IMAGE_CUBIN, uint32_t(arch), {}});
    if (!compileOnce(n, source, arch, /*cubin=*/true, images.back().bytes, error)) return false;
  }
  images.push_back({V4F_CUDA_IMAGE_PTX, uint32_t(options.archs.front()), {}});
  if (!compileOnce(n, source, options.archs.front(), /*cubin=*/false, images.back().bytes, error)) return false;

  std::vector<uint32_t> words;
  for (const auto &iface : interfaces) words.insert(words.end(), iface.begin(), iface.end());
  size_t headerBytes = sizeof(v4f_cuda_module_header_t) + images.size() * sizeof(v4f_cuda_image_t) + words.size() * 4;
  size_t offset = (headerBytes + 255) / 256 * 256;
  image.assign(offset, 0);
  std::memcpy(image.data(), V4F_CUDA_MODULE_MAGIC, 8);
  put32(image, 8, uint32_t(interfaces.size()));
  put32(image, 12, uint32_t(images.size()));
  put32(image, 16, uint32_t(words.size()));
  size_t at = sizeof(v4f_cuda_module_header_t);
  for (Image &im : images) {
    size_t begin = image.size();
    image.insert(image.end(), im.bytes.begin(), im.bytes.end());
    image.resize((image.size() + 255) / 256 * 256, 0);
    put32(image, at, im.kind);
    put32(image, at + 4, im.arch);
    put64(image, at + 8, begin);
    put64(image, at + 16, im.bytes.size());
    at += sizeof(v4f_cuda_image_t);
  }
  for (uint32_t w : words) {
    put32(image, at, w);
    at += 4;
  }
  return true;
}

} // namespace v4f
