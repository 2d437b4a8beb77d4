//===- QuantizedLSTM.cpp - com.microsoft DynamicQuantizeLSTM ---------------===//
//
// ONNX Runtime's quantizer (onnxruntime.quantization.quantize_dynamic) turns
// an LSTM into com.microsoft DynamicQuantizeLSTM: int8 weights W
// [D, input, 4H] and R [D, H, 4H] with per-direction (or per-column) scales
// and zero points. ONNX Runtime computes it with integer GEMMs on operands
// it quantizes as it goes: all of X at once (one scale and zero point), and
// each step's hidden state (one per row: ORT quantizes each thread's batch
// rows together, a row per thread when it has as many threads as rows, for
// hidden sizes up to 256; one for the whole batch above that). The result
// depends on those roundings: a float LSTM on dequantized weights differs
// from ONNX Runtime's by about 2 %.
//
// The importer expands the op into standard ONNX nodes that perform the same
// roundings, and imports that expansion through the ordinary importer table:
// per direction, X quantized (min/max including 0, scale (max-min)/255 or 1
// when max == min, zero point rounded half to even), X·W as a float MatMul of
// the integer-valued (q - zero point) operands times x_scale·w_scale (exact
// while every partial sum stays below 2^24, as for int8 weights with zero
// point 0 up to 514 inputs; beyond that, rounded as any float GEMM),
// then a Loop over the steps that quantizes h per row (or per matrix), adds
// h·R the same way and the summed biases, and applies the iofc gates. With
// constant weights (what the quantizer writes) the products run on the
// integer GEMM instead: MatMulInteger of the uint8 q against the 8-bit
// weight, minus the zero point times the weight's column sums — the same
// integers.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "GraphWriter.h"

#include <array>
#include <limits>

using namespace mlir;

namespace v4f {
namespace {

struct Quantized {
  std::string q, zp, scale; // q and its zero point as (integer-valued) floats
};

/// Quantizes `x` as ONNX Runtime's dynamic quantization does (uint8: min and
/// max taken with 0, scale (max - min) / 255 or 1 when they are equal, zero
/// point rounded half to even) over `axes` (all when empty).
Quantized quantize(GraphWriter &w, const std::string &x, const std::vector<int64_t> &axes) {
  bool keep = !axes.empty();
  std::string zero = w.f32(0.0f), q255 = w.f32(255.0f);
  std::string mn = w.op("Min", {w.reduce("ReduceMin", x, axes, keep), zero});
  std::string mx = w.op("Max", {w.reduce("ReduceMax", x, axes, keep), zero});
  std::string scale = w.op("Where", {w.op("Equal", {mx, mn}), w.f32(1.0f), w.op("Div", {w.op("Sub", {mx, mn}), q255})});
  std::string zp = w.op("Round", {w.op("Clip", {w.op("Neg", {w.op("Div", {mn, scale})}), zero, q255})});
  std::string q = w.op("Clip", {w.op("Add", {w.op("Round", {w.op("Div", {x, scale})}), zp}), zero, q255});
  return {q, zp, scale};
}

/// Direction d of a constant 8-bit weight [D, K, N] with its zero point
/// ([D] or [D, N]): the weight [K, N], the zero point (a scalar or [N]) and
/// the column sums of (w - zero point) as float [N].
struct DirectionWeights {
  DenseElementsAttr w, zp, colsum;
};
std::optional<DirectionWeights> directionWeights(DenseElementsAttr w, DenseElementsAttr zp, int64_t d) {
  auto wt = llvm::cast<RankedTensorType>(w.getType());
  auto zt = llvm::cast<RankedTensorType>(zp.getType());
  if (wt.getRank() != 3 || zt.getElementType() != wt.getElementType()) return std::nullopt;
  const int64_t K = wt.getDimSize(1), N = wt.getDimSize(2);
  bool perColumn = zt.getRank() == 2;
  if (perColumn ? zt.getDimSize(1) != N : zt.getRank() != 1) return std::nullopt;
  bool isSigned = !wt.getElementType().isUnsignedInteger();
  auto value = [&](const APInt &v) { return isSigned ? v.getSExtValue() : int64_t(v.getZExtValue()); };
  std::vector<APInt> all(w.getValues<APInt>().begin(), w.getValues<APInt>().end());
  std::vector<APInt> zps(zp.getValues<APInt>().begin(), zp.getValues<APInt>().end());
  std::vector<APInt> slice(all.begin() + d * K * N, all.begin() + (d + 1) * K * N);
  std::vector<APInt> zSlice =
      perColumn ? std::vector<APInt>(zps.begin() + d * N, zps.begin() + (d + 1) * N) : std::vector<APInt>{zps[d]};
  std::vector<float> colsum(N, 0.0f);
  std::vector<int64_t> sums(N, 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) sums[n] += value(slice[k * N + n]) - value(zSlice[perColumn ? n : 0]);
  for (int64_t n = 0; n < N; ++n) colsum[n] = float(sums[n]);
  Type et = wt.getElementType();
  DirectionWeights out;
  out.w = DenseElementsAttr::get(RankedTensorType::get({K, N}, et), slice);
  out.zp = perColumn ? DenseElementsAttr::get(RankedTensorType::get({N}, et), zSlice)
                     : DenseElementsAttr::get(RankedTensorType::get({}, et), zSlice);
  out.colsum = DenseElementsAttr::get(RankedTensorType::get({N}, Float32Type::get(w.getContext())), ArrayRef(colsum));
  return out;
}

std::string checkDynamicQuantizeLSTM(const NodeAttrs &a, int64_t) {
  std::string dir = a.getString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return "direction '" + dir + "' is not forward, reverse or bidirectional";
  if (a.getInt("hidden_size", 0) <= 0) return "attribute 'hidden_size' must be positive";
  if (a.has("clip")) return "attribute 'clip' is not supported";
  if (a.getInt("input_forget", 0) != 0) return "input_forget = 1 is not supported";
  if (a.has("activations")) {
    const auto *acts = a.get("activations");
    for (int k = 0; k < acts->strings_size(); ++k) {
      std::string s = acts->strings(k), want = k % 3 == 0 ? "Sigmoid" : "Tanh";
      if (s != want) return "activation '" + s + "' is not supported (only the defaults Sigmoid, Tanh, Tanh)";
    }
  }
  return "";
}

LogicalResult importDynamicQuantizeLSTM(NodeContext &c) {
  const int64_t H = c.attrs.getInt("hidden_size", 0);
  std::string dir = c.attrs.getString("direction", "forward");
  const int D = dir == "bidirectional" ? 2 : 1;
  for (size_t i : {0, 1, 2, 8, 9, 10, 11})
    if (!c.hasInput(i)) return c.fail("input " + std::to_string(i) + " is required");
  if (c.hasInput(4)) return c.fail("input 'sequence_lens' is not supported (every sequence runs the full length)");
  if (c.hasInput(7)) return c.fail("input 'P' (peepholes) is not supported");
  auto xt = c.inputType(0), wt = c.inputType(1), rt = c.inputType(2);
  if (xt.getRank() != 3 || !xt.getElementType().isF32()) return c.fail("X must be a 3-D float tensor");
  if (wt.getRank() != 3 || rt.getRank() != 3 || !wt.hasStaticShape() || !rt.hasStaticShape())
    return c.fail("W and R must be 3-D tensors of static shape");
  int64_t I = wt.getDimSize(1);
  if (wt.getDimSize(0) != D || wt.getDimSize(2) != 4 * H || rt.getDimSize(0) != D || rt.getDimSize(1) != H ||
      rt.getDimSize(2) != 4 * H)
    return c.fail("W must be [" + std::to_string(D) + ", input_size, " + std::to_string(4 * H) + "] and R [" +
                  std::to_string(D) + ", " + std::to_string(H) + ", " + std::to_string(4 * H) + "]");
  if (!xt.isDynamicDim(2) && xt.getDimSize(2) != I)
    return c.fail("X's input size " + std::to_string(xt.getDimSize(2)) + " differs from W's " + std::to_string(I));
  for (size_t i : {1, 2})
    if (!c.inputType(i).getElementType().isInteger(8)) return c.fail("W and R must be int8 or uint8 tensors");

  // The expansion as a subgraph whose inputs are the node's inputs.
  onnx::GraphProto g;
  g.set_name(c.node.name() + " (expansion)");
  const char *inNames[] = {
      "X", "W", "R", "B", "", "initial_h", "initial_c", "", "W_scale", "W_zero_point", "R_scale", "R_zero_point"};
  std::vector<controlflow::Bound> bound;
  std::string prefix = "#dqlstm/";
  auto inName = [&](int i) { return prefix + inNames[i]; };
  for (int i = 0; i < 12; ++i) {
    if (!c.hasInput(i) || !*inNames[i]) continue;
    g.add_input()->set_name(inName(i));
    auto b = controlflow::lookup(c.g, c.node.input(i));
    if (!b) return c.fail("input " + std::to_string(i) + " is not defined");
    bound.push_back(*b);
  }
  // Constant weights run on the integer GEMM (MatMulInteger of the uint8 q
  // against the int8 weight, minus zero point x column sums): per direction
  // the weight, zero point and column sums as extra expansion inputs.
  auto wCst = c.constantInput(1), rCst = c.constantInput(2), wzCst = c.constantInput(9), rzCst = c.constantInput(11);
  std::vector<DirectionWeights> wDir, rDir;
  if (wCst && rCst && wzCst && rzCst)
    for (int64_t d = 0; d < D; ++d) {
      auto wd = directionWeights(*wCst, *wzCst, d), rd = directionWeights(*rCst, *rzCst, d);
      if (!wd || !rd) {
        wDir.clear(), rDir.clear();
        break;
      }
      wDir.push_back(*wd), rDir.push_back(*rd);
    }
  const bool integerGemm = !wDir.empty();
  auto constInput = [&](const std::string &name, DenseElementsAttr v) {
    g.add_input()->set_name(name);
    bound.push_back(controlflow::Bound{{}, v});
    return name;
  };
  std::vector<std::array<std::string, 3>> wIn, rIn; // per direction: weight, zero point, column sums
  for (size_t d = 0; d < wDir.size(); ++d) {
    std::string p = prefix + "dir" + std::to_string(d) + "/";
    wIn.push_back(
        {constInput(p + "w", wDir[d].w), constInput(p + "wz", wDir[d].zp), constInput(p + "wsum", wDir[d].colsum)});
    rIn.push_back(
        {constInput(p + "r", rDir[d].w), constInput(p + "rz", rDir[d].zp), constInput(p + "rsum", rDir[d].colsum)});
  }
  GraphWriter w(g, prefix, c.opset);
  // ORT quantizes h per row for hidden sizes up to 256 (when it has a thread
  // per batch row), for the whole batch above that.
  const bool perRow = H <= 256;

  // (q - zp) . (w - wz) as float: exact integers either way (float sums of
  // integer products, or the integer GEMM's int32).
  auto product = [&](GraphWriter &gw, const Quantized &q, const std::array<std::string, 3> *integer,
                     const std::string &centeredWeight) {
    if (!integer) return gw.op("MatMul", {gw.op("Sub", {q.q, q.zp}), centeredWeight});
    std::string q8 =
        gw.op("Cast", {q.q}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::UINT8); });
    std::string acc = gw.op("MatMulInteger", {q8, (*integer)[0], "", (*integer)[1]});
    std::string accF =
        gw.op("Cast", {acc}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::FLOAT); });
    return gw.op("Sub", {accF, gw.op("Mul", {q.zp, (*integer)[2]})});
  };
  std::string X = inName(0);
  Quantized xq = quantize(w, X, {});
  std::string xScale = xq.scale;
  std::string shapeX = w.op("Shape", {X});
  std::string T = w.op("Reshape", {w.slice(shapeX, 0, 1, 0), w.i64s({})});
  std::string batch = w.slice(shapeX, 1, 2, 0);
  std::string zerosBH =
      w.op("ConstantOfShape",
           {w.op("Concat", {batch, w.i64s({H})}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); })});
  auto pick = [&](int input, int64_t d) {
    return w.op("Gather", {inName(input), w.i64s({d}, true)},
                [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); });
  };
  auto centeredWeights = [&](int q, int zp, int64_t d) {
    std::string f = w.op("Cast", {pick(q, d)},
                         [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::FLOAT); });
    std::string z = w.op("Cast", {pick(zp, d)},
                         [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "to", onnx::TensorProto::FLOAT); });
    return w.op("Sub", {f, z});
  };
  const int64_t kInt64Min = std::numeric_limits<int64_t>::min();
  std::vector<std::string> ys, hs, cs;
  for (int64_t d = 0; d < D; ++d) {
    bool reverse = dir == "reverse" || d == 1;
    Quantized xqd = xq;
    if (reverse) xqd.q = w.slice(xq.q, -1, kInt64Min, 0, -1);
    std::string gx =
        w.op("Mul", {product(w, xqd, integerGemm ? &wIn[d] : nullptr, integerGemm ? "" : centeredWeights(1, 9, d)),
                     w.op("Mul", {xScale, pick(8, d)})}); // [T, B, 4H]
    std::string rf = integerGemm ? "" : centeredWeights(2, 11, d), rScale = pick(10, d);
    std::string bias;
    if (c.hasInput(3)) {
      std::string bd = pick(3, d);
      bias = w.op("Add", {w.slice(bd, 0, 4 * H, 0), w.slice(bd, 4 * H, 8 * H, 0)});
    }
    std::string h0 = c.hasInput(5) ? pick(5, d) : zerosBH;
    std::string c0 = c.hasInput(6) ? pick(6, d) : zerosBH;

    // The step loop: carried h and c, h scanned out.
    onnx::GraphProto body;
    body.set_name("step");
    std::string bp = prefix + "step" + std::to_string(d) + "/";
    for (const char *n : {"t", "cond", "h", "c"}) body.add_input()->set_name(bp + n);
    GraphWriter bw(body, bp, c.opset);
    std::string t = bp + "t", h = bp + "h", cc = bp + "c";
    std::string gxt = bw.op("Gather", {gx, t}, [](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", 0); });
    Quantized hq = quantize(bw, h, perRow ? std::vector<int64_t>{1} : std::vector<int64_t>{});
    std::string hr =
        bw.op("Mul", {product(bw, hq, integerGemm ? &rIn[d] : nullptr, rf), bw.op("Mul", {hq.scale, rScale})});
    std::string pre = bw.op("Add", {gxt, hr});
    if (!bias.empty()) pre = bw.op("Add", {pre, bias});
    auto gate = [&](int k) { return bw.slice(pre, k * H, (k + 1) * H, 1); };
    std::string gi = bw.op("Sigmoid", {gate(0)}), go = bw.op("Sigmoid", {gate(1)});
    std::string gf = bw.op("Sigmoid", {gate(2)}), gc = bw.op("Tanh", {gate(3)});
    std::string cNext = bw.op("Add", {bw.op("Mul", {cc, gf}), bw.op("Mul", {gi, gc})});
    std::string hNext = bw.op("Mul", {bw.op("Tanh", {cNext}), go});
    std::string condOut = bw.op("Identity", {bp + "cond"});
    std::string hScan = bw.op("Identity", {hNext});
    for (const auto &o : {condOut, hNext, cNext, hScan}) body.add_output()->set_name(o);

    auto outs = w.opN("Loop", {T, "", h0, c0}, 3, [&](onnx::NodeProto &n) {
      auto *a = n.add_attribute();
      a->set_name("body");
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = body;
    });
    std::string y = reverse ? w.slice(outs[2], -1, kInt64Min, 0, -1) : outs[2];
    ys.push_back(w.unsqueeze(y, 1));
    hs.push_back(w.unsqueeze(outs[0], 0));
    cs.push_back(w.unsqueeze(outs[1], 0));
  }
  auto concat = [&](const std::vector<std::string> &parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    return w.op("Concat", parts, [&](onnx::NodeProto &n) { controlflow::addIntAttr(n, "axis", axis); });
  };
  for (const auto &o : {concat(ys, 1), concat(hs, 0), concat(cs, 0)}) g.add_output()->set_name(o);

  auto outs = controlflow::importSubgraph(c, g, bound, "expansion");
  if (failed(outs)) return failure();
  for (size_t i = 0; i < 3; ++i)
    if (c.outputUsed(i)) controlflow::bindName(c.g, c.node.output(int(i)), (*outs)[i]);
  return success();
}

} // namespace

void addQuantizedRecurrentImporters(std::unordered_map<std::string, OpImporter> &t) {
  // From opset 11: the expansion uses Clip with min / max inputs.
  t["com.microsoft:DynamicQuantizeLSTM"] = {11, kMaxOpset, checkDynamicQuantizeLSTM, importDynamicQuantizeLSTM};
}

} // namespace v4f
