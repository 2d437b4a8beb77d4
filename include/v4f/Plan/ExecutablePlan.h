//===- ExecutablePlan.h - the target-independent execution plan -*- C++ -*-===//
//
// What the runtime executes, as plain C++ data (no MLIR, no FlatBuffers):
// the I/O signature, the shape program that computes every dynamic size, the
// buffers with their lifetimes, the ordered dispatches, and the executables
// whose entry points the dispatches run (a CPU library per ISA today; a CUDA
// module can sit beside it). Codegen fills it (lib/Codegen), PlanFinalizer
// computes liveness and compacts the shape program (lib/Plan), and the
// artifact writer only serializes it (lib/Artifact).
//
// The enums mirror runtime/include/v4f/artifact_manifest.fbs value for value;
// lib/Artifact/ArtifactWriter.cpp static_asserts every one against the
// generated FlatBuffers enums.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_EXECUTABLEPLAN_H
#define V4F_PLAN_EXECUTABLEPLAN_H

#include "v4f/artifact_format.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace v4f {

/// A shape-program register (index of the instruction defining it).
using Reg = uint32_t;

enum class ShapeOpKind : uint8_t {
  Const = 0,
  InputDim = 1,
  Add = 2,
  Sub = 3,
  Mul = 4,
  FloorDiv = 5,
  CeilDiv = 6,
  Max = 7,
  Min = 8,
  InputValue = 9,
  Select = 10,
  Lt = 11,
  Eq = 12,
  InputScaledDim = 13,
  DataValue = 14,
  LoopIndex = 15, // r = the iteration plan loop `a` is running (0 before it starts)
  LoopCount = 16, // r = the iterations loop `a` ran once it ended; r[imm] (a bound) before
  Broadcast = 17, // r = r[a] and r[b] broadcast (equal, or one is 1); else a run-time error
                  // naming shapeLabels[imm] (imm -1: no label)
  Expect = 18     // r = r[a] when r[a] == r[b] (the value an op requires); else a run-time
                  // error naming shapeLabels[imm] (which says what is checked)
};

struct ShapeInstruction {
  ShapeOpKind op = ShapeOpKind::Const;
  uint32_t a = 0, b = 0;
  int64_t imm = 0;
};

/// Element types cross the format as V4F_DTYPE_* (ONNX's numbering).
enum class DType : int32_t {
  Unknown = 0,
  Float32 = V4F_DTYPE_FLOAT32,
  UInt8 = V4F_DTYPE_UINT8,
  Int8 = V4F_DTYPE_INT8,
  UInt16 = V4F_DTYPE_UINT16,
  Int16 = V4F_DTYPE_INT16,
  Int32 = V4F_DTYPE_INT32,
  Int64 = V4F_DTYPE_INT64,
  Bool = V4F_DTYPE_BOOL,
  Float16 = V4F_DTYPE_FLOAT16,
  Float64 = V4F_DTYPE_FLOAT64,
  UInt32 = V4F_DTYPE_UINT32,
  UInt64 = V4F_DTYPE_UINT64,
  BFloat16 = V4F_DTYPE_BFLOAT16,
  Float8E4M3FN = V4F_DTYPE_FLOAT8E4M3FN,
  Float8E4M3FNUZ = V4F_DTYPE_FLOAT8E4M3FNUZ,
  Float8E5M2 = V4F_DTYPE_FLOAT8E5M2,
  Float8E5M2FNUZ = V4F_DTYPE_FLOAT8E5M2FNUZ,
  UInt4 = V4F_DTYPE_UINT4,
  Int4 = V4F_DTYPE_INT4,
  Float4E2M1 = V4F_DTYPE_FLOAT4E2M1,
  Float8E8M0 = V4F_DTYPE_FLOAT8E8M0,
  UInt2 = V4F_DTYPE_UINT2,
  Int2 = V4F_DTYPE_INT2,
};

struct TensorSignature {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;         // -1 where symbolic
  std::vector<std::string> dimNames; // "" where static
  std::vector<Reg> dimRegs;          // shape-program registers
  uint32_t buffer = 0;
  /// Compile-time bounds of symbolic dims (--dim NAME=MIN..MAX): empty, or
  /// one entry per dim, -1 where unbounded.
  std::vector<int64_t> dimMin, dimMax;
};

enum class BufferKind : uint8_t { Input = 0, Output = 1, Constant = 2, Transient = 3 };

struct PlanBuffer {
  BufferKind kind = BufferKind::Transient;
  uint32_t index = 0;
  uint64_t constantOffset = 0;
  Reg sizeReg = 0;
  uint32_t firstUse = 0, lastUse = 0;
};

enum class ExecutableTarget : uint8_t { Cpu = 0, Cuda = 1 };
enum class ExecutableFormat : uint8_t { ElfSharedObject = 0, CudaModule = 1 };

/// One compiled executable and the entry points dispatches call in it.
struct PlanExecutable {
  ExecutableTarget target = ExecutableTarget::Cpu;
  ExecutableFormat format = ExecutableFormat::ElfSharedObject;
  uint32_t abiVersion = 0;
  std::string triple, cpu;           // CPU: LLVM triple and -mcpu
  std::vector<std::string> features; // CPU: required V4F_CPU_FEATURE_NAMES
  std::vector<std::string> entryPoints;
  std::vector<uint8_t> image; // the bytes stored in its section
};

struct PlanDispatch {
  uint32_t executable = 0;
  uint32_t entryPoint = 0;
  std::vector<uint32_t> bindings;
  std::vector<Reg> pushConstants;
  std::vector<Reg> workgroupCount; // 1 to 3 registers (x, y, z)
  Reg scratchSize = 0;             // bytes of per-worker scratch
  std::string name;
  /// Runs only when this register is non-zero (the dispatches of one side
  /// of a run-time If); unset: always runs.
  std::optional<Reg> guard;
  /// Floating-point (or integer multiply-add) operations the dispatch does,
  /// counting a multiply-add as 2, for profiles; unset: not counted.
  std::optional<Reg> flops;
  /// "int8" for integer kernels; empty for float32 (v4fc inspect --plan).
  std::string precision;
  /// CUDA dispatches: threads per block (x[, y[, z]]); empty on the CPU.
  std::vector<uint32_t> blockDim;
  /// A copy inserted at a placement border (insertTransfers): bindings[0]
  /// moves to the device (ToDevice) or back to the host (ToHost); no kernel.
  enum class Transfer : uint8_t { None = 0, ToDevice = 1, ToHost = 2 } transfer = Transfer::None;
  /// Compile time only (not serialized): V4F_BINDING_* per binding, from
  /// the kernel's interface; empty = every binding read and written.
  std::vector<uint32_t> access;
};

/// Dispatches [begin, end) run `tripCount` times in a row (a v4f.loop);
/// loops do not nest or overlap. A trip count above maxIterations is a
/// run-time error.
struct PlanLoop {
  uint32_t begin = 0, end = 0;
  Reg tripCount = 0;
  int64_t maxIterations = 0;
  /// A while loop (no trip count): tripCount is maxIterations + 1, the
  /// condition ends it, and still running after maxIterations is an error.
  bool unbounded = false;
  std::string name;
  /// Read after every iteration: 0 ends the loop (a condition the body
  /// computes); unset: the trip count alone decides.
  std::optional<Reg> cond;
};

struct ExecutablePlan {
  std::string producer;
  std::string modelName;
  std::vector<PlanExecutable> executables;
  std::vector<TensorSignature> inputs, outputs;
  std::vector<ShapeInstruction> shapeProgram;
  /// Names of the ops whose run-time shape checks (Broadcast) can fail.
  std::vector<std::string> shapeLabels;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanDispatch> dispatches;
  std::vector<PlanLoop> loops;
  /// Multi-ISA artifacts (format 3.2): the same model planned for other CPU
  /// targets, each with its own executables, shape program, buffers and
  /// dispatches; the runtime runs the variant (or this baseline) whose CPU
  /// features the host has, preferring the one that needs the most. Their
  /// constant offsets point into the one constants section; producer,
  /// modelName and their own variants stay empty.
  std::vector<ExecutablePlan> variants;
  /// Bytes of the session arena the runtime lays out for the transient
  /// buffers when all their sizes are compile-time constants (format 3.3,
  /// computeStaticArena); -1 when they depend on input dims.
  int64_t staticArenaBytes = -1;
};

/// Inserts the transfer dispatches a plan with CUDA dispatches needs
/// (lib/Plan/Transfers.cpp): inputs start on the host, constants are on
/// both sides (the runtime uploads the constants once), every other buffer
/// lives where it was last written; a dispatch reading a buffer that is not
/// valid on its side gets a copy before it, and every output is copied back
/// to the host at the end. A buffer written on one side after being written
/// on the other (a partial write, e.g. a concat part) is first copied over.
/// Returns the number of transfers inserted. Call before the lifetimes.
unsigned insertTransfers(ExecutablePlan &plan);

/// Computes each transient buffer's [firstUse, lastUse] from the dispatch
/// order (lib/Plan/PlanFinalizer.cpp).
void computeBufferLifetimes(ExecutablePlan &plan);

/// Drops the shape-program instructions nothing in the plan reads and
/// renumbers the registers the plan refers to (lib/Plan/PlanFinalizer.cpp).
void compactShapeProgram(ExecutablePlan &plan);

/// Sets plan.staticArenaBytes when every transient buffer's size register
/// is a constant: the arena the runtime's planner (runtime/src/
/// memory_planner.cpp: biggest first, first fit among the buffers alive at
/// the same time, 64-byte aligned) lays out for them. Needs the lifetimes
/// (lib/Plan/PlanFinalizer.cpp).
void computeStaticArena(ExecutablePlan &plan);

} // namespace v4f

#endif // V4F_PLAN_EXECUTABLEPLAN_H
