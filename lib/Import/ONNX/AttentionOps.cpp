//===- AttentionOps.cpp - ONNX Attention -> v4f.attention -----------------===//
//
// Attention (opset 23+) imports whole as v4f.attention; v4f-decompose-attention
// lowers it. The importer checks the attributes and the operands
// (resolveAttentionShape, shared with the op's verifier) so that a bad node
// is reported at import with its name, resolves the head counts of 4-D
// inputs and the default scale 1/sqrt(head_size).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include <cmath>

using namespace mlir;

namespace v4f {
namespace {

std::string checkAttention(const NodeAttrs &a, int64_t) {
  int64_t mode = a.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return "qk_matmul_output_mode must be 0, 1, 2 or 3 (got " + std::to_string(mode) + ")";
  for (const char *name : {"left_window_size", "right_window_size"})
    if (a.getInt(name, -1) < -1) return std::string(name) + " must be -1 or non-negative";
  if (a.has("softmax_precision")) {
    int64_t p = a.getInt("softmax_precision", 0);
    if (p != onnx::TensorProto::FLOAT && p != onnx::TensorProto::FLOAT16 && p != onnx::TensorProto::DOUBLE &&
        p != onnx::TensorProto::BFLOAT16)
      return "softmax_precision must be a floating-point type";
  }
  for (const char *name : {"q_num_heads", "kv_num_heads"})
    if (a.has(name) && a.getInt(name, 0) <= 0) return std::string(name) + " must be positive";
  return "";
}

LogicalResult importAttention(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1) || !c.hasInput(2)) return c.fail("Q, K and V are required");
  for (int i = 0; i < 3; ++i) {
    Type t = c.inputType(i).getElementType();
    if (!t.isF32() && !t.isF16() && !t.isBF16())
      return c.fail("input " + std::to_string(i) + " ('" + c.node.input(i) +
                    "') must be float32, float16 or bfloat16 (v4f computes Attention with its float32-only matmul)");
  }
  auto optionalType = [&](size_t i) { return c.hasInput(i) ? c.inputType(i) : RankedTensorType(); };
  auto optionalInput = [&](size_t i) { return c.hasInput(i) ? c.input(i) : Value(); };
  int64_t rank = c.inputType(0).getRank();
  if (rank == 3 && (!c.attrs.has("q_num_heads") || !c.attrs.has("kv_num_heads")))
    return c.fail("3-D inputs need the q_num_heads and kv_num_heads attributes");
  AttentionShape s;
  std::string error = resolveAttentionShape(c.inputType(0), c.inputType(1), c.inputType(2), optionalType(4),
                                            optionalType(5), optionalType(3), optionalType(6),
                                            c.attrs.getInt("q_num_heads", 0), c.attrs.getInt("kv_num_heads", 0), s);
  if (!error.empty()) return c.fail(error);
  // The default scale 1/sqrt(head_size) of a head size known only at run
  // time is written as 0 (v4f-decompose-attention computes it there).
  constexpr int64_t kDyn = ShapedType::kDynamic;
  double scale = c.attrs.has("scale") ? (double)c.attrs.getFloat("scale", 1.f)
                 : s.D == kDyn        ? 0.0
                                      : 1.0 / std::sqrt((double)s.D);
  if (c.attrs.has("scale") && !(scale > 0))
    return c.fail("scale must be positive (both Q and K are scaled by its square root)");

  Type io = c.inputType(0).getElementType();
  auto typed = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, io); };
  SmallVector<int64_t> y = rank == 3 ? SmallVector<int64_t>{s.B, s.S, attentionHidden(s.Hq, s.Dv)}
                                     : SmallVector<int64_t>{s.B, s.Hq, s.S, s.Dv};
  auto heads = [](int64_t h) { return h == kDyn ? 0 : h; }; // 0: read from the 4-D inputs at run time
  OpBuilder &b = c.b;
  auto op = b.create<AttentionOp>(
      c.loc,
      TypeRange{typed(y), typed({s.B, s.Hkv, s.L, s.D}), typed({s.B, s.Hkv, s.L, s.Dv}), typed({s.B, s.Hq, s.S, s.L})},
      c.input(0), c.input(1), c.input(2), optionalInput(3), optionalInput(4), optionalInput(5), optionalInput(6),
      b.getI64IntegerAttr(heads(s.Hq)), b.getI64IntegerAttr(heads(s.Hkv)), b.getF32FloatAttr((float)scale),
      b.getF32FloatAttr(c.attrs.getFloat("softcap", 0.f)), b.getBoolAttr(c.attrs.getInt("is_causal", 0) != 0),
      b.getI64IntegerAttr(c.attrs.getInt("left_window_size", -1)),
      b.getI64IntegerAttr(c.attrs.getInt("right_window_size", -1)),
      b.getI64IntegerAttr(c.attrs.getInt("qk_matmul_output_mode", 0)));
  for (size_t i = 0; i < 4; ++i)
    if (c.outputUsed(i)) c.setOutput(i, op->getResult(i));
  return success();
}

} // namespace

void addAttentionImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Attention"] = {23, kMaxOpset, checkAttention, importAttention};
}

} // namespace v4f
