//===- DispatchContext.h - state shared by the CPU kernel emitters -*- C++ -*-===//
#ifndef V4F_LIB_CODEGEN_CPU_DISPATCHCONTEXT_H
#define V4F_LIB_CODEGEN_CPU_DISPATCHCONTEXT_H

#include "KernelBuilder.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/IR/Operation.h"

#include <map>
#include <memory>

namespace v4f {

/// A tensor during codegen: dims as shape registers, and its plan buffer.
struct TensorInfo {
  std::vector<Reg> dims;
  uint32_t buffer = 0;
  mlir::Type elementType;
  /// For small integer tensors whose elements the plan can follow (shape
  /// computations): every element, row-major, as a shape register.
  std::optional<std::vector<Reg>> values;
  /// For a compile-time constant: its value (the GEMM emitters pack weights
  /// from it). `buffer` is ~0u when the constant is stored only packed.
  mlir::DenseElementsAttr constant;
  /// A 4-D tensor stored channels-last (v4f.layout = "nhwc" on its
  /// producer): element (n, c, h, w) at ((n H + h) W + w) C + c.
  bool channelsLast = false;
};

/// Where a channels-last tensor's logical dims N, C, H, W go in storage
/// order N, H, W, C (storage position i holds logical dim
/// kChannelsLastOrder[i]).
inline constexpr size_t kChannelsLastOrder[4] = {0, 2, 3, 1};
/// 4-D logical dims (N, C, H, W) in channels-last storage order.
inline std::vector<Reg> channelsLastDims(const std::vector<Reg> &dims) {
  return {dims[0], dims[2], dims[3], dims[1]};
}

class DispatchContext {
public:
  /// Kernels become entry points of `executable` (an index into plan.executables).
  DispatchContext(mlir::ModuleOp kernels, ExecutablePlan &plan, uint32_t executable,
                  std::vector<uint8_t> &constants)
      : kernels(kernels), plan(plan), executable(executable), constants(constants) {}

  mlir::ModuleOp kernels;
  ExecutablePlan &plan;
  uint32_t executable;
  std::vector<uint8_t> &constants;
  ShapeProgramBuilder shapes;
  /// Set while the body of a run-time loop is emitted: kernel emitters then
  /// add no guards of their own (the runtime reads a guard on a loop's first
  /// dispatch as "the loop is on the untaken side of an If").
  bool inRunTimeLoop = false;
  /// Set when a kernel's interface could not be sealed (KernelBuilder::
  /// sealInterface); buildExecutablePlan then fails with the error emitted.
  bool interfaceFailed = false;

  /// The CUDA executable of regions placed on the GPU (v4f.placement =
  /// "cuda"): created with the first such region; its translation unit and
  /// per-entry interface tables go to buildCudaModule.
  const CudaOptions *cuda = nullptr;
  int cudaExecutable = -1;
  std::string cudaSource;
  std::vector<std::vector<uint32_t>> cudaInterfaces;
  std::map<std::string, uint32_t> cudaKernelsBySource;
  std::map<std::vector<int32_t>, uint32_t> int32Tables;

  /// Starts a kernel named after `opName`.
  std::unique_ptr<KernelBuilder> newKernel(llvm::StringRef opName);
  /// Finishes `kernel` (deduplicating identical bodies) and appends a
  /// dispatch running it over a 1-D grid of `workgroups` with `bindings`
  /// (buffer indices) and `scratchBytes` of per-worker scratch (none if unset).
  void addDispatch(KernelBuilder &kernel, std::vector<uint32_t> bindings, Reg workgroups,
                   const std::string &name, std::optional<Reg> scratchBytes = std::nullopt);
  uint32_t newTransient(Reg sizeBytes);
  /// A constant buffer of `bytes`, 64-byte aligned in the constants blob;
  /// `fill` writes its contents (zeroed before).
  uint32_t newConstant(size_t bytes, const std::function<void(uint8_t *)> &fill);
  /// A constant table of int32 values; equal tables share one buffer.
  uint32_t int32Table(const std::vector<int32_t> &values);
  /// The buffer holding the float32 constant `weight`, seen as `matrices`
  /// matrices whose packed side has `cols` entries and whose other side is
  /// `K`, packed as `packing` (WeightPacking.h; written once per distinct
  /// constant and layout).
  uint32_t packedWeight(const TensorInfo &weight, const struct WeightPacking &packing, int64_t matrices,
                        int64_t K, int64_t cols);
  /// The buffer holding the float32 constant `weight` as its `count` plain
  /// row-major floats: its own, or a copy when it is stored only packed
  /// (v4f-pack-weights); ~0u when it is not a constant.
  uint32_t plainFloatWeight(const TensorInfo &weight, int64_t count);
  /// The buffer holding the int8 constant `weight` ([K, N]) in panels of
  /// `nr` columns, K in groups of `step` (2: int8_pairs, 4: int8_quads)
  /// interleaved by column (QuantizedGemmKernels.cpp).
  uint32_t packedInt8Weight(const TensorInfo &weight, int64_t K, int64_t N, int64_t nr, int64_t step);
  Reg numel(const TensorInfo &t) { return shapes.product(t.dims, 0, t.dims.size()); }
  /// Number of workgroups for `rows` rows of `rowSize` elements each so a
  /// workgroup handles about `grain` elements; returns {count, rowsPerGroup}.
  std::pair<Reg, Reg> splitRows(Reg rows, Reg rowSize, int64_t grain = 16384);

private:
  std::map<std::vector<const void *>, uint32_t> kernelsByBody;
  unsigned kernelCounter = 0;
  std::map<std::tuple<const void *, int, int64_t>, uint32_t> packedByWeight;
};

// Emitters, one per op family; each appends dispatches writing `result`.
mlir::LogicalResult emitElementwise(DispatchContext &ctx, mlir::Operation *op,
                                    llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// One kernel computing a chain of elementwise ops (a fused dispatch region)
/// element by element: `externals` are the values the chain reads from
/// outside (with their infos), `result` the chain's last value.
mlir::LogicalResult emitElementwiseChain(DispatchContext &ctx, llvm::ArrayRef<mlir::Operation *> ops,
                                         llvm::ArrayRef<mlir::Value> externals,
                                         llvm::ArrayRef<TensorInfo> externalInfos, const TensorInfo &result,
                                         const std::string &name);
/// The fused attention kernel of such a region (AttentionKernels.cpp);
/// `infoOf` gives the infos of the values it reads from outside.
mlir::LogicalResult emitAttention(DispatchContext &ctx, DispatchOp region, llvm::ArrayRef<mlir::Operation *> ops,
                                  llvm::function_ref<const TensorInfo &(mlir::Value)> infoOf,
                                  const TensorInfo &result);
/// Whether a region's ops are the 1x1 conv + depthwise conv that
/// v4f-fuse-pointwise-depthwise merges.
bool isPointwiseDepthwiseRegion(llvm::ArrayRef<mlir::Operation *> ops);
/// Their fused kernel (PointwiseDepthwiseKernels.cpp).
mlir::LogicalResult emitPointwiseDepthwise(DispatchContext &ctx, llvm::ArrayRef<mlir::Operation *> ops,
                                           llvm::function_ref<const TensorInfo &(mlir::Value)> infoOf,
                                           const TensorInfo &result);
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
                                int64_t column, int64_t KW, int64_t dwl, int64_t sw,
                                llvm::ArrayRef<mlir::Value> taps, mlir::Value init, int64_t lanes);
/// Stores input row y (0-based; W floats of plane `plane` of `x`, H rows)
/// into the scratch at `dst` as a padded row of SW floats: a zero vector,
/// the row from float `lanes` on (a masked last vector), zeros after it; a
/// row y outside [0, H) is all zeros. The direct conv kernels read a
/// conv's padding from it without masks.
void emitPaddedRow(KernelBuilder &kb, mlir::Value x, mlir::Value plane, mlir::Value y, mlir::Value scratch,
                   mlir::Value dst, int64_t H, int64_t W, int64_t SW, int64_t lanes);
/// Whether a region's ops are the depthwise conv + 1x1 conv that
/// v4f-fuse-depthwise-pointwise merges.
bool isDepthwisePointwiseRegion(llvm::ArrayRef<mlir::Operation *> ops);
/// Their fused kernel (DepthwisePointwiseKernels.cpp).
mlir::LogicalResult emitDepthwisePointwise(DispatchContext &ctx, llvm::ArrayRef<mlir::Operation *> ops,
                                           llvm::function_ref<const TensorInfo &(mlir::Value)> infoOf,
                                           const TensorInfo &result);
mlir::LogicalResult emitTranspose(DispatchContext &ctx, mlir::Operation *op,
                                  llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitConcat(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitGather(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// Copies `src` into `dst` (same element count), e.g. for graph outputs.
void emitCopy(DispatchContext &ctx, const TensorInfo &src, const TensorInfo &dst,
              const std::string &name);
/// Copies `src` (its elements in row-major order) into `dstBuffer` starting
/// at element `dstBase` (a scan output's slice of one loop iteration).
void emitCopyAt(DispatchContext &ctx, const TensorInfo &src, uint32_t dstBuffer, Reg dstBase,
                const std::string &name);
/// One-workgroup kernels of the plan's control flow (ControlFlowKernels.cpp):
/// writes register `value` as an int64 into `buffer`;
void emitWriteRegister(DispatchContext &ctx, Reg value, uint32_t buffer, const std::string &name);
/// fails with V4F_KERNEL_ERROR_SHAPE_MISMATCH when any pair of dims differs
/// at run time (pairs equal at compile time emit nothing; returns false when
/// no check is needed);
bool emitDimsCheck(DispatchContext &ctx, const std::vector<Reg> &a, const std::vector<Reg> &b,
                   const std::string &name);
/// copies element 0 of `src` (any integer or bool type; a float as 0/1) as
/// an int64 into `buffer` (a value the plan reads back with a DataValue),
/// at most `clampAbove` when given (so the read stays within its bound).
void emitScalarToI64(DispatchContext &ctx, const TensorInfo &src, uint32_t buffer, const std::string &name,
                     std::optional<int64_t> clampAbove = std::nullopt);
mlir::LogicalResult emitMatMul(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// v4f.quantized_matmul: the "quantize rows" and integer GEMM dispatches.
mlir::LogicalResult emitQuantizedMatMul(DispatchContext &ctx, mlir::Operation *op,
                                        llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// v4f.quantized_conv: the "quantize + im2col" and integer GEMM dispatches
/// (QuantizedConvKernels.cpp).
mlir::LogicalResult emitIntegerMatMul(DispatchContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                      const TensorInfo &result);
mlir::LogicalResult emitQuantizedConv(DispatchContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                      const TensorInfo &result);
/// v4f.int4_matmul: one GEMM dispatch unpacking int4 weights in its inner loop.
mlir::LogicalResult emitInt4MatMul(DispatchContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                                   const TensorInfo &result);
/// `scaledWeight`, when set, replaces the conv's packed weight by a buffer
/// of one packed matrix per image (a channel-scaled conv, G = 1).
mlir::LogicalResult emitConv(DispatchContext &ctx, mlir::Operation *op,
                             llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result,
                             std::optional<uint32_t> scaledWeight = std::nullopt);
/// Whether a region's ops are the multiplication by a per-channel scale and
/// the 1x1 conv that v4f-fuse-channel-scale merges.
bool isChannelScaledConvRegion(llvm::ArrayRef<mlir::Operation *> ops);
/// Their kernels (ConvKernels.cpp): the packed weight scaled per image, then
/// the conv of the unscaled input.
mlir::LogicalResult emitChannelScaledConv(DispatchContext &ctx, llvm::ArrayRef<mlir::Operation *> ops,
                                          llvm::function_ref<const TensorInfo &(mlir::Value)> infoOf,
                                          const TensorInfo &result);
/// A conv marked `v4f.conv_algorithm = "depthwise"` (DepthwiseConvKernels.cpp).
mlir::LogicalResult emitDepthwiseConv(DispatchContext &ctx, mlir::Operation *op,
                                      llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// A conv marked `v4f.conv_algorithm = "small_input"` (SmallInputConvKernels.cpp).
mlir::LogicalResult emitSmallInputConv(DispatchContext &ctx, mlir::Operation *op,
                                       llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// The binding slots of a conv's bias and residual (operands[2], [3] when
/// present), appended to `bindings` in that order.
struct ConvEpilogueSlots {
  std::optional<unsigned> bias, residual;
};
ConvEpilogueSlots bindConvEpilogue(ConvOp conv, llvm::ArrayRef<TensorInfo> operands, std::vector<uint32_t> &bindings);
/// A conv marked `v4f.conv_algorithm = "winograd"` (WinogradConvKernels.cpp).
mlir::LogicalResult emitWinogradConv(DispatchContext &ctx, mlir::Operation *op,
                                     llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitPool(DispatchContext &ctx, mlir::Operation *op,
                             llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitReduceMean(DispatchContext &ctx, mlir::Operation *op,
                                   llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitReduce(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::FailureOr<std::vector<Reg>> reduceResultDims(DispatchContext &ctx, mlir::Operation *op,
                                                   llvm::ArrayRef<TensorInfo> operands);
mlir::LogicalResult emitArgReduce(DispatchContext &ctx, mlir::Operation *op,
                                  llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitSoftmax(DispatchContext &ctx, mlir::Operation *op,
                                llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitLayerNorm(DispatchContext &ctx, mlir::Operation *op,
                                  llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);

// Scatter, GatherND and TopK (IndexingKernels.cpp).
mlir::LogicalResult emitScatterElements(DispatchContext &ctx, mlir::Operation *op,
                                        llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitScatterND(DispatchContext &ctx, mlir::Operation *op,
                                  llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitGatherND(DispatchContext &ctx, mlir::Operation *op,
                                 llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// TopK writing `values` and `indices`, with `k` the register of k's value.
mlir::LogicalResult emitTopK(DispatchContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                             Reg k, const TensorInfo &values, const TensorInfo &indices);

/// v4f.recurrent over a run-time sequence length or batch: one time-loop
/// kernel writing `results` (Y, Y_h and, for LSTM, Y_c; RecurrentKernels.cpp).
mlir::LogicalResult emitRecurrent(DispatchContext &ctx, RecurrentOp op, llvm::ArrayRef<TensorInfo> operands,
                                  llvm::ArrayRef<TensorInfo> results);

// Ops with data-dependent result lengths (DataDependentKernels.cpp): each
// creates its results' buffers (appended to `results`, in result order).
mlir::LogicalResult emitUnique(DispatchContext &ctx, mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands,
                               llvm::SmallVectorImpl<TensorInfo> &results);
mlir::LogicalResult emitNonMaxSuppression(DispatchContext &ctx, mlir::Operation *op,
                                          llvm::ArrayRef<TensorInfo> operands,
                                          llvm::SmallVectorImpl<TensorInfo> &results);

/// Name of a dispatch in errors and profiles: the op and its ONNX node.
inline std::string dispatchName(mlir::Operation *op) {
  std::string name = op->getName().stripDialect().str();
  mlir::Location loc = op->getLoc();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations())
      if (llvm::isa<mlir::NameLoc>(l)) {
        loc = l;
        break;
      }
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc)) name += " '" + named.getName().str() + "'";
  return name;
}

/// Bytes per element in a buffer (i1 / ONNX bool takes one byte).
inline int64_t elementBytes(mlir::Type t) {
  if (isStorageOnlyType(t)) t = bodyScalarType(t);
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

// Shape-value ops (ShapeValueOps.cpp): shape, reshape with a shape operand,
// expand, unsqueeze, slice.
/// Element values of `op`'s result as registers, when the plan can follow them.
std::optional<std::vector<Reg>> propagateValues(DispatchContext &ctx, mlir::Operation *op,
                                                llvm::ArrayRef<TensorInfo> operands,
                                                const TensorInfo &result);
/// Result dims of the ops whose shape depends on operand values.
mlir::FailureOr<std::vector<Reg>> valueDependentDims(DispatchContext &ctx, mlir::Operation *op,
                                                     llvm::ArrayRef<TensorInfo> operands);
mlir::LogicalResult emitShapeOf(DispatchContext &ctx, mlir::Operation *op,
                                llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitExpand(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitRange(DispatchContext &ctx, mlir::Operation *op,
                              llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitGatherElements(DispatchContext &ctx, mlir::Operation *op,
                                       llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitTrilu(DispatchContext &ctx, mlir::Operation *op,
                              llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitFill(DispatchContext &ctx, mlir::Operation *op,
                             llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitPad(DispatchContext &ctx, mlir::Operation *op,
                            llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitCumSum(DispatchContext &ctx, mlir::Operation *op,
                               llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
mlir::LogicalResult emitSlice(DispatchContext &ctx, mlir::Operation *op,
                              llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
/// Strided copy: out[idx] = in[base + sum idx_d * strides_d] over `dims`,
/// where strides and base are registers.
void emitStridedCopy(DispatchContext &ctx, const std::string &name, const TensorInfo &src,
                     const TensorInfo &dst, const std::vector<Reg> &srcStrides, Reg srcBase,
                     bool broadcastSource);

/// Applies a fused activation ("none", "relu", ...) to a scalar or vector.
mlir::Value applyActivation(KernelBuilder &kb, mlir::Value v, llvm::StringRef act, float alpha,
                            float beta);
/// The same with `conv`'s fused activation and its alpha/beta.
mlir::Value applyActivation(KernelBuilder &kb, mlir::Value v, ConvOp conv);

} // namespace v4f

#endif
