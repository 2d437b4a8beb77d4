//===- KernelBuilder.cpp - emits one dispatch kernel function -------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/kernel_abi.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {

KernelBuilder::KernelBuilder(ModuleOp kernels, ShapeProgramBuilder &shapes, const std::string &name,
                             unsigned numBindings)
    : b(kernels.getContext()), loc(kernels.getLoc()), shapes(shapes) {
  MLIRContext *ctx = kernels.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  b.setInsertionPointToEnd(kernels.getBody());
  // Kernel ABI v2: one `const v4f_dispatch_state_t *` argument.
  func = b.create<func::FuncOp>(loc, name, b.getFunctionType({ptr}, {b.getI32Type()}));
  entry = func.addEntryBlock();
  stateArg = entry->getArgument(0);
  b.setInsertionPointToStart(entry);
  wgId = loadState(b.getI64Type(), V4F_DISPATCH_STATE_OFFSET_WORKGROUP_ID);
  wgCount = loadState(b.getI64Type(), V4F_DISPATCH_STATE_OFFSET_WORKGROUP_COUNT);
  bindingsArg = loadState(ptr, V4F_DISPATCH_STATE_OFFSET_BINDINGS);
  pushArg = loadState(ptr, V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANTS);
  (void)numBindings;
}

Value KernelBuilder::loadState(Type type, int32_t offset) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  if (entryEnd) b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, b.getI8Type(), stateArg, ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(offset)});
  auto load = b.create<LLVM::LoadOp>(loc, type, slot);
  entryEnd = load;
  return load;
}

Value KernelBuilder::scratch() {
  if (!scratchPtr)
    scratchPtr = loadState(LLVM::LLVMPointerType::get(b.getContext()), V4F_DISPATCH_STATE_OFFSET_SCRATCH);
  return scratchPtr;
}

Value KernelBuilder::bindingLength(unsigned i) {
  OpBuilder::InsertionGuard guard(b);
  Value lengths = loadState(LLVM::LLVMPointerType::get(b.getContext()), V4F_DISPATCH_STATE_OFFSET_BINDING_LENGTHS);
  b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot =
      b.create<LLVM::GEPOp>(loc, ptr, b.getI64Type(), lengths, ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(i))});
  auto load = b.create<LLVM::LoadOp>(loc, b.getI64Type(), slot);
  entryEnd = load;
  return load;
}

Value KernelBuilder::binding(unsigned i) {
  if (access.size() <= i) access.resize(i + 1, 0);
  access[i] |= V4F_BINDING_READ;
  if (auto it = bindingCache.find(i); it != bindingCache.end()) return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, ptr, bindingsArg, ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(i))});
  auto v = b.create<LLVM::LoadOp>(loc, ptr, slot);
  entryEnd = v;
  bindingCache[i] = v;
  return v;
}

std::optional<int64_t> KernelBuilder::constDim(Reg r) const { return shapes.constValue(r); }

Value KernelBuilder::dim(Reg r) {
  if (auto k = shapes.constValue(r)) return c(*k);
  if (auto it = dimCache.find(r); it != dimCache.end()) return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, b.getI64Type(), pushArg,
                                     ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(pushRegs.size()))});
  auto v = b.create<LLVM::LoadOp>(loc, b.getI64Type(), slot);
  entryEnd = v;
  pushRegs.push_back(r);
  dimCache[r] = v;
  return v;
}

Value KernelBuilder::c(int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64); }
// add / sub / mul of two i64 constants give the constant (strides and
// offsets stay recognisable as constants to the emitters that specialize on
// them, e.g. the strided maps' vector path).
static std::optional<std::pair<int64_t, int64_t>> constPair(Value x, Value y) {
  if (!x.getType().isInteger(64)) return std::nullopt;
  auto a = getConstantIntValue(x), c = getConstantIntValue(y);
  if (!a || !c) return std::nullopt;
  return std::make_pair(*a, *c);
}
Value KernelBuilder::add(Value x, Value y) {
  if (auto k = constPair(x, y)) return c(k->first + k->second);
  return b.create<arith::AddIOp>(loc, x, y);
}
Value KernelBuilder::sub(Value x, Value y) {
  if (auto k = constPair(x, y)) return c(k->first - k->second);
  return b.create<arith::SubIOp>(loc, x, y);
}
Value KernelBuilder::mul(Value x, Value y) {
  if (auto k = constPair(x, y)) return c(k->first * k->second);
  return b.create<arith::MulIOp>(loc, x, y);
}
Value KernelBuilder::div(Value x, Value y) { return b.create<arith::DivSIOp>(loc, x, y); }
Value KernelBuilder::rem(Value x, Value y) { return b.create<arith::RemSIOp>(loc, x, y); }
Value KernelBuilder::min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
Value KernelBuilder::max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
Value KernelBuilder::cmp(arith::CmpIPredicate p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y); }
Value KernelBuilder::select(Value cond, Value x, Value y) { return b.create<arith::SelectOp>(loc, cond, x, y); }
Value KernelBuilder::product(const std::vector<Value> &values) {
  Value p = c(1);
  for (Value v : values) p = mul(p, v);
  return p;
}

Type KernelBuilder::f32() { return b.getF32Type(); }
Type KernelBuilder::vec(int64_t lanes) { return VectorType::get({lanes}, b.getF32Type()); }

Value KernelBuilder::cf(float v, Type type) {
  if (!type) type = f32();
  if (auto vt = llvm::dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(loc, vt, DenseElementsAttr::get(vt, v));
  return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v));
}

Value KernelBuilder::load(Type type, Value base, Value index) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  if (!llvm::isa<VectorType>(type)) type = bodyScalarType(type); // storage-only types load as integers
  Type elem = type;
  if (auto vt = llvm::dyn_cast<VectorType>(type)) elem = vt.getElementType();
  Value p = b.create<LLVM::GEPOp>(loc, ptr, elem, base, ValueRange{index});
  unsigned align = elem.getIntOrFloatBitWidth() / 8;
  return b.create<LLVM::LoadOp>(loc, type, p, align);
}

void KernelBuilder::noteStore(Value base) {
  Value root = base;
  while (auto gep = root.getDefiningOp<LLVM::GEPOp>()) root = gep.getBase();
  if (root == scratchPtr) return;
  for (auto &[i, v] : bindingCache)
    if (v == root) {
      access[i] |= V4F_BINDING_WRITE;
      return;
    }
  untrackedStore = true;
}

void KernelBuilder::store(Value value, Value base, Value index) {
  noteStore(base);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type elem = value.getType();
  if (auto vt = llvm::dyn_cast<VectorType>(elem)) elem = vt.getElementType();
  Value p = b.create<LLVM::GEPOp>(loc, ptr, elem, base, ValueRange{index});
  b.create<LLVM::StoreOp>(loc, value, p, elem.getIntOrFloatBitWidth() / 8);
}

Value KernelBuilder::splat(Value scalar, int64_t lanes) {
  return b.create<vector::BroadcastOp>(loc, vec(lanes), scalar);
}

Value KernelBuilder::laneMask(Value count, int64_t lanes) {
  auto idxType = VectorType::get({lanes}, b.getI64Type());
  Value lane = iota(lanes);
  Value bound = b.create<vector::BroadcastOp>(loc, idxType, count);
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lane, bound);
}

Value KernelBuilder::maskedLoad(Type vectorType, Value base, Value index, Value mask) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type elem = llvm::cast<VectorType>(vectorType).getElementType();
  Value p = b.create<LLVM::GEPOp>(loc, ptr, elem, base, ValueRange{index});
  Value zero = b.create<arith::ConstantOp>(loc, vectorType, b.getZeroAttr(vectorType));
  return b.create<LLVM::MaskedLoadOp>(loc, vectorType, p, mask, ValueRange{zero},
                                      uint32_t(elem.getIntOrFloatBitWidth() / 8));
}

Value KernelBuilder::maskedGather(Type vectorType, Value base, Value indices, Value mask) {
  auto vt = llvm::cast<VectorType>(vectorType);
  Type elem = vt.getElementType();
  auto ptrs = LLVM::LLVMFixedVectorType::get(LLVM::LLVMPointerType::get(b.getContext()), unsigned(vt.getNumElements()));
  Value p = b.create<LLVM::GEPOp>(loc, ptrs, elem, base, ValueRange{indices});
  Value zero = b.create<arith::ConstantOp>(loc, vectorType, b.getZeroAttr(vectorType));
  return b.create<LLVM::masked_gather>(loc, vectorType, p, mask, ValueRange{zero},
                                       uint32_t(elem.getIntOrFloatBitWidth() / 8));
}

void KernelBuilder::maskedStore(Value value, Value base, Value index, Value mask) {
  noteStore(base);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type elem = llvm::cast<VectorType>(value.getType()).getElementType();
  Value p = b.create<LLVM::GEPOp>(loc, ptr, elem, base, ValueRange{index});
  b.create<LLVM::MaskedStoreOp>(loc, value, p, mask, uint32_t(elem.getIntOrFloatBitWidth() / 8));
}

Value KernelBuilder::iota(int64_t lanes) {
  auto idxType = VectorType::get({lanes}, b.getI64Type());
  SmallVector<int64_t> values(lanes);
  for (int64_t i = 0; i < lanes; ++i) values[i] = i;
  return b.create<arith::ConstantOp>(loc, idxType, DenseElementsAttr::get(idxType, ArrayRef<int64_t>(values)));
}

Value KernelBuilder::toF32(Value i64) { return b.create<arith::SIToFPOp>(loc, f32(), i64); }

void KernelBuilder::forLoop(Value lb, Value ub, Value step, const std::function<void(Value)> &body) {
  b.create<scf::ForOp>(loc, lb, ub, step, ValueRange{}, [&](OpBuilder &nested, Location, Value iv, ValueRange) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
    body(iv);
    b.create<scf::YieldOp>(loc);
  });
}

SmallVector<Value> KernelBuilder::forLoop(Value lb, Value ub, Value step, ValueRange init,
                                          const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  auto op = b.create<scf::ForOp>(loc, lb, ub, step, init, [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
    SmallVector<Value> next = body(iv, args);
    b.create<scf::YieldOp>(loc, next);
  });
  return SmallVector<Value>(op.getResults());
}

void KernelBuilder::ifThen(Value cond, const std::function<void()> &then) {
  auto op = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
}

void KernelBuilder::ifThenElse(Value cond, const std::function<void()> &then, const std::function<void()> &otherwise) {
  auto op = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
  b.setInsertionPoint(op.elseBlock()->getTerminator());
  otherwise();
}

SmallVector<Value> KernelBuilder::ifYield(Value cond, TypeRange types, const std::function<SmallVector<Value>()> &then,
                                          const std::function<SmallVector<Value>()> &otherwise) {
  auto op = b.create<scf::IfOp>(loc, types, cond, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    b.create<scf::YieldOp>(loc, then());
    b.setInsertionPointToStart(op.elseBlock());
    b.create<scf::YieldOp>(loc, otherwise());
  }
  return SmallVector<Value>(op.getResults());
}

std::pair<Value, Value> KernelBuilder::workgroupRange(Value rows, Value rowsPerGroup) {
  Value begin = mul(wgId, rowsPerGroup);
  Value end = min(add(begin, rowsPerGroup), rows);
  return {begin, end};
}

void KernelBuilder::finish(Value status) {
  if (!status) status = b.create<arith::ConstantIntOp>(loc, 0, 32);
  b.create<func::ReturnOp>(loc, status);
}

Value KernelBuilder::checkedRegValue(Reg r, Value &valid, llvm::DenseMap<Reg, Value> &memo) {
  if (auto k = shapes.constValue(r)) return c(*k);
  if (auto it = memo.find(r); it != memo.end()) return it->second;
  const ShapeInstruction &ins = shapes.instructions()[r];
  Value v;
  auto nonNegative = [&](Value x) {
    valid = b.create<arith::AndIOp>(loc, valid, cmp(arith::CmpIPredicate::sge, x, c(0)));
  };
  switch (ins.op) {
  case ShapeOpKind::Add:
  case ShapeOpKind::Mul:
  case ShapeOpKind::Max:
  case ShapeOpKind::Min: {
    if (dimCache.count(r)) { // the kernel reads this register itself
      v = dimCache[r];
      nonNegative(v);
      break;
    }
    Value x = checkedRegValue(ins.a, valid, memo), y = checkedRegValue(ins.b, valid, memo);
    Value big = c(std::numeric_limits<int64_t>::max());
    if (ins.op == ShapeOpKind::Add) {
      // Wraps saturate: up to INT64_MAX (the check then fails), down to
      // INT64_MIN (negative: the check fails unless a Max lifts it).
      Value sum = add(x, y);
      Value up =
          b.create<arith::AndIOp>(loc, cmp(arith::CmpIPredicate::sgt, y, c(0)), cmp(arith::CmpIPredicate::slt, sum, x));
      Value down =
          b.create<arith::AndIOp>(loc, cmp(arith::CmpIPredicate::slt, y, c(0)), cmp(arith::CmpIPredicate::sgt, sum, x));
      v = select(up, big, select(down, c(std::numeric_limits<int64_t>::min()), sum));
    } else if (ins.op == ShapeOpKind::Mul) {
      // x * y overflowed when (x * y) / x != y; x of 0 or -1 divides by 1
      // instead (no division by zero, no INT64_MIN / -1), so a -1 factor
      // saturates too -- sizes have none.
      Value prod = mul(x, y);
      Value trivial =
          b.create<arith::OrIOp>(loc, cmp(arith::CmpIPredicate::eq, x, c(0)), cmp(arith::CmpIPredicate::eq, x, c(-1)));
      Value back = div(prod, select(trivial, c(1), x));
      Value nonZero = cmp(arith::CmpIPredicate::ne, x, c(0));
      Value overflow = b.create<arith::AndIOp>(loc, nonZero, cmp(arith::CmpIPredicate::ne, back, y));
      v = select(overflow, big, prod);
    } else {
      v = ins.op == ShapeOpKind::Max ? max(x, y) : min(x, y);
    }
    break;
  }
  default:
    v = dim(r); // collected (loaded) before the checks are emitted
    nonNegative(v);
    break;
  }
  memo[r] = v;
  return v;
}

LogicalResult KernelBuilder::sealInterface(ArrayRef<Reg> bindingSizes) {
  const unsigned n = bindingSizes.size();
  if (untrackedStore || access.size() > n) return failure();
  access.resize(n, 0);
  // Every register the checks read as a push constant, and every length,
  // is loaded in the entry block first (dim()/bindingLength() put their
  // loads there); the arithmetic then goes between those loads and the body.
  std::function<void(Reg)> collect = [&](Reg r) {
    if (shapes.constValue(r) || dimCache.count(r)) return;
    const ShapeInstruction &ins = shapes.instructions()[r];
    switch (ins.op) {
    case ShapeOpKind::Add:
    case ShapeOpKind::Mul:
    case ShapeOpKind::Max:
    case ShapeOpKind::Min:
      collect(ins.a);
      collect(ins.b);
      return;
    default: dim(r);
    }
  };
  std::vector<std::pair<unsigned, Value>> lengths;
  for (unsigned i = 0; i < n; ++i)
    if (access[i]) collect(bindingSizes[i]);
  for (unsigned i = 0; i < n; ++i)
    if (access[i]) lengths.push_back({i, bindingLength(i)});

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(entryEnd);
  Value valid = b.create<arith::ConstantIntOp>(loc, 1, 1);
  llvm::DenseMap<Reg, Value> memo;
  for (auto &[i, length] : lengths) {
    Value extent = checkedRegValue(bindingSizes[i], valid, memo);
    // Lengths above INT64_MAX read as negative and fail: no buffer is that big.
    valid = b.create<arith::AndIOp>(loc, valid, cmp(arith::CmpIPredicate::sge, extent, c(0)));
    valid = b.create<arith::AndIOp>(loc, valid, cmp(arith::CmpIPredicate::sge, length, extent));
  }
  // The body moves to its own block, entered only when the checks hold.
  Region &region = func.getBody();
  Block *body = entry->splitBlock(b.getInsertionPoint());
  Block *refuse = new Block();
  region.push_back(refuse);
  b.setInsertionPointToEnd(refuse);
  b.create<func::ReturnOp>(loc,
                           ValueRange{b.create<arith::ConstantIntOp>(loc, V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE, 32)});
  b.setInsertionPointToEnd(entry);
  b.create<cf::CondBranchOp>(loc, valid, body, ValueRange{}, refuse, ValueRange{});

  // A new entry block checks the counts before anything indexes the
  // bindings or push constants.
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Block *counts = new Block();
  region.push_front(counts);
  Value state = counts->addArgument(ptr, loc);
  stateArg.replaceAllUsesWith(state);
  entry->eraseArgument(0);
  stateArg = state;
  b.setInsertionPointToEnd(counts);
  auto loadCount = [&](int32_t offset) -> Value {
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, b.getI8Type(), state, ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(offset)});
    return b.create<LLVM::LoadOp>(loc, b.getI32Type(), slot);
  };
  Value bindingCount = loadCount(V4F_DISPATCH_STATE_OFFSET_BINDING_COUNT);
  Value pushCount = loadCount(V4F_DISPATCH_STATE_OFFSET_PUSH_CONSTANT_COUNT);
  Value countsOk = b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, bindingCount,
                              b.create<arith::ConstantIntOp>(loc, int64_t(n), 32)),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, pushCount,
                              b.create<arith::ConstantIntOp>(loc, int64_t(pushRegs.size()), 32)));
  b.create<cf::CondBranchOp>(loc, countsOk, entry, ValueRange{}, refuse, ValueRange{});

  std::vector<int32_t> table = {int32_t(n), int32_t(pushRegs.size())};
  for (uint32_t a : access) table.push_back(int32_t(a));
  func->setAttr("v4f.interface", b.getDenseI32ArrayAttr(table));
  return success();
}

} // namespace v4f
