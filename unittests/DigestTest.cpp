// DigestTest.cpp - the v4f digest (artifact_format.h): the BLAKE3 tree that
// v4fc writes against values computed by an independent implementation, the
// runtime checking the same tree leaf by leaf, and 5.0-5.1 artifacts
// (BLAKE2b trees, BLAKE2b-512 signatures) still loaded and still checked.
#include "TestArtifacts.h"

#include "v4f/Artifact/ArtifactSigner.h"
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"
#include "v4f_test/artifact_manifest_objapi.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace v4f::test;

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = uint8_t(i % 251);
  return d;
}

// Tree digests of pattern(n), computed with the `blake3` Python package
// (the Rust implementation) and hashlib.blake2b:
//   leaves = b"".join(H(d[o:o + 2**20]) for o in range(0, len(d), 2**20))
//   H(struct.pack("<Q", len(d)) + leaves)
struct Vector {
  size_t size;
  const char *blake3;
  const char *blake2b;
};
const Vector kVectors[] = {
    {0, "71e0a99173564931c0b8acc52d2685a8e39c64dc52e3d02390fdac2a12b155cb",
     "81e47a19e6b29b0a65b9591762ce5143ed30d0261e5d24a3201752506b20f15c"},
    {1, "a9acaef31dd9374f2d37170551b2c41edc8d33e2259631d768efc846b3cdea59",
     "b9da8f5b3cb98f1f12d25b311474a3e5c841fce2520c9f3d244b03fa90a29d16"},
    {1 << 20, "3bc43061ebefde3000c34f1d4ca7903ab0aa53b73edad446d4462fc62cfcff27",
     "d0ef5a5ccd700891d6ffed93b474761ce44c01a093b4fd56dbe75ccd152f3235"},
    {(1 << 20) + 1, "90e7323c30b4c709743e8e6df62aea0113d85421d3e91621b01ee2dab84b2740",
     "5da954a85bf816c8c908f31b5a3ec6f05b306d533de873ec07ea4e744e602a4a"},
    {(3 << 20) + 5, "308ca53d01615616d5b8bf5fade4729479bf415c869355fc48e48a3ce3283e8b",
     "0a9839e8d9cb89f09dc166f0159fb8412addce6ac6758418e581aa7454e9802c"},
};

std::string hex(const v4f::Digest &d) { return v4f::toHex(d.data(), d.size()); }

TEST(ArtifactDigest, MatchesAnIndependentImplementation) {
  for (const Vector &v : kVectors) {
    std::vector<uint8_t> d = pattern(v.size);
    EXPECT_EQ(hex(v4f::artifactDigest(d.data(), d.size())), v.blake3) << v.size << " bytes";
    EXPECT_EQ(hex(v4f::artifactDigest(d.data(), d.size(), V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE)), v.blake2b)
        << v.size << " bytes";
  }
}

// A 3-leaf constants section: the runtime hashes its leaves on several
// threads and finds a flipped byte in any leaf, the partial last included.
TEST(ArtifactDigest, RuntimeChecksEveryLeaf) {
  std::vector<uint8_t> constants = pattern((3 << 20) + 5);
  std::vector<uint8_t> file = buildArtifact(addScalePlan(), testKernelLibrary(), constants);
  ASSERT_EQ(getU64(file, V4F_HEADER_OFFSET_DIGEST_ALGORITHM), uint64_t(V4F_DIGEST_ALGORITHM_BLAKE3_TREE));
  v4f_status_t s = tryLoad(file);
  ASSERT_EQ(s, nullptr) << v4f_status_message(s);
  std::unique_ptr<v4f::fbtest::ManifestT> m(v4f::fbtest::GetManifest(file.data() + getU64(file, 24))->UnPack());
  ASSERT_EQ(m->sections.size(), 2u);
  const uint64_t at = m->sections[1]->offset;
  EXPECT_EQ(hex(v4f::artifactDigest(constants.data(), constants.size())), kVectors[4].blake3);
  for (size_t leaf = 0; leaf < 4; ++leaf) {
    std::vector<uint8_t> bad = file;
    bad[at + leaf * (1 << 20) + (leaf == 3 ? 4 : 777)] ^= 0x10;
    expectLoadError(bad, "section 1 (constants) digest mismatch (corrupted file)");
  }
}

// Rewrites an artifact as v4fc 5.1 wrote it: BLAKE2b trees for the sections
// and the manifest, digest_algorithm 1, format 5.1.
std::vector<uint8_t> asFormat51(std::vector<uint8_t> file) {
  putU64(file, V4F_HEADER_OFFSET_DIGEST_ALGORITHM, V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE);
  file[10] = 1;
  file[11] = 0;
  editManifest(file, [&](v4f::fbtest::ManifestT &m) {
    for (auto &s : m.sections) {
      v4f::Digest d = v4f::artifactDigest(file.data() + s->offset, s->size, V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE);
      s->digest.assign(d.begin(), d.end());
    }
  });
  return file;
}

float runAddScale(const std::vector<uint8_t> &file, const v4f_model_options_t *options) {
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_memory(file.data(), file.size(), options, nullptr, &model);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  if (s) return -1;
  v4f_session_t *session = nullptr;
  s = v4f_session_create(model, nullptr, nullptr, &session);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1}, out[4] = {0, 0, 0, 0};
  v4f_tensor_t in[2] = {makeTensor(x, 16, V4F_DTYPE_FLOAT32, {1, 4}), makeTensor(y, 16, V4F_DTYPE_FLOAT32, {1, 4})};
  v4f_tensor_t o = makeTensor(out, 16, 0, {});
  if (!s) s = v4f_session_run(session, in, 2, &o, 1);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
  v4f_session_release(session);
  v4f_model_release(model);
  return out[3];
}

TEST(LegacyDigests, Format51ArtifactsStillLoadAndAreChecked) {
  std::vector<uint8_t> file = asFormat51(buildAddScaleArtifact());
  ASSERT_NE(file, buildAddScaleArtifact());
  EXPECT_FLOAT_EQ(runAddScale(file, nullptr), (4 + 1) * 4.f);
  std::unique_ptr<v4f::fbtest::ManifestT> m(v4f::fbtest::GetManifest(file.data() + getU64(file, 24))->UnPack());
  std::vector<uint8_t> bad = file;
  bad[m->sections[1]->offset + 3] ^= 1;
  expectLoadError(bad, "section 1 (constants) digest mismatch (corrupted file)");
  bad = file;
  bad[getU64(file, 24) + 9] ^= 1;
  expectLoadError(bad, "manifest digest mismatch (corrupted file)");
  // A BLAKE3 tree under the BLAKE2b algorithm number is refused: the
  // algorithm field is checked, not guessed.
  bad = buildAddScaleArtifact();
  putU64(bad, V4F_HEADER_OFFSET_DIGEST_ALGORITHM, V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE);
  expectLoadError(bad, "manifest digest mismatch (corrupted file)");
  bad = buildAddScaleArtifact();
  putU64(bad, V4F_HEADER_OFFSET_DIGEST_ALGORITHM, 3);
  expectLoadError(bad, "header digest_algorithm is 3, expected 2 (BLAKE3 tree) or 1 (BLAKE2b-256 tree)");
}

// A signature trailer as v4fc 5.1 wrote it: Ed25519 over BLAKE2b-512 of the
// signed bytes.
void signAsFormat51(std::vector<uint8_t> &file, const v4f::SigningKey &key) {
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(file, key, error)) << error;
  const size_t content = file.size() - sizeof(v4f_signature_t);
  auto *t = reinterpret_cast<v4f_signature_t *>(file.data() + content);
  ASSERT_EQ(t->algorithm, uint32_t(V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE));
  t->algorithm = V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512;
  uint8_t hash[64];
  crypto_generichash(hash, sizeof hash, file.data(), content, nullptr, 0);
  crypto_sign_ed25519_detached(t->signature, nullptr, hash, sizeof hash, key.secret.data());
}

TEST(LegacyDigests, Blake2bSignaturesStillVerify) {
  ASSERT_GE(sodium_init(), 0);
  v4f::SigningKey key;
  crypto_sign_ed25519_keypair(key.publicKey.data(), key.secret.data());
  std::vector<uint8_t> file = asFormat51(buildAddScaleArtifact());
  signAsFormat51(file, key);
  v4f::PublicKey signer;
  std::string detail;
  EXPECT_EQ(v4f::checkArtifactSignature(file, &key.publicKey, signer, detail), v4f::SignatureCheck::Valid) << detail;
  v4f_model_options_t o;
  v4f_model_options_init(&o);
  o.signature_policy = V4F_SIGNATURE_REQUIRE;
  o.trusted_keys = key.publicKey.data();
  o.trusted_key_count = 1;
  EXPECT_FLOAT_EQ(runAddScale(file, &o), (4 + 1) * 4.f);
  // Digests off: the signature alone still covers every byte.
  o.verify_digests = 0;
  std::vector<uint8_t> bad = file;
  bad[200] ^= 2;
  expectLoadError(bad, "the signature does not verify", &o);
  EXPECT_EQ(v4f::checkArtifactSignature(bad, &key.publicKey, signer, detail), v4f::SignatureCheck::Invalid);
  // The same bytes signed the current way (BLAKE3 tree) also verify, and an
  // algorithm number swapped between the two does not.
  std::vector<uint8_t> current = asFormat51(buildAddScaleArtifact());
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(current, key, error)) << error;
  o.verify_digests = 1;
  EXPECT_FLOAT_EQ(runAddScale(current, &o), (4 + 1) * 4.f);
  reinterpret_cast<v4f_signature_t *>(current.data() + current.size() - sizeof(v4f_signature_t))->algorithm =
      V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512;
  expectLoadError(current, "the signature does not verify", &o);
}

} // namespace
