// crypto.cpp - the v4f digests (BLAKE3 trees, linked in; BLAKE2b trees of
// formats 5.0-5.1), Ed25519 signatures and XChaCha20-Poly1305 section
// decryption, with libsodium loaded on demand (dlopen), so the runtime's
// DT_NEEDED stays libc/libm/libpthread/libdl and a process that loads
// unsigned, unencrypted, current artifacts never loads it.
#include <blake3.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
  int (*hashOnce)(unsigned char*, size_t, const unsigned char*, unsigned long long, const unsigned char*,
                  size_t) = nullptr;
  size_t (*stateBytes)() = nullptr;
  int (*hashInit)(void*, const unsigned char*, size_t, size_t) = nullptr;
  int (*hashUpdate)(void*, const unsigned char*, unsigned long long) = nullptr;
  int (*hashFinal)(void*, unsigned char*, size_t) = nullptr;
  int (*verify)(const unsigned char*, const unsigned char*, unsigned long long, const unsigned char*) = nullptr;
  size_t (*streamStateBytes)() = nullptr;
  int (*streamInitPull)(void*, const unsigned char*, const unsigned char*) = nullptr;
  int (*streamPull)(void*, unsigned char*, unsigned long long*, unsigned char*, const unsigned char*,
                    unsigned long long, const unsigned char*, unsigned long long) = nullptr;
  unsigned char (*tagFinal)() = nullptr;
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
             "cannot load libsodium, which the runtime needs to verify signatures, BLAKE2b digests (formats "
             "5.0-5.1) and to decrypt (%s); install it (Debian: apt-get install libsodium23)",
             dlerror());
    return;
  }
  if (!bind(lib, "sodium_init", &gSodium.init) || !bind(lib, "crypto_generichash", &gSodium.hashOnce) ||
      !bind(lib, "crypto_generichash_statebytes", &gSodium.stateBytes) ||
      !bind(lib, "crypto_generichash_init", &gSodium.hashInit) ||
      !bind(lib, "crypto_generichash_update", &gSodium.hashUpdate) ||
      !bind(lib, "crypto_generichash_final", &gSodium.hashFinal) ||
      !bind(lib, "crypto_sign_ed25519_verify_detached", &gSodium.verify) ||
      !bind(lib, "crypto_secretstream_xchacha20poly1305_statebytes", &gSodium.streamStateBytes) ||
      !bind(lib, "crypto_secretstream_xchacha20poly1305_init_pull", &gSodium.streamInitPull) ||
      !bind(lib, "crypto_secretstream_xchacha20poly1305_pull", &gSodium.streamPull) ||
      !bind(lib, "crypto_secretstream_xchacha20poly1305_tag_final", &gSodium.tagFinal))
    return;
  if (gSodium.init() < 0) {
    snprintf(gSodium.error, sizeof gSodium.error, "sodium_init failed");
    return;
  }
  gSodium.ok = true;
}

// BLAKE2b-512 of data[0, size).
v4f_status_t blake2b512(const Allocator& allocator, const uint8_t* data, uint64_t size, uint8_t out[kDigestBytes]) {
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

// One leaf or root hash of a digest tree: H(data[0, size)) into out[32].
int hashBytes(uint32_t algorithm, const uint8_t* data, uint64_t size, uint8_t* out) {
  if (algorithm == V4F_DIGEST_ALGORITHM_BLAKE3_TREE) {
    blake3_hasher h;
    blake3_hasher_init(&h);
    blake3_hasher_update(&h, data, static_cast<size_t>(size));
    blake3_hasher_finalize(&h, out, V4F_DIGEST_BYTES);
    return 0;
  }
  return gSodium.hashOnce(out, V4F_DIGEST_BYTES, data, size, nullptr, 0);
}

// Leaves [first, end) of a digest tree, every `stride`-th (one worker's share).
struct LeafJob {
  uint32_t algorithm;
  const uint8_t* data;
  uint64_t size;
  uint8_t* leaves;
  uint64_t first, end, stride;
  int rc;
};

void* hashLeaves(void* arg) {
  LeafJob* job = static_cast<LeafJob*>(arg);
  for (uint64_t i = job->first; i < job->end && job->rc == 0; i += job->stride) {
    uint64_t off = i * V4F_DIGEST_LEAF_BYTES;
    uint64_t n = job->size - off < V4F_DIGEST_LEAF_BYTES ? job->size - off : V4F_DIGEST_LEAF_BYTES;
    job->rc = hashBytes(job->algorithm, job->data + off, n, job->leaves + i * V4F_DIGEST_BYTES);
  }
  return nullptr;
}

const char* digestName(uint32_t algorithm) {
  return algorithm == V4F_DIGEST_ALGORITHM_BLAKE3_TREE ? "BLAKE3" : "BLAKE2b";
}

} // namespace

v4f_status_t computeDigest(const Allocator& allocator, uint32_t algorithm, const uint8_t* data, uint64_t size,
                           uint8_t out[V4F_DIGEST_BYTES]) {
  if (algorithm != V4F_DIGEST_ALGORITHM_BLAKE3_TREE && algorithm != V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE)
    return makeStatus(kBad, "unknown digest algorithm %u", algorithm);
  if (algorithm == V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE) {
    pthread_once(&gSodiumOnce, loadSodium);
    if (!gSodium.ok)
      return makeStatus(V4F_STATUS_UNSUPPORTED, "%s; or load with verify_digests=0 to skip integrity checks",
                        gSodium.error);
  }
  const uint64_t nleaves = (size + V4F_DIGEST_LEAF_BYTES - 1) / V4F_DIGEST_LEAF_BYTES;
  // The root's input: le64(size) || leaf_0 || ... || leaf_{n-1}.
  uint8_t* root = static_cast<uint8_t*>(allocator.alloc(8 + nleaves * V4F_DIGEST_BYTES, 64));
  if (!root) return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory hashing the artifact");
  for (int i = 0; i < 8; ++i) root[i] = static_cast<uint8_t>(size >> (8 * i));
  uint8_t* leaves = root + 8;
  // Large sections (weights) are hashed on several threads: the tree's
  // leaves are independent. At most 8, and one per 4 leaves.
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t workers = nleaves / 4;
  if (workers > 8) workers = 8;
  if (cpus > 0 && workers > static_cast<uint64_t>(cpus)) workers = static_cast<uint64_t>(cpus);
  if (workers < 1) workers = 1;
  LeafJob jobs[8];
  pthread_t threads[8];
  bool started[8] = {false};
  for (uint64_t w = 0; w < workers; ++w) {
    jobs[w] = LeafJob{algorithm, data, size, leaves, w, nleaves, workers, 0};
    if (w > 0) started[w] = pthread_create(&threads[w], nullptr, hashLeaves, &jobs[w]) == 0;
  }
  // Shares whose thread did not start run here.
  for (uint64_t w = 0; w < workers; ++w)
    if (!started[w]) hashLeaves(&jobs[w]);
  int rc = 0;
  for (uint64_t w = 0; w < workers; ++w) {
    if (started[w]) pthread_join(threads[w], nullptr);
    rc |= jobs[w].rc;
  }
  if (rc == 0) rc = hashBytes(algorithm, root, 8 + nleaves * V4F_DIGEST_BYTES, out);
  allocator.free(root);
  return rc == 0 ? nullptr : makeStatus(V4F_STATUS_INTERNAL, "%s failed", digestName(algorithm));
}

v4f_status_t digestRange(const v4f_model_s* m, uint32_t algorithm, uint64_t offset, uint64_t size,
                         uint8_t out[V4F_DIGEST_BYTES]) {
  if (const Prehashed::Range* r = m->prehashed.find(algorithm, offset, size)) {
    const uint64_t nleaves = (size + V4F_DIGEST_LEAF_BYTES - 1) / V4F_DIGEST_LEAF_BYTES;
    return hashBytes(algorithm, r->root, 8 + nleaves * V4F_DIGEST_BYTES, out) == 0
               ? nullptr
               : makeStatus(V4F_STATUS_INTERNAL, "%s failed", digestName(algorithm));
  }
  return computeDigest(m->allocator, algorithm, m->base + offset, size, out);
}

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
  if (trailer->algorithm != V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE &&
      trailer->algorithm != V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512)
    return makeStatus(kBad, "the signature uses unknown algorithm %u", trailer->algorithm);
  // The trailer is not itself signed: every byte of it must be meaningful.
  bool reservedZero = trailer->reserved0 == 0;
  for (uint8_t b : trailer->reserved) reservedZero = reservedZero && b == 0;
  if (!reservedZero) return makeStatus(kBad, "the signature trailer's reserved bytes are not zero (corrupted file)");
  pthread_once(&gSodiumOnce, loadSodium);
  if (!gSodium.ok) return makeStatus(V4F_STATUS_UNSUPPORTED, "%s", gSodium.error);
  // Algorithm 2 signs the v4f digest (BLAKE3 tree: every core), 1 the
  // BLAKE2b-512 digest of formats 3.4-5.1.
  uint8_t hash[kDigestBytes];
  size_t hashSize = kDigestBytes;
  if (trailer->algorithm == V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE) {
    hashSize = V4F_DIGEST_BYTES;
    if (v4f_status_t s = digestRange(m, V4F_DIGEST_ALGORITHM_BLAKE3_TREE, 0, m->contentSize, hash)) return s;
  } else if (v4f_status_t s = blake2b512(m->allocator, m->base, m->contentSize, hash)) {
    return s;
  }
  if (gSodium.verify(trailer->signature, hash, hashSize, trailer->public_key) != 0)
    return makeStatus(kBad, "the signature does not verify: the artifact was modified after signing, or the "
                            "signature is corrupted");
  bool trusted = false;
  for (size_t k = 0; k < options.trustedKeyCount && !trusted; ++k)
    trusted = memcmp(options.trustedKeys + 32 * k, trailer->public_key, 32) == 0;
  if (!trusted) {
    if (require) {
      char hex[17];
      for (int i = 0; i < 8; ++i) snprintf(hex + 2 * i, 3, "%02x", trailer->public_key[i]);
      return makeStatus(kBad, "the artifact is signed by key %s..., which is not one of the %zu trusted keys", hex,
                        options.trustedKeyCount);
    }
    m->signatureState = V4F_SIGNATURE_STATE_UNTRUSTED;
  } else {
    m->signatureState = V4F_SIGNATURE_STATE_VERIFIED;
  }
  m->signerKey = trailer->public_key;
  return nullptr;
}

v4f_status_t decryptSections(v4f_model_s* m, const LoadOptions& options) {
  const auto* sections = m->root->sections();
  if (!sections) return nullptr;
  for (uint32_t i = 0; i < sections->size(); ++i) {
    const fb::Section* sec = sections->Get(i);
    if (sec->cipher() == V4F_CIPHER_NONE) continue;
    const char* kind = sec->kind() == V4F_SECTION_CONSTANTS ? "constants" : "code";
    // The key: given, or asked for by id.
    uint8_t key[32];
    if (options.decryptionKey) {
      memcpy(key, options.decryptionKey, 32);
    } else if (!options.decryptionKeyCallback ||
               options.decryptionKeyCallback(options.decryptionKeyUser, sec->key_id()->data(), key) != 0) {
      char id[33];
      for (int k = 0; k < 16; ++k) snprintf(id + 2 * k, 3, "%02x", sec->key_id()->Get(k));
      return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                        "section %u (%s) is encrypted with key %s and no decryption key was given "
                        "(v4f-run --decrypt-key, or decryption_key in the model options)",
                        i, kind, id);
    }
    pthread_once(&gSodiumOnce, loadSodium);
    if (!gSodium.ok) {
      explicit_bzero(key, sizeof key);
      return makeStatus(V4F_STATUS_UNSUPPORTED, "%s", gSodium.error);
    }
    const uint64_t plainSize = sec->plain_size();
    uint8_t* plain = static_cast<uint8_t*>(m->allocator.alloc(plainSize ? static_cast<size_t>(plainSize) : 1, 64));
    void* state = m->allocator.alloc(gSodium.streamStateBytes(), 64);
    if (!plain || !state) {
      m->allocator.free(plain);
      m->allocator.free(state);
      explicit_bzero(key, sizeof key);
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "out of memory decrypting section %u", i);
    }
    m->plaintexts[i] = plain; // freed (and wiped) with the model, also on failure below
    m->sectionSize[i] = plainSize;
    const uint8_t* in = m->sectionData[i];
    int rc = gSodium.streamInitPull(state, in, key); // (state, header, key)
    explicit_bzero(key, sizeof key);
    uint64_t at = V4F_CIPHER_HEADER_BYTES, out = 0;
    const uint64_t stored = sec->size();
    bool final = false;
    while (rc == 0 && !final) {
      uint64_t n = plainSize - out < V4F_CIPHER_CHUNK ? plainSize - out : V4F_CIPHER_CHUNK;
      unsigned long long got = 0;
      unsigned char tag = 0;
      rc = gSodium.streamPull(state, plain + out, &got, &tag, in + at, n + V4F_CIPHER_CHUNK_OVERHEAD, nullptr, 0);
      if (rc != 0 || got != n) break;
      at += n + V4F_CIPHER_CHUNK_OVERHEAD;
      out += n;
      final = tag == gSodium.tagFinal();
      if (!final && out == plainSize) rc = -1; // the stream ends without its final chunk
    }
    explicit_bzero(state, gSodium.streamStateBytes());
    m->allocator.free(state);
    if (rc != 0 || !final || out != plainSize || at != stored)
      return makeStatus(V4F_STATUS_INVALID_ARTIFACT,
                        "section %u (%s) cannot be decrypted: wrong key, or the ciphertext was modified or "
                        "truncated",
                        i, kind);
    m->sectionData[i] = plain;
    m->encrypted = true;
  }
  return nullptr;
}

} // namespace rt
} // namespace v4f

namespace {
// Reads "<tag> <64 hex digits>" (or just the hex when !secret) into out_key.
v4f_status_t readKeyFile(const char* path, const char* tag, bool secret, uint8_t out_key[32]) {
  using v4f::rt::makeStatus;
  const char* what = secret ? "encryption key" : "public key";
  if (!path || !out_key) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "path or out_key is NULL");
  FILE* f = fopen(path, "re");
  if (!f) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: cannot read the %s file", path, what);
  struct stat st;
  if (secret && fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0) {
    fclose(f);
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: the key file is readable by others (mode %03o); chmod 600 it",
                      path, static_cast<unsigned>(st.st_mode & 0777));
  }
  char text[256] = {0};
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  const char* p = text;
  if (strncmp(p, tag, strlen(tag)) == 0)
    p += strlen(tag);
  else if (secret) {
    explicit_bzero(text, sizeof text);
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: not an encryption key file ('%s <64 hex digits>')", path, tag);
  }
  while (*p == ' ' || *p == '\t') ++p;
  for (int i = 0; i < 32; ++i) {
    int v = 0;
    for (int k = 0; k < 2; ++k, ++p) {
      char c = *p;
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) {
        explicit_bzero(text, sizeof text);
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: not a %s file ('%s <64 hex digits>')", path, what, tag);
      }
      v = v * 16 + d;
    }
    out_key[i] = static_cast<uint8_t>(v);
  }
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
  bool trailing = *p != 0;
  explicit_bzero(text, sizeof text);
  if (trailing) return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s: trailing text after the %s", path, what);
  return nullptr;
}
} // namespace

extern "C" V4F_API v4f_status_t v4f_read_public_key_file(const char* path, uint8_t out_key[32]) {
  return readKeyFile(path, "v4f-ed25519-public-key", false, out_key);
}

extern "C" V4F_API v4f_status_t v4f_read_encryption_key_file(const char* path, uint8_t out_key[32]) {
  return readKeyFile(path, "v4f-xchacha20poly1305-key", true, out_key);
}
