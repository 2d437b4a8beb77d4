//===- SelectStrategy.cpp - v4f-select-cpu-strategy -----------------------===//
//
// Turns the module's #v4f.cpu_target into per-dispatch lowering choices, so
// that kernel generation never hard-codes a vector width: today the GEMM
// register and workgroup tiles of every v4f.matmul and v4f.conv, and which
// convs take the direct depthwise kernel.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/Passes.h"

#include <algorithm>

namespace v4f {
#define GEN_PASS_DEF_SELECTCPUSTRATEGY
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

CPUTargetAttr getCPUTargetAttr(MLIRContext *ctx, const CPUTarget &target) {
  return CPUTargetAttr::get(ctx, target.cpu, target.isa, target.vectorBits, target.vectorRegisters,
                            target.l1CacheBytes, target.l2CacheBytes, target.vnni);
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

/// Relative cost of packing B for pixels in lanes, times the output channels
/// (see isChannelLanesConv).
constexpr double kPackingCostPerOutputChannel = 12.0;

/// Relative cost of storing channels-in-lanes output vectors (see
/// isChannelLanesConv), times K / LANES.
constexpr double kStoreCostPerLane = 1.0;

/// Whether `conv` computes output channels in vector lanes and output pixels
/// as the GEMM's rows (v4f.conv_algorithm = "channel_lanes", see
/// ConvKernels.cpp) because its few output pixels would leave much of the
/// usual pixels-in-lanes tile empty.
bool isChannelLanesConv(ConvOp conv, GemmTilingAttr tiling) {
  if (!channelLanesEligible(conv, tiling)) return false;
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
  // ResNet-50's stage-3 1x1 convs of K = 256 ran 10 % slower with channels
  // in lanes then, 16 % faster with the shuffles.)
  //
  // Pixels in lanes also pay for packing B (the im2col columns) unless the
  // conv reads its input as B directly (1x1, stride 1, no padding). Each
  // packed element feeds OC FMAs; the packing's shifted loads, border masks
  // and stores measured 17-22 % of ResNet-50's stage-1/2 3x3 convs (OC = 64
  // and 128, AVX-512, 1 thread), about 12 / OC. Channels in lanes read the
  // input in place through the per-K offset table (a zero-padded copy when
  // padded, split into stride phases when strided: a few % of one pass over
  // the input), so those convs ran 12-22 % faster with channels in lanes,
  // and the 7x7 stem (K = 147: 1 + 16 / 147 = 1.11 against 1.19) 15 %.
  int64_t K = wType.getDimSize(1) * wType.getDimSize(2) * wType.getDimSize(3);
  int64_t padded = (P + nr - 1) / nr * nr;
  double pixelLanes = double(padded) / double(P);
  if (!readsInputAsB(conv)) pixelLanes += kPackingCostPerOutputChannel / double(OC);
  double channelLanes = 1.0 + kStoreCostPerLane * double(lanes) / double(std::max<int64_t>(K, 1));
  return channelLanes < pixelLanes;
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
        op->setAttr("v4f.tiling", gemm);
      if (auto conv = llvm::dyn_cast<ConvOp>(op); conv && isDirectDepthwise(conv))
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), "depthwise"));
      else if (conv && isChannelLanesConv(conv, gemm)) {
        op->setAttr(kConvAlgorithmAttr, StringAttr::get(&getContext(), "channel_lanes"));
        // Few pixel rows (one row block of 12-row tiles: ResNet stage 4's
        // 49): taller register tiles where they fit the register file, so
        // fewer tiles re-read each block of the streamed weight (AVX-512:
        // 24 accumulators + 2 weight vectors + the broadcast of 32).
        // v4fc tune picked 12 rows for all three stage-4 convs of this kind
        // on the Xeon (5-9 % faster); 8 stayed best with 196 rows. Only
        // 1x1 stride-1 convs, which read their input at one stride per row:
        // the others read it implicitly at a per-pixel origin
        // (ConvKernels.cpp), 12 of which do not fit the general registers
        // next to the loop's pointers (ResNet-50's stage-4 3x3 conv: 2.7 ms
        // with 12 rows, 1.43 with 8).
        int64_t vecs = gemm.getNr() / gemm.getLanes(), tall = gemm.getMr() * 3 / 2;
        int64_t pixels = conv.getType().getDimSize(2) * conv.getType().getDimSize(3);
        if (readsInputAsB(conv) && tall * vecs + vecs + 1 <= target.getVectorRegisters() && pixels <= 8 * tall)
          op->setAttr("v4f.tiling", GemmTilingAttr::get(&getContext(), tall, gemm.getNr(), gemm.getLanes(), 8 * tall,
                                                         gemm.getNb(), gemm.getKc()));
      }
    });
  }
};

} // namespace
} // namespace v4f
