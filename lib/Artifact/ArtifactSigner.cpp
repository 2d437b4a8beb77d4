//===- ArtifactSigner.cpp - Ed25519 signing of .v4f artifacts ---------------===//
#include "v4f/Artifact/ArtifactSigner.h"

#include "v4f/artifact_format.h"

#include <blake3.h>
#include <sodium.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace v4f {

namespace {
constexpr const char *kSecretTag = "v4f-ed25519-secret-key";
constexpr const char *kPublicTag = "v4f-ed25519-public-key";

uint64_t getU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
void putU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

bool sodiumReady(std::string &error) {
  if (sodium_init() < 0) {
    error = "libsodium failed to initialize";
    return false;
  }
  return true;
}

bool fromHex(const std::string &hex, uint8_t *out, size_t size) {
  size_t n = 0;
  return sodium_hex2bin(out, size, hex.data(), hex.size(), nullptr, &n, nullptr) == 0 && n == size;
}

// Reads "<tag> <hex>" (or just "<hex>" when `bareOk`).
bool readKeyFile(const std::string &path, const char *tag, bool bareOk, uint8_t *out, size_t size, std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the key file: " + std::strerror(errno);
    return false;
  }
  std::string first, second;
  in >> first >> second;
  std::string hex = second.empty() && bareOk ? first : second;
  if ((second.empty() ? !bareOk : first != tag) || !fromHex(hex, out, size)) {
    error =
        path + ": not a " + std::string(tag) + " file ('" + tag + " <" + std::to_string(2 * size) + " hex digits>')";
    return false;
  }
  return true;
}

} // namespace

namespace {
// H(data[0, size)) of the digest tree: BLAKE3 or BLAKE2b-256 (32 bytes).
void treeHash(uint32_t algorithm, const uint8_t *data, size_t size, uint8_t out[V4F_DIGEST_BYTES]) {
  if (algorithm == V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE) {
    crypto_generichash(out, V4F_DIGEST_BYTES, data, size, nullptr, 0);
    return;
  }
  blake3_hasher h;
  blake3_hasher_init(&h);
  blake3_hasher_update(&h, data, size);
  blake3_hasher_finalize(&h, out, V4F_DIGEST_BYTES);
}
} // namespace

Digest artifactDigest(const uint8_t *data, size_t size, uint32_t algorithm) {
  static_assert(V4F_DIGEST_BYTES == 32, "32-byte digests");
  if (algorithm != V4F_DIGEST_ALGORITHM_BLAKE3_TREE && algorithm != V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE)
    abort(); // a programming error: only the two algorithms of artifact_format.h exist
  if (algorithm == V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE && sodium_init() < 0)
    abort(); // cannot happen once libsodium is linked; never digest uninitialized
  // The root's input: le64(size) || leaf_0 || ... || leaf_{n-1}.
  const size_t nleaves = (size + V4F_DIGEST_LEAF_BYTES - 1) / V4F_DIGEST_LEAF_BYTES;
  std::vector<uint8_t> root(8 + nleaves * V4F_DIGEST_BYTES);
  putU64(root.data(), uint64_t(size));
  for (size_t i = 0; i < nleaves; ++i) {
    size_t off = i * V4F_DIGEST_LEAF_BYTES;
    size_t n = size - off < V4F_DIGEST_LEAF_BYTES ? size - off : V4F_DIGEST_LEAF_BYTES;
    treeHash(algorithm, data + off, n, root.data() + 8 + i * V4F_DIGEST_BYTES);
  }
  Digest out;
  treeHash(algorithm, root.data(), root.size(), out.data());
  return out;
}

namespace {

void blake2b512(const uint8_t *data, size_t size, uint8_t out[64]) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 64);
  constexpr size_t kChunk = size_t(1) << 24;
  for (size_t off = 0; off < size; off += kChunk)
    crypto_generichash_update(&state, data + off, size - off < kChunk ? size - off : kChunk);
  crypto_generichash_final(&state, out, 64);
}

// What a signature of `algorithm` signs (artifact_format.h): the v4f digest
// with BLAKE3 (32 bytes) or the BLAKE2b-512 digest (64); returns its size.
size_t signedDigest(uint32_t algorithm, const uint8_t *data, size_t size, uint8_t out[64]) {
  if (algorithm == V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512) {
    blake2b512(data, size, out);
    return 64;
  }
  Digest d = artifactDigest(data, size, V4F_DIGEST_ALGORITHM_BLAKE3_TREE);
  std::memcpy(out, d.data(), d.size());
  return d.size();
}

// The unsigned content length and, when signed, the trailer; false when the
// header is not a v4f header or its signature fields are inconsistent.
bool locate(const std::vector<uint8_t> &bytes, uint64_t &content, const v4f_signature_t *&trailer,
            std::string &detail) {
  trailer = nullptr;
  if (bytes.size() < sizeof(v4f_file_header_t) ||
      std::memcmp(bytes.data(), V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE) != 0) {
    detail = "not a v4f artifact";
    return false;
  }
  if (getU64(bytes.data() + 16) != bytes.size()) {
    detail = "the header's file size does not match (truncated or corrupted)";
    return false;
  }
  uint64_t sig = getU64(bytes.data() + 48);
  content = bytes.size();
  if (sig == 0) return true;
  if (bytes.size() < sizeof(v4f_file_header_t) + sizeof(v4f_signature_t) ||
      sig != bytes.size() - sizeof(v4f_signature_t)) {
    detail = "the signature offset is not the file's last 128 bytes";
    return false;
  }
  content = sig;
  trailer = reinterpret_cast<const v4f_signature_t *>(bytes.data() + sig);
  return true;
}

constexpr const char *kEncryptionTag = "v4f-xchacha20poly1305-key";

std::string octal(unsigned mode) {
  char b[8];
  snprintf(b, sizeof b, "%03o", mode & 0777);
  return b;
}

// A secret key file: refused when others can read it, then "<tag> <hex>".
bool readSecretKeyFile(const std::string &path, const char *tag, const char *what, uint8_t *out, size_t size,
                       std::string &error) {
  if (!sodiumReady(error)) return false;
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    error = path + ": the " + what + " is readable by others (mode " + octal(st.st_mode) + "); chmod 600 it";
    return false;
  }
  return readKeyFile(path, tag, false, out, size, error);
}

bool writeSecretFile(const std::string &path, const std::string &text, std::string &error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = path + ": cannot create the key file" +
            (errno == EEXIST ? std::string(" (it exists; refusing to overwrite a key)")
                             : std::string(": ") + std::strerror(errno));
    return false;
  }
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    error = path + ": cannot write the key: " + std::strerror(errno);
    unlink(path.c_str());
  }
  return ok;
}
} // namespace

std::string toHex(const uint8_t *data, size_t size) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < size; ++i) s += d[data[i] >> 4], s += d[data[i] & 15];
  return s;
}

bool writeFileAtomically(const std::string &path, const std::vector<uint8_t> &bytes, std::string &error) {
  std::string dir = ".";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmpl = (dir == "/" ? std::string("/") : dir + "/") + ".v4f-tmp-XXXXXX";
  std::vector<char> tmpPath(tmpl.begin(), tmpl.end());
  tmpPath.push_back('\0');
  int fd = mkstemp(tmpPath.data());
  if (fd < 0) {
    error = path + ": cannot create a temporary file in '" + dir + "': " + std::strerror(errno);
    return false;
  }
  auto fail = [&](const char *what) {
    error = path + ": " + what + ": " + std::strerror(errno);
    close(fd);
    unlink(tmpPath.data());
    return false;
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    done += static_cast<size_t>(w);
  }
  // mkstemp creates 0600; an artifact is an ordinary output file.
  if (fchmod(fd, 0644) != 0) return fail("chmod failed");
  if (fsync(fd) != 0) return fail("fsync failed");
  if (close(fd) != 0) {
    error = path + ": close failed: " + std::strerror(errno);
    unlink(tmpPath.data());
    return false;
  }
  if (std::rename(tmpPath.data(), path.c_str()) != 0) {
    error = path + ": rename failed: " + std::strerror(errno);
    unlink(tmpPath.data());
    return false;
  }
  return true;
}

bool generateSigningKeyFiles(const std::string &path, SigningKey &key, std::string &error) {
  if (!sodiumReady(error)) return false;
  SigningKey fresh;
  crypto_sign_ed25519_keypair(fresh.publicKey.data(), fresh.secret.data());
  std::string text = std::string(kSecretTag) + " " + toHex(fresh.secret.data(), fresh.secret.size()) + "\n";
  bool ok = writeSecretFile(path, text, error);
  sodium_memzero(text.data(), text.size());
  if (ok) {
    std::string pub = std::string(kPublicTag) + " " + toHex(fresh.publicKey.data(), 32) + "\n";
    std::vector<uint8_t> pubBytes(pub.begin(), pub.end());
    ok = writeFileAtomically(path + ".pub", pubBytes, error);
    if (!ok) unlink(path.c_str());
  }
  if (ok) key = fresh; // `key` is untouched on failure
  sodium_memzero(fresh.secret.data(), fresh.secret.size());
  return ok;
}

bool loadSigningKey(const std::string &path, SigningKey &key, std::string &error) {
  if (!readSecretKeyFile(path, kSecretTag, "secret key file", key.secret.data(), key.secret.size(), error))
    return false;
  crypto_sign_ed25519_sk_to_pk(key.publicKey.data(), key.secret.data());
  return true;
}

bool loadPublicKey(const std::string &path, PublicKey &key, std::string &error) {
  if (!sodiumReady(error)) return false;
  return readKeyFile(path, kPublicTag, true, key.data(), key.size(), error);
}

bool signArtifactBytes(std::vector<uint8_t> &bytes, const SigningKey &key, std::string &error) {
  if (!sodiumReady(error)) return false;
  uint64_t content = 0;
  const v4f_signature_t *old = nullptr;
  if (!locate(bytes, content, old, error)) return false;
  bytes.resize(content); // drop an existing signature
  v4f_signature_t t;
  std::memset(&t, 0, sizeof t);
  std::memcpy(t.magic, V4F_SIGNATURE_MAGIC, 8);
  t.algorithm = V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE;
  std::memcpy(t.public_key, key.publicKey.data(), 32);
  putU64(bytes.data() + 16, content + sizeof t); // file_size
  putU64(bytes.data() + 48, content);            // signature_offset
  uint8_t hash[64];
  size_t hashSize = signedDigest(t.algorithm, bytes.data(), bytes.size(), hash);
  crypto_sign_ed25519_detached(t.signature, nullptr, hash, hashSize, key.secret.data());
  const uint8_t *p = reinterpret_cast<const uint8_t *>(&t);
  bytes.insert(bytes.end(), p, p + sizeof t);
  return true;
}

SignatureCheck checkArtifactSignature(const std::vector<uint8_t> &bytes, const PublicKey *trusted, PublicKey &signer,
                                      std::string &detail) {
  std::string error;
  if (!sodiumReady(error)) {
    detail = error;
    return SignatureCheck::Malformed;
  }
  uint64_t content = 0;
  const v4f_signature_t *t = nullptr;
  if (!locate(bytes, content, t, detail)) return SignatureCheck::Malformed;
  if (!t) {
    detail = "the artifact is not signed";
    return SignatureCheck::Unsigned;
  }
  bool reservedZero = t->reserved0 == 0;
  for (uint8_t b : t->reserved) reservedZero = reservedZero && b == 0;
  if (std::memcmp(t->magic, V4F_SIGNATURE_MAGIC, 8) != 0 ||
      (t->algorithm != V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE &&
       t->algorithm != V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512) ||
      !reservedZero) {
    detail = "the signature trailer is corrupted (bad magic or algorithm)";
    return SignatureCheck::Invalid;
  }
  std::memcpy(signer.data(), t->public_key, 32);
  uint8_t hash[64];
  size_t hashSize = signedDigest(t->algorithm, bytes.data(), content, hash);
  if (crypto_sign_ed25519_verify_detached(t->signature, hash, hashSize, t->public_key) != 0) {
    detail = "the signature does not verify: the artifact was modified after signing";
    return SignatureCheck::Invalid;
  }
  if (trusted && *trusted != signer) {
    detail = "signed by key " + toHex(signer.data(), 32) + ", not the given public key";
    return SignatureCheck::UntrustedKey;
  }
  detail = "signed by key " + toHex(signer.data(), 32);
  return SignatureCheck::Valid;
}

bool generateEncryptionKeyFile(const std::string &path, EncryptionKey &key, std::string &error) {
  if (!sodiumReady(error)) return false;
  EncryptionKey fresh;
  crypto_secretstream_xchacha20poly1305_keygen(fresh.data());
  std::string text = std::string(kEncryptionTag) + " " + toHex(fresh.data(), fresh.size()) + "\n";
  bool ok = writeSecretFile(path, text, error);
  sodium_memzero(text.data(), text.size());
  if (ok) key = fresh; // `key` is untouched on failure
  sodium_memzero(fresh.data(), fresh.size());
  return ok;
}

bool loadEncryptionKey(const std::string &path, EncryptionKey &key, std::string &error) {
  return readSecretKeyFile(path, kEncryptionTag, "key file", key.data(), key.size(), error);
}

std::array<uint8_t, 16> encryptionKeyId(const EncryptionKey &key) {
  uint8_t hash[32];
  crypto_generichash(hash, sizeof hash, key.data(), key.size(), nullptr, 0);
  std::array<uint8_t, 16> id;
  std::memcpy(id.data(), hash, id.size());
  return id;
}

bool encryptSection(const std::vector<uint8_t> &plain, const EncryptionKey &key, std::vector<uint8_t> &out,
                    std::string &error) {
  if (!sodiumReady(error)) return false;
  static_assert(crypto_secretstream_xchacha20poly1305_HEADERBYTES == V4F_CIPHER_HEADER_BYTES, "header size");
  static_assert(crypto_secretstream_xchacha20poly1305_ABYTES == V4F_CIPHER_CHUNK_OVERHEAD, "chunk overhead");
  size_t chunks = plain.empty() ? 1 : (plain.size() + V4F_CIPHER_CHUNK - 1) / V4F_CIPHER_CHUNK;
  out.assign(V4F_CIPHER_HEADER_BYTES + plain.size() + chunks * V4F_CIPHER_CHUNK_OVERHEAD, 0);
  crypto_secretstream_xchacha20poly1305_state state;
  if (crypto_secretstream_xchacha20poly1305_init_push(&state, out.data(), key.data()) != 0) {
    error = "cannot start the encryption stream";
    return false;
  }
  size_t in = 0, at = V4F_CIPHER_HEADER_BYTES;
  for (size_t c = 0; c < chunks; ++c) {
    size_t n = std::min<size_t>(V4F_CIPHER_CHUNK, plain.size() - in);
    unsigned long long written = 0;
    uint8_t tag = c + 1 == chunks ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : 0;
    if (crypto_secretstream_xchacha20poly1305_push(&state, out.data() + at, &written, plain.data() + in, n, nullptr, 0,
                                                   tag) != 0) {
      error = "encryption failed";
      return false;
    }
    in += n;
    at += static_cast<size_t>(written);
  }
  sodium_memzero(&state, sizeof state);
  return at == out.size();
}

} // namespace v4f
