//===- PackWeights.cpp - v4f-pack-weights ---------------------------------===//
//
// Marks the GEMM-based ops whose weight is a compile-time constant with the
// panel layout kernel generation stores it in (v4f.packed_weight); the
// packing itself happens when the constants are written (WeightPacking.h),
// so the IR stays the model's types and the artifact holds the packed copy
// only. The pass's contract is in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "WeightPacking.h"
#include "CPUKernelContext.h"
#include "v4f/Codegen/CPUCodegen.h"

#include "v4f/Codegen/Passes.h"

namespace v4f {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

std::optional<WeightPacking> packingOf(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kPackedWeightAttr);
  auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  if (!attr || !tiling) return std::nullopt;
  if (attr.getValue() == "b_panels") return WeightPacking{WeightPacking::BPanels, tiling.getNr()};
  if (attr.getValue() == "a_panels") return WeightPacking{WeightPacking::APanels, tiling.getMr()};
  if (attr.getValue() == "lane_panels") return WeightPacking{WeightPacking::APanels, tiling.getNr()};
  return std::nullopt;
}

namespace {

bool isPackableConstant(Value weight) {
  auto cst = weight.getDefiningOp<arith::ConstantOp>();
  if (!cst) return false;
  auto type = llvm::dyn_cast<RankedTensorType>(cst.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32() && type.getRank() >= 2 &&
         llvm::isa<DenseElementsAttr>(cst.getValue());
}

struct PackWeightsPass : impl::PackWeightsBase<PackWeightsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!op->hasAttr(kTilingAttr)) return;
      if (auto mm = llvm::dyn_cast<MatMulOp>(op)) {
        // The result's batch dims must be B's own (a B broadcast over a
        // batch A has is read once per result batch from the same panels,
        // which the packed offsets handle too) and A must be a matrix.
        if (isPackableConstant(mm->getOperand(1)) && mm.getType().getElementType().isF32())
          op->setAttr(kPackedWeightAttr, b.getStringAttr("b_panels"));
      } else if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
        auto algorithm = conv->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
        bool channelLanes = algorithm && algorithm.getValue() == "channel_lanes";
        if (isPackableConstant(conv.getWeight()) && conv.getType().getElementType().isF32() &&
            (!algorithm || channelLanes))
          op->setAttr(kPackedWeightAttr, b.getStringAttr(channelLanes ? "lane_panels" : "a_panels"));
      }
    });
  }
};

} // namespace
} // namespace v4f

namespace v4f {

namespace {
/// Panels of `panel` columns over `matrices` matrices of K x cols, where
/// element (k, col) of a matrix is at k * kStride + col * colStride.
void packPanels(const float *src, int64_t matrices, int64_t K, int64_t cols, int64_t panel, int64_t kStride,
                int64_t colStride, float *dst) {
  int64_t panels = (cols + panel - 1) / panel;
  for (int64_t m = 0; m < matrices; ++m, src += K * cols)
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < panel; ++j) {
          int64_t col = p * panel + j;
          *dst++ = col < cols ? src[k * kStride + col * colStride] : 0.f;
        }
}
} // namespace

void packBPanels(const float *src, int64_t matrices, int64_t K, int64_t N, int64_t nr, float *dst) {
  packPanels(src, matrices, K, N, nr, /*kStride=*/N, /*colStride=*/1, dst);
}

void packAPanels(const float *src, int64_t matrices, int64_t M, int64_t K, int64_t mr, float *dst) {
  packPanels(src, matrices, K, M, mr, /*kStride=*/1, /*colStride=*/K, dst);
}

} // namespace v4f

namespace v4f {

uint32_t CPUKernelContext::packedWeight(const TensorInfo &weight, const WeightPacking &packing, int64_t matrices,
                                        int64_t K, int64_t cols) {
  auto key = std::make_tuple(weight.constant.getAsOpaquePointer(), int(packing.kind), packing.panel);
  auto it = packedByWeight.find(key);
  if (it != packedByWeight.end()) return it->second;
  int64_t floats = matrices * packedMatrixFloats(cols, K, packing.panel);
  std::vector<float> splat;
  const float *src;
  if (weight.constant.isSplat()) {
    splat.assign(size_t(matrices * K * cols), weight.constant.getSplatValue<float>());
    src = splat.data();
  } else {
    src = reinterpret_cast<const float *>(weight.constant.getRawData().data());
  }
  uint32_t buffer = newConstant(size_t(floats) * 4, [&](uint8_t *dst) {
    float *out = reinterpret_cast<float *>(dst);
    if (packing.kind == WeightPacking::BPanels)
      packBPanels(src, matrices, K, cols, packing.panel, out);
    else
      packAPanels(src, matrices, cols, K, packing.panel, out);
  });
  packedByWeight[key] = buffer;
  return buffer;
}

} // namespace v4f
