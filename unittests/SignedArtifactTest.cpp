// Signed artifacts (format 3.4): the runtime's signature policies, a bit flip
// anywhere refused under require (by the signature check, before the
// manifest is read), untrusted and missing signatures, and no code mapped
// for a refused file.
#include "TestArtifacts.h"

#include "v4f/Artifact/ArtifactSigner.h"
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using v4f::test::buildAddScaleArtifact;
using v4f::test::makeTensor;

v4f::SigningKey makeKey() {
  v4f::SigningKey key;
  EXPECT_EQ(sodium_init() >= 0, true);
  crypto_sign_ed25519_keypair(key.publicKey.data(), key.secret.data());
  return key;
}

struct LoadResult {
  v4f_model_t *model = nullptr;
  std::string error;
  ~LoadResult() { v4f_model_release(model); }
};

void load(const std::vector<uint8_t> &bytes, int32_t policy, const std::vector<v4f::PublicKey> &keys, LoadResult &r) {
  v4f_model_options_t o;
  v4f_model_options_init(&o);
  o.signature_policy = policy;
  std::vector<uint8_t> flat;
  for (const auto &k : keys) flat.insert(flat.end(), k.begin(), k.end());
  o.trusted_keys = flat.data();
  o.trusted_key_count = keys.size();
  v4f_status_t s = v4f_model_load_memory(bytes.data(), bytes.size(), &o, nullptr, &r.model);
  if (s) r.error = v4f_status_message(s);
  v4f_status_free(s);
}

// Mappings of kernel code (the runtime maps each CPU library from a memfd).
int kernelMappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) n += line.find("v4f-kernels") != std::string::npos;
  return n;
}

TEST(SignedArtifact, RequireAcceptsATrustedSignatureAndRuns) {
  v4f::SigningKey key = makeKey();
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error)) << error;
  EXPECT_EQ(bytes[10] | bytes[11] << 8, V4F_ARTIFACT_FORMAT_MINOR);
  LoadResult r;
  load(bytes, V4F_SIGNATURE_REQUIRE, {makeKey().publicKey, key.publicKey}, r);
  ASSERT_NE(r.model, nullptr) << r.error;
  const uint8_t *signer = nullptr;
  EXPECT_EQ(v4f_model_signature_state(r.model, &signer), V4F_SIGNATURE_STATE_VERIFIED);
  ASSERT_NE(signer, nullptr);
  EXPECT_EQ(memcmp(signer, key.publicKey.data(), 32), 0);
  v4f_session_t *session = nullptr;
  v4f_status_t s = v4f_session_create(r.model, nullptr, nullptr, &session);
  ASSERT_EQ(s, nullptr) << v4f_status_message(s);
  float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1}, out[4];
  v4f_tensor_t in[2] = {makeTensor(x, 16, V4F_DTYPE_FLOAT32, {1, 4}), makeTensor(y, 16, V4F_DTYPE_FLOAT32, {1, 4})};
  v4f_tensor_t o = makeTensor(out, 16, 0, {});
  s = v4f_session_run(session, in, 2, &o, 1);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  EXPECT_FLOAT_EQ(out[3], (4 + 1) * 4.f);
  v4f_session_release(session);
  // Re-signing replaces the signature (the file does not grow twice).
  size_t size = bytes.size();
  v4f::SigningKey other = makeKey();
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, other, error)) << error;
  EXPECT_EQ(bytes.size(), size);
  LoadResult r2;
  load(bytes, V4F_SIGNATURE_REQUIRE, {other.publicKey}, r2);
  EXPECT_NE(r2.model, nullptr) << r2.error;
}

TEST(SignedArtifact, RequireRefusesUnsignedAndUntrusted) {
  std::vector<uint8_t> unsignedBytes = buildAddScaleArtifact();
  v4f::SigningKey key = makeKey();
  LoadResult a;
  int before = kernelMappings();
  load(unsignedBytes, V4F_SIGNATURE_REQUIRE, {key.publicKey}, a);
  EXPECT_EQ(a.model, nullptr);
  EXPECT_NE(a.error.find("the artifact is not signed"), std::string::npos) << a.error;
  std::vector<uint8_t> bytes = unsignedBytes;
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error));
  LoadResult b;
  load(bytes, V4F_SIGNATURE_REQUIRE, {makeKey().publicKey}, b);
  EXPECT_EQ(b.model, nullptr);
  EXPECT_NE(b.error.find("which is not one of the 1 trusted keys"), std::string::npos) << b.error;
  EXPECT_EQ(kernelMappings(), before) << "a refused artifact mapped kernel code";
  // Require with no trusted key is a usage error, not a silent pass.
  LoadResult c;
  load(bytes, V4F_SIGNATURE_REQUIRE, {}, c);
  EXPECT_NE(c.error.find("needs at least one trusted key"), std::string::npos) << c.error;
}

// One bit flipped at every byte of a signed artifact: all refused. Flips in
// the fixed header fields are caught by the header checks; every other flip
// -- manifest, sections, padding, the trailer -- by the signature check,
// which runs before the manifest is read (a manifest flip would otherwise
// give a manifest error). No flip maps code.
TEST(SignedArtifact, EveryBitFlipIsRefusedBeforeTheManifestIsRead) {
  v4f::SigningKey key = makeKey();
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error));
  int before = kernelMappings();
  size_t bySignature = 0, byHeader = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> flipped = bytes;
    flipped[i] ^= static_cast<uint8_t>(1u << (i % 8));
    LoadResult r;
    load(flipped, V4F_SIGNATURE_REQUIRE, {key.publicKey}, r);
    ASSERT_EQ(r.model, nullptr) << "a flip at byte " << i << " was accepted";
    bool sig = r.error.find("signature") != std::string::npos;
    bool manifest = r.error.find("manifest") != std::string::npos || r.error.find("section") != std::string::npos;
    EXPECT_FALSE(manifest) << "byte " << i << " reached the manifest checks: " << r.error;
    if (i >= sizeof(v4f_file_header_t)) EXPECT_TRUE(sig) << "byte " << i << ": " << r.error;
    (sig ? bySignature : byHeader)++;
  }
  EXPECT_EQ(bySignature + byHeader, bytes.size());
  EXPECT_GT(bySignature, bytes.size() - sizeof(v4f_file_header_t));
  EXPECT_EQ(kernelMappings(), before);
}

TEST(SignedArtifact, WarnLoadsUnsignedAndUntrustedButNotTampered) {
  v4f::SigningKey key = makeKey(), other = makeKey();
  std::vector<uint8_t> plain = buildAddScaleArtifact(), bytes = plain;
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error));
  {
    LoadResult r;
    load(plain, V4F_SIGNATURE_WARN, {key.publicKey}, r);
    ASSERT_NE(r.model, nullptr) << r.error;
    EXPECT_EQ(v4f_model_signature_state(r.model, nullptr), V4F_SIGNATURE_STATE_UNSIGNED);
  }
  {
    LoadResult r;
    load(bytes, V4F_SIGNATURE_WARN, {other.publicKey}, r);
    ASSERT_NE(r.model, nullptr) << r.error;
    EXPECT_EQ(v4f_model_signature_state(r.model, nullptr), V4F_SIGNATURE_STATE_UNTRUSTED);
  }
  {
    std::vector<uint8_t> tampered = bytes;
    tampered[sizeof(v4f_file_header_t) + 100] ^= 0x10;
    LoadResult r;
    load(tampered, V4F_SIGNATURE_WARN, {key.publicKey}, r);
    EXPECT_EQ(r.model, nullptr);
    EXPECT_NE(r.error.find("does not verify"), std::string::npos) << r.error;
  }
  {
    // Off: nothing checked, the signed file loads like an unsigned one.
    LoadResult r;
    load(bytes, V4F_SIGNATURE_OFF, {}, r);
    ASSERT_NE(r.model, nullptr) << r.error;
    EXPECT_EQ(v4f_model_signature_state(r.model, nullptr), V4F_SIGNATURE_STATE_UNCHECKED);
  }
}

TEST(SignedArtifact, TruncatedOrBadTrailerIsRefused) {
  v4f::SigningKey key = makeKey();
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error));
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  LoadResult r;
  load(cut, V4F_SIGNATURE_REQUIRE, {key.publicKey}, r);
  EXPECT_NE(r.error.find("file size mismatch"), std::string::npos) << r.error;
  // A header that points the trailer elsewhere.
  std::vector<uint8_t> moved = bytes;
  moved[48] ^= 0x40;
  LoadResult m;
  load(moved, V4F_SIGNATURE_OFF, {}, m);
  EXPECT_NE(m.error.find("signature_offset"), std::string::npos) << m.error;
}

TEST(SignedArtifact, PublicKeyFiles) {
  char path[] = "/tmp/v4f-pubkey-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  v4f::SigningKey key = makeKey();
  {
    std::ofstream f(path);
    f << "v4f-ed25519-public-key " << v4f::toHex(key.publicKey.data(), 32) << "\n";
  }
  uint8_t out[32];
  v4f_status_t s = v4f_read_public_key_file(path, out);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  EXPECT_EQ(memcmp(out, key.publicKey.data(), 32), 0);
  {
    std::ofstream f(path);
    f << "v4f-ed25519-public-key 12zz\n";
  }
  s = v4f_read_public_key_file(path, out);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(v4f_status_message(s)).find("not a public key file"), std::string::npos);
  v4f_status_free(s);
  unlink(path);
  s = v4f_read_public_key_file(path, out);
  ASSERT_NE(s, nullptr);
  v4f_status_free(s);
}

} // namespace
