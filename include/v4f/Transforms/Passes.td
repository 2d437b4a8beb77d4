//===- Passes.td - v4f transformation passes ---------------*- tablegen -*-===//
#ifndef V4F_TRANSFORMS_PASSES_TD
#define V4F_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph-level rewrites
//===----------------------------------------------------------------------===//

def FoldBatchNorm : Pass<"v4f-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold inference BatchNormalization into the preceding conv";
  let description = [{
    Input invariants: `v4f.batch_norm` with constant scale/bias/mean/variance.
    Output: when the input is produced by a `v4f.conv` with a constant weight
    (and optional constant bias) that has no other user, the conv's weight is
    rescaled per output channel and its bias shifted, and the batch norm is
    removed. Any other batch norm becomes `v4f.mul` + `v4f.add` with folded
    `[C, 1, ...]` constants. Preserves: results up to float rounding.
    After this pass no `v4f.batch_norm` remains.
  }];
  let constructor = "v4f::createFoldBatchNormPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FuseEpilogues : Pass<"v4f-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Fuse bias, residual add and activation into conv and matmul";
  let description = [{
    Input invariants: batch norms folded (run after `v4f-fold-batch-norm`).
    Output: `v4f.add` of a per-channel constant into a conv (or of an `[N]`
    constant into a matmul) becomes the op's `bias`; a following `v4f.add`
    of a same-shaped tensor becomes the conv's `residual`; a following
    `v4f.relu`, `v4f.leaky_relu`, `v4f.clip`, `v4f.sigmoid` or `v4f.tanh`
    becomes its `activation`. Only single-use intermediates are fused.
    Preserves: results up to float rounding.
  }];
  let constructor = "v4f::createFuseEpiloguesPass()";
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Dispatch formation
//===----------------------------------------------------------------------===//

def FormDispatchRegions : Pass<"v4f-form-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Group the graph's ops into v4f.dispatch regions (the fusion decisions)";
  let description = [{
    Input invariants: graph-level rewrites done (decomposition, folding,
    epilogue fusion); no v4f.dispatch yet.
    Output: every v4f op that computes a tensor is inside a `v4f.dispatch`
    region; only `arith.constant`, buffer views (`v4f.reshape`,
    `v4f.unsqueeze`) and `func.return` stay outside. Each region has a root
    op; an elementwise op (`v4f.add` ... `v4f.clip`, `v4f.elementwise`) whose
    operand is the single-use result of a region made only of elementwise
    ops joins that region, provided its other operands are available before
    it, so producer/consumer chains (up to 32 ops) become one kernel with no
    intermediate buffer. Conv/matmul epilogues were already fused into the root by
    `v4f-fuse-epilogues`.
    Preserves: semantics (ops move, none change).
  }];
  let constructor = "v4f::createFormDispatchRegionsPass()";
}

#endif // V4F_TRANSFORMS_PASSES_TD
