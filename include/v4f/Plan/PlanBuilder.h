//===- PlanBuilder.h - graph -> execution plan, for every target -*- C++ -*-===//
//
// PlanBuilder walks func @main in order and turns it into the execution plan:
// graph inputs and outputs, constants, one buffer per stored value (views
// alias their input's), every dim a shape-program register, run-time If
// (select_branch guards) and Loop (PlanControlFlow.cpp). Each v4f.dispatch
// region goes to the target it is placed on (PlanTarget.h), which appends
// the region's dispatches; the builder knows no kernel.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_PLANBUILDER_H
#define V4F_PLAN_PLANBUILDER_H

#include "v4f/Plan/PlanTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <utility>

namespace v4f {

class PlanBuilder {
public:
  PlanBuilder(PlanContext &ctx, HostPlanTarget &host, llvm::ArrayRef<PlanTarget *> targets)
      : ctx(ctx), host(host), targets(targets.begin(), targets.end()) {}

  PlanContext &ctx;
  HostPlanTarget &host;
  llvm::SmallVector<PlanTarget *> targets;
  llvm::DenseMap<mlir::Value, TensorInfo> infos;
  /// The function being built (func @main), once build() found it.
  mlir::func::FuncOp func;
  /// Where regions kept on the CPU while the GPU was asked for are noted.
  std::vector<std::string> *cpuNotes = nullptr;

  /// Builds the plan of func @main of `graph` (its work in v4f.dispatch regions).
  mlir::LogicalResult build(mlir::ModuleOp graph);

  ShapeProgramBuilder &sp() { return ctx.shapes; }

  Reg bytesOf(const TensorInfo &t) { return sp().mul(ctx.numel(t), sp().constant(elementBytes(t.elementType))); }

  TensorInfo &info(mlir::Value v) { return infos[v]; }

  mlir::LogicalResult addConstant(mlir::arith::ConstantOp op);

  /// Dims of `op`'s result as registers: static dims are constants, dynamic
  /// ones follow the op's shape rule (ShapeRuleOpInterface, in the dialect).
  mlir::FailureOr<std::vector<Reg>> resultDims(mlir::Operation *op);

  /// Dims (and followed values) of `op`'s single result; no buffer yet.
  mlir::FailureOr<TensorInfo> resultInfo(mlir::Operation *op, llvm::ArrayRef<TensorInfo> operands);

  /// A dispatch region: handed to the target it is placed on; the values it
  /// yields become its results.
  mlir::LogicalResult emitRegion(DispatchOp region);

  /// One op of the function body or of a loop body (not the terminator).
  mlir::LogicalResult emitBlockOp(mlir::Operation &op);

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
  llvm::DenseSet<mlir::Value> condValues; // cond operands of every select_branch
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
  mlir::LogicalResult assignGuards(mlir::Block &body,
                                   const llvm::DenseMap<mlir::Operation *, std::pair<uint32_t, uint32_t>> &ranges);

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

private:
  mlir::LogicalResult addInputs(mlir::func::FuncOp func);
  mlir::LogicalResult addOutputs(mlir::func::FuncOp func, mlir::func::ReturnOp ret);
};

} // namespace v4f

#endif // V4F_PLAN_PLANBUILDER_H
