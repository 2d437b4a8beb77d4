//===- PlanBuilder.h - graph -> plan, shared by the plan-building files -*- C++ -*-===//
//
// Private to lib/Codegen/CPU. PlanBuilder walks func @main in order and turns
// every op into dispatches, buffers and shape-program registers: the op and
// region emission lives in DispatchBuilder.cpp, run-time control flow (If's
// select_branch guards, Loop) in PlanControlFlow.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_PLANBUILDER_H
#define V4F_LIB_CODEGEN_CPU_PLANBUILDER_H

#include "DispatchContext.h"

#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <utility>

namespace v4f {

/// The plan element type of an MLIR element type (DType::Unknown if none).
DType dtypeOf(mlir::Type t);

struct PlanBuilder {
  explicit PlanBuilder(DispatchContext &ctx) : ctx(ctx) {}
  DispatchContext &ctx;
  llvm::DenseMap<mlir::Value, TensorInfo> infos;
  /// Where regions kept on the CPU while the GPU was asked for are noted.
  std::vector<std::string> *cpuNotes = nullptr;

  ShapeProgramBuilder &sp() { return ctx.shapes; }

  Reg bytesOf(const TensorInfo &t) {
    return sp().mul(ctx.numel(t), sp().constant(elementBytes(t.elementType)));
  }

  TensorInfo &info(mlir::Value v) { return infos[v]; }

  mlir::LogicalResult addConstant(mlir::arith::ConstantOp op);

  /// Dims of `op`'s result as registers: static dims are constants, dynamic
  /// ones follow the op's shape rule (ShapeRuleOpInterface, in the dialect).
  mlir::FailureOr<std::vector<Reg>> resultDims(mlir::Operation *op);

  /// Split: one strided copy per part, each starting where the last ended.
  mlir::LogicalResult emitSplit(SplitOp op, llvm::ArrayRef<TensorInfo> operands);

  /// NonZero: one dispatch counts the non-zero elements into an 8-byte
  /// buffer, whose value (a DataValue register, bounded by the element count)
  /// sizes the result; a second writes the coordinates.
  mlir::LogicalResult emitNonZero(NonZeroOp op, llvm::ArrayRef<TensorInfo> operands);

  /// TopK: both results have the input's dims with the axis dim = k's value.
  mlir::LogicalResult emitTopKOp(TopKOp op, llvm::ArrayRef<TensorInfo> operands);

  /// A whole recurrent layer: Y is [T, D, B, H] (layout 1: [B, T, D, H]),
  /// the states [D, B, H] (layout 1: [B, D, H]), T and B from X.
  mlir::LogicalResult emitRecurrentOp(RecurrentOp op, llvm::ArrayRef<TensorInfo> operands);

  //===--------------------------------------------------------------------===//
  // Run-time If: v4f.select_branch picks one side; every dispatch needed only
  // through one side is guarded by the condition, so only the taken side runs.
  //===--------------------------------------------------------------------===//

  /// A guard: run when `reg` (0 or 1) is non-zero. The registers it reads
  /// are final for dispatches at index >= readyAt (a condition computed by a
  /// dispatch is known once that dispatch ran; before, it has its bound).
  struct Guard {
    Reg reg;
    uint32_t readyAt;
  };
  /// The condition of a select_branch as 0/1 registers.
  struct Cond {
    Reg taken, notTaken;
    uint32_t readyAt;
  };
  llvm::DenseSet<mlir::Value> condValues;          // cond operands of every select_branch
  llvm::DenseMap<mlir::Value, Cond> conds;
  /// Per select_branch: the dispatch indices of its then and else copies.
  llvm::DenseMap<mlir::Operation *, std::pair<uint32_t, uint32_t>> branchCopies;

  /// Gives `v` (if it is a select_branch condition) its 0/1 registers: its
  /// followed value, or else a one-workgroup dispatch that writes it as an
  /// int64 the plan reads back (a DataValue bounded by 1).
  void noteCond(mlir::Value v);

  /// The result has the taken side's dims and a buffer for the larger side;
  /// two copies fill it, each guarded (in assignGuards) by its side.
  mlir::LogicalResult emitSelectBranch(SelectBranchOp op);

  std::optional<Guard> andGuard(std::optional<Guard> g, Reg term, uint32_t readyAt);

  /// Walks the body backwards: an op is needed when any user needs it, and
  /// a select_branch needs its then (else) value only when its condition is
  /// (is not) taken. Guards the dispatches of each op (`ranges`) by the
  /// disjunction of its users' needs; ops that a return or an unguarded op
  /// reads always run.
  mlir::LogicalResult assignGuards(mlir::Block &body, const llvm::DenseMap<mlir::Operation *, std::pair<uint32_t, uint32_t>> &ranges);

  //===--------------------------------------------------------------------===//
  // Run-time Loop: the body's dispatches run trip-count times (a PlanLoop).
  //===--------------------------------------------------------------------===//

  llvm::DenseMap<mlir::Operation *, std::pair<uint32_t, uint32_t>> ranges; // dispatches each op appended
  bool inLoop = false;

  /// Whether register r depends on the iteration number or on data the
  /// dispatches from `firstDispatch` on compute (it may change per iteration).
  bool variesInLoop(Reg r, uint32_t firstDispatch);
  /// Whether the first dispatch binding `buffer` is at or after `d`.
  bool producedAtOrAfter(uint32_t buffer, uint32_t d);

  mlir::LogicalResult emitLoop(LoopOp op);

  /// One op of the function body or of a loop body (not the terminator).
  mlir::LogicalResult emitBlockOp(mlir::Operation &op);

  mlir::LogicalResult emitOp(mlir::Operation *op);

  /// Dims (and followed values) of `op`'s single result; no buffer yet.
  mlir::FailureOr<TensorInfo> resultInfo(mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands);

  /// A dispatch region: one kernel for a fused elementwise chain, else the
  /// kernels of each op in order.
  mlir::LogicalResult emitRegion(DispatchOp region);

  /// Elementwise chain: every intermediate gets dims and followed values
  /// (shape computations read them) but no buffer; only the last op's value
  /// is stored, by one kernel reading the chain's external inputs.
  mlir::LogicalResult emitChain(DispatchOp region, llvm::ArrayRef<mlir::Operation *> ops);
  /// A region merged by v4f-fuse-attention-regions or
  /// v4f-fuse-pointwise-depthwise: one fused kernel written by `emit` (its
  /// intermediates have no buffers).
  using FusedEmitter = std::function<mlir::LogicalResult(llvm::function_ref<const TensorInfo &(mlir::Value)>,
                                                         const TensorInfo &)>;
  mlir::LogicalResult emitFusedRegion(llvm::ArrayRef<mlir::Operation *> ops, const FusedEmitter &emit);

  /// A region placed on the GPU: one CUDA kernel (generateCudaKernel) over
  /// the region's external operands, a dispatch of the CUDA executable.
  mlir::LogicalResult emitCudaRegion(DispatchOp region, llvm::ArrayRef<mlir::Operation *> ops);

  mlir::LogicalResult emitKernels(mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands, const TensorInfo &result);
};

} // namespace v4f

#endif // V4F_LIB_CODEGEN_CPU_PLANBUILDER_H
