//===- KernelBuilder.h - emits one dispatch kernel function -----*- C++ -*-===//
//
// A kernel is `func.func @name(%state: !llvm.ptr) -> i32`, the state being a
// `const v4f_dispatch_state_t *` (kernel ABI v2, runtime/include/v4f/kernel_abi.h):
// the entry block loads the x workgroup id/count, the bindings and push
// constants from it by the ABI's byte offsets.
// Bodies are built from scf loops, arith/math/vector ops and llvm loads and
// stores on the bound base pointers; all integer arithmetic is i64.
// Dimensions are shape-program registers: static ones become constants in
// the kernel, dynamic ones become push constants.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CPU_KERNELBUILDER_H
#define V4F_LIB_CODEGEN_CPU_KERNELBUILDER_H

#include "v4f/Plan/ShapeProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>

namespace v4f {

class KernelBuilder {
public:
  KernelBuilder(mlir::ModuleOp kernels, ShapeProgramBuilder &shapes, const std::string &name, unsigned numBindings);

  mlir::OpBuilder b;
  mlir::Location loc;
  mlir::func::FuncOp func;

  mlir::Value workgroupId() { return wgId; }
  mlir::Value workgroupCount() { return wgCount; }
  /// Base pointer of binding `i`.
  mlir::Value binding(unsigned i);
  /// Bytes available at binding `i` (i64).
  mlir::Value bindingLength(unsigned i);
  /// This worker's scratch memory (the dispatch's scratchSize bytes).
  mlir::Value scratch();
  /// The i64 value of a shape register (constant or push constant).
  mlir::Value dim(Reg r);
  /// Registers the kernel reads as push constants, in push-constant order.
  const std::vector<Reg> &pushConstants() const { return pushRegs; }

  // i64 helpers.
  mlir::Value c(int64_t v);
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b); // signed, operands >= 0
  mlir::Value rem(mlir::Value a, mlir::Value b);
  mlir::Value min(mlir::Value a, mlir::Value b);
  mlir::Value max(mlir::Value a, mlir::Value b);
  mlir::Value cmp(mlir::arith::CmpIPredicate p, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);
  mlir::Value product(const std::vector<mlir::Value> &values);

  // f32 helpers (scalar or vector<8xf32>).
  mlir::Type f32();
  mlir::Type vec(int64_t lanes = 8);
  mlir::Value cf(float v, mlir::Type type = {});
  mlir::Value load(mlir::Type type, mlir::Value base, mlir::Value index);
  void store(mlir::Value value, mlir::Value base, mlir::Value index);
  mlir::Value splat(mlir::Value scalar, int64_t lanes = 8);
  /// vector<lanes x i1>: lane i is set when i < count (an i64, any value).
  mlir::Value laneMask(mlir::Value count, int64_t lanes);
  /// Vector load / store of the lanes `mask` sets (the others read as 0 and
  /// are not written); no memory is touched for an unset lane.
  mlir::Value maskedLoad(mlir::Type vectorType, mlir::Value base, mlir::Value index, mlir::Value mask);
  void maskedStore(mlir::Value value, mlir::Value base, mlir::Value index, mlir::Value mask);
  /// Elements base[indices[i]] (`indices` a vector of i64 or i32) where
  /// `mask` is set, 0 elsewhere; an unset lane's index is not read, but
  /// should still be in range.
  mlir::Value maskedGather(mlir::Type vectorType, mlir::Value base, mlir::Value indices, mlir::Value mask);
  /// vector<lanes x i64> of 0, 1, ..., lanes - 1.
  mlir::Value iota(int64_t lanes);
  mlir::Value toF32(mlir::Value i64);

  /// scf.for over [lb, ub) with `step`.
  void forLoop(mlir::Value lb, mlir::Value ub, mlir::Value step, const std::function<void(mlir::Value)> &body);
  /// scf.for with loop-carried values; the body returns the next values.
  llvm::SmallVector<mlir::Value>
  forLoop(mlir::Value lb, mlir::Value ub, mlir::Value step, mlir::ValueRange init,
          const std::function<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)> &body);
  /// scf.if without results.
  void ifThen(mlir::Value cond, const std::function<void()> &then);
  /// scf.if without results, with an else branch.
  void ifThenElse(mlir::Value cond, const std::function<void()> &then, const std::function<void()> &otherwise);
  /// scf.if yielding the values of `then` or of `otherwise` (same types).
  llvm::SmallVector<mlir::Value> ifYield(mlir::Value cond, mlir::TypeRange types,
                                         const std::function<llvm::SmallVector<mlir::Value>()> &then,
                                         const std::function<llvm::SmallVector<mlir::Value>()> &otherwise);

  /// Range of rows [begin, end) that this workgroup owns when `rows` are
  /// split into chunks of `rowsPerGroup`.
  std::pair<mlir::Value, mlir::Value> workgroupRange(mlir::Value rows, mlir::Value rowsPerGroup);

  /// Terminates the kernel returning `status` (i32), default V4F_KERNEL_OK.
  void finish(mlir::Value status = {});

  /// Kernel ABI 3: adds the entry checks (the runtime bound `bindingSizes.size()`
  /// buffers and pushConstants().size() push constants; every binding the
  /// body accesses holds at least `bindingSizes[i]` bytes, evaluated in the
  /// kernel from the same push constants its loops read, else the kernel
  /// returns V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE before touching memory)
  /// and records the interface table (`v4f.interface` on the function, which
  /// the object emitter exports as NAME_iface). Call once, after the body.
  /// Fails when the body wrote through a pointer it cannot attribute to a
  /// binding or the scratch memory.
  mlir::LogicalResult sealInterface(llvm::ArrayRef<Reg> bindingSizes);

  /// The value of register `r` when the shape program knows it at compile time.
  std::optional<int64_t> constDim(Reg r) const;

private:
  /// Loads a field of the dispatch state in the entry block.
  mlir::Value loadState(mlir::Type type, int32_t offset);
  /// Records a store through `base` (a binding, scratch, or derived from one).
  void noteStore(mlir::Value base);
  /// The i64 value of register `r` for the entry checks: constants and the
  /// kernel's own push constants as they are, Add/Mul/Max/Min of them
  /// evaluated (saturating; `valid` becomes false on a negative operand),
  /// any other register read as a push constant.
  mlir::Value checkedRegValue(Reg r, mlir::Value &valid, llvm::DenseMap<Reg, mlir::Value> &memo);

  ShapeProgramBuilder &shapes;
  mlir::Value stateArg, bindingsArg, pushArg, wgId, wgCount, scratchPtr;
  /// The last of the entry block's state loads (new ones go after it).
  mlir::Operation *entryEnd = nullptr;
  llvm::DenseMap<unsigned, mlir::Value> bindingCache;
  llvm::DenseMap<Reg, mlir::Value> dimCache;
  std::vector<Reg> pushRegs;
  mlir::Block *entry;
  /// V4F_BINDING_* per binding index the body used.
  std::vector<uint32_t> access;
  bool untrackedStore = false;
};

} // namespace v4f

#endif
