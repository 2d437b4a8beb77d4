//===- CPUKernelContext.h - state shared by the CPU kernel emitters -*- C++ -*-===//
#ifndef V4F_LIB_CODEGEN_CPU_CPUKERNELCONTEXT_H
#define V4F_LIB_CODEGEN_CPU_CPUKERNELCONTEXT_H

#include "KernelBuilder.h"
#include "v4f/Plan/PlanContext.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Operation.h"

#include <map>
#include <memory>

namespace v4f {

/// The CPU target's share of plan building: the kernel module its kernels
/// become functions of, their dispatches in the CPU executable, and the
/// weights it packs. The plan's buffers and shape program live in the
/// PlanContext it refers to (`pc`, reachable under the same names).
class CPUKernelContext {
public:
  /// Kernels become entry points of `executable` (an index into plan.executables).
  CPUKernelContext(PlanContext &pc, mlir::ModuleOp kernels, uint32_t executable)
      : pc(pc), kernels(kernels), plan(pc.plan), executable(executable), constants(pc.constants), shapes(pc.shapes),
        inRunTimeLoop(pc.inRunTimeLoop) {}

  PlanContext &pc;
  operator PlanContext &() { return pc; }
  mlir::ModuleOp kernels;
  ExecutablePlan &plan;
  uint32_t executable;
  std::vector<uint8_t> &constants;
  ShapeProgramBuilder &shapes;
  /// Set while the body of a run-time loop is emitted (PlanContext).
  bool &inRunTimeLoop;
  /// Set when a kernel's interface could not be sealed (KernelBuilder::
  /// sealInterface); plan building then fails with the error emitted.
  bool interfaceFailed = false;

  /// Starts a kernel named after `opName`.
  std::unique_ptr<KernelBuilder> newKernel(llvm::StringRef opName);
  /// Finishes `kernel` (deduplicating identical bodies) and appends a
  /// dispatch running it over a 1-D grid of `workgroups` with `bindings`
  /// (buffer indices) and `scratchBytes` of per-worker scratch (none if unset).
  void addDispatch(KernelBuilder &kernel, std::vector<uint32_t> bindings, Reg workgroups, const std::string &name,
                   std::optional<Reg> scratchBytes = std::nullopt);
  uint32_t newTransient(Reg sizeBytes) { return pc.newTransient(sizeBytes); }
  uint32_t newConstant(size_t bytes, const std::function<void(uint8_t *)> &fill) { return pc.newConstant(bytes, fill); }
  uint32_t int32Table(const std::vector<int32_t> &values) { return pc.int32Table(values); }
  /// The buffer holding the float32 constant `weight`, seen as `matrices`
  /// matrices whose packed side has `cols` entries and whose other side is
  /// `K`, packed as `packing` (WeightPacking.h; written once per distinct
  /// constant and layout).
  uint32_t packedWeight(const TensorInfo &weight, const struct WeightPacking &packing, int64_t matrices, int64_t K,
                        int64_t cols);
  /// The buffer holding the float32 constant `weight` as its `count` plain
  /// row-major floats: its own, or a copy when it is stored only packed
  /// (v4f-pack-weights); ~0u when it is not a constant.
  uint32_t plainFloatWeight(const TensorInfo &weight, int64_t count);
  /// The buffer holding the int8 constant `weight` ([K, N]) in panels of
  /// `nr` columns, K in groups of `step` (2: int8_pairs, 4: int8_quads)
  /// interleaved by column (QuantizedGemmKernels.cpp).
  uint32_t packedInt8Weight(const TensorInfo &weight, int64_t K, int64_t N, int64_t nr, int64_t step);
  Reg numel(const TensorInfo &t) { return pc.numel(t); }
  std::pair<Reg, Reg> splitRows(Reg rows, Reg rowSize, int64_t grain = 16384) {
    return pc.splitRows(rows, rowSize, grain);
  }

private:
  std::map<std::vector<const void *>, uint32_t> kernelsByBody;
  unsigned kernelCounter = 0;
  std::map<std::tuple<const void *, int, int64_t>, uint32_t> packedByWeight;
};

// Emitters shared across kernel families (each family registers its own
// op and region kernels: KernelRegistry.h).
/// One kernel computing a chain of elementwise ops (a fused dispatch region)
/// element by element: `externals` are the values the chain reads from
/// outside (with their infos), `result` the chain's last value.
mlir::LogicalResult emitElementwiseChain(CPUKernelContext &ctx, llvm::ArrayRef<mlir::Operation *> ops,
                                         llvm::ArrayRef<mlir::Value> externals,
                                         llvm::ArrayRef<TensorInfo> externalInfos, const TensorInfo &result,
                                         const std::string &name);
/// The register tile of a 1x1 conv inside a fused kernel: `rows` output
/// channels (rows r0, r0 + 1, ... of the [.][K] float weight bound at
/// `weights`) x `vecs` vectors of `lanes` pixels, summed over the K input
/// channels; `input(k, v)` loads vector v of input channel k. Returns the
/// accumulators, row-major (rows x vecs).
llvm::SmallVector<mlir::Value> emitPointwiseTile(KernelBuilder &kb, mlir::Value weights, mlir::Value r0, int64_t K,
                                                 int64_t rows, int64_t vecs, int64_t lanes,
                                                 llvm::function_ref<mlir::Value(mlir::Value, int64_t)> input);
/// The KH x KW weights of depthwise channel `m` (OIHW floats at `weights`),
/// each broadcast to a vector of `lanes`.
llvm::SmallVector<mlir::Value> emitDepthwiseTaps(KernelBuilder &kb, mlir::Value weights, mlir::Value m, int64_t taps,
                                                 int64_t lanes);
/// One vector of a depthwise output row computed from padded input rows in
/// the scratch: `init` + the sum over kernel rows kh and columns kw of
/// taps[kh KW + kw] x the vector at rows[kh] + `column` + kw dwl (stride 2:
/// the even lanes of the two vectors there).
mlir::Value emitDepthwiseVector(KernelBuilder &kb, mlir::Value scratch, llvm::ArrayRef<mlir::Value> rows,
                                int64_t column, int64_t KW, int64_t dwl, int64_t sw, llvm::ArrayRef<mlir::Value> taps,
                                mlir::Value init, int64_t lanes);
/// Stores input row y (0-based; W floats of plane `plane` of `x`, H rows)
/// into the scratch at `dst` as a padded row of SW floats: a zero vector,
/// the row from float `lanes` on (a masked last vector), zeros after it; a
/// row y outside [0, H) is all zeros. The direct conv kernels read a
/// conv's padding from it without masks.
void emitPaddedRow(KernelBuilder &kb, mlir::Value x, mlir::Value plane, mlir::Value y, mlir::Value scratch,
                   mlir::Value dst, int64_t H, int64_t W, int64_t SW, int64_t lanes);
/// Copies `src` into `dst` (same element count), e.g. for graph outputs.
void emitCopy(CPUKernelContext &ctx, const TensorInfo &src, const TensorInfo &dst, const std::string &name);
/// Copies `src` (its elements in row-major order) into `dstBuffer` starting
/// at element `dstBase` (a scan output's slice of one loop iteration).
void emitCopyAt(CPUKernelContext &ctx, const TensorInfo &src, uint32_t dstBuffer, Reg dstBase, const std::string &name);
/// One-workgroup kernels of the plan's control flow (ControlFlowKernels.cpp):
/// writes register `value` as an int64 into `buffer`;
void emitWriteRegister(CPUKernelContext &ctx, Reg value, uint32_t buffer, const std::string &name);
/// fails with V4F_KERNEL_ERROR_SHAPE_MISMATCH when any pair of dims differs
/// at run time (pairs equal at compile time emit nothing; returns false when
/// no check is needed);
bool emitDimsCheck(CPUKernelContext &ctx, const std::vector<Reg> &a, const std::vector<Reg> &b,
                   const std::string &name);
/// copies element 0 of `src` (any integer or bool type; a float as 0/1) as
/// an int64 into `buffer` (a value the plan reads back with a DataValue),
/// at most `clampAbove` when given (so the read stays within its bound).
void emitScalarToI64(CPUKernelContext &ctx, const TensorInfo &src, uint32_t buffer, const std::string &name,
                     std::optional<int64_t> clampAbove = std::nullopt);
/// `scaledWeight`, when set, replaces the conv's packed weight by a buffer
/// of one packed matrix per image (a channel-scaled conv, G = 1).
mlir::LogicalResult emitConv(CPUKernelContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                             const TensorInfo &result, std::optional<uint32_t> scaledWeight = std::nullopt);
/// A conv marked `v4f.conv_algorithm = "depthwise"` (DepthwiseConvKernels.cpp).
mlir::LogicalResult emitDepthwiseConv(CPUKernelContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                      const TensorInfo &result);
/// A conv marked `v4f.conv_algorithm = "small_input"` (SmallInputConvKernels.cpp).
mlir::LogicalResult emitSmallInputConv(CPUKernelContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                       const TensorInfo &result);
/// The binding slots of a conv's bias and residual (operands[2], [3] when
/// present), appended to `bindings` in that order.
struct ConvEpilogueSlots {
  std::optional<unsigned> bias, residual;
};
ConvEpilogueSlots bindConvEpilogue(ConvOp conv, llvm::ArrayRef<TensorInfo> operands, std::vector<uint32_t> &bindings);
/// A conv marked `v4f.conv_algorithm = "winograd"` (WinogradConvKernels.cpp).
mlir::LogicalResult emitWinogradConv(CPUKernelContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                     const TensorInfo &result);

/// Strided copy: out[idx] = in[base + sum idx_d * strides_d] over `dims`,
/// where strides and base are registers.
void emitStridedCopy(CPUKernelContext &ctx, const std::string &name, const TensorInfo &src, const TensorInfo &dst,
                     const std::vector<Reg> &srcStrides, Reg srcBase, bool broadcastSource);

/// Applies a fused activation ("none", "relu", ...) to a scalar or vector.
mlir::Value applyActivation(KernelBuilder &kb, mlir::Value v, llvm::StringRef act, float alpha, float beta);
/// The same with `conv`'s fused activation and its alpha/beta.
mlir::Value applyActivation(KernelBuilder &kb, mlir::Value v, ConvOp conv);

} // namespace v4f

#endif
