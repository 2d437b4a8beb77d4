//===- Quantize.cpp - v4f-quantize ----------------------------------------===//
//
// Turns float matmuls with a constant weight into v4f.quantized_matmul: the
// weight becomes an int8 constant quantized per output column (symmetric,
// [-127, 127]) with its float scales, the activations are quantized either
// per row at run time (dynamic-int8) or with one calibrated scale and zero
// point (int8). The contract is in Passes.td; docs/quantization.md has the
// arithmetic and how the modes are chosen.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>

namespace v4f {
#define GEN_PASS_DEF_QUANTIZE
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// The ONNX node name of `op` (its NameLoc), or "".
std::string nodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (llvm::isa<NameLoc>(l)) {
        loc = l;
        break;
      }
  if (auto named = llvm::dyn_cast<NameLoc>(loc)) return named.getName().str();
  return "";
}

/// Per-column symmetric int8 quantization of a K x N float matrix.
void quantizeColumns(DenseElementsAttr weight, int64_t K, int64_t N, std::vector<int8_t> &q,
                     std::vector<float> &scales) {
  std::vector<float> w;
  if (weight.isSplat())
    w.assign(size_t(K * N), weight.getSplatValue<float>());
  else
    w.assign(weight.getValues<float>().begin(), weight.getValues<float>().end());
  scales.assign(size_t(N), 0.f);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) scales[n] = std::max(scales[n], std::fabs(w[k * N + n]));
  for (float &s : scales) s = (s > 0.f && std::isfinite(s)) ? s / 127.f : 1.f;
  q.resize(size_t(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      float v = std::nearbyint(w[k * N + n] / scales[n]);
      q[k * N + n] = int8_t(std::clamp(std::isfinite(v) ? v : 0.f, -127.f, 127.f));
    }
}

struct QuantizePass : impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  void runOnOperation() override {
    if (mode != "dynamic-int8" && mode != "int8") {
      getOperation().emitError("v4f-quantize: unknown mode '") << mode << "' (dynamic-int8 or int8)";
      return signalPassFailure();
    }
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp mm) { matmuls.push_back(mm); });
    for (MatMulOp mm : matmuls) quantize(mm);
  }

  void keepFloat(MatMulOp mm, StringRef why) {
    mm->setAttr("v4f.precision_note", StringAttr::get(mm.getContext(), why));
  }

  void quantize(MatMulOp mm) {
    std::string name = nodeName(mm);
    if (!name.empty() && llvm::is_contained(exclude, name)) return keepFloat(mm, "excluded (--exclude)");
    DenseElementsAttr weight;
    auto wType = llvm::dyn_cast<RankedTensorType>(mm.getRhs().getType());
    if (!matchPattern(mm.getRhs(), m_Constant(&weight)) || !wType || wType.getRank() != 2 ||
        !wType.hasStaticShape() || !wType.getElementType().isF32())
      return keepFloat(mm, "weight is not a rank-2 float32 constant");
    if (!mm.getLhs().getType().getElementType().isF32()) return keepFloat(mm, "activation is not float32");
    std::string actQuant = "dynamic";
    float actScale = 1.f;
    int32_t actZeroPoint = 0;
    if (mode == "int8") {
      auto range = mm->getAttrOfType<DenseF32ArrayAttr>("v4f.calibration");
      if (!range || range.size() != 2) return keepFloat(mm, "no calibration range");
      float lo = std::min(range[0], 0.f), hi = std::max(range[1], 0.f);
      if (!std::isfinite(lo) || !std::isfinite(hi)) return keepFloat(mm, "calibration range is not finite");
      actQuant = "static";
      actScale = hi > lo ? (hi - lo) / 255.f : 1.f;
      actZeroPoint = int32_t(std::clamp(std::nearbyint(-128.f - lo / actScale), -128.f, 127.f));
    }
    int64_t K = wType.getDimSize(0), N = wType.getDimSize(1);
    std::vector<int8_t> q;
    std::vector<float> scales;
    quantizeColumns(weight, K, N, q, scales);
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    auto qType = RankedTensorType::get({K, N}, b.getIntegerType(8));
    auto sType = RankedTensorType::get({N}, b.getF32Type());
    Value qW = b.create<arith::ConstantOp>(loc, qType, DenseElementsAttr::get(qType, llvm::ArrayRef(q)));
    Value sW = b.create<arith::ConstantOp>(loc, sType, DenseElementsAttr::get(sType, llvm::ArrayRef(scales)));
    auto qmm = b.create<QuantizedMatMulOp>(loc, mm.getType(), mm.getLhs(), qW, sW, mm.getBias(),
                                           b.getStringAttr(actQuant), b.getF32FloatAttr(actScale),
                                           b.getI32IntegerAttr(actZeroPoint), mm.getActivationAttr(),
                                           mm.getActAlphaAttr(), mm.getActBetaAttr());
    mm.replaceAllUsesWith(qmm.getResult());
    Operation *oldWeight = mm.getRhs().getDefiningOp();
    mm.erase();
    if (oldWeight && oldWeight->use_empty()) oldWeight->erase();
  }
};

} // namespace

std::unique_ptr<Pass> createQuantizePass() { return std::make_unique<QuantizePass>(); }

std::unique_ptr<Pass> createQuantizePass(const std::string &mode, llvm::ArrayRef<std::string> exclude) {
  QuantizeOptions options;
  options.mode = mode;
  options.exclude = llvm::to_vector(exclude);
  return std::make_unique<QuantizePass>(options);
}

} // namespace v4f
