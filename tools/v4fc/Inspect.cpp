//===- Inspect.cpp - `v4fc inspect`: print an artifact's manifest ---------===//
//
// Reads the artifact with its own bounds checks and the FlatBuffers verifier
// (the compiler does not link the runtime; they share only the format headers)
// into one JSON description; `--json` prints it as is (the Python package's
// v4f.inspect reads it), the text form is rendered from it.
//
//===----------------------------------------------------------------------===//
#include "Inspect.h"
#include "Sign.h"

#include "v4f/Artifact/ArtifactSigner.h"

#include "v4f/artifact_format.h"
#include "v4f/kernel_abi.h"
#include "v4f/artifact_manifest_generated.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace v4f {
namespace json = llvm::json;

namespace {

const char *sectionName(uint32_t kind) {
  switch (kind) {
  case V4F_SECTION_CPU_LIBRARY: return "cpu-library";
  case V4F_SECTION_CONSTANTS: return "constants";
  case V4F_SECTION_GPU_MODULE: return "gpu-module";
  default: return "unknown";
  }
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : ""; }

//===----------------------------------------------------------------------===//
// The description
//===----------------------------------------------------------------------===//

/// One signature entry: shape holds ints, or the dim's name ("?" when it has
/// none) where it is symbolic; dim_bounds ([min, max] or null per dim) only
/// when some dim has compile-time bounds.
json::Array describeSignature(const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSig>> *sigs) {
  json::Array out;
  if (!sigs) return out;
  for (const auto *s : *sigs) {
    json::Array shape, bounds;
    bool anyBound = false;
    size_t rank = s->dims() ? s->dims()->size() : 0;
    for (size_t i = 0; i < rank; ++i) {
      int64_t d = s->dims()->Get(i);
      std::string name = s->dim_names() && i < s->dim_names()->size() ? s->dim_names()->Get(i)->str() : "";
      if (d >= 0)
        shape.push_back(d);
      else
        shape.push_back(name.empty() ? "?" : name);
      if (d < 0 && s->dim_min() && s->dim_max() && i < s->dim_max()->size() && i < s->dim_min()->size() &&
          s->dim_max()->Get(i) >= 0) {
        bounds.push_back(json::Array{s->dim_min()->Get(i), s->dim_max()->Get(i)});
        anyBound = true;
      } else {
        bounds.push_back(nullptr);
      }
    }
    json::Object o{{"name", str(s->name())}, {"dtype", v4f_dtype_format_name(s->dtype())}, {"shape", std::move(shape)}};
    if (anyBound) o["dim_bounds"] = std::move(bounds);
    out.push_back(std::move(o));
  }
  return out;
}

json::Object describePlan(const fb::Manifest *manifest, bool showPlan, bool hasArena) {
  json::Array executables;
  size_t kernels = 0;
  if (manifest->executables())
    for (size_t i = 0; i < manifest->executables()->size(); ++i) {
      const auto *e = manifest->executables()->Get(i);
      size_t entries = e->entry_points() ? e->entry_points()->size() : 0;
      kernels += entries;
      json::Array features;
      if (e->features())
        for (const auto *f : *e->features()) features.push_back(f->str());
      executables.push_back(json::Object{{"target", fb::EnumNameExecutableTarget(e->target())},
                                         {"format", fb::EnumNameExecutableFormat(e->format())},
                                         {"abi_version", e->abi_version()},
                                         {"section", e->section()},
                                         {"entry_points", int64_t(entries)},
                                         {"triple", str(e->triple())},
                                         {"cpu", str(e->cpu())},
                                         {"cpu_features", std::move(features)}});
    }
  size_t dispatches = manifest->dispatches() ? manifest->dispatches()->size() : 0;
  json::Object plan{
      {"executables", std::move(executables)},
      {"dispatch_count", int64_t(dispatches)},
      {"kernel_count", int64_t(kernels)},
      {"buffer_count", int64_t(manifest->buffers() ? manifest->buffers()->size() : 0)},
      {"shape_register_count", int64_t(manifest->shape_program() ? manifest->shape_program()->size() : 0)}};
  // Format 3.3: the arena of a fully static plan, null when it depends on
  // the input dims; absent for older artifacts, which do not record it.
  if (hasArena)
    plan["arena_bytes"] = manifest->arena_bytes() >= 0 ? json::Value(manifest->arena_bytes()) : json::Value(nullptr);
  if (!showPlan) return plan;
  json::Array list, loops;
  for (size_t i = 0; i < dispatches; ++i) {
    const auto *d = manifest->dispatches()->Get(i);
    json::Object o{{"index", int64_t(i)},
                   {"name", str(d->name())},
                   {"executable", d->executable()},
                   {"entry_point", d->entry_point()},
                   {"bindings", int64_t(d->bindings() ? d->bindings()->size() : 0)}};
    if (d->guard() >= 0) o["guard_register"] = d->guard();
    o["precision"] = d->precision() ? str(d->precision()) : std::string("float32");
    // Where it runs: the CPU, the GPU, or a copy between them (format 5.1).
    bool gpu = manifest->executables() && d->executable() < manifest->executables()->size() &&
               manifest->executables()->Get(d->executable())->target() == fb::ExecutableTarget::Cuda;
    o["device"] = d->transfer() == 1 ? "host->gpu" : d->transfer() == 2 ? "gpu->host" : gpu ? "gpu" : "cpu";
    if (d->block_dim()) {
      json::Array block;
      for (uint32_t b : *d->block_dim()) block.push_back(int64_t(b));
      o["block_dim"] = std::move(block);
    }
    list.push_back(std::move(o));
  }
  if (manifest->loops())
    for (const auto *l : *manifest->loops())
      loops.push_back(json::Object{{"name", str(l->name())},
                                   {"begin", l->begin()},
                                   {"end", l->end()},
                                   {"trip_count_register", l->trip_count()},
                                   {"max_iterations", l->max_iterations()}});
  plan["dispatches"] = std::move(list);
  plan["loops"] = std::move(loops);
  return plan;
}

bool describeArtifact(const std::string &path, bool showPlan, json::Object &out, std::string &error) {
  // Only a regular file: a FIFO or a device would block or never end.
  std::vector<uint8_t> bytes;
  if (!readArtifact(path, bytes, error)) return false;
  v4f_file_header_t header;
  if (bytes.size() < sizeof(header)) {
    error = path + ": too small to be a .v4f artifact";
    return false;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE) != 0) {
    error = path + ": not a .v4f artifact (bad magic)";
    return false;
  }
  if (header.format_major > V4F_ARTIFACT_FORMAT_MAJOR || header.format_major < V4F_ARTIFACT_FORMAT_OLDEST_MAJOR) {
    error = path + ": artifact format " + std::to_string(header.format_major) + " is " +
            (header.format_major > V4F_ARTIFACT_FORMAT_MAJOR ? "newer" : "older") + " than this tool's (" +
            std::to_string(V4F_ARTIFACT_FORMAT_MAJOR) + ")";
    return false;
  }
  if (header.manifest_offset > bytes.size() || header.manifest_size > bytes.size() - header.manifest_offset) {
    error = path + ": manifest lies outside the file";
    return false;
  }
  const uint8_t *m = bytes.data() + header.manifest_offset;
  flatbuffers::Verifier verifier(m, header.manifest_size);
  if (!fb::VerifyManifestBuffer(verifier)) {
    error = path + ": manifest fails verification";
    return false;
  }
  const fb::Manifest *manifest = fb::GetManifest(m);
  json::Array sections;
  sections.push_back(json::Object{{"kind", "manifest"},
                                  {"offset", int64_t(header.manifest_offset)},
                                  {"size", int64_t(header.manifest_size)},
                                  {"digest", v4f::toHex(header.manifest_digest, sizeof header.manifest_digest)}});
  if (manifest->sections())
    for (const auto *s : *manifest->sections())
      sections.push_back(
          json::Object{{"kind", sectionName(s->kind())},
                       {"offset", int64_t(s->offset())},
                       {"size", int64_t(s->size())},
                       {"digest", s->digest() ? v4f::toHex(s->digest()->data(), s->digest()->size()) : std::string()},
                       {"encrypted", s->cipher() != V4F_CIPHER_NONE},
                       {"plain_size", int64_t(s->cipher() != V4F_CIPHER_NONE ? s->plain_size() : s->size())},
                       {"key_id", s->key_id() ? v4f::toHex(s->key_id()->data(), s->key_id()->size()) : std::string()}});
  // Multi-ISA artifacts: plan 0 is the baseline (the top-level manifest),
  // then the plan of every other CPU target; the runtime loads the one whose
  // features the machine has, preferring the most.
  json::Array plans;
  bool hasArena = true; // every readable format (5.0 on) has Manifest.arena_bytes
  plans.push_back(describePlan(manifest, showPlan, hasArena));
  if (manifest->variants())
    for (const fb::Manifest *variant : *manifest->variants())
      plans.push_back(describePlan(variant, showPlan, hasArena));
  // Signature: who signed it, not whether it verifies (`v4fc verify`).
  json::Value signature = nullptr;
  if (header.signature_offset != 0 && header.signature_offset + sizeof(v4f_signature_t) == bytes.size()) {
    const auto *t = reinterpret_cast<const v4f_signature_t *>(bytes.data() + header.signature_offset);
    signature =
        json::Object{{"algorithm", t->algorithm == V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE3_TREE  ? "ed25519-blake3-tree"
                                   : t->algorithm == V4F_SIGNATURE_ALGORITHM_ED25519_BLAKE2B512 ? "ed25519-blake2b512"
                                                                                                : "unknown"},
                     {"public_key", v4f::toHex(t->public_key, 32)}};
  }
  out = json::Object{
      {"path", path},
      {"file_size", int64_t(bytes.size())},
      {"signature", std::move(signature)},
      {"format_version", std::to_string(header.format_major) + "." + std::to_string(header.format_minor)},
      {"digest_algorithm", header.digest_algorithm == V4F_DIGEST_ALGORITHM_BLAKE3_TREE       ? "blake3-tree"
                           : header.digest_algorithm == V4F_DIGEST_ALGORITHM_BLAKE2B256_TREE ? "blake2b256-tree"
                                                                                             : "unknown"},
      {"producer", str(manifest->producer())},
      {"model", str(manifest->model_name())},
      {"inputs", describeSignature(manifest->inputs())},
      {"outputs", describeSignature(manifest->outputs())},
      {"sections", std::move(sections)},
      {"plans", std::move(plans)}};
  return true;
}

//===----------------------------------------------------------------------===//
// The text form
//===----------------------------------------------------------------------===//

std::string getStr(const json::Object &o, llvm::StringRef key) { return o.getString(key).value_or("").str(); }
long long getInt(const json::Object &o, llvm::StringRef key) { return o.getInteger(key).value_or(-1); }

void printSignature(const char *what, const json::Array &sigs) {
  std::printf("%s:\n", what);
  for (const json::Value &v : sigs) {
    const json::Object &s = *v.getAsObject();
    std::printf("  %-24s %-8s [", getStr(s, "name").c_str(), getStr(s, "dtype").c_str());
    const json::Array &shape = *s.getArray("shape");
    const json::Array *bounds = s.getArray("dim_bounds");
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) std::printf(", ");
      if (auto d = shape[i].getAsInteger()) {
        std::printf("%lld", (long long)*d);
        continue;
      }
      std::printf("%s", shape[i].getAsString().value_or("?").str().c_str());
      if (bounds && (*bounds)[i].getAsArray()) // bounds set at compile time: N[1..8]
        std::printf("[%lld..%lld]", (long long)*(*(*bounds)[i].getAsArray())[0].getAsInteger(),
                    (long long)*(*(*bounds)[i].getAsArray())[1].getAsInteger());
    }
    std::printf("]\n");
  }
}

void printExecutables(const json::Object &plan) {
  size_t i = 0;
  for (const json::Value &v : *plan.getArray("executables")) {
    const json::Object &e = *v.getAsObject();
    std::printf("executable %zu: %s %s, kernel ABI v%lld, section %lld, %lld entry points\n", i++,
                getStr(e, "target").c_str(), getStr(e, "format").c_str(), getInt(e, "abi_version"),
                getInt(e, "section"), getInt(e, "entry_points"));
    std::printf("  target:       %s, cpu %s\n", getStr(e, "triple").c_str(), getStr(e, "cpu").c_str());
    std::printf("  cpu features:");
    for (const json::Value &f : *e.getArray("cpu_features"))
      std::printf(" %s", f.getAsString().value_or("").str().c_str());
    std::printf("\n");
  }
}

void printPlan(const json::Object &plan) {
  std::printf("plan:         %lld dispatches, %lld kernels, %lld buffers, %lld shape registers\n",
              getInt(plan, "dispatch_count"), getInt(plan, "kernel_count"), getInt(plan, "buffer_count"),
              getInt(plan, "shape_register_count"));
  if (auto arena = plan.getInteger("arena_bytes"))
    std::printf("arena peak:   %lld bytes (%.1f MiB) of transient buffers\n", (long long)*arena,
                double(*arena) / (1 << 20));
  else if (plan.get("arena_bytes"))
    std::printf("arena peak:   depends on the input dims (v4f-run reports it per run)\n");
  else
    std::printf("arena peak:   not recorded (an artifact older than format 3.3)\n");
  if (const json::Array *list = plan.getArray("dispatches"))
    for (const json::Value &v : *list) {
      const json::Object &d = *v.getAsObject();
      std::string guard =
          d.get("guard_register") ? "  (runs if r" + std::to_string(getInt(d, "guard_register")) + " != 0)" : "";
      std::string device = getStr(d, "device");
      if (device == "host->gpu" || device == "gpu->host") {
        std::printf("  #%-4lld %-9s copy                         %s\n", getInt(d, "index"), device.c_str(),
                    getStr(d, "name").c_str());
        continue;
      }
      std::printf("  #%-4lld %-9s exe %lld kernel %-4lld bindings %-3lld %-8s %s%s\n", getInt(d, "index"),
                  device.c_str(), getInt(d, "executable"), getInt(d, "entry_point"), getInt(d, "bindings"),
                  getStr(d, "precision").c_str(), getStr(d, "name").c_str(), guard.c_str());
    }
  size_t i = 0;
  if (const json::Array *loops = plan.getArray("loops"))
    for (const json::Value &v : *loops) {
      const json::Object &l = *v.getAsObject();
      std::printf("  loop %zu: dispatches #%lld..#%lld run r%lld times (at most %lld)  %s\n", i++, getInt(l, "begin"),
                  getInt(l, "end") - 1, getInt(l, "trip_count_register"), getInt(l, "max_iterations"),
                  getStr(l, "name").c_str());
    }
}

void printText(const json::Object &a) {
  std::printf("artifact:     %s (%lld bytes, format %s)\n", getStr(a, "path").c_str(), getInt(a, "file_size"),
              getStr(a, "format_version").c_str());
  if (const json::Object *sig = a.getObject("signature"))
    std::printf("signed by:    %s (%s; check it with v4fc verify --pubkey)\n", getStr(*sig, "public_key").c_str(),
                getStr(*sig, "algorithm").c_str());
  else
    std::printf("signed by:    (unsigned)\n");
  std::printf("producer:     %s\n", getStr(a, "producer").c_str());
  std::printf("model:        %s\n", getStr(a, "model").c_str());
  const json::Array &plans = *a.getArray("plans");
  printExecutables(*plans[0].getAsObject());
  printSignature("inputs", *a.getArray("inputs"));
  printSignature("outputs", *a.getArray("outputs"));
  std::printf("sections:\n  %-12s %12s %12s  %s (%s)\n", "kind", "offset", "size", "digest",
              getStr(a, "digest_algorithm").c_str());
  for (const json::Value &v : *a.getArray("sections")) {
    const json::Object &s = *v.getAsObject();
    std::string enc = s.getBoolean("encrypted").value_or(false)
                          ? "  encrypted (key id " + getStr(s, "key_id") + ", " +
                                std::to_string(getInt(s, "plain_size")) + " bytes plain)"
                          : "";
    std::printf("  %-12s %12lld %12lld  %s%s\n", getStr(s, "kind").c_str(), getInt(s, "offset"), getInt(s, "size"),
                getStr(s, "digest").c_str(), enc.c_str());
  }
  printPlan(*plans[0].getAsObject());
  for (size_t v = 1; v < plans.size(); ++v) {
    std::printf("variant %zu of %zu (the plan above is variant 0, the baseline):\n", v, plans.size());
    printExecutables(*plans[v].getAsObject());
    printPlan(*plans[v].getAsObject());
  }
}

} // namespace

bool extractCudaImages(const std::string &path, const std::string &dir, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  v4f_file_header_t header;
  if (bytes.size() < sizeof(header)) return error = path + ": too small to be a .v4f artifact", false;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE) != 0 ||
      header.manifest_offset > bytes.size() || header.manifest_size > bytes.size() - header.manifest_offset)
    return error = path + ": not a readable .v4f artifact", false;
  flatbuffers::Verifier verifier(bytes.data() + header.manifest_offset, header.manifest_size);
  if (!fb::VerifyManifestBuffer(verifier)) return error = path + ": manifest fails verification", false;
  const fb::Manifest *manifest = fb::GetManifest(bytes.data() + header.manifest_offset);
  size_t written = 0;
  if (manifest->executables())
    for (uint32_t e = 0; e < manifest->executables()->size(); ++e) {
      const fb::Executable *exe = manifest->executables()->Get(e);
      if (exe->target() != fb::ExecutableTarget::Cuda) continue;
      if (!manifest->sections() || exe->section() >= manifest->sections()->size())
        return error = path + ": CUDA executable " + std::to_string(e) + " has no section", false;
      const fb::Section *sec = manifest->sections()->Get(exe->section());
      if (sec->cipher() != V4F_CIPHER_NONE) return error = path + ": the CUDA module is encrypted", false;
      if (sec->offset() > bytes.size() || sec->size() > bytes.size() - sec->offset() ||
          sec->size() < sizeof(v4f_cuda_module_header_t))
        return error = path + ": the CUDA module lies outside the file", false;
      const uint8_t *m = bytes.data() + sec->offset();
      v4f_cuda_module_header_t mh;
      std::memcpy(&mh, m, sizeof mh);
      if (std::memcmp(mh.magic, V4F_CUDA_MODULE_MAGIC, 8) != 0 ||
          sizeof mh + uint64_t(mh.image_count) * sizeof(v4f_cuda_image_t) > sec->size())
        return error = path + ": not a v4f CUDA module", false;
      for (uint32_t i = 0; i < mh.image_count; ++i) {
        v4f_cuda_image_t im;
        std::memcpy(&im, m + sizeof mh + i * sizeof im, sizeof im);
        if (im.offset > sec->size() || im.size > sec->size() - im.offset)
          return error = path + ": CUDA image " + std::to_string(i) + " lies outside its section", false;
        bool ptx = im.kind == V4F_CUDA_IMAGE_PTX;
        std::string file = dir + "/exe" + std::to_string(e) + (ptx ? ".compute_" : ".sm_") + std::to_string(im.arch) +
                           (ptx ? ".ptx" : ".cubin");
        std::ofstream out(file, std::ios::binary);
        // PTX is stored NUL-terminated (what cuModuleLoadData takes); the file is text.
        size_t n = ptx && im.size && m[im.offset + im.size - 1] == 0 ? im.size - 1 : im.size;
        out.write(reinterpret_cast<const char *>(m + im.offset), std::streamsize(n));
        if (!out) return error = file + ": cannot write", false;
        std::printf("%s\n", file.c_str());
        ++written;
      }
      std::string list = dir + "/exe" + std::to_string(e) + ".entry_points";
      std::ofstream out(list);
      if (exe->entry_points())
        for (const auto *name : *exe->entry_points()) out << name->str() << "\n";
      if (!out) return error = list + ": cannot write", false;
      std::printf("%s\n", list.c_str());
    }
  if (!written) return error = path + ": has no CUDA kernels (compiled with --target=cpu)", false;
  return true;
}

bool inspectArtifact(const std::string &path, bool showPlan, bool asJson, std::string &error) {
  json::Object description;
  if (!describeArtifact(path, showPlan, description, error)) return false;
  if (asJson) {
    llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(description))) << "\n";
    llvm::outs().flush();
  } else {
    printText(description);
  }
  return true;
}

} // namespace v4f
