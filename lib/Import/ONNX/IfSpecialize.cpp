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
// imported first, unchanged.
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
