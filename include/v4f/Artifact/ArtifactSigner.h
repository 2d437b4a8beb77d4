//===- ArtifactSigner.h - Ed25519 signing of .v4f artifacts -----*- C++ -*-===//
//
// Signing keys and the signature trailer of format 3.4 (see
// runtime/include/v4f/artifact_format.h and docs/security.md), with
// libsodium. Plain C++17: no MLIR/LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_ARTIFACT_ARTIFACTSIGNER_H
#define V4F_ARTIFACT_ARTIFACTSIGNER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace v4f {

using PublicKey = std::array<uint8_t, 32>;

struct SigningKey {
  std::array<uint8_t, 64> secret{}; // libsodium's Ed25519 secret key (seed + public key)
  PublicKey publicKey{};
};

/// The v4f digest of `size` bytes (format 5): the hash tree over 1 MiB leaves
/// that artifact_format.h defines, for the manifest and sections; BLAKE3
/// (what v4fc writes) or, for the 5.0-5.1 artifacts, BLAKE2b-256.
using Digest = std::array<uint8_t, 32>;
Digest artifactDigest(const uint8_t *data, size_t size, uint32_t algorithm = 2 /* V4F_DIGEST_ALGORITHM_BLAKE3_TREE */);

/// Lowercase hex of `size` bytes.
std::string toHex(const uint8_t *data, size_t size);

/// Makes a new key pair and writes it: the secret key to `path` (created
/// 0600, refused if it exists), the public key to `path + ".pub"`.
bool generateSigningKeyFiles(const std::string &path, SigningKey &key, std::string &error);
/// Reads a secret key file written by generateSigningKeyFiles.
bool loadSigningKey(const std::string &path, SigningKey &key, std::string &error);
/// Reads a public key file ("v4f-ed25519-public-key <hex>" or bare hex).
bool loadPublicKey(const std::string &path, PublicKey &key, std::string &error);

/// Signs artifact bytes in place: drops an existing signature, points the
/// header at a new trailer and appends it.
bool signArtifactBytes(std::vector<uint8_t> &bytes, const SigningKey &key, std::string &error);

enum class SignatureCheck { Valid, Unsigned, Invalid, UntrustedKey, Malformed };
/// Checks the signature of artifact bytes; with `trusted` set, a valid
/// signature by another key is UntrustedKey. `signer` receives the trailer's
/// key when there is one; `detail` says what is wrong.
SignatureCheck checkArtifactSignature(const std::vector<uint8_t> &bytes, const PublicKey *trusted, PublicKey &signer,
                                      std::string &detail);

/// A 32-byte XChaCha20-Poly1305 key for encrypted sections (format 4).
using EncryptionKey = std::array<uint8_t, 32>;

/// Makes a random encryption key and writes it to `path` (created 0600,
/// refused if it exists): "v4f-xchacha20poly1305-key <64 hex digits>".
bool generateEncryptionKeyFile(const std::string &path, EncryptionKey &key, std::string &error);
/// Reads an encryption key file (refused when readable by others).
bool loadEncryptionKey(const std::string &path, EncryptionKey &key, std::string &error);
/// The key's id: the first 16 bytes of BLAKE2b-256(key).
std::array<uint8_t, 16> encryptionKeyId(const EncryptionKey &key);
/// Encrypts `plain` as a libsodium secretstream (XChaCha20-Poly1305) in
/// V4F_CIPHER_CHUNK chunks: header, chunks, the last tagged FINAL.
bool encryptSection(const std::vector<uint8_t> &plain, const EncryptionKey &key, std::vector<uint8_t> &out,
                    std::string &error);

/// Writes `bytes` to `path` atomically (a temporary file in the same folder,
/// renamed over `path` when complete; nothing left behind on failure).
bool writeFileAtomically(const std::string &path, const std::vector<uint8_t> &bytes, std::string &error);

} // namespace v4f

#endif // V4F_ARTIFACT_ARTIFACTSIGNER_H
