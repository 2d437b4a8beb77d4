// shape_program.cpp - the shape program interpreter (checked int64 arithmetic).
#include "shape_program.h"

namespace v4f {
namespace rt {

namespace {
bool floorDiv(int64_t a, int64_t b, int64_t* out) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  *out = q;
  return true;
}
bool ceilDiv(int64_t a, int64_t b, int64_t* out) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  *out = q;
  return true;
}
const char* opName(fb::ShapeOp op) {
  const char* name = fb::EnumNameShapeOp(op);
  return name && *name ? name : "?";
}
}  // namespace

v4f_status_t evalShapeProgram(const fb::Manifest* manifest, const v4f_tensor_t* inputs,
                              int64_t* regs, bool* known) {
  const auto* program = manifest->shape_program();
  if (!program) return nullptr;
  for (uint32_t i = 0; i < program->size(); ++i) {
    const fb::ShapeInstr* ins = program->Get(i);
    uint32_t a = ins->a(), b = ins->b();
    int64_t r = 0;
    bool ok = true;
    bool isKnown = true;
    switch (ins->op()) {
      case fb::ShapeOp::Const:
        r = ins->imm();
        break;
      case fb::ShapeOp::InputDim:
        if (inputs) {
          r = inputs[a].dims[b];
        } else {
          isKnown = false;
        }
        break;
      default: {
        if (known && !(known[a] && known[b])) {
          isKnown = false;
          break;
        }
        int64_t x = regs[a], y = regs[b];
        switch (ins->op()) {
          case fb::ShapeOp::Add: ok = !__builtin_add_overflow(x, y, &r); break;
          case fb::ShapeOp::Sub: ok = !__builtin_sub_overflow(x, y, &r); break;
          case fb::ShapeOp::Mul: ok = !__builtin_mul_overflow(x, y, &r); break;
          case fb::ShapeOp::FloorDiv: ok = floorDiv(x, y, &r); break;
          case fb::ShapeOp::CeilDiv: ok = ceilDiv(x, y, &r); break;
          case fb::ShapeOp::Max: r = x > y ? x : y; break;
          case fb::ShapeOp::Min: r = x < y ? x : y; break;
          default: ok = false; break;
        }
        if (!ok)
          return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                            "shape program instruction %u (%s r%u=%lld, r%u=%lld) %s", i,
                            opName(ins->op()), a, static_cast<long long>(x), b,
                            static_cast<long long>(y),
                            (ins->op() == fb::ShapeOp::FloorDiv ||
                             ins->op() == fb::ShapeOp::CeilDiv) && y == 0
                                ? "divides by zero"
                                : "overflows int64");
      }
    }
    regs[i] = isKnown ? r : 0;
    if (known) known[i] = isKnown;
  }
  return nullptr;
}

}  // namespace rt
}  // namespace v4f
