// The corruption sweep: a small artifact truncated at every byte, and 10,000
// random mutations (bit flips, random and zeroed byte ranges), each loaded and
// -- when the loader accepts it -- run. Every case is a clean error or a run
// with exactly the right result: never a crash, a hang or a wrong answer.
// With a signature and the require policy, every mutation is refused. Run
// under ASan/UBSan by the sanitizer job (docs/testing.md).
#include "TestArtifacts.h"

#include "v4f/Artifact/ArtifactSigner.h"
#include "v4f/runtime.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <random>
#include <string>

namespace {

using v4f::test::buildAddScaleArtifact;
using v4f::test::makeTensor;

enum class Outcome { Refused, RanCorrectly, RunFailedCleanly, WrongResult };

Outcome loadAndRun(const std::vector<uint8_t> &bytes, const v4f_model_options_t *options) {
  v4f_model_t *model = nullptr;
  v4f_status_t s = v4f_model_load_memory(bytes.data(), bytes.size(), options, nullptr, &model);
  if (s) {
    v4f_status_free(s);
    return Outcome::Refused;
  }
  v4f_session_t *session = nullptr;
  Outcome outcome = Outcome::RunFailedCleanly;
  s = v4f_session_create(model, nullptr, nullptr, &session);
  if (!s) {
    float x[8], y[8], out[8];
    for (int i = 0; i < 8; ++i) x[i] = float(i), y[i] = 0.5f * float(i), out[i] = -1;
    v4f_tensor_t in[2] = {makeTensor(x, 32, V4F_DTYPE_FLOAT32, {2, 4}), makeTensor(y, 32, V4F_DTYPE_FLOAT32, {2, 4})};
    v4f_tensor_t o = makeTensor(out, 32, 0, {});
    s = v4f_session_run(session, in, 2, &o, 1);
    if (!s) {
      bool right = o.rank == 2 && o.dims[0] == 2 && o.dims[1] == 4;
      for (int i = 0; i < 8 && right; ++i) right = out[i] == (x[i] + y[i]) * float(i % 4 + 1);
      outcome = right ? Outcome::RanCorrectly : Outcome::WrongResult;
    }
  }
  v4f_status_free(s);
  v4f_session_release(session);
  v4f_model_release(model);
  return outcome;
}

TEST(CorruptionSweep, TruncationAtEveryByte) {
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  ASSERT_EQ(loadAndRun(bytes, nullptr), Outcome::RanCorrectly);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    ASSERT_EQ(loadAndRun(cut, nullptr), Outcome::Refused) << "truncated to " << n << " bytes";
  }
}

std::vector<uint8_t> mutate(const std::vector<uint8_t> &bytes, std::mt19937_64 &rng) {
  std::vector<uint8_t> m = bytes;
  size_t pos = rng() % m.size();
  switch (rng() % 3) {
  case 0: m[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
  case 1:
    for (size_t i = pos, end = std::min(m.size(), pos + 1 + rng() % 64); i < end; ++i)
      m[i] = static_cast<uint8_t>(rng());
    break;
  default:
    for (size_t i = pos, end = std::min(m.size(), pos + 1 + rng() % 64); i < end; ++i) m[i] = 0;
    break;
  }
  return m;
}

TEST(CorruptionSweep, TenThousandRandomMutations) {
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::mt19937_64 rng(20261203);
  int counts[4] = {0, 0, 0, 0}, unchanged = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> m = mutate(bytes, rng);
    if (m == bytes) {
      ++unchanged;
      continue;
    }
    Outcome o = loadAndRun(m, nullptr);
    ++counts[static_cast<int>(o)];
    ASSERT_NE(o, Outcome::WrongResult) << "mutation " << i << " was accepted and computed a wrong result";
  }
  // Accepted mutations are those in bytes no check covers (alignment padding
  // between sections); they must not change the result, which the loop
  // asserted. Most mutations hit checked bytes.
  int changed = 10000 - unchanged;
  EXPECT_GT(counts[static_cast<int>(Outcome::Refused)], changed * 95 / 100)
      << "accepted: " << counts[1] << " of " << changed << " changed";
  RecordProperty("refused", counts[0]);
  RecordProperty("accepted_and_correct", counts[1]);
  RecordProperty("run_failed_cleanly", counts[2]);
}

TEST(CorruptionSweep, SignedArtifactRefusesEveryMutation) {
  ASSERT_GE(sodium_init(), 0);
  v4f::SigningKey key;
  crypto_sign_ed25519_keypair(key.publicKey.data(), key.secret.data());
  std::vector<uint8_t> bytes = buildAddScaleArtifact();
  std::string error;
  ASSERT_TRUE(v4f::signArtifactBytes(bytes, key, error)) << error;
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.signature_policy = V4F_SIGNATURE_REQUIRE;
  options.trusted_keys = key.publicKey.data();
  options.trusted_key_count = 1;
  ASSERT_EQ(loadAndRun(bytes, &options), Outcome::RanCorrectly);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> m = mutate(bytes, rng);
    if (m == bytes) continue;
    ASSERT_EQ(loadAndRun(m, &options), Outcome::Refused) << "mutation " << i << " of a signed artifact was accepted";
  }
}

} // namespace
