// model.h - the loaded model: verified manifest, mapped sections, kernel table.
#ifndef V4F_RUNTIME_SRC_MODEL_H_
#define V4F_RUNTIME_SRC_MODEL_H_

#include "internal.h"
#include "v4f/artifact_manifest_generated.h"
#include "executable.h"
#include "file_reader.h"
#include "v4f/kernel_abi.h"

struct v4f_model_s {
  v4f::rt::Allocator allocator;

  // The artifact bytes: a read-only file mapping, caller memory, or an owned
  // aligned copy of caller memory.
  const uint8_t* base = nullptr;
  size_t size = 0;
  // Bytes before the signature trailer (== size when unsigned): the
  // manifest and every section lie inside [64, contentSize).
  uint64_t contentSize = 0;
  uint32_t digestAlgorithm = 0; // the header's V4F_DIGEST_ALGORITHM_*
  int32_t signatureState = V4F_SIGNATURE_STATE_UNCHECKED;
  const uint8_t* signerKey = nullptr; // in the trailer, when signed and checked
  void* mapping = nullptr;            // munmap on release when set
  void* ownedCopy = nullptr;          // allocator.free on release when set
  // Digest-tree leaves hashed as the file was read (file_reader.h); empty for
  // v4f_model_load_memory. Looked up by digestRange.
  v4f::rt::Prehashed prehashed;

  // The artifact's own manifest (sections, producer, model name, variants)
  // and the plan this model runs: `root` itself or, in a multi-ISA
  // artifact, the variant chosen for this CPU (index `variant`, 0 = root).
  const v4f::fb::Manifest* root = nullptr;
  const v4f::fb::Manifest* manifest = nullptr;
  uint32_t variant = 0;
  // Every root section's bytes: in the artifact, or (encrypted sections)
  // the decrypted copy in `plaintexts`, freed and wiped on release.
  v4f::rt::Array<const uint8_t*> sectionData;
  v4f::rt::Array<uint64_t> sectionSize;
  v4f::rt::Array<uint8_t*> plaintexts;
  bool encrypted = false;
  const uint8_t* constants = nullptr;
  uint64_t constantsSize = 0;
  uint32_t registerCount = 0;

  v4f::rt::Array<v4f_tensor_info_t> inputs;
  v4f::rt::Array<v4f_tensor_info_t> outputs;

  // One per manifest executable (executable.h).
  v4f::rt::Array<v4f::rt::LoadedExecutable> executables;
};

namespace v4f {
namespace rt {

struct LoadOptions {
  uint64_t disabledFeatures = 0;
  bool verifyDigests = true;
  int32_t signaturePolicy = V4F_SIGNATURE_OFF;
  const uint8_t* trustedKeys = nullptr;
  size_t trustedKeyCount = 0;
  const uint8_t* decryptionKey = nullptr;
  int32_t (*decryptionKeyCallback)(void*, const uint8_t*, uint8_t*) = nullptr;
  void* decryptionKeyUser = nullptr;
};

// Decrypts the encrypted sections (crypto.cpp) into model->plaintexts and
// points sectionData at them; called after the digests were checked.
V4F_INTERNAL v4f_status_t decryptSections(v4f_model_s* model, const LoadOptions& options);

// Checks the signature trailer per options.signaturePolicy (signature.cpp):
// bytes [0, contentSize) against the trailer at contentSize, which the
// header checks already bounded. Sets model->signatureState / signerKey.
// The v4f digest (artifact_format.h: a hash tree of V4F_DIGEST_ALGORITHM_*
// `algorithm`: BLAKE3, or BLAKE2b with libsodium) of data[0, size)
// (crypto.cpp), large inputs on several threads.
V4F_INTERNAL v4f_status_t computeDigest(const Allocator& allocator, uint32_t algorithm, const uint8_t* data,
                                        uint64_t size, uint8_t out[32]);
// The v4f digest of model->base[offset, offset + size): from the leaves the
// file reader hashed for exactly that range, else computeDigest.
V4F_INTERNAL v4f_status_t digestRange(const v4f_model_s* model, uint32_t algorithm, uint64_t offset, uint64_t size,
                                      uint8_t out[32]);
V4F_INTERNAL v4f_status_t verifySignature(v4f_model_s* model, const LoadOptions& options);

// Verifies the artifact at model->base/size (header, manifest, sections,
// plan indices, CPU features) and fills the model's manifest, constants and
// I/O info. Errors are not prefixed with the file name (the caller does it).
V4F_INTERNAL v4f_status_t verifyArtifact(v4f_model_s* model, const LoadOptions& options);

// Loads every executable of the manifest (executable.cpp).
V4F_INTERNAL v4f_status_t loadExecutables(v4f_model_s* model);
V4F_INTERNAL void unloadExecutables(v4f_model_s* model);
// Kernel ABI 3: every dispatch binds as many buffers and push constants as
// its kernel's interface table says, and no kernel writes an input or a
// constant (executable.cpp; after loadExecutables).
V4F_INTERNAL v4f_status_t verifyKernelInterfaces(v4f_model_s* model);

inline const char* str(const flatbuffers::String* s) { return s ? s->c_str() : ""; }

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_MODEL_H_
