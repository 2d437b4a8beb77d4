//===- FormDispatchRegions.cpp - v4f-form-dispatch-regions ----------------===//
//
// Wraps the graph's work into v4f.dispatch regions: every op that computes a
// tensor (everything but constants, buffer views and the return) becomes the
// root of a region, and an elementwise op whose input is the single-use
// result of an elementwise region joins that region (a producer -> consumer
// chain computed element by element in one kernel, with no buffer for the
// intermediate). Ops inside a v4f.loop body form regions there; the loop
// and v4f.select_branch stay outside regions. The decisions are IR, so --print-ir-after-all and lit tests
// show them; codegen lowers each region as a unit.
//
//===----------------------------------------------------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace v4f {
#define GEN_PASS_DEF_FORMDISPATCHREGIONS
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

namespace {

/// Longest elementwise chain fused into one kernel: beyond this the kernel's
/// loop body grows without bound (a 100k-op chain would be one function)
/// while the memory traffic saved is already small; longer chains become a
/// sequence of regions (identical bodies share one kernel).
constexpr size_t kMaxFusedOps = 32;

/// Wraps `op` in a new region placed where `op` was.
DispatchOp wrapInRegion(Operation *op) {
  OpBuilder b(op);
  auto region = b.create<DispatchOp>(op->getLoc(), op->getResultTypes());
  Block *body = b.createBlock(&region.getBody());
  b.setInsertionPointToEnd(body);
  auto ret = b.create<DispatchReturnOp>(op->getLoc(), op->getResults());
  op->replaceUsesWithIf(region.getResults(), [&](OpOperand &use) { return use.getOwner() != ret; });
  op->moveBefore(ret);
  return region;
}

/// The elementwise region whose single result `v` feeds only `consumer`,
/// when `consumer` can join it: every other operand of `consumer` must be
/// available before the region.
DispatchOp fusibleProducerRegion(Operation *consumer) {
  for (Value v : consumer->getOperands()) {
    auto region = v.getDefiningOp<DispatchOp>();
    if (!region || region.getNumResults() != 1 || !v.hasOneUse()) continue;
    if (region->getBlock() != consumer->getBlock()) continue; // e.g. a consumer inside a v4f.loop body
    // Only elementwise ops ever join a region, so an elementwise root means
    // an all-elementwise region.
    if (!isFusibleElementwise(region.getRoot())) continue;
    if (static_cast<size_t>(std::distance(region.getBodyOps().begin(), region.getBodyOps().end())) >= kMaxFusedOps)
      continue;
    bool available = llvm::all_of(consumer->getOperands(), [&](Value other) {
      if (other == v) return true;
      Operation *def = other.getDefiningOp();
      return !def || def->getBlock() != region->getBlock() || def->isBeforeInBlock(region);
    });
    if (available) return region;
  }
  return {};
}

/// Moves `consumer` into `region` as its new result (a new region op with
/// the consumer's result type replaces the old one).
void appendToRegion(DispatchOp region, Operation *consumer) {
  auto ret = cast<DispatchReturnOp>(region.getBody().front().getTerminator());
  // The consumer now reads the producer's value inside the region.
  region.getResult(0).replaceAllUsesWith(ret.getValues()[0]);
  consumer->moveBefore(ret);
  ret->setOperands(consumer->getResults());
  OpBuilder b(region);
  auto grown = b.create<DispatchOp>(region.getLoc(), consumer->getResultTypes());
  grown.getBody().takeBody(region.getBody());
  consumer->replaceUsesWithIf(grown.getResults(), [&](OpOperand &use) { return use.getOwner() != ret; });
  region->erase();
}

struct FormDispatchRegionsPass : impl::FormDispatchRegionsBase<FormDispatchRegionsPass> {
  void runOnOperation() override {
    // The function's ops and, recursively, those of v4f.loop bodies (a loop
    // itself and a select_branch stay outside regions: the plan runs them).
    SmallVector<Operation *> ops;
    std::function<void(Block &)> collect = [&](Block &block) {
      for (Operation &op : block) {
        if (auto loop = dyn_cast<LoopOp>(op)) {
          collect(loop.getBody().front());
          continue;
        }
        if (op.getDialect() && op.getDialect()->getNamespace() == "v4f" &&
            !isa<DispatchOp, SelectBranchOp, LoopYieldOp>(op) && !isBufferView(&op))
          ops.push_back(&op);
      }
    };
    collect(getOperation().getBody().front());
    for (Operation *op : ops) {
      if (isFusibleElementwise(op))
        if (DispatchOp producer = fusibleProducerRegion(op)) {
          appendToRegion(producer, op);
          continue;
        }
      wrapInRegion(op);
    }
  }
};

} // namespace
} // namespace v4f

std::unique_ptr<Pass> v4f::createFormDispatchRegionsPass() { return std::make_unique<FormDispatchRegionsPass>(); }
