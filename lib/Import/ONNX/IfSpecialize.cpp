//===- IfSpecialize.cpp - consumers of a rank-changing If, per branch ------===//
//
// An If whose condition is known only at run time may give outputs of a
// different rank in each branch (torch exports `x.squeeze(d)` of a run-time
// dim so, and then test the rank with Size(Shape(x)) further on). A tensor
// type has one rank, so the importer cannot give such an output one type.
// It specializes instead: the nodes after the If that read its outputs (the
// tail) are copied into both branches of one synthesized If, after the
// branch's own nodes; the tail's values that the graph (or the enclosing
// body) returns become that If's outputs. Inside a branch every rank is
// known again: Size(Shape(x)) folds, the next rank-changing If folds or is
// specialized in turn. The nodes after the If that do not read it are
// imported first, unchanged. A Squeeze without axes over dims known only at
// run time is rewritten into such Ifs first (one per dim: is it 1?).
//
// A specialized branch may still be one that cannot run (the model feeds a
// rank-4 tensor to an LSTM there, as ONNX Runtime finds only when it takes
// that branch) or one whose outputs have a rank other than the model
// declares; importIf then compiles the other branch alone and the plan
// refuses a run whose condition selects the bad one, naming the If and why
// (v4f.select_branch then_error / else_error).
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"

#include <algorithm>
#include <unordered_set>

using namespace mlir;

namespace v4f {
namespace controlflow {

OpMark markOps(OpBuilder &b) {
  Block *block = b.getInsertionBlock();
  Block::iterator ip = b.getInsertionPoint();
  return {block, ip == block->begin() ? nullptr : &*std::prev(ip)};
}

void eraseSince(OpBuilder &b, const OpMark &m) {
  if (b.getInsertionBlock() != m.block) return;
  Block::iterator end = b.getInsertionPoint();
  Block::iterator it = m.last ? std::next(Block::iterator(m.last)) : m.block->begin();
  SmallVector<Operation *> created;
  for (; it != end; ++it) created.push_back(&*it);
  for (Operation *op : llvm::reverse(created)) {
    op->dropAllUses();
    op->erase();
  }
}

} // namespace controlflow

namespace {

/// Every name `node` reads, its subgraphs' reads included (a superset of
/// what they capture from outside: a name a subgraph defines itself only
/// makes the tail larger, never wrong).
void collectReads(const onnx::NodeProto &node, std::unordered_set<std::string> &out) {
  for (const auto &in : node.input())
    if (!in.empty()) out.insert(in);
  for (const auto &a : node.attribute()) {
    if (a.has_g())
      for (const auto &n : a.g().node()) collectReads(n, out);
    for (const auto &g : a.graphs())
      for (const auto &n : g.node()) collectReads(n, out);
  }
}

/// A branch of the synthesized If: the original branch, an Identity from
/// each of its outputs to the If's output name, then the tail.
onnx::GraphProto specializedBranch(const onnx::GraphProto &branch, const onnx::NodeProto &ifNode,
                                   const std::vector<const onnx::NodeProto *> &tail,
                                   const std::vector<const onnx::ValueInfoProto *> &outs) {
  onnx::GraphProto g;
  g.set_name(branch.name());
  for (const auto &init : branch.initializer()) *g.add_initializer() = init;
  for (const auto &n : branch.node()) *g.add_node() = n;
  for (int k = 0; k < branch.output_size() && k < ifNode.output_size(); ++k) {
    if (ifNode.output(k).empty()) continue;
    onnx::NodeProto *id = g.add_node();
    id->set_op_type("Identity");
    id->set_name(ifNode.name() + "/output" + std::to_string(k));
    id->add_input(branch.output(k).name());
    id->add_output(ifNode.output(k));
  }
  for (const onnx::NodeProto *n : tail) *g.add_node() = *n;
  for (const onnx::ValueInfoProto *o : outs) *g.add_output() = *o;
  return g;
}

/// At most this many dims known only at run time in a Squeeze without axes
/// (2^k specialized copies of the consumers).
constexpr size_t kMaxSqueezeChoices = 3;

/// A Squeeze without axes over dims known only at run time drops those that
/// turn out to be 1: its output rank depends on them. Rewritten into nested
/// Ifs on "dim == 1", each leaf a Squeeze with explicit axes, whose
/// consumers are then specialized per branch like any rank-changing If.
/// Empty when the node is not such a Squeeze.
std::vector<const onnx::NodeProto *> rewriteRankDynamicSqueeze(GraphState &g, const onnx::NodeProto &node, int index) {
  if (node.op_type() != "Squeeze" || !(node.domain().empty() || node.domain() == "ai.onnx") || node.input_size() < 1 ||
      node.output_size() != 1)
    return {};
  bool hasAxes = g.opset >= 13 ? node.input_size() > 1 && !node.input(1).empty()
                               : llvm::any_of(node.attribute(), [](const auto &a) { return a.name() == "axes"; });
  if (hasAxes) return {};
  auto bound = controlflow::lookup(g, node.input(0));
  if (!bound) return {};
  auto type = llvm::dyn_cast<RankedTensorType>(bound->type());
  if (!type || type.hasStaticShape()) return {};
  std::vector<int64_t> ones, dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      dynamic.push_back(d);
    else if (type.getDimSize(d) == 1)
      ones.push_back(d);
  }
  if (dynamic.size() > kMaxSqueezeChoices) return {};

  const std::string x = node.input(0);
  const std::string label = node.name().empty() ? "Squeeze#" + std::to_string(index) : node.name();
  const std::string prefix = node.output(0) + "#squeeze/";
  int counter = 0;
  auto fresh = [&](const std::string &hint) { return prefix + hint + std::to_string(counter++); };
  auto i64 = [&](onnx::NodeProto &n, std::vector<int64_t> v, bool scalar) {
    n.set_op_type("Constant");
    n.set_name(fresh("const"));
    n.add_output(fresh("c"));
    auto *a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto *t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(int64_t(v.size()));
    for (int64_t e : v) t->add_int64_data(e);
    return n.output(0);
  };
  std::vector<const onnx::NodeProto *> out;
  auto emit = [&](onnx::NodeProto n) -> const onnx::NodeProto * {
    out.push_back(&g.synthesized.emplace_back(std::move(n)));
    return out.back();
  };
  // The conditions, one per run-time dim: Shape(x)[d] == 1.
  onnx::NodeProto shape;
  shape.set_op_type("Shape");
  shape.set_name(fresh("shape"));
  shape.add_input(x);
  shape.add_output(fresh("s"));
  std::string shapeName = emit(shape)->output(0);
  std::string one = emit([&] {
                      onnx::NodeProto n;
                      i64(n, {1}, true);
                      return n;
                    }())
                        ->output(0);
  std::vector<std::string> conds;
  for (int64_t d : dynamic) {
    onnx::NodeProto idx;
    std::string idxName = i64(idx, {d}, true);
    emit(idx);
    onnx::NodeProto gather;
    gather.set_op_type("Gather");
    gather.set_name(fresh("dim"));
    gather.add_input(shapeName);
    gather.add_input(idxName);
    gather.add_output(fresh("d"));
    emit(gather);
    onnx::NodeProto eq;
    eq.set_op_type("Equal");
    eq.set_name(fresh("is_one"));
    eq.add_input(gather.output(0));
    eq.add_input(one);
    eq.add_output(fresh("c"));
    conds.push_back(emit(eq)->output(0));
  }
  // The nested Ifs: level l chooses whether dynamic[l] is dropped.
  std::function<void(onnx::GraphProto &, size_t, std::vector<int64_t>, const std::string &)> build =
      [&](onnx::GraphProto &into, size_t level, std::vector<int64_t> drop, const std::string &result) {
        if (level == dynamic.size()) {
          std::sort(drop.begin(), drop.end());
          onnx::NodeProto *sq = into.add_node();
          sq->set_name(label);
          sq->add_input(x);
          sq->add_output(result);
          if (drop.empty()) {
            sq->set_op_type("Identity");
          } else if (g.opset >= 13) {
            sq->set_op_type("Squeeze");
            onnx::NodeProto *axes = into.add_node();
            *axes = onnx::NodeProto();
            sq->add_input(i64(*axes, drop, false));
            std::swap(*axes, *sq); // the constant first
          } else {
            sq->set_op_type("Squeeze");
            auto *a = sq->add_attribute();
            a->set_name("axes");
            a->set_type(onnx::AttributeProto::INTS);
            for (int64_t e : drop) a->add_ints(e);
          }
          return;
        }
        onnx::NodeProto *iff = into.add_node();
        iff->set_op_type("If");
        iff->set_name(level == 0 ? label : fresh(label + "/if"));
        iff->add_input(conds[level]);
        iff->add_output(result);
        for (bool taken : {true, false}) {
          auto *a = iff->add_attribute();
          a->set_name(taken ? "then_branch" : "else_branch");
          a->set_type(onnx::AttributeProto::GRAPH);
          onnx::GraphProto *branch = a->mutable_g();
          branch->set_name(fresh(taken ? "then" : "else"));
          std::string r = fresh("r");
          std::vector<int64_t> next = drop;
          if (taken) next.push_back(dynamic[level]);
          build(*branch, level + 1, next, r);
          branch->add_output()->set_name(r);
        }
      };
  onnx::GraphProto holder;
  build(holder, 0, ones, node.output(0));
  emit(holder.node(0));
  return out;
}

} // namespace

LogicalResult importNodeList(GraphState &g, const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                             const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &liveOuts,
                             const NodeStep &step) {
  std::vector<const onnx::NodeProto *> work;
  std::vector<int> index; // the node's position in `nodes` (its label)
  for (int n = 0; n < nodes.size(); ++n) {
    work.push_back(&nodes.Get(n));
    index.push_back(n);
  }
  for (size_t k = 0; k < work.size(); ++k) {
    const onnx::NodeProto &node = *work[k];
    if (auto rewritten = rewriteRankDynamicSqueeze(g, node, index[k]); !rewritten.empty()) {
      int at = index[k];
      work.erase(work.begin() + k);
      index.erase(index.begin() + k);
      work.insert(work.begin() + k, rewritten.begin(), rewritten.end());
      index.insert(index.begin() + k, rewritten.size(), at);
      --k;
      continue;
    }
    controlflow::OpMark mark = controlflow::markOps(g.builder);
    g.rankSplit = false;
    if (succeeded(step(node, index[k]))) continue;
    if (!g.rankSplit) return failure();
    g.rankSplit = false;
    controlflow::eraseSince(g.builder, mark);

    // Split what follows into the tail (reads the If, transitively) and the rest.
    std::unordered_set<std::string> tainted;
    for (const auto &o : node.output())
      if (!o.empty()) tainted.insert(o);
    std::vector<const onnx::NodeProto *> tail, rest;
    std::vector<int> restIndex;
    for (size_t j = k + 1; j < work.size(); ++j) {
      std::unordered_set<std::string> reads;
      collectReads(*work[j], reads);
      bool inTail = llvm::any_of(reads, [&](const std::string &r) { return tainted.count(r) > 0; });
      if (inTail) {
        tail.push_back(work[j]);
        for (const auto &o : work[j]->output())
          if (!o.empty()) tainted.insert(o);
      } else {
        rest.push_back(work[j]);
        restIndex.push_back(index[j]);
      }
    }
    std::vector<const onnx::ValueInfoProto *> outs;
    for (const auto &o : liveOuts)
      if (tainted.count(o.name())) outs.push_back(&o);

    NodeAttrs attrs(node);
    onnx::NodeProto &s = g.synthesized.emplace_back();
    s.set_op_type("If");
    s.set_name(node.name().empty() ? node.op_type() + "#" + std::to_string(index[k]) : node.name());
    s.set_domain(node.domain());
    s.add_input(node.input(0));
    for (const auto *o : outs) s.add_output(o->name());
    for (const char *name : {"then_branch", "else_branch"}) {
      onnx::AttributeProto *a = s.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = specializedBranch(attrs.get(name)->g(), node, tail, outs);
    }
    g.specialized.insert(&s);
    int at = index[k];
    work.resize(k);
    index.resize(k);
    work.insert(work.end(), rest.begin(), rest.end());
    index.insert(index.end(), restIndex.begin(), restIndex.end());
    work.push_back(&s);
    index.push_back(at);
    --k; // import from here again: the rest, then the specialized If
  }
  return success();
}

} // namespace v4f
