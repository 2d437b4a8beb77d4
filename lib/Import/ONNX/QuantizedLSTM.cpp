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
// h·R the same way and the summed biases, and applies the iofc gates.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"

#include <limits>

using namespace mlir;

namespace v4f {
namespace {

/// Builds the nodes of a GraphProto, one op at a time, with fresh names.
class GraphWriter {
public:
  GraphWriter(onnx::GraphProto &g, std::string prefix, int64_t opset) : g(g), prefix(std::move(prefix)), opset(opset) {}

  std::string fresh(const std::string &hint) { return prefix + hint + "_" + std::to_string(counter++); }
  std::string op(const std::string &type, std::vector<std::string> ins,
                 const std::function<void(onnx::NodeProto &)> &attrs = {}) {
    return opN(type, std::move(ins), 1, attrs)[0];
  }
  std::vector<std::string> opN(const std::string &type, std::vector<std::string> ins, int outs,
                               const std::function<void(onnx::NodeProto &)> &attrs = {}) {
    onnx::NodeProto *n = g.add_node();
    n->set_op_type(type);
    n->set_name(fresh(type));
    for (auto &i : ins) n->add_input(i);
    std::vector<std::string> names;
    for (int k = 0; k < outs; ++k) {
      names.push_back(fresh(type + "_out"));
      n->add_output(names.back());
    }
    if (attrs) attrs(*n);
    return names;
  }
  std::string f32(float v) {
    return constant([&](onnx::TensorProto &t) {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(v);
    });
  }
  std::string i64s(std::vector<int64_t> v, bool scalar = false) {
    return constant([&](onnx::TensorProto &t) {
      t.set_data_type(onnx::TensorProto::INT64);
      if (!scalar) t.add_dims(int64_t(v.size()));
      for (int64_t x : v) t.add_int64_data(x);
    });
  }
  /// Reduce{Min,Max} over `axes` (all when empty), as this opset spells it.
  std::string reduce(const std::string &type, const std::string &x, std::vector<int64_t> axes, bool keep) {
    std::vector<std::string> ins = {x};
    if (!axes.empty() && opset >= 18) ins.push_back(i64s(axes));
    return op(type, ins, [&](onnx::NodeProto &n) {
      controlflow::addIntAttr(n, "keepdims", keep ? 1 : 0);
      if (!axes.empty() && opset < 18) ints(n, "axes", axes);
    });
  }
  std::string unsqueeze(const std::string &x, int64_t axis) {
    if (opset >= 13) return op("Unsqueeze", {x, i64s({axis})});
    return op("Unsqueeze", {x}, [&](onnx::NodeProto &n) { ints(n, "axes", {axis}); });
  }
  std::string slice(const std::string &x, int64_t start, int64_t end, int64_t axis, int64_t step = 1) {
    return op("Slice", {x, i64s({start}), i64s({end}), i64s({axis}), i64s({step})});
  }
  static void ints(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

private:
  std::string constant(const std::function<void(onnx::TensorProto &)> &fill) {
    return op("Constant", {}, [&](onnx::NodeProto &n) {
      auto *a = n.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      fill(*a->mutable_t());
    });
  }
  onnx::GraphProto &g;
  std::string prefix;
  int64_t opset;
  int counter = 0;
};

/// Quantizes `x` as ONNX Runtime's dynamic quantization does (uint8: min and
/// max taken with 0, scale (max - min) / 255 or 1 when they are equal, zero
/// point rounded half to even) over `axes` (all when empty); returns
/// (q - zero point) as float and the scale.
std::pair<std::string, std::string> quantizeCentered(GraphWriter &w, const std::string &x,
                                                     const std::vector<int64_t> &axes) {
  bool keep = !axes.empty();
  std::string zero = w.f32(0.0f), q255 = w.f32(255.0f);
  std::string mn = w.op("Min", {w.reduce("ReduceMin", x, axes, keep), zero});
  std::string mx = w.op("Max", {w.reduce("ReduceMax", x, axes, keep), zero});
  std::string scale = w.op("Where", {w.op("Equal", {mx, mn}), w.f32(1.0f), w.op("Div", {w.op("Sub", {mx, mn}), q255})});
  std::string zp = w.op("Round", {w.op("Clip", {w.op("Neg", {w.op("Div", {mn, scale})}), zero, q255})});
  std::string q = w.op("Clip", {w.op("Add", {w.op("Round", {w.op("Div", {x, scale})}), zp}), zero, q255});
  return {w.op("Sub", {q, zp}), scale};
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
  GraphWriter w(g, prefix, c.opset);
  // ORT quantizes h per row for hidden sizes up to 256 (when it has a thread
  // per batch row), for the whole batch above that.
  const bool perRow = H <= 256;

  std::string X = inName(0);
  auto [xq, xScale] = quantizeCentered(w, X, {});
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
    std::string xqd = reverse ? w.slice(xq, -1, kInt64Min, 0, -1) : xq;
    std::string gx =
        w.op("Mul", {w.op("MatMul", {xqd, centeredWeights(1, 9, d)}), w.op("Mul", {xScale, pick(8, d)})}); // [T, B, 4H]
    std::string rf = centeredWeights(2, 11, d), rScale = pick(10, d);
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
    auto [hq, hScale] = quantizeCentered(bw, h, perRow ? std::vector<int64_t>{1} : std::vector<int64_t>{});
    std::string hr = bw.op("Mul", {bw.op("MatMul", {hq, rf}), bw.op("Mul", {hScale, rScale})});
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
