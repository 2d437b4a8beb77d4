//===- V4FDispatch.cpp - v4f.dispatch regions and v4f.loop ----------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

using namespace mlir;

namespace v4f {

LogicalResult DispatchOp::verify() {
  Block &body = getBody().front();
  auto ret = llvm::dyn_cast<DispatchReturnOp>(body.getTerminator());
  if (!ret) return emitOpError("body must end with v4f.dispatch_return");
  if (ret.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << ret.getValues().size() << " values whose types differ from its " << getNumResults()
                                  << " results";
  if (body.without_terminator().empty()) return emitOpError("has an empty body");
  for (Operation &op : body.without_terminator())
    if (isa<DispatchOp>(op)) return op.emitOpError("dispatch regions do not nest");
  // A fused kernel kind names what a fusion pass merged (at least two ops);
  // which kinds exist, and over which ops, the targets' kernels know.
  if (Attribute attr = (*this)->getAttr(kFusedKernelAttr)) {
    auto kind = llvm::dyn_cast<StringAttr>(attr);
    if (!kind || kind.getValue().empty())
      return emitOpError("has a ") << kFusedKernelAttr << " that is not a kind name";
    if (std::distance(getBodyOps().begin(), getBodyOps().end()) < 2)
      return emitOpError("is a fused '") << kind.getValue() << "' region of fewer than two ops";
  }
  return success();
}

Operation *DispatchOp::getRoot() {
  for (Operation &op : getBodyOps())
    if (!isa<ReshapeOp, UnsqueezeOp>(op)) return &op;
  return &*getBodyOps().begin();
}

bool isFusibleElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp,
             HardSigmoidOp, HardSwishOp, ElementwiseOp>(op) &&
         op->getNumResults() == 1;
}

bool isBufferView(Operation *op) {
  // Reshape (static dim sources or a run-time shape operand) and Unsqueeze
  // alias their input's buffer: metadata, not work.
  return isa<ReshapeOp, UnsqueezeOp>(op);
}

bool isPlacedOnCuda(Operation *op) {
  if (!op) return false;
  auto region = llvm::dyn_cast<DispatchOp>(op);
  if (!region) region = op->getParentOfType<DispatchOp>();
  if (!region) return false;
  auto p = region->getAttrOfType<StringAttr>("v4f.placement");
  return p && p.getValue() == "cuda";
}

StringRef fusedKernelOf(Operation *region) {
  auto kind = region ? region->getAttrOfType<StringAttr>(kFusedKernelAttr) : StringAttr();
  return kind ? kind.getValue() : StringRef();
}

bool isAttentionRegion(ArrayRef<Operation *> ops) {
  int matmuls = 0, softmaxes = 0;
  for (Operation *op : ops) {
    if (isa<MatMulOp>(op))
      ++matmuls;
    else if (isa<SoftmaxOp>(op))
      ++softmaxes;
    else if (!isa<TransposeOp>(op))
      return false;
  }
  return matmuls == 2 && softmaxes == 1;
}

} // namespace v4f

using namespace v4f;

//===----------------------------------------------------------------------===//
// loop
//===----------------------------------------------------------------------===//

namespace {
/// Same rank and element type, equal where both dims are static.
bool compatibleTypes(RankedTensorType a, RankedTensorType b, size_t bOffset = 0) {
  if (a.getElementType() != b.getElementType() || a.getRank() + int64_t(bOffset) != b.getRank()) return false;
  for (int64_t d = 0; d < a.getRank(); ++d) {
    int64_t x = a.getDimSize(d), y = b.getDimSize(d + bOffset);
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y) return false;
  }
  return true;
}
} // namespace

LogicalResult LoopOp::verify() {
  auto trip = llvm::cast<RankedTensorType>(getTripCount().getType());
  if (!trip.getElementType().isInteger(64) || !trip.hasStaticShape() || trip.getNumElements() != 1)
    return emitOpError("trip_count must be a one-element int64 tensor, got ") << trip;
  if (getMaxIterations() <= 0) return emitOpError("max_iterations must be positive");
  Block &body = getBody().front();
  size_t n = getInits().size();
  if (body.getNumArguments() != 1 + n)
    return emitOpError("the body must take the iteration number and ") << n << " carried value(s)";
  auto iter = llvm::dyn_cast<RankedTensorType>(body.getArgument(0).getType());
  if (!iter || iter.getRank() != 0 || !iter.getElementType().isInteger(64))
    return emitOpError("the body's first argument (the iteration number) must be tensor<i64>");
  for (size_t j = 0; j < n; ++j)
    if (body.getArgument(1 + j).getType() != getInits()[j].getType())
      return emitOpError("body argument ") << 1 + j << " must have the type of carried input " << j;
  auto yield = llvm::dyn_cast<LoopYieldOp>(body.getTerminator());
  if (!yield) return emitOpError("the body must end with v4f.loop_yield");
  ValueRange yielded = yield.getValues();
  if (getBodyCondition()) {
    if (yielded.empty()) return emitOpError("with body_condition the body must yield its condition first");
    auto cond = llvm::cast<RankedTensorType>(yielded[0].getType());
    if (!cond.hasStaticShape() || cond.getNumElements() != 1 || !llvm::isa<IntegerType>(cond.getElementType()))
      return emitOpError("the body's condition must be a one-element bool or integer tensor, got ") << cond;
    yielded = yielded.drop_front();
  }
  if (yielded.size() < n) return emitOpError("the body yields fewer values than there are carried inputs");
  if (getNumResults() != yielded.size())
    return emitOpError("has ") << getNumResults() << " results but the body yields " << yielded.size()
                               << " values after its condition";
  for (size_t j = 0; j < n; ++j) {
    auto init = llvm::cast<RankedTensorType>(getInits()[j].getType());
    if (getResult(j).getType() != init)
      return emitOpError("result ") << j << " must have carried input " << j << "'s type";
    if (!compatibleTypes(llvm::cast<RankedTensorType>(yielded[j].getType()), init))
      return emitOpError("carried value ")
             << j << " changes its type across iterations: " << init << " becomes " << yielded[j].getType();
  }
  for (size_t k = n; k < getNumResults(); ++k)
    if (!compatibleTypes(llvm::cast<RankedTensorType>(yielded[k].getType()),
                         llvm::cast<RankedTensorType>(getResult(k).getType()), 1))
      return emitOpError("scan result ") << k << " must stack the yielded " << yielded[k].getType()
                                         << " along a new axis 0";
  return success();
}
