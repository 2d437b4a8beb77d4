// shape_program.cpp - the shape program interpreter (checked int64 arithmetic).
#include "shape_program.h"

#include "v4f/artifact_format.h"

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
// Element b (width bytes) of input a, whose values the shapes depend on:
// checked against its element count and byte size, and that it has data.
v4f_status_t inputElement(const v4f_tensor_t* inputs, uint32_t a, uint32_t b, size_t width, const char** out) {
  const v4f_tensor_t& t = inputs[a];
  uint64_t count = 1;
  for (int32_t d = 0; d < t.rank; ++d) count *= static_cast<uint64_t>(t.dims[d]);
  if (b >= count || (uint64_t(b) + 1) * width > t.byte_size)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                      "input %u has %llu elements, but the model's shapes need element %u of it", a,
                      static_cast<unsigned long long>(count), b);
  if (!t.data)
    return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "the values of input %u determine output shapes: pass its data", a);
  *out = static_cast<const char*>(t.data) + size_t(b) * width;
  return nullptr;
}
const char* opName(fb::ShapeOp op) {
  const char* name = fb::EnumNameShapeOp(op);
  return name && *name ? name : "?";
}
} // namespace

v4f_status_t evalShapeProgram(const fb::Manifest* manifest, const v4f_tensor_t* inputs, int64_t* regs, bool* known,
                              const DataValues* data) {
  const auto* program = manifest->shape_program();
  if (!program) return nullptr;
  bool* prov = data ? data->provisional : nullptr;
  for (uint32_t i = 0; i < program->size(); ++i) {
    const fb::ShapeInstr* ins = program->Get(i);
    uint32_t a = ins->a(), b = ins->b();
    int64_t r = 0;
    bool ok = true;
    bool isKnown = true;
    bool pending = false; // r is still a bound (DataValues::provisional)
    switch (ins->op()) {
    case fb::ShapeOp::Const: r = ins->imm(); break;
    case fb::ShapeOp::InputDim:
      if (inputs) {
        r = inputs[a].dims[b];
      } else {
        isKnown = false;
      }
      break;
    case fb::ShapeOp::InputValue: {
      if (!inputs) {
        isKnown = false;
        break;
      }
      const size_t width = inputs[a].dtype == V4F_DTYPE_INT64 ? 8 : 4;
      const char* at = nullptr;
      if (v4f_status_t s = inputElement(inputs, a, b, width, &at)) return s;
      if (width == 8) {
        int64_t v;
        __builtin_memcpy(&v, at, 8);
        r = v;
      } else {
        int32_t v;
        __builtin_memcpy(&v, at, 4);
        r = v;
      }
      break;
    }
    case fb::ShapeOp::LoopIndex: r = data && data->loopIndex ? data->loopIndex[a] : 0; break;
    case fb::ShapeOp::LoopCount: {
      uint32_t c = static_cast<uint32_t>(ins->imm());
      if (known && !known[c]) {
        isKnown = false;
        break;
      }
      bool ended = data && data->loopCount && data->loopCount[a] >= 0;
      r = ended ? data->loopCount[a] : regs[c];
      pending = !ended || (prov && prov[c]);
      break;
    }
    case fb::ShapeOp::DataValue: {
      uint32_t c = static_cast<uint32_t>(ins->imm());
      if (known && !known[c]) {
        isKnown = false;
        break;
      }
      r = regs[c];
      pending = true; // the bound, until the producer has run
      const fb::Buffer* buf = manifest->buffers()->Get(a);
      if (data && data->cached[i]) {
        pending = false;
        r = data->cache[i];
      } else if (data && data->dispatchesRun > buf->first_use() && data->bufferPtrs[a] &&
                 !(data->skipped && data->skipped[buf->first_use()])) {
        int64_t v;
        __builtin_memcpy(&v, static_cast<const char*>(data->bufferPtrs[a]) + size_t(b) * 8, 8);
        if (v < 0 || v > r)
          return makeStatus(V4F_STATUS_KERNEL_ERROR,
                            "shape program instruction %u: a data-dependent size is %lld, outside "
                            "its bound [0, %lld]",
                            i, static_cast<long long>(v), static_cast<long long>(r));
        r = v;
        pending = false;
        data->cache[i] = v;
        data->cached[i] = true;
      }
      break;
    }
    case fb::ShapeOp::InputScaledDim: {
      uint32_t c = static_cast<uint32_t>(ins->imm());
      if (!inputs || (known && !known[c])) {
        isKnown = false;
        break;
      }
      pending = prov && prov[c];
      const char* at = nullptr;
      if (v4f_status_t s = inputElement(inputs, a, b, 4, &at)) return s;
      float v;
      __builtin_memcpy(&v, at, 4);
      double scaled = static_cast<double>(v) * static_cast<double>(regs[c]);
      // NaN fails both comparisons; sizes stay below 2^40.
      if (!(scaled >= 0.0 && scaled < 1099511627776.0))
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "element %u of input %u (%g) scales dim %lld to an invalid size",
                          b, a, static_cast<double>(v), static_cast<long long>(regs[c]));
      r = static_cast<int64_t>(__builtin_floor(scaled));
      break;
    }
    case fb::ShapeOp::Select: {
      uint32_t c = static_cast<uint32_t>(ins->imm());
      if (known && !(known[a] && known[b] && known[c])) {
        isKnown = false;
        break;
      }
      r = regs[c] != 0 ? regs[a] : regs[b];
      pending = prov && (prov[a] || prov[b] || prov[c]);
      break;
    }
    default: {
      if (known && !(known[a] && known[b])) {
        isKnown = false;
        break;
      }
      int64_t x = regs[a], y = regs[b];
      pending = prov && (prov[a] || prov[b]);
      if (ins->op() == fb::ShapeOp::Expect) {
        if (x != y && !pending) {
          const char* label =
              ins->imm() >= 0 && manifest->shape_labels() && uint64_t(ins->imm()) < manifest->shape_labels()->size()
                  ? manifest->shape_labels()->Get(uint32_t(ins->imm()))->c_str()
                  : "an op";
          return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "%s (%lld where %lld is required)", label,
                            static_cast<long long>(x), static_cast<long long>(y));
        }
        r = x;
        break;
      }
      if (ins->op() == fb::ShapeOp::Broadcast) {
        if (x == y || y == 1) {
          r = x;
        } else if (x == 1) {
          r = y;
        } else if (pending) {
          r = x > y ? x : y; // a bound; checked once final
        } else {
          const char* label =
              ins->imm() >= 0 && manifest->shape_labels() && uint64_t(ins->imm()) < manifest->shape_labels()->size()
                  ? manifest->shape_labels()->Get(uint32_t(ins->imm()))->c_str()
                  : "an op";
          return makeStatus(V4F_STATUS_INVALID_ARGUMENT,
                            "%s: dims %lld and %lld cannot be broadcast together (they must be equal or one "
                            "of them 1)",
                            label, static_cast<long long>(x), static_cast<long long>(y));
        }
        break;
      }
      switch (ins->op()) {
      case fb::ShapeOp::Add: ok = !__builtin_add_overflow(x, y, &r); break;
      case fb::ShapeOp::Sub: ok = !__builtin_sub_overflow(x, y, &r); break;
      case fb::ShapeOp::Mul: ok = !__builtin_mul_overflow(x, y, &r); break;
      case fb::ShapeOp::FloorDiv: ok = floorDiv(x, y, &r); break;
      case fb::ShapeOp::CeilDiv: ok = ceilDiv(x, y, &r); break;
      case fb::ShapeOp::Max: r = x > y ? x : y; break;
      case fb::ShapeOp::Min: r = x < y ? x : y; break;
      case fb::ShapeOp::Lt: r = x < y ? 1 : 0; break;
      case fb::ShapeOp::Eq: r = x == y ? 1 : 0; break;
      default: ok = false; break;
      }
      if (!ok)
        return makeStatus(V4F_STATUS_INVALID_ARGUMENT, "shape program instruction %u (%s r%u=%lld, r%u=%lld) %s", i,
                          opName(ins->op()), a, static_cast<long long>(x), b, static_cast<long long>(y),
                          (ins->op() == fb::ShapeOp::FloorDiv || ins->op() == fb::ShapeOp::CeilDiv) && y == 0
                              ? "divides by zero"
                              : "overflows int64");
    }
    }
    regs[i] = isKnown ? r : 0;
    if (known) known[i] = isKnown;
    if (prov) prov[i] = pending;
  }
  return nullptr;
}

} // namespace rt
} // namespace v4f
