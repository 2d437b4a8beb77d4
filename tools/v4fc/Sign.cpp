//===- Sign.cpp - v4fc keygen / sign / verify -------------------------------===//
#include "Sign.h"

#include "v4f/Artifact/ArtifactSigner.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace v4f {

namespace {
int fail(const std::string &message) {
  std::fprintf(stderr, "v4fc: error: %s\n", message.c_str());
  return 1;
}

} // namespace

bool readArtifact(const std::string &path, std::vector<uint8_t> &bytes, std::string &error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    error = path + ": not a regular file";
    return false;
  }
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t r = read(fd, bytes.data() + done, bytes.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      close(fd);
      error = path + ": read failed";
      return false;
    }
    done += static_cast<size_t>(r);
  }
  close(fd);
  return true;
}

int runKeygen(const std::string &out) {
  SigningKey key;
  std::string error;
  if (!generateSigningKeyFiles(out, key, error)) return fail(error);
  std::printf("%s\n", toHex(key.publicKey.data(), key.publicKey.size()).c_str());
  std::fprintf(stderr, "v4fc: wrote the secret key %s (0600; keep it secret) and the public key %s.pub\n", out.c_str(),
               out.c_str());
  return 0;
}

int runKeygenEncryption(const std::string &out) {
  EncryptionKey key;
  std::string error;
  if (!generateEncryptionKeyFile(out, key, error)) return fail(error);
  std::array<uint8_t, 16> id = encryptionKeyId(key);
  std::printf("%s\n", toHex(id.data(), id.size()).c_str());
  std::fprintf(stderr, "v4fc: wrote the encryption key %s (0600; keep it secret); its id is printed above\n",
               out.c_str());
  return 0;
}

int runSign(const std::string &artifact, const std::string &keyPath, const std::string &output) {
  SigningKey key;
  std::string error;
  std::vector<uint8_t> bytes;
  if (!loadSigningKey(keyPath, key, error) || !readArtifact(artifact, bytes, error)) return fail(error);
  // Sign only what is intact: a corrupted or foreign-signed file is not
  // blessed by a new signature without notice.
  PublicKey signer;
  std::string detail;
  SignatureCheck was = checkArtifactSignature(bytes, nullptr, signer, detail);
  if (was == SignatureCheck::Malformed) return fail(artifact + ": " + detail);
  if (was == SignatureCheck::Invalid) return fail(artifact + ": " + detail + "; refusing to re-sign it");
  if (!signArtifactBytes(bytes, key, error)) return fail(artifact + ": " + error);
  const std::string &out = output.empty() ? artifact : output;
  if (!writeFileAtomically(out, bytes, error)) return fail(error);
  std::fprintf(stderr, "v4fc: signed %s with key %s\n", out.c_str(),
               toHex(key.publicKey.data(), key.publicKey.size()).c_str());
  return 0;
}

int runVerify(const std::string &artifact, const std::string &pubkey) {
  std::string error;
  std::vector<uint8_t> bytes;
  if (!readArtifact(artifact, bytes, error)) return fail(error);
  PublicKey trusted, signer;
  if (!pubkey.empty() && !loadPublicKey(pubkey, trusted, error)) return fail(error);
  std::string detail;
  SignatureCheck check = checkArtifactSignature(bytes, pubkey.empty() ? nullptr : &trusted, signer, detail);
  if (check != SignatureCheck::Valid) return fail(artifact + ": " + detail);
  std::printf("%s: signature valid, %s%s\n", artifact.c_str(), detail.c_str(),
              pubkey.empty() ? " (no --pubkey given: the signer is not checked against a trusted key)" : "");
  return 0;
}

} // namespace v4f
