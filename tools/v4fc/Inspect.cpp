//===- Inspect.cpp - `v4fc inspect`: print an artifact's manifest ---------===//
//
// Reads the artifact with its own bounds checks and the FlatBuffers verifier
// (the compiler does not link the runtime; they share only the format headers).
//
//===----------------------------------------------------------------------===//
#include "Inspect.h"

#include "v4f/artifact_format.h"
#include "v4f/artifact_manifest_generated.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace v4f {

static const char *sectionName(uint32_t kind) {
  switch (kind) {
  case V4F_SECTION_CPU_LIBRARY: return "cpu-library";
  case V4F_SECTION_CONSTANTS: return "constants";
  case V4F_SECTION_GPU_MODULE: return "gpu-module";
  default: return "unknown";
  }
}

static void printSignature(const char *what, const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSig>> *sigs) {
  std::printf("%s:\n", what);
  if (!sigs) return;
  for (const auto *s : *sigs) {
    std::printf("  %-24s %-8s [", s->name() ? s->name()->c_str() : "?", v4f_dtype_format_name(s->dtype()));
    if (s->dims())
      for (size_t i = 0; i < s->dims()->size(); ++i) {
        if (i) std::printf(", ");
        const char *name = s->dim_names() && i < s->dim_names()->size() ? s->dim_names()->Get(i)->c_str() : "";
        if (s->dims()->Get(i) < 0) {
          std::printf("%s", *name ? name : "?");
          // Bounds set at compile time: N[1..8].
          if (s->dim_min() && s->dim_max() && i < s->dim_max()->size() && s->dim_max()->Get(i) >= 0)
            std::printf("[%lld..%lld]", (long long)s->dim_min()->Get(i), (long long)s->dim_max()->Get(i));
        }
        else std::printf("%lld", (long long)s->dims()->Get(i));
      }
    std::printf("]\n");
  }
}

static const char *str(const flatbuffers::String *s) { return s ? s->c_str() : ""; }

/// Prints a plan's executables; returns their entry-point count.
static size_t printExecutables(const fb::Manifest *manifest) {
  size_t kernels = 0;
  if (manifest->executables())
    for (size_t i = 0; i < manifest->executables()->size(); ++i) {
      const auto *e = manifest->executables()->Get(i);
      size_t entries = e->entry_points() ? e->entry_points()->size() : 0;
      kernels += entries;
      std::printf("executable %zu: %s %s, kernel ABI v%u, section %u, %zu entry points\n", i,
                  fb::EnumNameExecutableTarget(e->target()), fb::EnumNameExecutableFormat(e->format()),
                  e->abi_version(), e->section(), entries);
      std::printf("  target:       %s, cpu %s\n", str(e->triple()), str(e->cpu()));
      std::printf("  cpu features:");
      if (e->features())
        for (const auto *f : *e->features()) std::printf(" %s", f->c_str());
      std::printf("\n");
    }
  return kernels;
}

static void printPlan(const fb::Manifest *manifest, size_t kernels, bool showPlan) {
  size_t dispatches = manifest->dispatches() ? manifest->dispatches()->size() : 0;
  size_t buffers = manifest->buffers() ? manifest->buffers()->size() : 0;
  size_t regs = manifest->shape_program() ? manifest->shape_program()->size() : 0;
  std::printf("plan:         %zu dispatches, %zu kernels, %zu buffers, %zu shape registers\n", dispatches, kernels,
              buffers, regs);
  if (showPlan && manifest->dispatches())
    for (size_t i = 0; i < dispatches; ++i) {
      const auto *d = manifest->dispatches()->Get(i);
      std::string guard = d->guard() >= 0 ? "  (runs if r" + std::to_string(d->guard()) + " != 0)" : "";
      std::printf("  #%-4zu exe %u kernel %-4u bindings %-3u  %s%s\n", i, d->executable(), d->entry_point(),
                  d->bindings() ? d->bindings()->size() : 0, str(d->name()), guard.c_str());
    }
  if (showPlan && manifest->loops())
    for (size_t i = 0; i < manifest->loops()->size(); ++i) {
      const auto *l = manifest->loops()->Get(i);
      std::printf("  loop %zu: dispatches #%u..#%u run r%u times (at most %lld)  %s\n", i, l->begin(), l->end() - 1,
                  l->trip_count(), static_cast<long long>(l->max_iterations()), str(l->name()));
    }
}

bool inspectArtifact(const std::string &path, bool showPlan, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
  if (header.format_major != V4F_ARTIFACT_FORMAT_MAJOR) {
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
  std::printf("artifact:     %s (%zu bytes, format %u.%u)\n", path.c_str(), bytes.size(), header.format_major,
              header.format_minor);
  std::printf("producer:     %s\n", str(manifest->producer()));
  std::printf("model:        %s\n", str(manifest->model_name()));
  size_t kernels = printExecutables(manifest);
  printSignature("inputs", manifest->inputs());
  printSignature("outputs", manifest->outputs());
  std::printf("sections:\n  %-12s %12s %12s  %s\n", "kind", "offset", "size", "digest");
  std::printf("  %-12s %12llu %12llu  %016llx\n", "manifest", (unsigned long long)header.manifest_offset,
              (unsigned long long)header.manifest_size, (unsigned long long)header.manifest_digest);
  if (manifest->sections())
    for (const auto *s : *manifest->sections())
      std::printf("  %-12s %12llu %12llu  %016llx\n", sectionName(s->kind()), (unsigned long long)s->offset(),
                  (unsigned long long)s->size(), (unsigned long long)s->digest());
  printPlan(manifest, kernels, showPlan);
  // Multi-ISA artifacts: the plan of every other CPU target; the runtime
  // loads the one whose features the machine has, preferring the most.
  size_t variants = manifest->variants() ? manifest->variants()->size() : 0;
  for (size_t v = 0; v < variants; ++v) {
    const fb::Manifest *variant = manifest->variants()->Get(v);
    std::printf("variant %zu of %zu (the plan above is variant 0, the baseline):\n", v + 1, variants + 1);
    printPlan(variant, printExecutables(variant), showPlan);
  }
  return true;
}

} // namespace v4f
