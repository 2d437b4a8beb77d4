//===- Inspect.h - `v4fc inspect`: print an artifact's manifest -*- C++ -*-===//
#ifndef V4F_TOOLS_V4FC_INSPECT_H
#define V4F_TOOLS_V4FC_INSPECT_H

#include <string>

namespace v4f {
/// Prints header, I/O signature, sections, kernels and plan summary of the
/// artifact at `path` to stdout (as text, or as one JSON object when `asJson`;
/// both come from the same description); returns false with `error` if it is
/// invalid.
bool inspectArtifact(const std::string &path, bool showPlan, bool asJson, std::string &error);
/// Writes the artifact's CUDA images to `dir` (exe<E>.sm_<A>.cubin,
/// exe<E>.compute_<A>.ptx, exe<E>.entry_points) for cuobjdump / nvdisasm /
/// ptxas, printing each path; false with `error` when it has none.
bool extractCudaImages(const std::string &path, const std::string &dir, std::string &error);
} // namespace v4f

#endif
