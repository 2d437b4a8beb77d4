//===- ShapeProgram.h - builds the manifest's shape program -----*- C++ -*-===//
//
// Every dimension, buffer size and workgroup count in the plan is a register
// of the shape program that the runtime evaluates once input shapes are
// known. Static values fold to deduplicated Const registers at compile time,
// so a fully static model has a program of constants only.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_SHAPEPROGRAM_H
#define V4F_PLAN_SHAPEPROGRAM_H

#include "v4f/Dialect/V4F/IR/DimBuilder.h"
#include "v4f/Plan/ExecutablePlan.h"

#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace v4f {

/// Implements DimBuilder so the dialect's shape rules build registers directly.
class ShapeProgramBuilder : public DimBuilder {
public:
  Reg constant(int64_t v) override {
    auto it = constants.find(v);
    if (it != constants.end()) return it->second;
    Reg r = append({ShapeOpKind::Const, 0, 0, v});
    constants[v] = r;
    return r;
  }
  Reg inputDim(uint32_t input, uint32_t dim) { return memo({ShapeOpKind::InputDim, input, dim, 0}); }
  /// Element `index` of input `input` (an int32/int64 tensor), read at run time.
  Reg inputValue(uint32_t input, uint32_t index) { return memo({ShapeOpKind::InputValue, input, index, 0}); }
  /// floor(element `index` of float32 input `input` * r[dim]), read at run time.
  Reg inputScaledDim(uint32_t input, uint32_t index, Reg dim) {
    return memo({ShapeOpKind::InputScaledDim, input, index, int64_t(dim)});
  }
  /// The int64 element `index` of plan buffer `buffer`, written by the
  /// dispatch that first uses the buffer; `bound` (its upper bound) before.
  Reg dataValue(uint32_t buffer, uint32_t index, Reg bound) {
    return append({ShapeOpKind::DataValue, buffer, index, int64_t(bound)});
  }
  /// The iteration plan loop `loop` is running (re-evaluated every iteration).
  Reg loopIndex(uint32_t loop) { return memo({ShapeOpKind::LoopIndex, loop, 0, 0}); }
  /// The iterations plan loop `loop` ran, once it ended; `bound` before.
  Reg loopCount(uint32_t loop, Reg bound) { return memo({ShapeOpKind::LoopCount, loop, 0, int64_t(bound)}); }
  Reg lt(Reg a, Reg b) { return binary(ShapeOpKind::Lt, a, b); }
  Reg eq(Reg a, Reg b) { return binary(ShapeOpKind::Eq, a, b); }
  /// cond != 0 ? a : b
  Reg select(Reg cond, Reg a, Reg b) {
    if (auto c = constValue(cond)) return *c ? a : b;
    if (a == b) return a;
    return memo({ShapeOpKind::Select, a, b, int64_t(cond)});
  }
  std::optional<int64_t> constValue(Reg r) const {
    if (instrs[r].op == ShapeOpKind::Const) return instrs[r].imm;
    return std::nullopt;
  }
  Reg add(Reg a, Reg b) override { return binary(ShapeOpKind::Add, a, b); }
  Reg sub(Reg a, Reg b) override { return binary(ShapeOpKind::Sub, a, b); }
  Reg mul(Reg a, Reg b) override { return binary(ShapeOpKind::Mul, a, b); }
  Reg floorDiv(Reg a, Reg b) override { return binary(ShapeOpKind::FloorDiv, a, b); }
  Reg ceilDiv(Reg a, Reg b) override { return binary(ShapeOpKind::CeilDiv, a, b); }
  Reg max(Reg a, Reg b) override { return binary(ShapeOpKind::Max, a, b); }
  Reg min(Reg a, Reg b) override { return binary(ShapeOpKind::Min, a, b); }
  Reg broadcast(Reg a, Reg b) override {
    if (a == b) return a;
    auto ca = constValue(a), cb = constValue(b);
    if (ca && *ca == 1) return b;
    if (cb && *cb == 1) return a;
    if (ca && cb && *ca == *cb) return a;
    return memo({ShapeOpKind::Broadcast, a, b, labelIndex()});
  }
  /// `a`, checked at run time to equal `b` (a dim or element count an op
  /// requires); a mismatch is an error naming the current op and `what`.
  /// Equal constants need no check; unequal ones are the caller's error.
  Reg expect(Reg a, Reg b, const std::string &what) {
    if (a == b) return a;
    auto ca = constValue(a), cb = constValue(b);
    if (ca && cb && *ca == *cb) return a;
    std::string saved = label;
    label = label.empty() ? what : label + ": " + what;
    Reg r = memo({ShapeOpKind::Expect, a, b, labelIndex()});
    label = saved;
    return r;
  }
  /// The op whose shape rules build registers next (named in run-time errors).
  void setLabel(const std::string &name) { label = name; }
  const std::vector<std::string> &labels() const { return labelList; }
  Reg product(const std::vector<Reg> &regs, size_t begin, size_t end) {
    Reg p = constant(1);
    for (size_t i = begin; i < end; ++i) p = mul(p, regs[i]);
    return p;
  }
  const std::vector<ShapeInstruction> &instructions() const { return instrs; }

private:
  int64_t labelIndex() {
    if (label.empty()) return -1;
    auto it = labelIds.find(label);
    if (it != labelIds.end()) return it->second;
    labelList.push_back(label);
    return labelIds[label] = int64_t(labelList.size()) - 1;
  }
  std::string label;
  std::vector<std::string> labelList;
  std::map<std::string, int64_t> labelIds;
  Reg append(ShapeInstruction i) {
    instrs.push_back(i);
    return instrs.size() - 1;
  }
  Reg memo(ShapeInstruction i) {
    auto key = std::make_tuple(uint8_t(i.op), i.a, i.b, i.imm);
    auto it = memoized.find(key);
    if (it != memoized.end()) return it->second;
    Reg r = append(i);
    memoized[key] = r;
    return r;
  }
  Reg binary(ShapeOpKind op, Reg a, Reg b) {
    auto ca = constValue(a), cb = constValue(b);
    if (ca && cb) {
      // Folded only when exact: an operation that overflows int64 stays in
      // the program, where the runtime's evaluator reports the overflow if
      // the value is ever computed (found by fuzzing: an absurd constant
      // axis folded into signed overflow at compile time).
      int64_t x = *ca, y = *cb, r;
      const int64_t kMin = std::numeric_limits<int64_t>::min();
      switch (op) {
      case ShapeOpKind::Add:
        if (!__builtin_add_overflow(x, y, &r)) return constant(r);
        break;
      case ShapeOpKind::Sub:
        if (!__builtin_sub_overflow(x, y, &r)) return constant(r);
        break;
      case ShapeOpKind::Mul:
        if (!__builtin_mul_overflow(x, y, &r)) return constant(r);
        break;
      case ShapeOpKind::FloorDiv:
        if (y != 0 && !(x == kMin && y == -1)) return constant(x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
        break;
      case ShapeOpKind::CeilDiv:
        if (y != 0 && x != kMin && !(-x == kMin && y == -1))
          return constant(-((-x) / y - (((-x) % y != 0) && (((-x) < 0) != (y < 0)))));
        break;
      case ShapeOpKind::Max: return constant(x > y ? x : y);
      case ShapeOpKind::Min: return constant(x < y ? x : y);
      case ShapeOpKind::Lt: return constant(x < y ? 1 : 0);
      case ShapeOpKind::Eq: return constant(x == y ? 1 : 0);
      default: break;
      }
    }
    if (op == ShapeOpKind::Mul && ca && *ca == 1) return b;
    if ((op == ShapeOpKind::Mul || op == ShapeOpKind::FloorDiv || op == ShapeOpKind::CeilDiv) && cb && *cb == 1)
      return a;
    if ((op == ShapeOpKind::Add || op == ShapeOpKind::Sub) && cb && *cb == 0) return a;
    if (op == ShapeOpKind::Add && ca && *ca == 0) return b;
    return memo({op, a, b, 0});
  }

  std::vector<ShapeInstruction> instrs;
  std::map<int64_t, Reg> constants;
  std::map<std::tuple<uint8_t, uint32_t, uint32_t, int64_t>, Reg> memoized;
};

} // namespace v4f

#endif
