//===- SelectStrategy.cpp - v4f-select-cpu-strategy -----------------------===//
//
// Turns the module's #v4f.cpu_target into per-dispatch lowering choices, so
// that kernel generation never hard-codes a vector width: today the GEMM
// register and workgroup tiles of every v4f.matmul and v4f.conv, and which
// convs take the direct depthwise, small-input or Winograd kernels.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/Passes.h"

#include <algorithm>
#include <optional>

namespace v4f {
#define GEN_PASS_DEF_SELECTCPUSTRATEGY
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

CPUTargetAttr getCPUTargetAttr(MLIRContext *ctx, const CPUTarget &target) {
  return CPUTargetAttr::get(ctx, target.cpu, target.isa, target.vectorBits, target.vectorRegisters, target.l1CacheBytes,
                            target.l2CacheBytes, target.vnni);
}

GemmTilingAttr chooseGemmTiling(CPUTargetAttr target) {
  int64_t lanes = std::clamp<int64_t>(target.getVectorBits() / 32, 4, 16);
  int64_t vectors = 2;
  int64_t nr = vectors * lanes;
  // Accumulators (mr * vectors) + the B vectors + one broadcast A value must
  // fit the register file; beyond 8 rows the A loads dominate.
  int64_t mr = std::clamp<int64_t>((target.getVectorRegisters() - vectors - 1) / vectors, 1, 8);
  int64_t mb = 8 * mr;
  int64_t nb = std::max<int64_t>(nr, 256 / nr * nr);
  // A kc x nr slice of B takes half of L1, leaving the rest to the A rows,
  // C and the prefetch stream (kc a multiple of 8, at least 32).
  int64_t kc = std::max<int64_t>(32, target.getL1CacheBytes() / 2 / (nr * 4) / 8 * 8);
  return GemmTilingAttr::get(target.getContext(), mr, nr, lanes, mb, nb, kc);
}

bool isDirectDepthwise(ConvOp conv) {
  auto wType = conv.getWeight().getType();
  if (!wType.hasStaticShape() || wType.getRank() != 4) return false;
  auto shape = wType.getShape();
  auto strides = conv.getStrides();
  return shape[1] == 1 && shape[2] <= 11 && shape[3] <= 11 && strides.size() == 2 &&
         (strides[1] == 1 || strides[1] == 2);
}

bool isSmallInputConv(ConvOp conv) {
  auto w = conv.getWeight().getType(), x = conv.getInput().getType(), y = conv.getType();
  if (!w.hasStaticShape() || w.getRank() != 4 || x.getRank() != 4 || y.getRank() != 4) return false;
  if (!x.getElementType().isF32() || !y.getElementType().isF32() || !w.getElementType().isF32()) return false;
  auto shape = w.getShape();
  auto strides = conv.getStrides();
  auto staticPlane = [](RankedTensorType t) { return !t.isDynamicDim(1) && !t.isDynamicDim(2) && !t.isDynamicDim(3); };
  return conv.getGroups() == 1 && shape[1] <= 4 && shape[2] <= 7 && shape[3] <= 7 && staticPlane(x) && staticPlane(y) &&
         conv.getPads()[1] <= 4 && strides.size() == 2 &&
         llvm::all_of(strides, [](int64_t s) { return s == 1 || s == 2; });
}

bool channelLanesEligible(ConvOp conv, GemmTilingAttr tiling) {
  auto wType = conv.getWeight().getType();
  auto xType = conv.getInput().getType();
  auto yType = conv.getType();
  // Static planes (the pixel count is baked into the scatter offsets); the
  // batch may be a run-time dim.
  auto staticPlanes = [](RankedTensorType t) {
    return t.getRank() == 4 && !t.isDynamicDim(1) && !t.isDynamicDim(2) && !t.isDynamicDim(3);
  };
  if (!wType.hasStaticShape() || !staticPlanes(xType) || !staticPlanes(yType) || wType.getRank() != 4 ||
      !yType.getElementType().isF32() || conv.getGroups() != 1 || isDirectDepthwise(conv))
    return false;
  auto cst = conv.getWeight().getDefiningOp<arith::ConstantOp>();
  if (!cst || !llvm::isa<DenseElementsAttr>(cst.getValue())) return false;
  int64_t OC = wType.getDimSize(0), P = yType.getDimSize(2) * yType.getDimSize(3);
  int64_t nr = tiling.getNr(), lanes = tiling.getLanes();
  return OC % lanes == 0 && OC >= nr && P < (int64_t(1) << 24) / std::max<int64_t>(OC, 1);
}

bool readsInputAsB(ConvOp conv) {
  auto wShape = conv.getWeight().getType().getShape();
  return wShape[2] == 1 && wShape[3] == 1 && llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

namespace {
/// The GEMM shape of a 1x1 conv (readsInputAsB) with a static weight: its
/// output and input channels per group, and whether it has many pixels
/// (at least 2 x NB, or a run-time count).
struct PointwiseShape {
  int64_t OCg, Cg;
  bool manyPixels;
};
std::optional<PointwiseShape> pointwiseShape(ConvOp conv, GemmTilingAttr tiling) {
  auto wType = conv.getWeight().getType();
  if (!readsInputAsB(conv) || !wType.hasStaticShape()) return std::nullopt;
  auto yType = conv.getType();
  bool many =
      yType.isDynamicDim(2) || yType.isDynamicDim(3) || yType.getDimSize(2) * yType.getDimSize(3) >= 2 * tiling.getNb();
  return PointwiseShape{wType.getDimSize(0) / std::max<int64_t>(conv.getGroups(), 1), wType.getDimSize(1), many};
}
} // namespace

bool pointwiseRowTilesOuter(ConvOp conv, GemmTilingAttr tiling) {
  std::optional<PointwiseShape> p = pointwiseShape(conv, tiling);
  return p && p->manyPixels && p->OCg > p->Cg;
}

void recordRowTilesOuter(ConvOp conv) {
  auto tiling = conv->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (tiling && !conv->hasAttr(kConvAlgorithmAttr) && pointwiseRowTilesOuter(conv, tiling))
    conv->setAttr(kRowTilesOuterAttr, UnitAttr::get(conv.getContext()));
  else
    conv->removeAttr(kRowTilesOuterAttr);
}

GemmTilingAttr pointwiseTiling(ConvOp conv, GemmTilingAttr tiling, int64_t l2Bytes) {
  std::optional<PointwiseShape> p = pointwiseShape(conv, tiling);
  if (!p || !p->manyPixels) return tiling;
  // The K block emitGemm takes: K split into equal blocks of at most KC,
  // rounded up to a multiple of 8.
  int64_t K = std::max<int64_t>(p->Cg, 1), kc = tiling.getKc();
  int64_t blocks = (K + kc - 1) / kc;
  int64_t kBlockBytes = std::min(((K + blocks - 1) / blocks + 7) / 8 * 8, kc) * int64_t(sizeof(float));
  int64_t mr = tiling.getMr(), nr = tiling.getNr(), mb = tiling.getMb(), nb = tiling.getNb();
  if (p->OCg > p->Cg) { // pointwiseRowTilesOuter
    nb = std::clamp(l2Bytes / 2 / kBlockBytes / nr * nr, nb, 4 * nb);
  } else {
    // All rows of a group, or equal blocks of them that fit.
    int64_t fit = std::max(l2Bytes / 4 / kBlockBytes / mr * mr, mr);
    int64_t rowBlocks = (p->OCg + fit - 1) / fit;
    mb = std::max(mb, ((p->OCg + rowBlocks - 1) / rowBlocks + mr - 1) / mr * mr);
  }
  return GemmTilingAttr::get(tiling.getContext(), mr, nr, tiling.getLanes(), mb, nb, kc);
}

GemmTilingAttr channelLanesTiling(ConvOp conv, CPUTargetAttr target) {
  GemmTilingAttr gemm = chooseGemmTiling(target);
  int64_t vecs = gemm.getNr() / gemm.getLanes(), tall = gemm.getMr() * 3 / 2;
  int64_t pixels = conv.getType().getDimSize(2) * conv.getType().getDimSize(3);
  if (readsInputAsB(conv) && tall * vecs + vecs + 1 <= target.getVectorRegisters() && pixels <= 8 * tall)
    return GemmTilingAttr::get(conv.getContext(), tall, gemm.getNr(), gemm.getLanes(), 8 * tall, gemm.getNb(),
                               gemm.getKc());
  return gemm;
}

bool storesChannelsLast(Operation *op) {
  auto layout = op->getAttrOfType<StringAttr>(kLayoutAttr);
  return layout && layout.getValue() == kChannelsLast;
}

bool canWriteChannelsLast(ConvOp conv, GemmTilingAttr tiling) {
  auto algorithm = conv->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
  return (!algorithm || algorithm.getValue() == "channel_lanes") && channelLanesEligible(conv, tiling) &&
         conv.getType().getRank() == 4;
}

bool canReadChannelsLast(ConvOp conv, GemmTilingAttr tiling) {
  if (!canWriteChannelsLast(conv, tiling) || !llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; }))
    return false;
  // The offset table's int32 entries reach every element of one image.
  auto x = conv.getInput().getType();
  return x.getDimSize(1) * x.getDimSize(2) * x.getDimSize(3) < (int64_t(1) << 31);
}

bool meanReadsChannelsLast(Operation *op) {
  auto mean = llvm::dyn_cast<ReduceMeanOp>(op);
  if (!mean) return false;
  auto x = llvm::dyn_cast<RankedTensorType>(mean->getOperand(0).getType());
  auto axes = mean.getAxes();
  return x && x.getRank() == 4 && x.getElementType().isF32() && axes.size() == 2 && axes[0] == 2 && axes[1] == 3;
}

bool followsDataLayout(Operation *op) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1) return false;
  auto x = llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto y = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!x || !y || x.getRank() != 4 || y.getRank() != 4 || !x.getElementType().isF32() || !y.getElementType().isF32())
    return false;
  if (auto pool = llvm::dyn_cast<MaxPoolOp>(op)) return pool.getKernelShape().size() == 2;
  if (auto pool = llvm::dyn_cast<AvgPoolOp>(op)) return pool.getKernelShape().size() == 2;
  if (llvm::isa<PadOp>(op)) return true;
  if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
    auto ids = llvm::dyn_cast<RankedTensorType>(gather->getOperand(1).getType());
    return ids && ids.getRank() == 1 && (gather.getAxis() == 2 || gather.getAxis() == 3);
  }
  return false;
}

bool splitsChannels(Operation *op) {
  auto split = llvm::dyn_cast<SplitOp>(op);
  if (!split || split.getAxis() != 1) return false;
  auto x = llvm::dyn_cast<RankedTensorType>(split.getInput().getType());
  return x && x.getRank() == 4 && x.getElementType().isF32();
}

/// Relative cost of packing B for pixels in lanes, times the output channels
/// (see isChannelLanesConv).
constexpr double kPackingCostPerOutputChannel = 12.0;

/// Relative cost of storing channels-in-lanes output vectors (see
/// isChannelLanesConv), times K / LANES.
constexpr double kStoreCostPerLane = 1.0;

bool winogradEligible(ConvOp conv, GemmTilingAttr tiling) {
  auto wType = conv.getWeight().getType();
  auto xType = conv.getInput().getType();
  auto yType = conv.getType();
  if (!wType.hasStaticShape() || wType.getRank() != 4 || xType.getRank() != 4 || yType.getRank() != 4 ||
      !yType.getElementType().isF32() || conv.getGroups() != 1)
    return false;
  for (int64_t d = 1; d < 4; ++d)
    if (xType.isDynamicDim(d) || yType.isDynamicDim(d)) return false;
  auto cst = conv.getWeight().getDefiningOp<arith::ConstantOp>();
  if (!cst || !llvm::isa<DenseElementsAttr>(cst.getValue())) return false;
  auto w = wType.getShape();
  if (w[2] != 3 || w[3] != 3 || w[0] < tiling.getMr() || w[1] < 4) return false;
  if (!llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) ||
      !llvm::all_of(conv.getDilations(), [](int64_t d) { return d == 1; }))
    return false;
  int64_t limit = int64_t(1) << 30;
  return xType.getDimSize(1) * xType.getDimSize(2) * xType.getDimSize(3) < limit &&
         yType.getDimSize(1) * yType.getDimSize(2) * yType.getDimSize(3) < limit;
}

/// The relative costs per useful FMA of `conv` as a GEMM with output
/// pixels in vector lanes (the default) and with output channels in lanes
/// (v4f.conv_algorithm = "channel_lanes", see ConvKernels.cpp; 1e30 when
/// not eligible). Only for static output planes and weight (callers check
/// channelLanesEligible or winogradEligible first).
struct DirectCosts {
  double pixelLanes, channelLanes;
};
DirectCosts directCosts(ConvOp conv, GemmTilingAttr tiling) {
  auto wType = conv.getWeight().getType();
  auto yType = conv.getType();
  int64_t OC = wType.getDimSize(0), P = yType.getDimSize(2) * yType.getDimSize(3);
  int64_t nr = tiling.getNr(), lanes = tiling.getLanes();
  // Cost per useful FMA, relative. Pixels in lanes pad P to whole NR-column
  // tiles: 49 columns (ResNet stage 4) fill 49 of 64 lanes, 196 (stage 3)
  // 196 of 224. Channels in lanes waste nothing when OC is a multiple of the
  // lanes (the pixels' last row tile is merely short), but their output
  // vectors must be turned into runs of pixels: 8 vectors by 24 shuffles,
  // then one store per channel (GemmKernels.cpp), about 4 cycles per vector
  // against the K / 2 cycles of FMAs it accumulated, i.e. about LANES / K
  // more. (With one scatter per vector, 2 x LANES cycles, the factor was 4:
  // ResNet-50's stage-3 1x1 convs of K = 256 ran slower with channels in
  // lanes then, faster with the shuffles; measurements:
  // bench/results/history.md, "Measurements behind code decisions".)
  //
  // Pixels in lanes also pay for packing B (the im2col columns) unless the
  // conv reads its input as B directly (1x1, stride 1, no padding). Each
  // packed element feeds OC FMAs; the packing's shifted loads, border masks
  // and stores cost about 12 / OC of the work (fitted to ResNet-50's
  // stage-1/2 3x3 convs, OC = 64 and 128, AVX-512, 1 thread). Channels in
  // lanes read the input in place through the per-K offset table (a
  // zero-padded copy when padded, split into stride phases when strided: a
  // few % of one pass over the input), so those convs and the 7x7 stem
  // (K = 147: 1 + 16 / 147 = 1.11 against 1.19) take channels in lanes and
  // run faster (measurements: bench/results/history.md, "Measurements behind
  // code decisions").
  int64_t K = wType.getDimSize(1) * wType.getDimSize(2) * wType.getDimSize(3);
  int64_t padded = (P + nr - 1) / nr * nr;
  double pixelLanes = double(padded) / double(P);
  if (!readsInputAsB(conv)) pixelLanes += kPackingCostPerOutputChannel / double(OC);
  double channelLanes = 1.0 + kStoreCostPerLane * double(lanes) / double(std::max<int64_t>(K, 1));
  return {pixelLanes, channelLanesEligible(conv, tiling) ? channelLanes : 1e30};
}

/// Whether `conv` computes output channels in vector lanes and output pixels
/// as the GEMM's rows because its few output pixels would leave much of the
/// usual pixels-in-lanes tile empty, or because pixels in lanes would pack.
bool isChannelLanesConv(ConvOp conv, GemmTilingAttr tiling) {
  if (!channelLanesEligible(conv, tiling)) return false;
  DirectCosts d = directCosts(conv, tiling);
  return d.channelLanes < d.pixelLanes;
}

/// Relative cost of the Winograd kernel's input transform per (input
/// channel, tile, segment) and of its output transform per (output channel,
/// tile, segment), in FMAs (see winogradCost).
constexpr double kWinogradTransformCost = 20.0;

/// Relative cost of streaming one byte of weights from memory, in FMAs: a
/// batch-1 model's weights do not stay in cache between runs (ResNet-50:
/// 100 MB), and Winograd's transformed weights are 16 / 9 of the direct
/// conv's. The value is a core's FMA rate over the rate at which it streamed
/// the transformed weights of ResNet-50's 7 x 7 x 512 convs (16.8 MB each),
/// which by Winograd ran slower than the direct conv inside the model
/// (measurements: bench/results/history.md, "Measurements behind code
/// decisions").
constexpr double kWeightByteCost = 13.0;

/// Relative cost of the kernel's weight transform ("_direct_weights") per
/// (output channel, input channel, xi) and tile block, in FMAs, when CP MR =
/// LANES values are transformed per vector (WinogradConvKernels.cpp).
/// Fitted to the time the transform added to convs run alone against the
/// transformed weight stored (AVX-512, 1 thread, direct weights in L3:
/// 256 -> 256 at 14 x 14 by F(4x4), 512 -> 512 at 7 x 7 by F(2x2);
/// measurements: bench/results/history.md, "Measurements behind code
/// decisions").
constexpr double kWeightTransformCost = 7.0;

/// Relative cost of streaming one byte of the direct weights the Winograd
/// kernel transforms, in FMAs: read in bursts by the transform, with few
/// FMAs to hide them behind, unlike the GEMMs' weights (kWeightByteCost).
/// Inside ResNet-50 (1 thread) the 7 x 7 x 512 convs by F(2x2) from direct
/// weights ran slower than the direct conv although alone they ran as fast
/// (measurements: bench/results/history.md, "Measurements behind code
/// decisions").
constexpr double kBurstWeightByteCost = 20.0;

/// The relative cost per useful FMA of `conv` by Winograd F(m x m, 3x3)
/// (WinogradConvKernels.cpp), weight bytes included (kWeightByteCost): the
/// transformed weight's, or with `directWeights` the direct conv's bytes
/// plus the kernel's weight transform, once per tile block.
/// Per m x m tile, input channel and output channel the direct conv runs
/// 9 m^2 FMAs, Winograd (m + 2)^2 (over output channels padded to whole MR
/// tiles) plus the transforms: per input channel and tile, for each tile
/// row (segment) a vector of tiles spans, 2 (m + 2) masked loads, (m + 2)^2
/// shuffles and the additions of B^T d B, and (m + 2)^2 stores; per output
/// channel and tile (m + 2)^2 loads, the additions of A^T m A and the
/// stores of each segment. The lanes past the last tile and the pixels past
/// an edge that is no multiple of m are wasted.
double winogradCost(ConvOp conv, const WinogradShape &ws, bool directWeights) {
  const int64_t tile = ws.tile;
  auto yShape = conv.getType().getShape();
  int64_t OC = conv.getWeight().getType().getDimSize(0), C = conv.getWeight().getType().getDimSize(1);
  double a2 = double((tile + 2) * (tile + 2)), direct = 9.0 * double(tile * tile);
  double P = double(yShape[2] * yShape[3]);
  double waste = double(((ws.tileBlocks - 1) * ws.vectors + ws.lastVectors) * ws.lanes * tile * tile) / P;
  double padded = double(ws.ocTiles * ws.mr) / double(OC);
  double transforms = kWinogradTransformCost * a2 / 16.0 * double(ws.segments) * (1.0 / double(OC) + 1.0 / double(C));
  double compute = waste * (a2 * padded + transforms) / direct;
  // Weight bytes per useful FMA (9 OC C P of them): 4 a2 OCpad C, or the
  // direct conv's 4 9 OCpad C and the transform's cost per (OCpad, C, xi)
  // and tile block, with P MR of them per vector.
  if (!directWeights) return compute + kWeightByteCost * 4.0 * a2 * padded / (9.0 * P);
  double transform =
      kWeightTransformCost * a2 * double(ws.tileBlocks) * double(ws.lanes) / double(ws.transformChannels * ws.mr);
  return compute + (kBurstWeightByteCost * 4.0 * 9.0 + transform) * padded / (9.0 * P);
}

/// The Winograd algorithm `conv` takes (tile 2 or 4, the weight stored
/// transformed or transformed by the kernel), tile 0 for the direct conv:
/// the cheapest by the cost model. Run alone, F(2x2, 3x3) beats the direct
/// conv on each of ResNet-50's 3x3 convs, but gains little or nothing on a
/// small conv of few channels (13 x 11, 20 -> 32), which the transforms'
/// cost keeps on the direct conv. Inside ResNet-50 (weights streamed) its
/// gain shrinks with the plane and turns into a loss at 7 x 7, which the
/// weight term keeps on the direct conv unless the kernel transforms the
/// direct conv's weight (measurements: bench/results/history.md,
/// "Measurements behind code decisions").
/// A tile size whose transformed input block ((m + 2)^2 x C x the block's
/// tiles, in the worker's scratch or the shared transient) exceeds L2 is not
/// considered (the GEMM re-reads it once per output-channel tile).
struct WinogradChoice {
  int64_t tile = 0;
  bool directWeights = false;
};
WinogradChoice winogradChoice(ConvOp conv, GemmTilingAttr tiling, int64_t l2Bytes) {
  if (!winogradEligible(conv, tiling)) return {};
  auto yShape = conv.getType().getShape();
  int64_t C = conv.getWeight().getType().getDimSize(1);
  DirectCosts d = directCosts(conv, tiling);
  double best = std::min(d.pixelLanes, d.channelLanes) + kWeightByteCost * 4.0 / double(yShape[2] * yShape[3]);
  WinogradChoice choice;
  for (WinogradChoice c : {WinogradChoice{2, false}, WinogradChoice{4, false}, WinogradChoice{4, true}}) {
    WinogradShape ws = winogradShape(conv, tiling, c.tile);
    int64_t a2 = (c.tile + 2) * (c.tile + 2);
    // (With direct weights U' takes a chunk of channels at a time, about
    // half of L1.)
    if (a2 * C * ws.vectors * ws.lanes * int64_t(sizeof(float)) > l2Bytes) continue;
    if (double cost = winogradCost(conv, ws, c.directWeights); cost < best) best = cost, choice = c;
  }
  return choice;
}

namespace {

struct SelectCPUStrategyPass : impl::SelectCPUStrategyBase<SelectCPUStrategyPass> {
  using SelectCPUStrategyBase::SelectCPUStrategyBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module->getAttrOfType<CPUTargetAttr>("v4f.target");
    if (!target && !targetCpu.empty()) {
      CPUTarget resolved;
      std::string error;
      if (!resolveCPUTarget(targetCpu, resolved, error)) {
        module.emitError(error);
        return signalPassFailure();
      }
      target = getCPUTargetAttr(&getContext(), resolved);
      module->setAttr("v4f.target", target);
    }
    if (!target) {
      module.emitError("v4f-select-cpu-strategy needs the module attribute v4f.target "
                       "(#v4f.cpu_target) or the target-cpu option");
      return signalPassFailure();
    }
    GemmTilingAttr gemm = chooseGemmTiling(target);
    module.walk([&](Operation *op) {
      if (isPlacedOnCuda(op)) return; // the CUDA kernels take their weights as they are
      if (isa<MatMulOp, QuantizedMatMulOp, Int4MatMulOp, IntegerMatMulOp, ConvOp, QuantizedConvOp>(op))
        op->setAttr(kTilingAttr, gemm);
      if (auto conv = llvm::dyn_cast<ConvOp>(op); conv && isDirectDepthwise(conv))
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), "depthwise"));
      else if (conv && isSmallInputConv(conv))
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), "small_input"));
      else if (WinogradChoice w = conv ? winogradChoice(conv, gemm, target.getL2CacheBytes()) : WinogradChoice{};
               w.tile)
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), winogradAlgorithm(w.tile, w.directWeights)));
      else if (conv && isChannelLanesConv(conv, gemm)) {
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), "channel_lanes"));
        // Few pixel rows (one row block of 12-row tiles: ResNet stage 4's
        // 49): taller register tiles where they fit the register file, so
        // fewer tiles re-read each block of the streamed weight (AVX-512:
        // 24 accumulators + 2 weight vectors + the broadcast of 32).
        // v4fc tune picked 12 rows for all three stage-4 convs of this kind
        // on the Xeon; 8 stayed best with 196 rows. Only 1x1 stride-1 convs,
        // which read their input at one stride per row: the others read it
        // implicitly at a per-pixel origin (ConvKernels.cpp), 12 of which do
        // not fit the general registers next to the loop's pointers
        // (ResNet-50's stage-4 3x3 conv ran far slower with 12 rows than 8;
        // measurements: bench/results/history.md, "Measurements behind code
        // decisions").
        op->setAttr(kTilingAttr, channelLanesTiling(conv, target));
      } else if (conv && readsInputAsB(conv)) {
        op->setAttr(kTilingAttr, pointwiseTiling(conv, gemm, target.getL2CacheBytes()));
      }
      if (auto conv = llvm::dyn_cast<ConvOp>(op)) recordRowTilesOuter(conv);
    });
  }
};

} // namespace
} // namespace v4f
