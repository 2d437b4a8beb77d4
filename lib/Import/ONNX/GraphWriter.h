//===- GraphWriter.h - ONNX nodes written by an importer ------------------===//
//
// Private to lib/Import/ONNX: importers that expand an operator into
// standard ONNX nodes (QuantizedLSTM.cpp, ContribOps.cpp) write them into a
// GraphProto with this helper and import it as a subgraph
// (controlflow::importSubgraph), so every node goes through the ordinary
// importer table with its checks.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_IMPORT_ONNX_GRAPHWRITER_H
#define V4F_LIB_IMPORT_ONNX_GRAPHWRITER_H

#include "ControlFlow.h"

#include <functional>
#include <string>
#include <vector>

namespace v4f {

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

} // namespace v4f

#endif // V4F_LIB_IMPORT_ONNX_GRAPHWRITER_H
