//===- ArtifactWriter.h - In-memory execution plan and .v4f writer -*- C++ -*-===//
//
// The compiler builds an ExecutablePlan (plain C++ data, no MLIR) and hands
// it with the CPU shared object and the packed constants to writeArtifact(),
// which lays out the file described in runtime/include/v4f/artifact_format.h
// with the manifest in runtime/include/v4f/artifact_manifest.fbs.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_ARTIFACT_ARTIFACTWRITER_H
#define V4F_ARTIFACT_ARTIFACTWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace v4f {

enum class ShapeOpKind : uint8_t {
  Const = 0, InputDim = 1, Add = 2, Sub = 3, Mul = 4,
  FloorDiv = 5, CeilDiv = 6, Max = 7, Min = 8,
  InputValue = 9, Select = 10, Lt = 11, Eq = 12, InputScaledDim = 13, DataValue = 14
};

struct ShapeInstruction {
  ShapeOpKind op = ShapeOpKind::Const;
  uint32_t a = 0, b = 0;
  int64_t imm = 0;
};

struct TensorSignature {
  std::string name;
  int32_t dtype = 1;                  // V4F_DTYPE_*
  std::vector<int64_t> dims;          // -1 where symbolic
  std::vector<std::string> dimNames;  // "" where static
  std::vector<uint32_t> dimRegs;      // shape-program registers
  uint32_t buffer = 0;
};

enum class BufferKind : uint8_t { Input = 0, Output = 1, Constant = 2, Transient = 3 };

struct PlanBuffer {
  BufferKind kind = BufferKind::Transient;
  uint32_t index = 0;
  uint64_t constantOffset = 0;
  uint32_t sizeReg = 0;
  uint32_t firstUse = 0, lastUse = 0;
};

struct PlanDispatch {
  uint32_t kernel = 0;
  std::vector<uint32_t> bindings;
  std::vector<uint32_t> pushConstants;
  uint32_t workgroupCountReg = 0;
  std::string name;
};

struct ExecutablePlan {
  std::string producer;
  std::string modelName;
  std::string targetTriple;
  std::string targetCpu;
  std::vector<std::string> cpuFeatures;
  std::vector<std::string> kernels;
  std::vector<TensorSignature> inputs, outputs;
  std::vector<ShapeInstruction> shapeProgram;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanDispatch> dispatches;
};

/// Serializes the artifact into `out` deterministically (same inputs give the
/// same bytes). `cpuLibrary` is the ELF shared object with the kernels;
/// `constants` is the packed constants blob (offsets in PlanBuffer refer to it).
/// Returns false and sets `error` on failure.
bool serializeArtifact(const ExecutablePlan &plan,
                       const std::vector<uint8_t> &cpuLibrary,
                       const std::vector<uint8_t> &constants,
                       std::vector<uint8_t> &out, std::string &error);

/// Writes the artifact to `path` atomically: a temporary file in the same
/// folder, renamed over `path` only when complete; nothing is left on failure.
bool writeArtifactFile(const std::string &path, const ExecutablePlan &plan,
                       const std::vector<uint8_t> &cpuLibrary,
                       const std::vector<uint8_t> &constants,
                       std::string &error);

} // namespace v4f

#endif // V4F_ARTIFACT_ARTIFACTWRITER_H
