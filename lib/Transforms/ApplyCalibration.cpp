//===- ApplyCalibration.cpp - v4f-apply-calibration -----------------------===//
//
// The second half of calibration (the first: v4f-insert-calibration-taps,
// then v4fc's in-process runs): each op carrying `v4f.calibration_tap = i`
// gets the range the calibration method chooses from tap i's statistics
// (QuantizationMath.cpp: min/max, a percentile of the value histogram, or
// TensorRT's KL-divergence threshold on the |x| histogram) as
// `v4f.calibration = array<f32: lo, hi>`, which v4f-quantize turns into a
// scale and zero point; the tap attributes and @main's tap results go.
//
// The statistics come from v4fc (createApplyCalibrationPass) or, for
// v4f-opt and the lit tests, from a JSON file (`stats=`):
//   {"taps": [{"min": -1.5, "max": 3.0, "value_histogram": [...],
//              "abs_histogram": [...]}, ...]}
// (the histograms only where the method needs them).
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"
#include "v4f/Transforms/QuantizationMath.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace v4f {
#define GEN_PASS_DEF_APPLYCALIBRATION
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {
namespace {

/// Reads the statistics file; false after an error naming it.
bool readStatistics(const std::string &path, std::vector<ActivationStatistics> &out, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = path + ": cannot read the calibration statistics";
    return false;
  }
  auto parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = path + ": not JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *taps = root ? root->getArray("taps") : nullptr;
  if (!taps) {
    error = path + ": no \"taps\" array";
    return false;
  }
  for (size_t i = 0; i < taps->size(); ++i) {
    const llvm::json::Object *tap = (*taps)[i].getAsObject();
    auto lo = tap ? tap->getNumber("min") : std::nullopt, hi = tap ? tap->getNumber("max") : std::nullopt;
    if (!lo || !hi) {
      error = path + ": tap " + std::to_string(i) + " needs numbers \"min\" and \"max\"";
      return false;
    }
    ActivationStatistics s;
    s.min = *lo;
    s.max = *hi;
    auto hist = [&](const char *key, std::vector<uint64_t> &h) {
      if (const llvm::json::Array *a = tap->getArray(key))
        for (const llvm::json::Value &v : *a) h.push_back(uint64_t(v.getAsInteger().value_or(0)));
    };
    hist("value_histogram", s.valueHist);
    hist("abs_histogram", s.absHist);
    out.push_back(std::move(s));
  }
  return true;
}

struct ApplyCalibrationPass : impl::ApplyCalibrationBase<ApplyCalibrationPass> {
  using ApplyCalibrationBase::ApplyCalibrationBase;
  ApplyCalibrationPass(const CalibrationMethod &method, std::vector<ActivationStatistics> stats)
      : given(std::move(stats)), givenMethod(method), fromDriver(true) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<ActivationStatistics> stats = given;
    CalibrationMethod method = givenMethod;
    std::string error;
    if (!fromDriver) {
      if (!CalibrationMethod::parse(methodName, method, error) ||
          (!statsFile.empty() && !readStatistics(statsFile, stats, error))) {
        module.emitError(error);
        return signalPassFailure();
      }
    }
    MLIRContext *ctx = &getContext();
    WalkResult walk = module.walk([&](Operation *op) {
      auto tap = op->getAttrOfType<IntegerAttr>(kCalibrationTapAttr);
      if (!tap) return WalkResult::advance();
      int64_t i = tap.getInt();
      if (i < 0 || size_t(i) >= stats.size()) {
        op->emitOpError("calibration tap ") << i << " has no statistics (" << stats.size() << " given)";
        return WalkResult::interrupt();
      }
      ActivationStatistics s = stats[size_t(i)];
      if (!(s.min <= s.max)) s.min = s.max = 0; // an empty activation
      float lo = 0, hi = 0;
      chooseCalibrationRange(method, s.min, s.max, s.valueHist, s.absHist, lo, hi);
      op->setAttr("v4f.calibration", DenseF32ArrayAttr::get(ctx, {lo, hi}));
      op->removeAttr(kCalibrationTapAttr);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted()) return signalPassFailure();
    // @main's tap results go.
    auto func = module.lookupSymbol<func::FuncOp>("main");
    if (!func || func.getBody().empty()) return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<Value> results;
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (unsigned r = 0; r < ret.getNumOperands(); ++r) {
      auto name = func.getResultAttrOfType<StringAttr>(r, "v4f.name");
      if (name && name.getValue().starts_with(kCalibrationTapAttr)) continue;
      results.push_back(ret.getOperand(r));
      types.push_back(func.getFunctionType().getResult(r));
      attrs.push_back(func.getResultAttrDict(r));
    }
    if (results.size() == ret.getNumOperands()) return;
    ret->setOperands(results);
    func.setFunctionType(FunctionType::get(ctx, func.getFunctionType().getInputs(), types));
    func.setAllResultAttrs(attrs);
  }

  std::vector<ActivationStatistics> given;
  CalibrationMethod givenMethod;
  bool fromDriver = false;
};

} // namespace

std::unique_ptr<Pass> createApplyCalibrationPass() { return std::make_unique<ApplyCalibrationPass>(); }
std::unique_ptr<Pass> createApplyCalibrationPass(const CalibrationMethod &method,
                                                 std::vector<ActivationStatistics> stats) {
  return std::make_unique<ApplyCalibrationPass>(method, std::move(stats));
}

} // namespace v4f
