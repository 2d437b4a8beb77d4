//===- V4FDispatch.cpp - v4f.dispatch regions -----------------------------===//
#include "v4f/Dialect/V4F/IR/V4FOps.h"

using namespace mlir;

namespace v4f {

LogicalResult DispatchOp::verify() {
  Block &body = getBody().front();
  auto ret = llvm::dyn_cast<DispatchReturnOp>(body.getTerminator());
  if (!ret) return emitOpError("body must end with v4f.dispatch_return");
  if (ret.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << ret.getValues().size() << " values whose types differ from its "
                                  << getNumResults() << " results";
  if (body.without_terminator().empty()) return emitOpError("has an empty body");
  for (Operation &op : body.without_terminator())
    if (isa<DispatchOp>(op)) return op.emitOpError("dispatch regions do not nest");
  return success();
}

Operation *DispatchOp::getRoot() {
  for (Operation &op : getBodyOps())
    if (!isa<ReshapeOp, UnsqueezeOp>(op)) return &op;
  return &*getBodyOps().begin();
}

bool isFusibleElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp,
             ElementwiseOp>(op) &&
         op->getNumResults() == 1;
}

bool isBufferView(Operation *op) {
  // Reshape (static dim sources or a run-time shape operand) and Unsqueeze
  // alias their input's buffer: metadata, not work.
  return isa<ReshapeOp, UnsqueezeOp>(op);
}

} // namespace v4f
