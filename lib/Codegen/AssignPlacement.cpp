//===- AssignPlacement.cpp - v4f-assign-placement: CPU or GPU per region --===//
//
// Contract: runs after v4f-form-dispatch-regions. Every v4f.dispatch gets
// `v4f.placement` = "cuda" or "cpu". With only the GPU asked for
// (targets=cuda) every region the CUDA backend has a kernel for goes to the
// GPU; with both (targets=cpu,cuda) a cost model decides: the region's work
// at each device's rate plus a launch, plus moving every operand that lives
// on the other side (region by region in program order, so a chain stays
// where its producer is unless the work pays for the copy). A region that
// stays on the CPU while the GPU was asked for carries
// `v4f.placement_reason` (no GPU kernel, dynamic dims, run-time control
// flow, or the cost model), which --verbose and `v4fc inspect` report.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace v4f {
#define GEN_PASS_DEF_ASSIGNPLACEMENT
#include "v4f/Codegen/Passes.h.inc"

namespace {

// Rough device rates for the cost model (seconds): what matters is the
// ratio of work to launch and transfer cost, not the exact figures.
constexpr double kCpuFlops = 50e9, kGpuFlops = 20e12, kGpuLaunch = 6e-6;
constexpr double kLinkBytesPerSecond = 20e9, kTransferLatency = 10e-6;

int64_t numel(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : 0;
}

int64_t bytes(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat()) return 0;
  return t.getNumElements() * std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
}

double regionFlops(DispatchOp region) {
  double flops = 0;
  for (Operation &op : region.getBodyOps()) {
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      auto a = llvm::cast<RankedTensorType>(mm.getLhs().getType());
      flops += 2.0 * numel(mm.getResult()) * a.getShape().back();
    } else if (auto c = dyn_cast<ConvOp>(op)) {
      auto w = llvm::cast<RankedTensorType>(c.getWeight().getType()).getShape();
      flops += 2.0 * numel(c.getResult()) * w[1] * w[2] * w[3];
    } else {
      for (Value r : op.getResults()) flops += double(numel(r));
    }
  }
  return flops;
}

enum Side : uint8_t { kHost = 1, kDevice = 2 };

struct AssignPlacementPass : impl::AssignPlacementBase<AssignPlacementPass> {
  using AssignPlacementBase::AssignPlacementBase;

  void runOnOperation() override {
    bool cuda = StringRef(targets).contains("cuda"), cpu = StringRef(targets).contains("cpu");
    if (!cuda && !cpu) {
      getOperation().emitError("v4f-assign-placement: targets must be cpu, cuda or cpu,cuda");
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    auto place = [&](DispatchOp region, bool gpu, const std::string &reason) {
      region->setAttr("v4f.placement", b.getStringAttr(gpu ? "cuda" : "cpu"));
      if (!gpu && cuda && !reason.empty()) region->setAttr("v4f.placement_reason", b.getStringAttr(reason));
    };
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      bool controlFlow = false;
      func.walk([&](Operation *op) {
        if (isa<LoopOp, SelectBranchOp>(op)) controlFlow = true;
      });
      llvm::DenseMap<Value, uint8_t> side; // where each value's contents are
      for (BlockArgument arg : func.getArguments()) side[arg] = kHost;
      auto sideOf = [&](Value v) -> uint8_t {
        if (auto it = side.find(v); it != side.end()) return it->second;
        Operation *def = v.getDefiningOp();
        if (def && isa<arith::ConstantOp>(def)) return kHost | kDevice;
        if (def && isBufferView(def) && def->getNumOperands()) return side.lookup(def->getOperand(0));
        return kHost;
      };
      func.walk([&](DispatchOp region) {
        std::string reason;
        bool gpu = false;
        if (!cuda) {
          gpu = false;
        } else if (controlFlow) {
          reason = "the model has run-time control flow (If/Loop), which the CUDA path does not run yet";
        } else if (!cudaSupportsRegion(region, reason)) {
          // reason says which op and why
        } else if (!cpu) {
          gpu = true;
        } else {
          double flops = regionFlops(region);
          double cpuTime = flops / kCpuFlops, gpuTime = kGpuLaunch + flops / kGpuFlops;
          llvm::SetVector<Value> used;
          for (Operation &op : region.getBodyOps())
            for (Value v : op.getOperands())
              if (!region->isAncestor(v.getParentRegion()->getParentOp())) used.insert(v);
          for (Value v : used) {
            double move = kTransferLatency + double(bytes(v)) / kLinkBytesPerSecond;
            uint8_t s = sideOf(v);
            if (!(s & kHost)) cpuTime += move;
            if (!(s & kDevice)) gpuTime += move;
          }
          gpu = gpuTime < cpuTime;
          if (!gpu) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "cost model: %.1f us on the CPU vs %.1f us on the GPU with its transfers",
                          cpuTime * 1e6, gpuTime * 1e6);
            reason = buf;
          }
        }
        place(region, gpu, reason);
        // The operands it reads are now on its side too (the plan copies
        // each at most once per side); its results are on its side only.
        for (Operation &op : region.getBodyOps())
          for (Value v : op.getOperands())
            if (!region->isAncestor(v.getParentRegion()->getParentOp())) side[v] = sideOf(v) | (gpu ? kDevice : kHost);
        for (Value r : region->getResults()) side[r] = gpu ? kDevice : kHost;
      });
    }
  }
};

} // namespace

std::unique_ptr<Pass> createAssignPlacementPass(const PlacementOptions &o) {
  AssignPlacementOptions options;
  options.targets = o.cpu && o.cuda ? "cpu,cuda" : o.cuda ? "cuda" : "cpu";
  return createAssignPlacement(options);
}

} // namespace v4f
