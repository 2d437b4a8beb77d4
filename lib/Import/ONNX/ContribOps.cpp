//===- ContribOps.cpp - ONNX Runtime's contrib ops of transformer models ---===//
//
// The com.microsoft operators (and SimplifiedLayerNormalization, which ONNX
// Runtime registers in the default domain) that ONNX Runtime's transformer
// optimizer and the GenAI model builder write, as the standard ops they
// compute, through the importer table:
//
//  - SimplifiedLayerNormalization: RMSNormalization (x / sqrt(mean(x^2) +
//    epsilon) * scale over the dims from `axis`);
//  - SkipSimplifiedLayerNormalization / SkipLayerNormalization: s = input +
//    skip (+ bias), then RMS / layer normalization of s with gamma (and
//    beta); output 3 is s itself (the residual stream the next block adds);
//    outputs 1 and 2 (mean, inverse std) are not produced;
//  - Gelu (exact), BiasGelu (Gelu(a + b)), FastGelu (the tanh form, optional
//    bias), QuickGelu (x * sigmoid(alpha x));
//  - RotaryEmbedding: ONNX's, its inputs reordered (a one-element
//    position_ids is the first token's position);
//  - GroupQueryAttention: ONNX's Attention with the past and a mask aligned
//    to the past's end (rotary first with do_rotary);
//  - MatMulNBits (4-bit blocks): v4f.int4_matmul, the weight kept int4.
//
// The standard ops are written at opset 23 (RMSNormalization's first).
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "GraphWriter.h"

using namespace mlir;

namespace v4f {
namespace {

using controlflow::Bound;
using controlflow::runNode;
using controlflow::scalarF32;
using controlflow::scalarI64;
using controlflow::vectorI64;

FailureOr<Bound> in(NodeContext &c, size_t i) {
  auto b = controlflow::lookup(c.g, c.node.input(int(i)));
  if (!b) return c.fail("input " + std::to_string(i) + " is not defined");
  return *b;
}

void addFloatAttr(onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

/// RMS (`rms`) or layer normalization of `x` over the dims from `axis`.
FailureOr<Bound> normalize(NodeContext &c, bool rms, const Bound &x, const Bound &scale, const Bound *bias,
                           int64_t axis, float epsilon) {
  std::vector<Bound> ins = {x, scale};
  if (bias) ins.push_back(*bias);
  return runNode(c, rms ? "RMSNormalization" : "LayerNormalization", ins, [&](onnx::NodeProto &n) {
    controlflow::addIntAttr(n, "axis", axis);
    addFloatAttr(n, "epsilon", epsilon);
  });
}

LogicalResult importSimplifiedLayerNorm(NodeContext &c) {
  auto x = in(c, 0), scale = in(c, 1);
  if (failed(x) || failed(scale)) return failure();
  controlflow::ScopedOpset opset(c, 23);
  auto y = normalize(c, true, *x, *scale, nullptr, c.attrs.getInt("axis", -1), c.attrs.getFloat("epsilon", 1e-5f));
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  if (c.outputUsed(1)) return c.fail("output 1 (inv_std_var) is not supported");
  return success();
}

/// SkipLayerNormalization (`rms` false: inputs input, skip, gamma, beta,
/// bias) and SkipSimplifiedLayerNormalization (input, skip, gamma, bias).
LogicalResult importSkipNorm(NodeContext &c, bool rms) {
  auto x = in(c, 0), skip = in(c, 1), gamma = in(c, 2);
  if (failed(x) || failed(skip) || failed(gamma)) return failure();
  if (c.outputUsed(1) || c.outputUsed(2)) return c.fail("outputs 1 and 2 (mean, inv_std_var) are not supported");
  controlflow::ScopedOpset opset(c, 23);
  auto sum = runNode(c, "Add", {*x, *skip});
  if (failed(sum)) return failure();
  size_t biasInput = rms ? 3 : 4;
  if (c.hasInput(biasInput)) {
    auto bias = in(c, biasInput);
    if (failed(bias)) return failure();
    sum = runNode(c, "Add", {*sum, *bias});
    if (failed(sum)) return failure();
  }
  FailureOr<Bound> beta = failure();
  if (!rms && c.hasInput(3)) {
    beta = in(c, 3);
    if (failed(beta)) return failure();
  }
  auto y = normalize(c, rms, *sum, *gamma, succeeded(beta) ? &*beta : nullptr, -1, c.attrs.getFloat("epsilon", 1e-5f));
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  if (c.outputUsed(3)) controlflow::bindName(c.g, c.node.output(3), *sum);
  return success();
}

/// Gelu of the sum of the inputs present (exact, or the tanh form).
LogicalResult importGeluOf(NodeContext &c, bool tanhForm) {
  auto x = in(c, 0);
  if (failed(x)) return failure();
  controlflow::ScopedOpset opset(c, 23);
  Bound v = *x;
  if (c.hasInput(1)) {
    auto b = in(c, 1);
    if (failed(b)) return failure();
    auto s = runNode(c, "Add", {v, *b});
    if (failed(s)) return failure();
    v = *s;
  }
  auto y = runNode(c, "Gelu", {v}, [&](onnx::NodeProto &n) {
    if (!tanhForm) return;
    auto *a = n.add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("tanh");
  });
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

LogicalResult importQuickGelu(NodeContext &c) {
  auto x = in(c, 0);
  if (failed(x)) return failure();
  controlflow::ScopedOpset opset(c, 23);
  float alpha = c.attrs.getFloat("alpha", 1.702f);
  auto t = llvm::cast<RankedTensorType>(x->type());
  if (!t.getElementType().isF32()) return c.fail("X must be float32");
  Bound a{{}, DenseElementsAttr::get(RankedTensorType::get({}, t.getElementType()), alpha)};
  auto ax = runNode(c, "Mul", {*x, a});
  if (failed(ax)) return failure();
  auto s = runNode(c, "Sigmoid", {*ax});
  if (failed(s)) return failure();
  auto y = runNode(c, "Mul", {*x, *s});
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

/// com.microsoft RotaryEmbedding (input, position_ids, cos_cache,
/// sin_cache): ONNX's RotaryEmbedding with its inputs reordered; position_ids
/// of one element is the offset of the sequence's first token (positions
/// offset + 0 .. S - 1 for every row).
LogicalResult importMsRotary(NodeContext &c) {
  auto x = in(c, 0), pos = in(c, 1), cosC = in(c, 2), sinC = in(c, 3);
  if (failed(x) || failed(pos) || failed(cosC) || failed(sinC)) return failure();
  if (c.attrs.getInt("is_packed_batching", 0)) return c.fail("is_packed_batching is not supported");
  controlflow::ScopedOpset opset(c, 23);
  auto xt = llvm::cast<RankedTensorType>(x->type());
  auto pt = llvm::dyn_cast<RankedTensorType>(pos->type());
  if (!pt || !pt.getElementType().isSignlessInteger(64)) return c.fail("position_ids must be int64");
  Bound positions = *pos;
  if (pt.getRank() == 1 && pt.hasStaticShape() && pt.getNumElements() == 1) {
    int64_t seqAxis = xt.getRank() == 4 ? 2 : 1;
    auto shape = runNode(c, "Shape", {*x});
    if (failed(shape)) return failure();
    auto batch = runNode(c, "Slice", {*shape, vectorI64(c, {0}), vectorI64(c, {1}), vectorI64(c, {0})});
    auto seq = runNode(c, "Slice", {*shape, vectorI64(c, {seqAxis}), vectorI64(c, {seqAxis + 1}), vectorI64(c, {0})});
    if (failed(batch) || failed(seq)) return failure();
    auto seqScalar = runNode(c, "Reshape", {*seq, vectorI64(c, {})});
    auto zero = scalarI64(c, 0), one = scalarI64(c, 1);
    if (failed(seqScalar)) return failure();
    auto range = runNode(c, "Range", {zero, *seqScalar, one});
    if (failed(range)) return failure();
    auto offset = runNode(c, "Add", {*range, *pos});
    if (failed(offset)) return failure();
    auto bs = runNode(c, "Concat", {*batch, *seq}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); });
    if (failed(bs)) return failure();
    auto expanded = runNode(c, "Expand", {*offset, *bs});
    if (failed(expanded)) return failure();
    positions = *expanded;
  }
  auto y = runNode(c, "RotaryEmbedding", {*x, *cosC, *sinC, positions}, [&](onnx::NodeProto &n) {
    for (const char *name : {"interleaved", "num_heads", "rotary_embedding_dim"})
      if (c.attrs.has(name)) controlflow::addIntAttr(n, name, c.attrs.getInt(name, 0));
  });
  if (failed(y)) return failure();
  controlflow::bindName(c.g, c.node.output(0), *y);
  return success();
}

/// GroupQueryAttention (query, key, value [B, S, heads x H] or one packed
/// query [B, S, (heads + 2 kv_heads) x H], past_key /
/// past_value [B, kv_heads, P, H], seqlens_k, total_sequence_length, cos /
/// sin caches): ONNX's Attention with the past, and a mask that lets query
/// i see keys 0 .. P + i; with do_rotary, q and k rotated at positions P ..
/// P + S - 1 first. The past holds exactly the P tokens before these (its
/// buffer is not shared with present) and every row has the same length:
/// seqlens_k and total_sequence_length are not read.
LogicalResult importGroupQueryAttention(NodeContext &c) {
  const int64_t heads = c.attrs.getInt("num_heads", 0), kvHeads = c.attrs.getInt("kv_num_heads", 0);
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads) return c.fail("num_heads must be a multiple of kv_num_heads");
  for (const char *name : {"local_window_size", "softcap", "smooth_softmax"})
    if (c.attrs.has(name) && c.attrs.getFloat(name, 0) != 0 &&
        !(std::string(name) == "local_window_size" && c.attrs.getInt(name, -1) == -1))
      return c.fail(std::string("attribute '") + name + "' is not supported");
  // Packed QKV (the model builder's): query is [B, S, (heads + 2 kv_heads) H].
  const bool packed = !c.hasInput(1) && !c.hasInput(2);
  if (!packed && (!c.hasInput(1) || !c.hasInput(2))) return c.fail("key and value must both be given or both absent");
  int64_t headSize = 0;
  if (packed) {
    auto qt = c.inputType(0);
    int64_t last = qt.getRank() == 3 ? qt.getDimSize(2) : kDyn;
    if (last == kDyn || last % (heads + 2 * kvHeads))
      return c.fail("packed QKV needs a static last dim divisible by num_heads + 2 kv_num_heads");
    headSize = last / (heads + 2 * kvHeads);
  }
  if (!c.hasInput(3) || !c.hasInput(4)) return c.fail("past_key and past_value are required");
  for (size_t i : {9, 10, 11})
    if (c.hasInput(i))
      return c.fail("input " + std::to_string(i) + " (position ids, attention bias, head sink) is not supported");
  bool rotary = c.attrs.getInt("do_rotary", 0) != 0;
  if (rotary && (!c.hasInput(7) || !c.hasInput(8))) return c.fail("do_rotary needs cos_cache and sin_cache");

  onnx::GraphProto g;
  g.set_name(c.node.name() + " (expansion)");
  const std::string p = "#gqa/";
  std::vector<controlflow::Bound> bound;
  std::vector<size_t> used = packed ? std::vector<size_t>{0, 3, 4} : std::vector<size_t>{0, 1, 2, 3, 4};
  if (rotary) used.insert(used.end(), {7, 8});
  for (size_t i : used) {
    auto b = in(c, i);
    if (failed(b)) return failure();
    g.add_input()->set_name(p + std::to_string(i));
    bound.push_back(*b);
  }
  auto name = [&](size_t i) { return p + std::to_string(i); };
  GraphWriter w(g, p, 23);
  auto i64 = [&](int64_t v) { return w.i64s({v}); };
  std::string past = w.slice(w.op("Shape", {name(3)}), 2, 3, 0);  // [P]
  std::string seq = w.slice(w.op("Shape", {name(0)}), 1, 2, 0);   // [S]
  std::string batch = w.slice(w.op("Shape", {name(0)}), 0, 1, 0); // [B]
  std::string total = w.op("Add", {past, seq});                   // [P + S]
  auto scalar = [&](const std::string &v) { return w.op("Reshape", {v, w.i64s({})}); };
  std::string zero = w.i64s({0}, true), one = w.i64s({1}, true);
  std::string qPos = w.op("Range", {scalar(past), scalar(total), one}); // P .. P + S - 1
  std::string q = name(0), k = name(1), v = name(2);
  if (packed) {
    auto parts = w.opN("Split", {name(0), w.i64s({heads * headSize, kvHeads * headSize, kvHeads * headSize})}, 3,
                       [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 2); });
    q = parts[0], k = parts[1], v = parts[2];
  }
  if (rotary) {
    std::string positions = w.op(
        "Expand", {w.op("Unsqueeze", {qPos, i64(0)}),
                   w.op("Concat", {batch, seq}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); })});
    auto rotate = [&](const std::string &x, int64_t n) {
      return w.op("RotaryEmbedding", {x, name(7), name(8), positions}, [&](onnx::NodeProto &node) {
        controlflow::addIntAttr(node, "num_heads", n);
        controlflow::addIntAttr(node, "interleaved", c.attrs.getInt("rotary_interleaved", 0));
      });
    };
    q = rotate(q, heads), k = rotate(k, kvHeads);
  }
  // mask[i, j] = j <= P + i
  std::string keys = w.op("Range", {zero, scalar(total), one});
  std::string mask = w.op("LessOrEqual", {w.op("Unsqueeze", {keys, i64(0)}), w.op("Unsqueeze", {qPos, i64(1)})});
  auto outs = w.opN("Attention", {q, k, v, mask, name(3), name(4)}, 3, [&](onnx::NodeProto &n) {
    controlflow::addIntAttr(n, "q_num_heads", heads);
    controlflow::addIntAttr(n, "kv_num_heads", kvHeads);
    if (c.attrs.has("scale") && c.attrs.getFloat("scale", 0) != 0)
      addFloatAttr(n, "scale", c.attrs.getFloat("scale", 0));
  });
  for (const auto &o : outs) g.add_output()->set_name(o);
  controlflow::ScopedOpset opset(c, 23);
  auto res = controlflow::importSubgraph(c, g, bound, "expansion");
  if (failed(res)) return failure();
  for (size_t i = 0; i < 3; ++i)
    if (c.outputUsed(i)) controlflow::bindName(c.g, c.node.output(int(i)), (*res)[i]);
  return success();
}

/// `a` [..., K] quantized per block of `bs` along K as ONNX Runtime's
/// MatMulNBits does at accuracy_level 4, returned dequantized (q x scale).
FailureOr<Bound> quantizeBlocks(NodeContext &c, const Bound &a, int64_t K, int64_t bs) {
  controlflow::ScopedOpset opset(c, 23);
  const int64_t blocks = (K + bs - 1) / bs, padded = blocks * bs;
  int64_t rank = llvm::cast<RankedTensorType>(a.type()).getRank();
  FailureOr<Bound> x = a;
  if (padded != K) {
    std::vector<int64_t> pads(2 * rank, 0);
    pads[2 * rank - 1] = padded - K;
    x = runNode(c, "Pad", {a, vectorI64(c, pads)});
    if (failed(x)) return failure();
  }
  // [..., K] -> [..., blocks, bs]: the leading dims as they are (0 copies).
  std::vector<int64_t> blocked(rank - 1, 0);
  blocked.push_back(blocks), blocked.push_back(bs);
  auto xb = runNode(c, "Reshape", {*x, vectorI64(c, blocked)});
  if (failed(xb)) return failure();
  auto absx = runNode(c, "Abs", {*xb});
  if (failed(absx)) return failure();
  auto amax = runNode(c, "ReduceMax", {*absx, vectorI64(c, {-1})},
                      [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "keepdims", 1); });
  if (failed(amax)) return failure();
  auto isZero = runNode(c, "Equal", {*amax, scalarF32(c, 0.0f)});
  if (failed(isZero)) return failure();
  auto safe = runNode(c, "Where", {*isZero, scalarF32(c, 1.0f), *amax});
  if (failed(safe)) return failure();
  auto inv = runNode(c, "Div", {scalarF32(c, 127.0f), *safe});
  auto scale = runNode(c, "Div", {*amax, scalarF32(c, 127.0f)});
  if (failed(inv) || failed(scale)) return failure();
  auto q = runNode(c, "Mul", {*xb, *inv});
  if (succeeded(q)) q = runNode(c, "Round", {*q});
  if (succeeded(q)) q = runNode(c, "Mul", {*q, *scale});
  if (failed(q)) return failure();
  std::vector<int64_t> flat(rank - 1, 0);
  flat.push_back(padded);
  auto y = runNode(c, "Reshape", {*q, vectorI64(c, flat)});
  if (failed(y) || padded == K) return y;
  return runNode(c, "Slice", {*y, vectorI64(c, {0}), vectorI64(c, {K}), vectorI64(c, {-1})});
}

/// MatMulNBits (4 bits): A [..., K] float times the block-quantized weight
/// B [N, blocks, block_size / 2] (two unsigned nibbles per byte, low first),
/// per-block scales [N * blocks] and zero points (packed nibbles, default 8),
/// as v4f.int4_matmul (rhs [K, N] = q - 8, zero point zp - 8): the weight
/// stays int4 in the artifact. At accuracy_level 4 the activations are first
/// rounded to int8 per block as ONNX Runtime does (quantizeBlocks); the
/// products are then summed in float.
LogicalResult importMatMulNBits(NodeContext &c) {
  const int64_t K = c.attrs.getInt("K", 0), N = c.attrs.getInt("N", 0), bits = c.attrs.getInt("bits", 4),
                bs = c.attrs.getInt("block_size", 0);
  if (bits != 4) return c.fail("bits = " + std::to_string(bits) + " is not supported (4 only)");
  if (K <= 0 || N <= 0 || bs < 16 || (bs & (bs - 1)))
    return c.fail("K, N and block_size (a power of 2, >= 16) are required");
  if (c.hasInput(4)) return c.fail("input g_idx is not supported");
  auto at = c.inputType(0);
  if (!at.getElementType().isF32()) return c.fail("A must be float32");
  if (at.getRank() < 2 || (!at.isDynamicDim(at.getRank() - 1) && at.getDimSize(at.getRank() - 1) != K))
    return c.fail("A must be [..., M, " + std::to_string(K) + "]");
  auto bq = c.constantInput(1), scales = c.constantInput(2);
  if (!bq || !scales) return c.fail("B and scales must be constants");
  const int64_t blocks = (K + bs - 1) / bs, blob = bs / 2;
  if (!bq->getElementType().isInteger(8) || bq->getNumElements() != N * blocks * blob)
    return c.fail("B must be uint8 [" + std::to_string(N) + ", " + std::to_string(blocks) + ", " +
                  std::to_string(blob) + "]");
  if (!scales->getElementType().isF32() || scales->getNumElements() != N * blocks)
    return c.fail("scales must be float32 with N x blocks = " + std::to_string(N * blocks) + " values");
  std::optional<DenseElementsAttr> zps;
  const int64_t zpRow = (blocks + 1) / 2;
  if (c.hasInput(3)) {
    zps = c.constantInput(3);
    if (!zps || !zps->getElementType().isInteger(8) || zps->getNumElements() != N * zpRow)
      return c.fail("zero_points must be constant uint8 nibbles, " + std::to_string(N * zpRow) + " bytes");
  }
  std::vector<APInt> bytes(bq->getValues<APInt>().begin(), bq->getValues<APInt>().end());
  std::vector<float> sc(scales->getValues<float>().begin(), scales->getValues<float>().end());
  std::vector<int8_t> rhs(K * N), zpT;
  std::vector<float> scaleT(blocks * N);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      scaleT[blk * N + n] = sc[n * blocks + blk];
      for (int64_t i = 0; i < blob; ++i) {
        uint64_t byte = bytes[(n * blocks + blk) * blob + i].getZExtValue();
        for (int64_t half = 0; half < 2; ++half) {
          int64_t k = blk * bs + 2 * i + half;
          if (k < K) rhs[k * N + n] = int8_t(int64_t(half ? byte >> 4 : byte & 15) - 8);
        }
      }
    }
  if (zps) {
    std::vector<APInt> z(zps->getValues<APInt>().begin(), zps->getValues<APInt>().end());
    zpT.resize(blocks * N);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        uint64_t byte = z[n * zpRow + blk / 2].getZExtValue();
        zpT[blk * N + n] = int8_t(int64_t(blk % 2 ? byte >> 4 : byte & 15) - 8);
      }
  }
  auto i8 = c.b.getIntegerType(8);
  Value rhsV = c.b.create<arith::ConstantOp>(
      c.loc, DenseElementsAttr::get(RankedTensorType::get({K, N}, i8), ArrayRef<int8_t>(rhs)));
  Value scaleV = c.b.create<arith::ConstantOp>(
      c.loc, DenseElementsAttr::get(RankedTensorType::get({blocks, N}, c.b.getF32Type()), ArrayRef<float>(scaleT)));
  Value zpV;
  if (zps)
    zpV = c.b.create<arith::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({blocks, N}, i8), ArrayRef<int8_t>(zpT)));
  Value bias = c.hasInput(5) ? c.input(5) : Value();
  Value lhs = c.input(0);
  if (c.attrs.getInt("accuracy_level", 0) == 4) {
    // ONNX Runtime then quantizes A per block of K to int8 (symmetric:
    // q = round_half_even(a * 127 / max |a|), scale max |a| / 127) before
    // its integer dot products: the same rounding here, on A's values.
    auto a = in(c, 0);
    if (failed(a)) return failure();
    auto q = quantizeBlocks(c, *a, K, bs);
    if (failed(q)) return failure();
    lhs = controlflow::materialize(c, *q);
  }
  SmallVector<int64_t> shape(at.getShape());
  shape.back() = N;
  auto type = RankedTensorType::get(shape, at.getElementType());
  Value y = c.b.create<Int4MatMulOp>(c.loc, type, lhs, rhsV, scaleV, zpV, bias, c.b.getI64IntegerAttr(bs), UnitAttr(),
                                     c.b.getStringAttr("none"), c.b.getF32FloatAttr(0.0f), c.b.getF32FloatAttr(0.0f));
  c.setOutput(0, y);
  return success();
}

} // namespace

void addContribImporters(std::unordered_map<std::string, OpImporter> &t) {
  // ONNX Runtime registers SimplifiedLayerNormalization in the default domain
  // (opset 1 and up) and writes it so; com.microsoft too, for safety.
  t["SimplifiedLayerNormalization"] = {1, kMaxOpset, noCheck, importSimplifiedLayerNorm};
  t["com.microsoft:SimplifiedLayerNormalization"] = {1, kMaxOpset, noCheck, importSimplifiedLayerNorm};
  t["com.microsoft:SkipSimplifiedLayerNormalization"] = {1, kMaxOpset, noCheck,
                                                         [](NodeContext &c) { return importSkipNorm(c, true); }};
  t["com.microsoft:SkipLayerNormalization"] = {1, kMaxOpset, noCheck,
                                               [](NodeContext &c) { return importSkipNorm(c, false); }};
  t["com.microsoft:Gelu"] = {1, kMaxOpset, noCheck, [](NodeContext &c) { return importGeluOf(c, false); }};
  t["com.microsoft:BiasGelu"] = {1, kMaxOpset, noCheck, [](NodeContext &c) { return importGeluOf(c, false); }};
  t["com.microsoft:FastGelu"] = {1, kMaxOpset, noCheck, [](NodeContext &c) { return importGeluOf(c, true); }};
  t["com.microsoft:QuickGelu"] = {1, kMaxOpset, noCheck, importQuickGelu};
  t["com.microsoft:MatMulNBits"] = {1, kMaxOpset, noCheck, importMatMulNBits};
  t["com.microsoft:RotaryEmbedding"] = {1, kMaxOpset, noCheck, importMsRotary};
  t["com.microsoft:GroupQueryAttention"] = {1, kMaxOpset, noCheck, importGroupQueryAttention};
}

} // namespace v4f
