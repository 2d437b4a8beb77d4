// TestArtifacts.h - builders for the small artifacts the unit tests load and corrupt.
#ifndef V4F_UNITTESTS_TESTARTIFACTS_H
#define V4F_UNITTESTS_TESTARTIFACTS_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "v4f/Artifact/ArtifactWriter.h"
#include "v4f/runtime.h"

namespace v4f {
namespace fbtest {
struct ManifestT;
}
namespace test {

std::vector<uint8_t> readFileBytes(const std::string &path);
// Writes bytes to a fresh file under the test temp dir and returns its path.
std::string writeTempFile(const std::string &name, const std::vector<uint8_t> &bytes);

const std::vector<uint8_t> &testKernelLibrary();
const std::vector<uint8_t> &badAbiKernelLibrary();

// out = (x + y) * c with x, y, out: float32 [batch, 4] and c = {1, 2, 3, 4}
// a constant; the sum lives in a transient buffer. Dispatches "add", "scale".
ExecutablePlan addScalePlan();
std::vector<uint8_t> addScaleConstants();

// x: float32 [rows, cols] static; four dispatches x+x -> A, A+A -> B, B+B -> C,
// C+C -> out. Transient lifetimes A [0,1], B [1,2], C [2,3], or all [0,3]
// when `overlapAll`. The result is 16 * x.
ExecutablePlan chainPlan(int64_t rows, int64_t cols, bool overlapAll);

// A CPU executable (kernel ABI of this build) with these entry points, no image.
PlanExecutable testCpuExecutable(std::vector<std::string> entryPoints);

// serializeArtifact with `library` as the image of every executable, failing
// the test on error.
std::vector<uint8_t> buildArtifact(ExecutablePlan plan, const std::vector<uint8_t> &library,
                                   const std::vector<uint8_t> &constants);
std::vector<uint8_t> buildAddScaleArtifact();

// Decodes the manifest (the file's last section), applies `edit`, re-encodes
// it in place and fixes the header's manifest size, digest and file size.
void editManifest(std::vector<uint8_t> &file, const std::function<void(fbtest::ManifestT &)> &edit);

// Header field accessors (little-endian).
uint64_t getU64(const std::vector<uint8_t> &file, size_t offset);
void putU64(std::vector<uint8_t> &file, size_t offset, uint64_t value);
/// Rewrites the header's manifest digest to match the manifest bytes (the
/// manifest is the last section, from the header's manifest_offset), with
/// the header's digest_algorithm.
void redigestManifest(std::vector<uint8_t> &file);

// Loads from memory; returns the status (the model is released on success).
// Also loads the same bytes from a temporary file and expects the same
// outcome (the path prefixed to the same message).
v4f_status_t tryLoad(const std::vector<uint8_t> &file, const v4f_model_options_t *options = nullptr);
// Expects loading to fail with a message containing `substring`; returns the message.
std::string expectLoadError(const std::vector<uint8_t> &file, const std::string &substring,
                            const v4f_model_options_t *options = nullptr);

v4f_tensor_t makeTensor(void *data, size_t bytes, int32_t dtype, std::vector<int64_t> dims);

} // namespace test
} // namespace v4f

#endif // V4F_UNITTESTS_TESTARTIFACTS_H
