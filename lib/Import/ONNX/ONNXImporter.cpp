//===- ONNXImporter.cpp - ONNX ModelProto -> v4f dialect ------------------===//
//
// Parses the protobuf, checks graph structure and operator coverage (all
// problems reported at once), then imports nodes in order into func @main.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "onnx/defs/schema.h"

#include <limits>
#include "TensorImport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "google/protobuf/io/coded_stream.h"

#include <fstream>
#include <sys/stat.h>
#include <set>
#include <sstream>
#include <unordered_set>

using namespace mlir;

namespace v4f {

namespace {
/// Storage-only element types (bfloat16, float8, [u]int4, [u]int2) are
/// accepted by conversions and pure data movement only; anything else would
/// compute on their storage integers.
std::string storageTypeError(const onnx::NodeProto &node, const GraphState &g) {
  static const std::set<std::string> accepting = {
      "Scatter", "ScatterElements", "ScatterND", "GatherND", // reductions check their types
      "Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "Identity", "Reshape", "Flatten", "Squeeze",
      "Unsqueeze", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "Expand", "Shape", "Size",
      "Tile", "OneHot", "CenterCropPad", "Compress", "ReverseSequence", "NonZero", "Attention", "MatMul", "Softmax",
      "LogSoftmax", "Hardmax", "Gemm", "LayerNormalization", "RMSNormalization", "Conv", "DepthToSpace", "SpaceToDepth",
      "Unique", // bf16 only, compared as float32
      // Computed in float32 after a conversion.
      "Einsum", "RNN", "GRU", "LSTM",
      // Their subgraphs' nodes are guarded one by one.
      "If", "Loop", "Scan"};
  if (accepting.count(node.op_type())) return "";
  for (const std::string &name : node.input()) {
    if (name.empty()) continue;
    Type t;
    if (auto it = g.values.find(name); it != g.values.end())
      t = it->second.getType();
    else if (auto ct = g.constants.find(name); ct != g.constants.end())
      t = ct->second.getType();
    auto shaped = llvm::dyn_cast_if_present<ShapedType>(t);
    if (shaped && isStorageOnlyType(shaped.getElementType())) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << shaped.getElementType();
      return "input '" + name + "' has element type " + os.str() + ", which only conversions (Cast, " +
             "QuantizeLinear, ...) and data movement support";
    }
  }
  return "";
}
} // namespace

LogicalResult importNode(GraphState &g, const onnx::NodeProto &node, int64_t opset, Location loc, std::string &error) {
  const auto &importers = opImporters();
  auto it = importers.find(importerKey(node));
  if (it == importers.end()) {
    error = "operator is not supported";
    return failure();
  }
  NodeContext c(node, opset, g, loc);
  std::string storageError = storageTypeError(node, g);
  if (!storageError.empty()) {
    error = storageError;
    return failure();
  }
  if (failed(it->second.import(c))) {
    error = !c.inputError.empty() ? c.inputError : c.error.empty() ? "import failed" : c.error;
    return failure();
  }
  if (!c.inputError.empty()) {
    error = c.inputError;
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// NodeAttrs / NodeContext
//===----------------------------------------------------------------------===//

NodeAttrs::NodeAttrs(const onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) attrs[a.name()] = &a;
}
const onnx::AttributeProto *NodeAttrs::get(const std::string &name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : it->second;
}
int64_t NodeAttrs::getInt(const std::string &name, int64_t dflt) const {
  const auto *a = get(name);
  return a ? a->i() : dflt;
}
float NodeAttrs::getFloat(const std::string &name, float dflt) const {
  const auto *a = get(name);
  return a ? a->f() : dflt;
}
std::string NodeAttrs::getString(const std::string &name, const std::string &dflt) const {
  const auto *a = get(name);
  return a ? a->s() : dflt;
}
std::vector<int64_t> NodeAttrs::getInts(const std::string &name, std::vector<int64_t> dflt) const {
  const auto *a = get(name);
  if (!a) return dflt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Value NodeContext::missingInput(const std::string &why) {
  if (inputError.empty()) inputError = why;
  // A placeholder so the importer can go on without dereferencing nothing;
  // importNode fails the node with `inputError` afterwards.
  auto type = RankedTensorType::get({1}, b.getF32Type());
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, 0.0f));
}

Value NodeContext::input(size_t i) {
  if (!hasInput(i)) return missingInput("input " + std::to_string(i) + " is required but missing");
  const std::string &name = node.input(i);
  auto it = g.values.find(name);
  if (it != g.values.end()) return it->second;
  auto cst = g.constants.find(name);
  if (cst == g.constants.end())
    return missingInput("input '" + name + "' has no value (the node producing it did not define it)");
  // Materialize constants at their first use, at the start of the function
  // (also from inside a v4f.loop body: the cached value must dominate every
  // later use, inside the body or after the loop).
  OpBuilder::InsertionGuard guard(b);
  Block *entry = b.getInsertionBlock();
  while (entry->getParentOp() && !llvm::isa<func::FuncOp>(entry->getParentOp()) && entry->getParentOp()->getBlock())
    entry = entry->getParentOp()->getBlock();
  b.setInsertionPointToStart(entry);
  Value v = b.create<arith::ConstantOp>(loc, cst->second);
  g.values[name] = v;
  return v;
}

std::optional<DenseElementsAttr> NodeContext::constantInput(size_t i) const {
  if (!hasInput(i)) return std::nullopt;
  auto it = g.constants.find(node.input(i));
  if (it == g.constants.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<int64_t>> NodeContext::constantInts(size_t i) const {
  auto c = constantInput(i);
  if (!c || !c->getElementType().isInteger()) return std::nullopt;
  std::vector<int64_t> out;
  for (const APInt &v : c->getValues<APInt>()) out.push_back(v.getSExtValue());
  return out;
}

std::optional<float> NodeContext::constantScalar(size_t i) const {
  auto c = constantInput(i);
  if (!c || c->getNumElements() != 1 || !c->getElementType().isF32()) return std::nullopt;
  return *c->getValues<float>().begin();
}

void NodeContext::setConstantOutput(size_t i, DenseElementsAttr attr) {
  if (i < (size_t)node.output_size())
    g.constants[node.output(i)] = attr;
  else if (inputError.empty())
    inputError = "output " + std::to_string(i) + " is missing";
}

Value NodeContext::constF32(ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Loading and checking
//===----------------------------------------------------------------------===//

namespace {
constexpr uint64_t kMaxModelBytes = uint64_t(2) << 30; // protobuf's own limit
constexpr int kMaxNodes = 1 << 20;
constexpr int kMaxParseDepth = 1000;

/// Parses a serialized ModelProto (`path` names it in errors).
bool parseModel(const std::string &bytes, const std::string &path, onnx::ModelProto &model, std::string &error) {
  if (bytes.size() >= kMaxModelBytes) {
    error = path + ": model is larger than 2 GiB (use external data)";
    return false;
  }
  if (!model.ParseFromString(bytes)) {
    // Tell apart a valid model whose subgraphs nest deeper than protobuf's
    // recursion limit (100) from bytes that are not a model at all.
    google::protobuf::io::CodedInputStream deep(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    deep.SetRecursionLimit(kMaxParseDepth);
    onnx::ModelProto probe;
    if (probe.ParseFromCodedStream(&deep))
      error = path + ": subgraphs are nested deeper than 100 protobuf levels; refused";
    else
      error = path +
              ": not a valid ONNX model (protobuf parsing failed: the bytes are not a model, or its "
              "subgraphs nest more than " +
              std::to_string(kMaxParseDepth) + " protobuf levels deep)";
    return false;
  }
  if (!model.has_graph()) {
    error = path + ": the model has no graph";
    return false;
  }
  if (model.graph().node_size() > kMaxNodes) {
    error = path + ": the graph has more than " + std::to_string(kMaxNodes) + " nodes";
    return false;
  }
  return true;
}

bool loadModel(const std::string &path, onnx::ModelProto &model, std::string &error) {
  // A FIFO or a device would block or never end: only regular files.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    error = path + ": cannot open the model file";
    return false;
  }
  std::streamsize size = in.tellg();
  if (size < 0 || uint64_t(size) >= kMaxModelBytes) {
    error = path + ": model file is larger than 2 GiB (use external data)";
    return false;
  }
  std::string bytes(size, '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) {
    error = path + ": cannot read the model file";
    return false;
  }
  return parseModel(bytes, path, model, error);
}

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

std::string nodeLabel(const onnx::NodeProto &node, size_t index) {
  return node.name().empty() ? node.op_type() + "#" + std::to_string(index) : node.name();
}

/// Input and output counts against the operator's ONNX schema (libonnx's
/// registry): importers index a node's inputs and outputs by position, so a
/// node with too few, or with an empty required input, is refused here. The
/// registry of Debian's libonnx stops at an older opset than the importer
/// supports; for a newer model opset only the lower bounds are checked
/// (later versions add optional inputs, e.g. ReduceMax's axes in 18, and
/// have never raised a minimum).
std::string arityError(const onnx::NodeProto &node, int64_t opset) {
  static const int knownOpset = [] {
    const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = map.find(onnx::ONNX_DOMAIN);
    return it == map.end() ? 0 : it->second.second;
  }();
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(node.op_type(), int(opset), "");
  if (!schema) return "";
  const bool exact = opset <= knownOpset;
  const int maxIn = exact ? schema->max_input() : std::numeric_limits<int>::max();
  const int maxOut = exact ? schema->max_output() : std::numeric_limits<int>::max();
  auto range = [](int lo, int hi) {
    return hi == std::numeric_limits<int>::max() ? "at least " + std::to_string(lo)
           : lo == hi                            ? std::to_string(lo)
                                                 : std::to_string(lo) + " to " + std::to_string(hi);
  };
  if (node.input_size() < schema->min_input() || node.input_size() > maxIn)
    return "has " + std::to_string(node.input_size()) + " inputs; the operator takes " +
           range(schema->min_input(), maxIn);
  for (int i = 0; i < schema->min_input(); ++i)
    if (node.input(i).empty() && schema->inputs().size() > size_t(i) &&
        schema->inputs()[i].GetOption() == onnx::OpSchema::FormalParameterOption::Single)
      return "required input " + std::to_string(i) + " is empty";
  if (node.output_size() < schema->min_output() || node.output_size() > maxOut)
    return "has " + std::to_string(node.output_size()) + " outputs; the operator has " +
           range(schema->min_output(), maxOut);
  return "";
}

/// Structure and coverage: every problem, not just the first.
void checkGraph(const onnx::ModelProto &model, CoverageReport &report) {
  const auto &graph = model.graph();
  int64_t opset = report.opset;
  std::unordered_set<std::string> defined;
  for (const auto &i : graph.initializer()) defined.insert(i.name());
  // Two graph inputs of one name would bind one value twice: the caller's
  // second tensor would be silently ignored.
  std::unordered_set<std::string> inputNames;
  for (const auto &i : graph.input()) {
    defined.insert(i.name());
    if (!inputNames.insert(i.name()).second)
      report.unsupported.push_back({"<graph>", "input", opset, "graph input '" + i.name() + "' is declared twice"});
  }
  std::unordered_set<std::string> produced;
  const auto &importers = opImporters();
  for (int n = 0; n < graph.node_size(); ++n) {
    const auto &node = graph.node(n);
    std::string label = nodeLabel(node, n);
    report.opCounts[node.op_type()]++;
    auto add = [&](const std::string &reason) { report.unsupported.push_back({label, node.op_type(), opset, reason}); };
    auto it = importers.find(importerKey(node));
    bool otherDomain = !node.domain().empty() && node.domain() != "ai.onnx";
    if (it == importers.end() && otherDomain) {
      add("operator domain '" + node.domain() + "' is not supported");
      continue;
    }
    if (it == importers.end())
      add("operator is not supported");
    else if (opset < it->second.minOpset || opset > it->second.maxOpset)
      add("opset " + std::to_string(opset) + " is outside the supported range " + std::to_string(it->second.minOpset) +
          "-" + std::to_string(it->second.maxOpset));
    else if (std::string why = arityError(node, opset); !why.empty())
      add(why);
    else if (std::string why = it->second.check(NodeAttrs(node), opset); !why.empty())
      add(why);
    for (const auto &in : node.input())
      if (!in.empty() && !defined.count(in))
        add("reads '" + in + "', which no earlier node, input or initializer defines (undefined value or cycle)");
    for (const auto &out : node.output()) {
      if (out.empty()) continue;
      if (!produced.insert(out).second || defined.count(out)) add("output '" + out + "' is defined more than once");
      defined.insert(out);
    }
  }
  for (const auto &out : graph.output())
    if (!defined.count(out.name()))
      report.unsupported.push_back({"<graph>", "output", opset, "graph output '" + out.name() + "' is never produced"});
}
/// Whether a dim_param names nothing: exporters write "?" (paddle2onnx),
/// "-1", "None" or an empty string for a dim they know nothing about.
/// Such a dim is its own symbol, never shared with another dim.
bool isAnonymousDimParam(const std::string &p) {
  if (p.empty() || p == "?" || p == "None" || p == "none" || p == "unk" || p == "*") return true;
  size_t i = p[0] == '-' || p[0] == '+' ? 1 : 0;
  return i < p.size() && p.find_first_not_of("0123456789", i) == std::string::npos;
}

/// The symbol of input `in`'s dim `d`: its dim_param, or `<input>_dim<d>`
/// for an unnamed or anonymous one.
std::string inputDimName(const onnx::ValueInfoProto &in, int d) {
  const auto &dim = in.type().tensor_type().shape().dim(d);
  if (dim.has_dim_param() && !isAnonymousDimParam(dim.dim_param())) return dim.dim_param();
  return in.name() + "_dim" + std::to_string(d);
}

/// The shape of graph input `in` as the entry signature takes it: the
/// model's dims with --input-shape / --dim applied (`usedDims` collects the
/// dim names that occurred), a negative dim_value taken as dynamic; the dim names
/// of the dynamic dims. False with `error` on a bad or conflicting shape.
bool resolveInputShape(const std::string &path, const onnx::ValueInfoProto &in, const ImportOptions &options,
                       std::set<std::string> &usedDims, SmallVectorImpl<int64_t> &shape,
                       SmallVectorImpl<std::string> &names, SmallVectorImpl<int64_t> &dimMin,
                       SmallVectorImpl<int64_t> &dimMax, std::string &error) {
  const auto &dims = in.type().tensor_type().shape();
  std::string what = path + ": input '" + in.name() + "'";
  // The runtime's tensors have at most V4F_MAX_RANK (8) dims: a graph input
  // of more is refused here, not by the first run.
  constexpr int kMaxInputRank = 8;
  if (dims.dim_size() > kMaxInputRank) {
    error = what + " has rank " + std::to_string(dims.dim_size()) + "; artifacts take inputs of at most " +
            std::to_string(kMaxInputRank) + " dims";
    return false;
  }
  const std::vector<int64_t> *pinned = nullptr;
  if (auto it = options.inputShapes.find(in.name()); it != options.inputShapes.end()) {
    pinned = &it->second;
    if ((int64_t)pinned->size() != dims.dim_size()) {
      error = what + " has rank " + std::to_string(dims.dim_size()) + ", but --input-shape gives " +
              std::to_string(pinned->size()) + " dims";
      return false;
    }
  }
  int64_t staticElements = 1;
  for (int d = 0; d < dims.dim_size(); ++d) {
    const auto &dim = dims.dim(d);
    bool hasValue = dim.has_dim_value() && dim.dim_value() > 0;
    if (dim.has_dim_value() && dim.dim_value() < 0 && options.notes)
      options.notes->push_back(what + " dim " + std::to_string(d) + " is declared as " +
                               std::to_string(dim.dim_value()) + ": taken as a dynamic dim");
    // dim_value 0 is a real (empty) dim; a negative one means "unknown".
    bool isZero = dim.has_dim_value() && dim.dim_value() == 0;
    std::string name = inputDimName(in, d);
    int64_t value = ShapedType::kDynamic;
    if (hasValue || isZero) value = dim.dim_value();
    int64_t lo = -1, hi = -1;
    if (value == ShapedType::kDynamic) {
      if (auto it = options.dimValues.find(name); it != options.dimValues.end()) {
        value = it->second;
        usedDims.insert(name);
      } else if (auto b = options.dimBounds.find(name); b != options.dimBounds.end()) {
        usedDims.insert(name);
        if (b->second.first == b->second.second)
          value = b->second.first;
        else
          lo = b->second.first, hi = b->second.second;
      }
    }
    if (pinned) {
      int64_t p = (*pinned)[d];
      if (value != ShapedType::kDynamic && value != p) {
        error = what + " dim " + std::to_string(d) + " is " + std::to_string(value) + ", but --input-shape gives " +
                std::to_string(p);
        return false;
      }
      value = p;
    }
    if (value != ShapedType::kDynamic && value > 0 && staticElements > (int64_t(1) << 40) / value) {
      error = what + " claims more than 2^40 elements";
      return false;
    }
    if (value != ShapedType::kDynamic && value > 0) staticElements *= value;
    if (value != ShapedType::kDynamic) lo = hi = -1;
    shape.push_back(value);
    names.push_back(value == ShapedType::kDynamic ? name : "");
    dimMin.push_back(lo);
    dimMax.push_back(hi);
  }
  return true;
}

/// The constant an --input-value gives graph input `in`, checked against
/// the input's element type and dims; null with `error` when it does not fit.
DenseElementsAttr foldInputValue(MLIRContext &ctx, const std::string &path, const std::string &modelDir,
                                 const onnx::ValueInfoProto &in, const InputValue &value, std::string &error) {
  std::string what = path + ": --input-value for input '" + in.name() + "'";
  if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) {
    error = what + ": the input is not a tensor of known rank";
    return {};
  }
  const auto &tt = in.type().tensor_type();
  if (value.dtype != tt.elem_type()) {
    error = what + ": the file holds " + onnxTypeName(value.dtype) + ", the input is " + onnxTypeName(tt.elem_type());
    return {};
  }
  const auto &dims = tt.shape();
  bool fits = dims.dim_size() == (int)value.shape.size();
  for (int d = 0; fits && d < dims.dim_size(); ++d)
    fits = !(dims.dim(d).has_dim_value() && dims.dim(d).dim_value() >= 0 && dims.dim(d).dim_value() != value.shape[d]);
  if (!fits) {
    std::string shape;
    for (int64_t d : value.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    error = what + ": the file's shape [" + shape + "] does not fit the input's declared dims";
    return {};
  }
  onnx::TensorProto tensor;
  tensor.set_name(in.name());
  tensor.set_data_type(value.dtype);
  for (int64_t d : value.shape) tensor.add_dims(d);
  tensor.set_raw_data(value.data);
  auto attr = importTensor(ctx, tensor, modelDir, error);
  if (!attr) error = what + ": " + error;
  return attr;
}

/// Every --input-shape / --dim name must exist in the model.
bool checkShapeOptionNames(const std::string &path, const onnx::GraphProto &graph, const ImportOptions &options,
                           const std::set<std::string> &inputs, const std::set<std::string> &usedDims,
                           std::string &error) {
  for (const auto &[name, value] : options.inputValues) {
    if (!inputs.count(name)) {
      error = path + ": --input-value names '" + name + "', which is not an input of the model";
      return false;
    }
  }
  for (const auto &[name, dims] : options.inputShapes) {
    if (options.inputValues.count(name)) {
      error = path + ": input '" + name + "' is given both --input-shape and --input-value";
      return false;
    }
    if (!inputs.count(name)) {
      error = path + ": --input-shape names '" + name + "', which is not an input of the model";
      return false;
    }
  }
  std::vector<std::string> dimOptionNames;
  for (const auto &[name, value] : options.dimValues) dimOptionNames.push_back(name);
  for (const auto &[name, bounds] : options.dimBounds) dimOptionNames.push_back(name);
  for (const std::string &name : dimOptionNames) {
    if (usedDims.count(name)) continue;
    // A dim given a value may also be one that --input-shape pinned, or the
    // model fixed: only a name that occurs nowhere is an error.
    bool known = false;
    for (const auto &in : graph.input())
      if (in.type().has_tensor_type())
        for (int d = 0; d < in.type().tensor_type().shape().dim_size(); ++d) known |= inputDimName(in, d) == name;
    if (!known) {
      error = path + ": --dim names '" + name + "', which is not a symbolic dim of any input";
      return false;
    }
  }
  return true;
}

} // namespace

std::string CoverageReport::formatError() const {
  std::ostringstream os;
  os << modelPath << ": " << unsupported.size() << " node(s) cannot be compiled:";
  for (const auto &u : unsupported)
    os << "\n  node '" << u.nodeName << "' (" << u.opType << ", opset " << u.opset << "): " << u.reason;
  return os.str();
}

bool checkONNXModel(const std::string &path, CoverageReport &report, std::string &error) {
  onnx::ModelProto model;
  if (!loadModel(path, model, error)) return false;
  report.modelPath = path;
  report.irVersion = model.ir_version();
  report.opset = defaultOpset(model);
  checkGraph(model, report);
  return true;
}

//===----------------------------------------------------------------------===//
// Import
//===----------------------------------------------------------------------===//

namespace {
/// Imports a parsed model; `path` names it in errors and locations, external
/// data is read relative to `modelDir`.
OwningOpRef<ModuleOp> importModel(MLIRContext &ctx, const onnx::ModelProto &model, const std::string &path,
                                  const std::string &modelDir, std::string &error, const ImportOptions &options) {
  CoverageReport report;
  report.modelPath = path;
  report.opset = defaultOpset(model);
  if (report.opset == 0) {
    // A model of other domains' operators only (an ai.onnx.ml tree
    // ensemble, say) needs no default-domain opset.
    bool defaultOps = llvm::any_of(
        model.graph().node(), [](const onnx::NodeProto &n) { return n.domain().empty() || n.domain() == "ai.onnx"; });
    if (defaultOps || model.graph().node_size() == 0) {
      error = path + ": the model imports no default-domain opset";
      return nullptr;
    }
    report.opset = 1;
  }
  checkGraph(model, report);
  if (!report.unsupported.empty()) {
    error = report.formatError();
    return nullptr;
  }
  const auto &graph = model.graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(&ctx, path, 0, 0));
  GraphState g{ctx, OpBuilder(&ctx), modelDir, {}, {}, 0, options.maxLoopIterations};
  g.opset = report.opset;

  for (const auto &init : graph.initializer()) {
    auto attr = importTensor(ctx, init, modelDir, error);
    if (!attr) {
      error = path + ": initializer " + error;
      return nullptr;
    }
    g.constants[init.name()] = attr;
  }

  // Entry signature: graph inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  SmallVector<SmallVector<std::string>> argDimNames;
  std::set<std::string> usedDims, inputNames;
  SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> argBounds;
  for (const auto &in : graph.input()) {
    if (g.constants.count(in.name())) continue;
    inputNames.insert(in.name());
    if (auto it = options.inputValues.find(in.name()); it != options.inputValues.end()) {
      auto attr = foldInputValue(ctx, path, modelDir, in, it->second, error);
      if (!attr) return nullptr;
      g.constants[in.name()] = attr;
      continue;
    }
    if (!in.type().has_tensor_type()) {
      error = path + ": input '" + in.name() + "' is not a tensor";
      return nullptr;
    }
    const auto &tt = in.type().tensor_type();
    Type et = importElementType(ctx, tt.elem_type());
    if (!et) {
      error = path + ": input '" + in.name() + "' has unsupported element type " + onnxTypeName(tt.elem_type());
      return nullptr;
    }
    if (!tt.has_shape()) {
      error = path + ": input '" + in.name() + "' has no shape (its rank must be known)";
      return nullptr;
    }
    SmallVector<int64_t> shape, dimMin, dimMax;
    SmallVector<std::string> names;
    if (!resolveInputShape(path, in, options, usedDims, shape, names, dimMin, dimMax, error)) return nullptr;
    argBounds.push_back({dimMin, dimMax});
    argTypes.push_back(RankedTensorType::get(shape, et));
    args.push_back(&in);
    argDimNames.push_back(names);
  }

  if (!checkShapeOptionNames(path, graph, options, inputNames, usedDims, error)) return nullptr;

  auto funcType = FunctionType::get(&ctx, argTypes, {});
  g.builder.setInsertionPointToEnd(module->getBody());
  auto func = g.builder.create<func::FuncOp>(module->getLoc(), "main", funcType);
  Block *entry = func.addEntryBlock();
  for (size_t i = 0; i < args.size(); ++i) {
    g.values[args[i]->name()] = entry->getArgument(i);
    SmallVector<Attribute> names;
    for (auto &n : argDimNames[i]) names.push_back(StringAttr::get(&ctx, n));
    func.setArgAttr(i, "v4f.name", StringAttr::get(&ctx, args[i]->name()));
    func.setArgAttr(i, "v4f.dim_names", ArrayAttr::get(&ctx, names));
    const auto &[lo, hi] = argBounds[i];
    if (llvm::any_of(hi, [](int64_t v) { return v >= 0; })) {
      func.setArgAttr(i, "v4f.dim_min", DenseI64ArrayAttr::get(&ctx, lo));
      func.setArgAttr(i, "v4f.dim_max", DenseI64ArrayAttr::get(&ctx, hi));
    }
  }
  g.builder.setInsertionPointToEnd(entry);

  auto step = [&](const onnx::NodeProto &node, int n) -> LogicalResult {
    std::string label = nodeLabel(node, n);
    Location loc = NameLoc::get(StringAttr::get(&ctx, label), FileLineColLoc::get(&ctx, path, n + 1, 0));
    std::string nodeError;
    if (succeeded(importNode(g, node, report.opset, loc, nodeError))) return success();
    error = path + ": node '" + label + "' (" + node.op_type() + ", opset " + std::to_string(report.opset) +
            "): " + nodeError;
    return failure();
  };
  if (failed(importNodeList(g, graph.node(), graph.output(), step))) return nullptr;

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &out : graph.output()) {
    Value v;
    if (auto it = g.values.find(out.name()); it != g.values.end())
      v = it->second;
    else {
      auto cst = g.constants.find(out.name());
      v = g.builder.create<arith::ConstantOp>(func.getLoc(), cst->second);
    }
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  g.builder.create<func::ReturnOp>(func.getLoc(), results);
  func.setType(FunctionType::get(&ctx, argTypes, resultTypes));
  for (int i = 0; i < graph.output_size(); ++i)
    func.setResultAttr(i, "v4f.name", StringAttr::get(&ctx, graph.output(i).name()));
  return module;
}
} // namespace

OwningOpRef<ModuleOp> importONNXModel(MLIRContext &ctx, const std::string &path, std::string &error,
                                      const ImportOptions &options) {
  ctx.loadDialect<V4FDialect, arith::ArithDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (!loadModel(path, model, error)) return nullptr;
  std::string modelDir = ".";
  if (auto slash = path.rfind('/'); slash != std::string::npos) modelDir = path.substr(0, slash);
  if (modelDir.empty()) modelDir = "/";
  return importModel(ctx, model, path, modelDir, error, options);
}

OwningOpRef<ModuleOp> importONNXModelFromMemory(MLIRContext &ctx, const std::string &bytes, const std::string &name,
                                                const std::string &modelDir, std::string &error,
                                                const ImportOptions &options) {
  ctx.loadDialect<V4FDialect, arith::ArithDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (!parseModel(bytes, name, model, error)) return nullptr;
  return importModel(ctx, model, name, modelDir, error, options);
}

} // namespace v4f
