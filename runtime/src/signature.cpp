// signature.cpp - Ed25519 signatures of artifacts, checked with libsodium
// loaded on demand (dlopen), so the runtime's DT_NEEDED stays libc/libm/
// libpthread/libdl and a process that never verifies never loads it.
#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>

#include "model.h"
#include "v4f/artifact_format.h"

namespace v4f {
namespace rt {

namespace {

constexpr v4f_status_code_t kBad = V4F_STATUS_INVALID_ARTIFACT;
constexpr size_t kDigestBytes = 64;

struct Sodium {
  bool ok = false;
  char error[256] = {0};
  int (*init)() = nullptr;
  size_t (*stateBytes)() = nullptr;
  int (*hashInit)(void*, const unsigned char*, size_t, size_t) = nullptr;
  int (*hashUpdate)(void*, const unsigned char*, unsigned long long) = nullptr;
  int (*hashFinal)(void*, unsigned char*, size_t) = nullptr;
  int (*verify)(const unsigned char*, const unsigned char*, unsigned long long, const unsigned char*) = nullptr;
};

Sodium gSodium;
pthread_once_t gSodiumOnce = PTHREAD_ONCE_INIT;

template <typename F>
bool bind(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out) snprintf(gSodium.error, sizeof gSodium.error, "libsodium lacks %s", name);
  return *out != nullptr;
}

void loadSodium() {
  void* lib = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libsodium.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(gSodium.error, sizeof gSodium.error,
             "cannot load libsodium to verify signatures (%s); install it (Debian: apt-get install libsodium23)",
             dlerror());
    return;
  }
  if (!bind(lib, "sodium_init", &gSodium.init) || !bind(lib, "crypto_generichash_statebytes", &gSodium.stateBytes) ||
      !bind(lib, "crypto_generichash_init", &gSodium.hashInit) ||
      !bind(lib, "crypto_generichash_update", &gSodium.hashUpdate) ||
      !bind(lib, "crypto_generichash_final", &gSodium.hashFinal) ||
      !bind(lib, "crypto_sign_ed25519_verify_detached", &gSodium.verify))
    return;
  if (gSodium.init() < 0) {
    snprintf(gSodium.error, sizeof gSodium.error, "sodium_init failed");
    return;
  }
  gSodium.ok = true;
}

// BLAKE2b-512 of data[0, size).
v4f_status_t digest(const Allocator& allocator, const uint8_t* data, uint64_t size, uint8_t out[kDigestBytes]) {
  size_t bytes = gSodium.stateBytes();
  void* state = allocator.alloc(bytes, 64);
  if (!state) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory hashing the artifact");
  int rc = gSodium.hashInit(state, nullptr, 0, kDigestBytes);
  // In chunks: crypto_generichash_update takes any length, but keep each call
  // bounded so a huge file is hashed the same way on every platform.
  constexpr uint64_t kChunk = uint64_t(1) << 24;
  for (uint64_t off = 0; rc == 0 && off < size; off += kChunk)
    rc = gSodium.hashUpdate(state, data + off, size - off < kChunk ? size - off : kChunk);
  if (rc == 0) rc = gSodium.hashFinal(state, out, kDigestBytes);
  allocator.free(state);
  return rc == 0 ? nullptr : makeStatus(V4F_STATUS_INTERNAL, "BLAKE2b failed");
}

}  // namespace

v4f_status_t verifySignature(v4f_model_s* m, const LoadOptions& options) {
  m->signatureState = V4F_SIGNATURE_STATE_UNCHECKED;
  m->signerKey = nullptr;
  if (options.signaturePolicy == V4F_SIGNATURE_OFF) return nullptr;
  const bool require = options.signaturePolicy == V4F_SIGNATURE_REQUIRE;
  if (m->contentSize == m->size) {
    if (require)
      return makeStatus(kBad, "the artifact is not signed, and the signature policy requires a signature "
                              "by a trusted key (sign it: v4fc sign)");
    m->signatureState = V4F_SIGNATURE_STATE_UNSIGNED;
    return nullptr;
  }
  const auto* trailer = reinterpret_cast<const v4f_signature_t*>(m->base + m->contentSize);
  if (memcmp(trailer->magic, V4F_SIGNATURE_MAGIC, 8) != 0)
    return makeStatus(kBad, "the signature trailer has a bad magic (corrupted file)");
  if (trailer->algorithm != V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512)
    return makeStatus(kBad, "the signature uses unknown algorithm %u", trailer->algorithm);
  // The trailer is not itself signed: every byte of it must be meaningful.
  bool reservedZero = trailer->reserved0 == 0;
  for (uint8_t b : trailer->reserved) reservedZero = reservedZero && b == 0;
  if (!reservedZero) return makeStatus(kBad, "the signature trailer's reserved bytes are not zero (corrupted file)");
  pthread_once(&gSodiumOnce, loadSodium);
  if (!gSodium.ok) return makeStatus(V4F_STATUS_UNSUPPORTED, "%s", gSodium.error);
  uint8_t hash[kDigestBytes];
  if (v4f_status_t s = digest(m->allocator, m->base, m->contentSize, hash)) return s;
  if (gSodium.verify(trailer->signature, hash, kDigestBytes, trailer->public_key) != 0)
    return makeStatus(kBad, "the signature does not verify: the artifact was modified after signing, or the "
                            "signature is corrupted");
  bool trusted = false;
  for (size_t k = 0; k < options.trustedKeyCount && !trusted; ++k)
    trusted = memcmp(options.trustedKeys + 32 * k, trailer->public_key, 32) == 0;
  if (!trusted) {
    if (require) {
      char hex[17];
      for (int i = 0; i < 8; ++i) snprintf(hex + 2 * i, 3, "%02x", trailer->public_key[i]);
      return makeStatus(kBad, "the artifact is signed by key %s..., which is not one of the %zu trusted keys",
                        hex, options.trustedKeyCount);
    }
    m->signatureState = V4F_SIGNATURE_STATE_UNTRUSTED;
  } else {
    m->signatureState = V4F_SIGNATURE_STATE_VERIFIED;
  }
  m->signerKey = trailer->public_key;
  return nullptr;
}

}  // namespace rt
}  // namespace v4f

extern "C" V4F_API v4f_status_t v4f_read_public_key_file(const char* path, uint8_t out_key[32]) {
  using v4f::rt::makeStatus;
  if (!path || !out_key) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "path or out_key is NULL");
  FILE* f = fopen(path, "re");
  if (!f) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: cannot read the public key file", path);
  char text[256] = {0};
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  const char* tag = "v4f-ed25519-public-key";
  const char* p = text;
  if (strncmp(p, tag, strlen(tag)) == 0) p += strlen(tag);
  while (*p == ' ' || *p == '\t') ++p;
  for (int i = 0; i < 32; ++i) {
    int v = 0;
    for (int k = 0; k < 2; ++k, ++p) {
      char c = *p;
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0)
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                          "%s: not a public key file ('v4f-ed25519-public-key <64 hex digits>')", path);
      v = v * 16 + d;
    }
    out_key[i] = static_cast<uint8_t>(v);
  }
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
  if (*p) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: trailing text after the public key", path);
  return nullptr;
}
