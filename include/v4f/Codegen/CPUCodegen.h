//===- CPUCodegen.h - v4f graph -> CPU kernels + execution plan -*- C++ -*-===//
#ifndef V4F_CODEGEN_CPUCODEGEN_H
#define V4F_CODEGEN_CPUCODEGEN_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Plan/ExecutablePlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace v4f {

/// The machine the kernels are compiled for.
struct CPUTarget {
  std::string triple;
  std::string cpu;                           // LLVM CPU name, e.g. "znver3"
  std::string features;                      // LLVM feature string
  std::vector<std::string> requiredFeatures; // names from V4F_CPU_FEATURE_NAMES
  // What kernel generation tunes for (becomes #v4f.cpu_target).
  std::string isa; // "sse", "avx2", "avx512"
  int64_t vectorBits = 128, vectorRegisters = 16;
  int64_t l1CacheBytes = 32 * 1024, l2CacheBytes = 512 * 1024;
  bool vnni = false; // AVX-512 VNNI / AVX-VNNI: int8 GEMMs use vpdpbusd
};

/// The module attribute `v4f.target` describing `target`.
CPUTargetAttr getCPUTargetAttr(mlir::MLIRContext *ctx, const CPUTarget &target);
/// The GEMM tiling v4f-select-cpu-strategy picks for `target`.
GemmTilingAttr chooseGemmTiling(CPUTargetAttr target);
/// The register and cache tiling v4f-select-cpu-strategy (or v4f-apply-tuning)
/// chose for a GEMM-based op (#v4f.gemm_tiling).
inline constexpr const char *kTilingAttr = "v4f.tiling";
/// Set on a 1x1 conv whose GEMM runs each register tile across all of its
/// workgroup's columns (pointwiseRowTilesOuter at its final tiling):
/// recorded with the tiling, read by the conv kernel and the layout pass.
inline constexpr const char *kRowTilesOuterAttr = "v4f.row_tiles_outer";
/// Records kRowTilesOuterAttr on `conv` for its current tiling and algorithm.
void recordRowTilesOuter(ConvOp conv);
/// The attribute naming a conv's kernel when it is not im2col + GEMM.
inline constexpr const char *kConvAlgorithmAttr = "v4f.conv_algorithm";
/// Whether `conv` takes the direct depthwise kernel: each group reads one
/// input channel (static OIHW weight [OC, 1, KH, KW], KH, KW <= 11) at a
/// width stride of 1 or 2.
bool isDirectDepthwise(ConvOp conv);
/// Whether `conv` takes the direct small-input kernel
/// (`v4f.conv_algorithm = "small_input"`, SmallInputConvKernels.cpp): a
/// float32 conv of one group over at most 4 input channels (an image stem:
/// RGB) with a static [OC, C, KH, KW] weight, KH, KW <= 7, strides 1 or 2,
/// static spatial dims, left padding at most 4. Its im2col GEMM would have
/// K = C KH KW of only 27-147 rows per output tile.
bool isSmallInputConv(ConvOp conv);
/// Whether `conv` is 1x1, stride 1 and unpadded: its input already is the
/// GEMM's B (no im2col packing).
bool readsInputAsB(ConvOp conv);
/// Whether a 1x1 conv's GEMM (readsInputAsB, no conv_algorithm) runs each
/// register tile across all of its workgroup's columns
/// (GemmSpec::rowTilesOuter): the conv writes more than it reads (more
/// output than input channels per group) over many pixels (at least
/// 2 x NB, or a run-time count), so its output rows are the streams to keep
/// few. A reducing conv keeps each K x NR panel of its input in L1 instead
/// (measurements: bench/results/history.md, "Measurements behind code
/// decisions").
bool pointwiseRowTilesOuter(ConvOp conv, GemmTilingAttr tiling);
/// The tiling of a 1x1 conv's GEMM (readsInputAsB, no conv_algorithm),
/// from the target's `tiling`. For pointwiseRowTilesOuter the column block
/// NB is the largest multiple of NR whose K block of the input (K x NB
/// floats, K in blocks of at most KC) fills at most half of L2, between the
/// tiling's NB and 4 x NB. A conv that does not expand, over as many
/// pixels, takes all output channels of a group in its row block MB
/// (rounded up to MR; equal blocks while the MB x K-block slice of the
/// weight fills at most a quarter of L2): each column panel of the input
/// then passes through L1 once, where row blocks of 64 read it once each.
/// Not with few pixels: a workgroup of few column panels would re-read its
/// MB rows of weight from L2 per panel (MobileNetV2's 64 -> 384 convs at
/// 14 x 14; measurements: bench/results/history.md, "Measurements behind
/// code decisions").
GemmTilingAttr pointwiseTiling(ConvOp conv, GemmTilingAttr tiling, int64_t l2Bytes);
/// Whether `conv` can compute output channels in vector lanes
/// (v4f.conv_algorithm = "channel_lanes"): float, one group, a constant
/// weight, static input and output planes, output channels a multiple of
/// the lanes and at least one register tile of them.
/// v4f-select-cpu-strategy chooses it by its cost model, v4fc tune by
/// measurement.
bool channelLanesEligible(ConvOp conv, GemmTilingAttr tiling);

/// The tiling of a conv computing channels in lanes: the target's, with
/// taller register tiles (1.5 x MR rows of pixels, where the accumulators
/// still fit the register file) for a 1x1 stride-1 conv over at most one
/// row block of them (8 tiles): fewer tiles then re-read each block of the
/// streamed weight.
GemmTilingAttr channelLanesTiling(ConvOp conv, CPUTargetAttr target);

/// Channels-last storage (v4f-assign-cpu-layouts, AssignLayouts.cpp): an op
/// whose result is stored with the channels of each pixel adjacent
/// (physically N, H, W, C for the logical N, C, H, W) carries
/// `v4f.layout = "nhwc"`; the IR's types stay logical.
inline constexpr const char *kLayoutAttr = "v4f.layout";
inline constexpr const char *kChannelsLast = "nhwc";
/// Whether `op`'s result is stored channels-last.
bool storesChannelsLast(mlir::Operation *op);
/// Whether `conv` can store its result channels-last: it takes (or can
/// take) "channel_lanes", whose output vectors hold channels, so the store
/// is a plain row store instead of the in-register transposes.
bool canWriteChannelsLast(ConvOp conv, GemmTilingAttr tiling);
/// Whether `conv` can read its input (operand 0) channels-last: it can take
/// "channel_lanes" and pads nothing, so the A operand is read in place at
/// each output pixel's window origin (the offset table's entries become
/// (kh W + kw) C + c; 1x1 stride-1 convs read rows of C floats).
bool canReadChannelsLast(ConvOp conv, GemmTilingAttr tiling);
/// Whether a reduce_mean reads its input channels-last: the mean over H and
/// W of a 4-D float tensor (GlobalAveragePool), whose result has the same
/// memory order in either layout.
bool meanReadsChannelsLast(mlir::Operation *op);
/// Whether `op` stores its result in the layout of its data operand
/// (operand 0), channels-first or channels-last alike, so a channels-last
/// group extends through it: a float 2-D max or average pool (channels in
/// lanes, PoolKernels.cpp), a pad of a 4-D float tensor (ShapeValueKernels.cpp)
/// and a gather along H or W with 1-D indices of a 4-D float tensor (the
/// per-axis gathers Resize decomposes into, ElementwiseKernels.cpp).
bool followsDataLayout(mlir::Operation *op);
/// Whether `op` is a v4f.split of a 4-D float tensor along its channels
/// (axis 1), whose parts may be stored channels-last when its input is
/// (each part's pixels keep their C_k adjacent channels; DataMovementKernels.cpp
/// emitSplit): YOLOv8's C2f blocks split a conv's channels in two.
bool splitsChannels(mlir::Operation *op);

/// Whether `conv` can take Winograd F(m x m, 3x3) (v4f.conv_algorithm =
/// "winograd_2x2", "winograd_4x4" or "winograd_4x4_direct_weights",
/// WinogradConvKernels.cpp): float, one
/// group, a constant 3x3 weight, stride 1, no dilation, static planes of at
/// most 2^30 elements, at least `tiling`'s MR output channels and 4 input
/// channels.
bool winogradEligible(ConvOp conv, GemmTilingAttr tiling);
/// How the Winograd kernel splits an eligible conv: LANES tiles (m x m
/// output pixels each, numbered row-major) per vector, `vectors` vectors per
/// tile block (`lastVectors`, the ones its remaining tiles fill, in the last
/// block), each vector spanning at most `segments` tile rows; output
/// channels in tiles of MR split into `ocGroups` groups. A kernel that
/// transforms the direct weight does so for `transformChannels` input
/// channels of an MR-channel output tile per vector (LANES / MR where MR
/// divides the lanes and that divides C, else 1).
struct WinogradShape {
  int64_t tile = 0, lanes = 0, mr = 0, tileRows = 0, tileCols = 0, tiles = 0, vectors = 0, tileBlocks = 0,
          lastVectors = 0, segments = 0;
  int64_t ocTiles = 0, ocGroups = 0, ocTilesPerGroup = 0, transformChannels = 1;
};
WinogradShape winogradShape(ConvOp conv, GemmTilingAttr tiling, int64_t tile);
/// The v4f.conv_algorithm value of Winograd F(tile x tile, 3x3), the
/// transformed weight stored or (tile 4 only) the direct one.
llvm::StringRef winogradAlgorithm(int64_t tile, bool directWeights);
/// The output tile size m of a Winograd v4f.conv_algorithm value, none for
/// any other value.
std::optional<int64_t> winogradTileOf(llvm::StringRef algorithm);
/// The output tile size m of a conv marked for Winograd, none otherwise.
std::optional<int64_t> winogradTileOf(mlir::Operation *op);
/// Whether a conv marked for Winograd keeps its weight as the direct conv's
/// (packed per output-channel tile) and transforms it in the kernel, per
/// work item, into its scratch ("winograd_4x4_direct_weights"), instead of
/// storing the transformed weight, 36 / 9 times larger.
bool winogradTransformsWeights(mlir::Operation *op);

/// Resolves `--target-cpu` ("host", an x86-64 level such as "x86-64-v3", or
/// an LLVM CPU name such as "sapphirerapids"). False with `error` if unknown.
bool resolveCPUTarget(const std::string &cpu, CPUTarget &target, std::string &error);
/// Resolves a comma-separated `--target-cpu` list (one target per kernel
/// library of a multi-ISA artifact), ordered by the number of required CPU
/// features, fewest first. Refuses empty entries, two targets with the same
/// feature set, and more than 8 targets.
bool resolveCPUTargetList(const std::string &list, std::vector<CPUTarget> &targets, std::string &error);

class HostPlanTarget;
class PlanContext;
/// The CPU as the plan's host target (CPUPlanTarget.cpp): appends the CPU
/// executable to the plan; the kernels of the regions placed on the CPU
/// (and of the plan's own copies and checks) become functions of `kernels`
/// (func.func in the scf/arith/math/vector/llvm dialects).
std::unique_ptr<HostPlanTarget> createCPUPlanTarget(PlanContext &ctx, mlir::ModuleOp kernels);

/// Translates to LLVM IR, optimizes at O3 for `target`, and emits an ELF
/// object. `llvmIR`, when non-null, receives the optimized IR text.
bool compileKernelsToObject(mlir::ModuleOp kernels, const CPUTarget &target, std::vector<uint8_t> &object,
                            std::string *llvmIR, std::string &error);

/// Links an object into a shared object with the embedded LLD (no external
/// linker is run).
bool linkSharedObject(const std::vector<uint8_t> &object, std::vector<uint8_t> &sharedObject, std::string &error);

} // namespace v4f

#endif // V4F_CODEGEN_CPUCODEGEN_H
