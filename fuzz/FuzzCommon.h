// FuzzCommon.h - what the runtime fuzz targets share: loading fuzzed bytes
// as an artifact (digests off: a fuzzer cannot forge a cryptographic digest,
// BLAKE3 or BLAKE2b, and mutations must reach the verifiers) and the session
// an untrusted caller would make.
#ifndef V4F_FUZZ_FUZZCOMMON_H
#define V4F_FUZZ_FUZZCOMMON_H

#include "v4f/runtime.h"

#include <cstdint>
#include <cstdio>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace v4f_fuzz {

/// A refusal always says why: an empty message is a bug.
inline void checkStatus(v4f_status_t s) {
  if (s && !v4f_status_message(s)[0]) __builtin_trap();
}

/// The loaded model, or nullptr after a (checked, freed) refusal.
inline v4f_model_t *loadModel(const std::vector<uint8_t> &bytes) {
  v4f_model_options_t mo;
  v4f_model_options_init(&mo);
  mo.verify_digests = 0;
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_memory(bytes.data(), bytes.size(), &mo, nullptr, &model);
  checkStatus(s);
  v4f_status_free(s);
  return model;
}

/// The same bytes as a file, loaded with digests on: v4f_model_load_file
/// plans its hashing from the header and manifest before they are verified
/// (runtime/src/file_reader.cpp), so the fuzzer drives that reader too. The
/// digest checks then refuse nearly every mutation; what is checked is that
/// nothing crashes and a refusal says why.
inline void loadAsFile(const std::vector<uint8_t> &bytes) {
  int fd = memfd_create("v4f-fuzz", MFD_CLOEXEC);
  if (fd < 0) return;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  if (done == bytes.size()) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    v4f_model_t *model = nullptr;
    v4f_status_t s = v4f_model_load_file(path, nullptr, nullptr, &model);
    checkStatus(s);
    v4f_status_free(s);
    v4f_model_release(model);
  }
  close(fd);
}

/// One worker, and the arena bounded as a caller loading untrusted
/// artifacts should (a mutated plan once asked for 2 TiB).
inline v4f_status_t createSession(v4f_model_t *model, uint64_t maxArenaBytes, v4f_session_t **session) {
  v4f_session_options_t so;
  v4f_session_options_init(&so);
  so.thread_count = 1;
  so.max_arena_bytes = maxArenaBytes;
  return v4f_session_create(model, &so, nullptr, session);
}

} // namespace v4f_fuzz

#endif
