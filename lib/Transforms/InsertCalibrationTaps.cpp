//===- InsertCalibrationTaps.cpp - v4f-insert-calibration-taps ------------===//
//
// Static int8 needs the range of every activation an integer kernel will
// quantize. This pass makes those activations observable: each matmul and
// ungrouped conv of @main's body (not inside a loop or branch) with a
// float32 activation gets `v4f.calibration_tap = i` and its activation
// becomes @main's extra result `v4f.calibration_tap<i>`. v4fc compiles a
// copy of that module for the host, runs it on the calibration samples in
// process (lib/Compiler/Calibration.cpp: the one step that needs the
// runtime) and hands what it observed to v4f-apply-calibration, which
// chooses the ranges and removes the taps again.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

namespace v4f {
#define GEN_PASS_DEF_INSERTCALIBRATIONTAPS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

Value calibratedActivation(Operation *op) {
  if (auto mm = dyn_cast<MatMulOp>(op); mm && mm.getLhs().getType().getElementType().isF32()) return mm.getLhs();
  if (auto conv = dyn_cast<ConvOp>(op);
      conv && conv.getGroups() == 1 && conv.getInput().getType().getElementType().isF32())
    return conv.getInput();
  return {};
}

namespace {

struct InsertCalibrationTapsPass : impl::InsertCalibrationTapsBase<InsertCalibrationTapsPass> {
  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!func || func.getBody().empty()) return;
    MLIRContext *ctx = &getContext();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<Value> results(ret.getOperands());
    SmallVector<Type> types(func.getFunctionType().getResults());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < results.size(); ++i) resultAttrs.push_back(func.getResultAttrDict(i));
    int64_t next = 0;
    for (Operation &op : func.getBody().front()) {
      Value activation = calibratedActivation(&op);
      if (!activation) continue;
      op.setAttr(kCalibrationTapAttr, IntegerAttr::get(IntegerType::get(ctx, 64), next));
      results.push_back(activation);
      types.push_back(activation.getType());
      resultAttrs.push_back(
          DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "v4f.name"),
                                                   StringAttr::get(ctx, kCalibrationTapAttr + std::to_string(next)))}));
      ++next;
    }
    if (!next) return;
    ret->setOperands(results);
    func.setFunctionType(FunctionType::get(ctx, func.getFunctionType().getInputs(), types));
    func.setAllResultAttrs(resultAttrs);
  }
};

} // namespace

std::unique_ptr<Pass> createInsertCalibrationTapsPass() { return std::make_unique<InsertCalibrationTapsPass>(); }

} // namespace v4f
