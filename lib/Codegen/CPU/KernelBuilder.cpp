//===- KernelBuilder.cpp - emits one dispatch kernel function -------------===//
#include "KernelBuilder.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, b.getI8Type(), stateArg,
                                     ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(offset)});
  auto load = b.create<LLVM::LoadOp>(loc, type, slot);
  entryEnd = load;
  return load;
}

Value KernelBuilder::scratch() {
  if (!scratchPtr) scratchPtr = loadState(LLVM::LLVMPointerType::get(b.getContext()), V4F_DISPATCH_STATE_OFFSET_SCRATCH);
  return scratchPtr;
}

Value KernelBuilder::bindingLength(unsigned i) {
  OpBuilder::InsertionGuard guard(b);
  Value lengths = loadState(LLVM::LLVMPointerType::get(b.getContext()), V4F_DISPATCH_STATE_OFFSET_BINDING_LENGTHS);
  b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, b.getI64Type(), lengths,
                                     ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(i))});
  auto load = b.create<LLVM::LoadOp>(loc, b.getI64Type(), slot);
  entryEnd = load;
  return load;
}

Value KernelBuilder::binding(unsigned i) {
  if (auto it = bindingCache.find(i); it != bindingCache.end()) return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(entryEnd);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = b.create<LLVM::GEPOp>(loc, ptr, ptr, bindingsArg,
                                     ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(i))});
  auto v = b.create<LLVM::LoadOp>(loc, ptr, slot);
  entryEnd = v;
  bindingCache[i] = v;
  return v;
}

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
Value KernelBuilder::add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
Value KernelBuilder::sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
Value KernelBuilder::mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
Value KernelBuilder::div(Value x, Value y) { return b.create<arith::DivSIOp>(loc, x, y); }
Value KernelBuilder::rem(Value x, Value y) { return b.create<arith::RemSIOp>(loc, x, y); }
Value KernelBuilder::min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
Value KernelBuilder::max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
Value KernelBuilder::cmp(arith::CmpIPredicate p, Value x, Value y) {
  return b.create<arith::CmpIOp>(loc, p, x, y);
}
Value KernelBuilder::select(Value cond, Value x, Value y) {
  return b.create<arith::SelectOp>(loc, cond, x, y);
}
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

void KernelBuilder::store(Value value, Value base, Value index) {
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

void KernelBuilder::maskedStore(Value value, Value base, Value index, Value mask) {
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
  b.create<scf::ForOp>(loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
                         body(iv);
                         b.create<scf::YieldOp>(loc);
                       });
}

SmallVector<Value> KernelBuilder::forLoop(
    Value lb, Value ub, Value step, ValueRange init,
    const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  auto op = b.create<scf::ForOp>(loc, lb, ub, step, init,
                                 [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
                                   OpBuilder::InsertionGuard guard(b);
                                   b.setInsertionPoint(nested.getInsertionBlock(),
                                                       nested.getInsertionPoint());
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

void KernelBuilder::ifThenElse(Value cond, const std::function<void()> &then,
                               const std::function<void()> &otherwise) {
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

} // namespace v4f
