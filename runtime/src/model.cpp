// model.cpp - v4f_model_* : loading (file mapping or memory), queries, release.
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_features.h"
#include "file_reader.h"

using v4f::rt::makeStatus;

namespace {

#define V4F_OPTION_PRESENT(opts, field)                                                                                \
  ((opts)->struct_size >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))

v4f_status_t parseOptions(const v4f_model_options_t* options, v4f::rt::LoadOptions* out) {
  if (!options) return nullptr;
  if (options->struct_size < sizeof(size_t))
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "model options: struct_size is not set");
  if (V4F_OPTION_PRESENT(options, verify_digests)) out->verifyDigests = options->verify_digests != 0;
  if (V4F_OPTION_PRESENT(options, trusted_key_count)) {
    if (options->signature_policy < V4F_SIGNATURE_OFF || options->signature_policy > V4F_SIGNATURE_REQUIRE)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "signature_policy %d is not off (0), warn (1) or require (2)",
                        options->signature_policy);
    if (options->trusted_key_count && !options->trusted_keys)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "trusted_keys is NULL but trusted_key_count is %zu",
                        options->trusted_key_count);
    if (options->signature_policy == V4F_SIGNATURE_REQUIRE && options->trusted_key_count == 0)
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "signature_policy require needs at least one trusted key");
    out->signaturePolicy = options->signature_policy;
    out->trustedKeys = options->trusted_keys;
    out->trustedKeyCount = options->trusted_key_count;
  }
  if (V4F_OPTION_PRESENT(options, decryption_key_user)) {
    out->decryptionKey = options->decryption_key;
    out->decryptionKeyCallback = options->decryption_key_callback;
    out->decryptionKeyUser = options->decryption_key_user;
  }
  if (V4F_OPTION_PRESENT(options, disabled_cpu_features) && options->disabled_cpu_features) {
    const char* p = options->disabled_cpu_features;
    while (*p) {
      while (*p == ',' || *p == ' ') ++p;
      const char* start = p;
      while (*p && *p != ',' && *p != ' ') ++p;
      if (p == start) continue;
      int idx = v4f::rt::cpuFeatureIndexN(start, static_cast<size_t>(p - start));
      if (idx < 0)
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "disabled_cpu_features: unknown CPU feature '%.*s'",
                          static_cast<int>(p - start), start);
      out->disabledFeatures |= uint64_t(1) << idx;
    }
  }
  return nullptr;
}

void destroyModel(v4f_model_s* m) {
  if (!m) return;
  v4f::rt::unloadExecutables(m);
  for (size_t i = 0; i < m->plaintexts.size(); ++i)
    if (m->plaintexts[i]) {
      explicit_bzero(m->plaintexts[i], static_cast<size_t>(m->sectionSize[i]));
      m->allocator.free(m->plaintexts[i]);
    }
  m->plaintexts.reset();
  m->sectionData.reset();
  m->sectionSize.reset();
  m->prehashed.release(m->allocator);
  m->inputs.reset();
  m->outputs.reset();
  if (m->mapping) munmap(m->mapping, m->size);
  v4f::rt::Allocator a = m->allocator;
  if (m->ownedCopy) a.free(m->ownedCopy);
  a.destroy(m);
}

// Verifies and links a model whose base/size are set. Frees it on failure.
v4f_status_t finishLoad(v4f_model_s* m, const v4f::rt::LoadOptions& options, v4f_model_t** out) {
  v4f_status_t s = v4f::rt::verifyArtifact(m, options);
  if (!s) s = v4f::rt::loadExecutables(m);
  if (!s) s = v4f::rt::verifyKernelInterfaces(m);
  if (s) {
    destroyModel(m);
    return s;
  }
  *out = m;
  return nullptr;
}

} // namespace

extern "C" {

V4F_API void v4f_model_options_init(v4f_model_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->verify_digests = 1;
}

V4F_API v4f_status_t v4f_model_load_memory(const void* data, size_t size, const v4f_model_options_t* options,
                                           const v4f_allocator_t* allocator, v4f_model_t** out_model) {
  if (!out_model) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "out_model is NULL");
  *out_model = nullptr;
  if (!data && size) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "data is NULL");
  v4f::rt::LoadOptions lo;
  if (v4f_status_t s = parseOptions(options, &lo)) return s;
  v4f::rt::Allocator alloc(allocator);
  v4f_model_s* m = alloc.create<v4f_model_s>();
  if (!m) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  m->allocator = alloc;
  m->size = size;
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
    m->ownedCopy = m->allocator.alloc(size, 64);
    if (!m->ownedCopy) {
      destroyModel(m);
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory copying %zu bytes", size);
    }
    memcpy(m->ownedCopy, data, size);
    m->base = static_cast<const uint8_t*>(m->ownedCopy);
  } else {
    m->base = static_cast<const uint8_t*>(data);
  }
  return finishLoad(m, lo, out_model);
}

V4F_API v4f_status_t v4f_model_load_file(const char* path, const v4f_model_options_t* options,
                                         const v4f_allocator_t* allocator, v4f_model_t** out_model) {
  if (!out_model) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "out_model is NULL");
  *out_model = nullptr;
  if (!path) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "path is NULL");
  v4f::rt::LoadOptions lo;
  if (v4f_status_t s = parseOptions(options, &lo)) return s;

  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
  // refused below as not a regular file).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return makeStatus(errno == ENOENT ? V4F_STATUS_NOT_FOUND : V4F_STATUS_INVALID_ARGUMENT, "%s: cannot open: %s", path,
                      strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: not a regular file", path);
  }
  // The file is read into private memory, not mapped: a mapping would see
  // later writes to the file (another process truncating it gives SIGBUS,
  // overwriting it changes the weights -- or the code after its signature
  // was checked). What is verified is exactly what runs.
  size_t size = static_cast<size_t>(st.st_size);
  void* mapping = nullptr;
  v4f::rt::Allocator alloc(allocator);
  v4f::rt::Prehashed prehashed; // leaves hashed while reading (file_reader.h)
  if (size > 0) {
    mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) {
      close(fd);
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes to load it", path, size);
    }
    // Transparent huge pages: a 100 MB artifact takes 50 faults, not 25,000.
    madvise(mapping, size, MADV_HUGEPAGE);
    v4f::rt::ReadFailure failed;
    if (!v4f::rt::readArtifactFile(fd, static_cast<uint8_t*>(mapping), size, lo, alloc, &prehashed, &failed)) {
      close(fd);
      munmap(mapping, size);
      return makeStatus(failed.err == ENOMEM ? V4F_STATUS_RESOURCE_EXHAUSTED : V4F_STATUS_INVALID_ARGUMENT,
                        "%s: %s at byte %zu of %zu", path,
                        failed.err ? strerror(failed.err) : "the file shrank while it was being read", failed.at, size);
    }
    struct stat after;
    if (fstat(fd, &after) != 0 || after.st_size != st.st_size) {
      close(fd);
      munmap(mapping, size);
      prehashed.release(alloc);
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: the file changed size while it was being read", path);
    }
    mprotect(mapping, size, PROT_READ);
  }
  close(fd);

  v4f_model_s* m = alloc.create<v4f_model_s>();
  if (!m) {
    if (mapping) munmap(mapping, size);
    prehashed.release(alloc);
    return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "%s: out of memory", path);
  }
  m->allocator = alloc;
  m->mapping = mapping;
  m->prehashed = prehashed;
  m->base = static_cast<const uint8_t*>(mapping);
  m->size = size;
  static const uint8_t kEmpty[1] = {0};
  if (!m->base) m->base = kEmpty;
  v4f_status_t s = finishLoad(m, lo, out_model);
  return s ? v4f::rt::prefixStatus(path, s) : nullptr;
}

V4F_API void v4f_model_release(v4f_model_t* model) { destroyModel(model); }

V4F_API int32_t v4f_model_encrypted(const v4f_model_t* model) { return model && model->encrypted ? 1 : 0; }

V4F_API int32_t v4f_model_signature_state(const v4f_model_t* model, const uint8_t** out_key) {
  if (out_key) *out_key = model ? model->signerKey : nullptr;
  return model ? model->signatureState : V4F_SIGNATURE_STATE_UNCHECKED;
}

V4F_API size_t v4f_model_input_count(const v4f_model_t* model) { return model ? model->inputs.size() : 0; }

V4F_API size_t v4f_model_output_count(const v4f_model_t* model) { return model ? model->outputs.size() : 0; }

V4F_API const char* v4f_model_name(const v4f_model_t* model) {
  return model ? v4f::rt::str(model->root->model_name()) : "";
}

V4F_API const char* v4f_model_producer(const v4f_model_t* model) {
  return model ? v4f::rt::str(model->root->producer()) : "";
}

V4F_API const char* v4f_model_target_cpu(const v4f_model_t* model) {
  if (!model || !model->manifest->executables() || model->manifest->executables()->size() == 0) return "";
  return v4f::rt::str(model->manifest->executables()->Get(0)->cpu());
}

V4F_API size_t v4f_model_variant(const v4f_model_t* model) { return model ? model->variant : 0; }

V4F_API size_t v4f_model_variant_count(const v4f_model_t* model) {
  if (!model) return 0;
  return 1 + (model->root->variants() ? model->root->variants()->size() : 0);
}

V4F_API v4f_status_t v4f_model_input_info(const v4f_model_t* model, size_t index, v4f_tensor_info_t* out_info) {
  if (!model || !out_info) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "model or out_info is NULL");
  if (index >= model->inputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "input index %zu out of range (%zu inputs)", index,
                      model->inputs.size());
  *out_info = model->inputs[index];
  return nullptr;
}

V4F_API v4f_status_t v4f_model_output_info(const v4f_model_t* model, size_t index, v4f_tensor_info_t* out_info) {
  if (!model || !out_info) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "model or out_info is NULL");
  if (index >= model->outputs.size())
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "output index %zu out of range (%zu outputs)", index,
                      model->outputs.size());
  *out_info = model->outputs[index];
  return nullptr;
}

} // extern "C"
