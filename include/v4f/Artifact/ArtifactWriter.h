//===- ArtifactWriter.h - In-memory execution plan and .v4f writer -*- C++ -*-===//
//
// Serializes an ExecutablePlan (include/v4f/Plan/ExecutablePlan.h; its
// executables carry their images) and the packed constants into the file
// described in runtime/include/v4f/artifact_format.h, with the manifest in
// runtime/include/v4f/artifact_manifest.fbs. The writer adds nothing to the
// plan: it only lays it out.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_ARTIFACT_ARTIFACTWRITER_H
#define V4F_ARTIFACT_ARTIFACTWRITER_H

#include "v4f/Plan/ExecutablePlan.h"

#include "v4f/Artifact/ArtifactSigner.h"

#include <string>
#include <vector>

namespace v4f {

/// Serializes the artifact into `out` deterministically (same inputs give the
/// same bytes): one section per executable image, then `constants` (the packed
/// constants blob that PlanBuffer offsets refer to), then the manifest.
/// Returns false and sets `error` on failure.
/// With `encryptionKey`, every section is encrypted (format 4, see
/// artifact_format.h): the file holds no plaintext code or constants.
bool serializeArtifact(const ExecutablePlan &plan, const std::vector<uint8_t> &constants, std::vector<uint8_t> &out,
                       std::string &error, const EncryptionKey *encryptionKey = nullptr);

/// Writes the artifact to `path` atomically: a temporary file in the same
/// folder, renamed over `path` only when complete; nothing is left on failure.
/// With `signingKey`, the artifact is signed before it is written.
bool writeArtifactFile(const std::string &path, const ExecutablePlan &plan, const std::vector<uint8_t> &constants,
                       std::string &error, const SigningKey *signingKey = nullptr,
                       const EncryptionKey *encryptionKey = nullptr);

} // namespace v4f

#endif // V4F_ARTIFACT_ARTIFACTWRITER_H
