// Encrypted artifacts (format 4): the code and constants sections are
// XChaCha20-Poly1305 secretstreams; the runtime decrypts them into memory
// only. Right key (given, or from the callback by key id) runs; no key, a
// wrong key, modified or truncated ciphertext are refused; the plaintext is
// nowhere in the file; the code is written to a sealed memfd.
#include "TestArtifacts.h"

#include "v4f/Artifact/ArtifactSigner.h"
#include "v4f/Artifact/ArtifactWriter.h"
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace {

using namespace v4f::test;

v4f::EncryptionKey makeKey() {
  EXPECT_GE(sodium_init(), 0);
  v4f::EncryptionKey k;
  crypto_secretstream_xchacha20poly1305_keygen(k.data());
  return k;
}

std::vector<uint8_t> encryptedAddScale(const v4f::EncryptionKey &key) {
  v4f::ExecutablePlan plan = addScalePlan();
  for (auto &e : plan.executables) e.image = testKernelLibrary();
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_TRUE(v4f::serializeArtifact(plan, addScaleConstants(), out, error, &key)) << error;
  return out;
}

struct Loaded {
  v4f_model_t *model = nullptr;
  std::string error;
  ~Loaded() { v4f_model_release(model); }
};

void load(const std::vector<uint8_t> &bytes, const uint8_t *key, Loaded &l, bool digests = true,
          int32_t (*callback)(void *, const uint8_t *, uint8_t *) = nullptr, void *user = nullptr) {
  v4f_model_options_t o;
  v4f_model_options_init(&o);
  o.verify_digests = digests;
  o.decryption_key = key;
  o.decryption_key_callback = callback;
  o.decryption_key_user = user;
  v4f_status_t s = v4f_model_load_memory(bytes.data(), bytes.size(), &o, nullptr, &l.model);
  if (s) l.error = v4f_status_message(s);
  v4f_status_free(s);
}

void expectRuns(v4f_model_t *model) {
  v4f_session_t *session = nullptr;
  v4f_status_t s = v4f_session_create(model, nullptr, nullptr, &session);
  ASSERT_EQ(s, nullptr) << v4f_status_message(s);
  float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1}, out[4] = {0, 0, 0, 0};
  v4f_tensor_t in[2] = {makeTensor(x, 16, V4F_DTYPE_FLOAT32, {1, 4}), makeTensor(y, 16, V4F_DTYPE_FLOAT32, {1, 4})};
  v4f_tensor_t o = makeTensor(out, 16, 0, {});
  s = v4f_session_run(session, in, 2, &o, 1);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  v4f_status_free(s);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[i], (x[i] + y[i]) * float(i + 1));
  v4f_session_release(session);
}

bool contains(const std::vector<uint8_t> &hay, const std::vector<uint8_t> &needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

TEST(EncryptedArtifact, RightKeyRunsAndThePlaintextIsNotInTheFile) {
  v4f::EncryptionKey key = makeKey();
  std::vector<uint8_t> bytes = encryptedAddScale(key);
  EXPECT_EQ(bytes[8] | bytes[9] << 8, V4F_ARTIFACT_FORMAT_MAJOR) << "format major";
  const std::vector<uint8_t> &lib = testKernelLibrary();
  EXPECT_FALSE(contains(bytes, std::vector<uint8_t>(lib.begin(), lib.begin() + 64)))
      << "the kernel library's first 64 bytes are in the file";
  EXPECT_FALSE(contains(bytes, addScaleConstants())) << "the constants are in the file";
  EXPECT_TRUE(contains(buildAddScaleArtifact(), addScaleConstants())) << "the check can fail";
  Loaded l;
  load(bytes, key.data(), l);
  ASSERT_NE(l.model, nullptr) << l.error;
  EXPECT_EQ(v4f_model_encrypted(l.model), 1);
  expectRuns(l.model);
  Loaded plain;
  load(buildAddScaleArtifact(), nullptr, plain);
  ASSERT_NE(plain.model, nullptr);
  EXPECT_EQ(v4f_model_encrypted(plain.model), 0);
}

struct KeyService {
  v4f::EncryptionKey key;
  std::array<uint8_t, 16> id;
  int calls = 0;
};

int32_t keyService(void *user, const uint8_t keyId[16], uint8_t out[32]) {
  auto *k = static_cast<KeyService *>(user);
  ++k->calls;
  if (memcmp(keyId, k->id.data(), 16) != 0) return 1;
  memcpy(out, k->key.data(), 32);
  return 0;
}

TEST(EncryptedArtifact, KeyFromACallbackByKeyId) {
  KeyService service{makeKey(), {}, 0};
  service.id = v4f::encryptionKeyId(service.key);
  std::vector<uint8_t> bytes = encryptedAddScale(service.key);
  Loaded l;
  load(bytes, nullptr, l, true, keyService, &service);
  ASSERT_NE(l.model, nullptr) << l.error;
  EXPECT_EQ(service.calls, 2); // code and constants
  expectRuns(l.model);
  // A service without that key: refused, naming the key id.
  KeyService other{makeKey(), {}, 0};
  other.id = v4f::encryptionKeyId(other.key);
  Loaded r;
  load(bytes, nullptr, r, true, keyService, &other);
  EXPECT_EQ(r.model, nullptr);
  EXPECT_NE(r.error.find("no decryption key was given"), std::string::npos) << r.error;
}

TEST(EncryptedArtifact, NoKeyWrongKeyTamperingAndTruncationAreRefused) {
  v4f::EncryptionKey key = makeKey();
  std::vector<uint8_t> bytes = encryptedAddScale(key);
  {
    Loaded l;
    load(bytes, nullptr, l);
    EXPECT_NE(l.error.find("is encrypted with key"), std::string::npos) << l.error;
  }
  {
    v4f::EncryptionKey wrong = makeKey();
    Loaded l;
    load(bytes, wrong.data(), l);
    EXPECT_NE(l.error.find("cannot be decrypted: wrong key"), std::string::npos) << l.error;
  }
  // Every byte of the first ciphertext section flipped (digests off, so only
  // the authentication tag can catch it): all refused.
  uint64_t offset = sizeof(v4f_file_header_t), size = 24 + testKernelLibrary().size() + 17;
  for (uint64_t i = offset; i < offset + size; i += 7) {
    std::vector<uint8_t> t = bytes;
    t[i] ^= 0x20;
    Loaded l;
    load(t, key.data(), l, /*digests=*/false);
    ASSERT_EQ(l.model, nullptr) << "flip at " << i << " accepted";
    EXPECT_NE(l.error.find("cannot be decrypted"), std::string::npos) << l.error;
  }
}

TEST(EncryptedArtifact, KeyFiles) {
  char dir[] = "/tmp/v4f-keys-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/k";
  v4f::EncryptionKey key;
  std::string error;
  ASSERT_TRUE(v4f::generateEncryptionKeyFile(path, key, error)) << error;
  EXPECT_FALSE(v4f::generateEncryptionKeyFile(path, key, error));
  EXPECT_NE(error.find("refusing to overwrite"), std::string::npos) << error;
  uint8_t read[32];
  v4f_status_t s = v4f_read_encryption_key_file(path.c_str(), read);
  EXPECT_EQ(s, nullptr) << v4f_status_message(s);
  EXPECT_EQ(memcmp(read, key.data(), 32), 0);
  chmod(path.c_str(), 0644);
  s = v4f_read_encryption_key_file(path.c_str(), read);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(v4f_status_message(s)).find("readable by others"), std::string::npos);
  v4f_status_free(s);
  unlink(path.c_str());
  rmdir(dir);
}

} // namespace
