//===- NodeContext.h - what an ONNX op importer sees of its node -*- C++ -*-===//
#ifndef V4F_LIB_IMPORT_ONNX_NODECONTEXT_H
#define V4F_LIB_IMPORT_ONNX_NODECONTEXT_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/Utils/Builders.h"
#include "v4f/Import/ONNXImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "onnx/onnx_pb.h"

#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace v4f {

/// Attribute access for one node (used by both the check and the import).
class NodeAttrs {
public:
  explicit NodeAttrs(const onnx::NodeProto &node);
  bool has(const std::string &name) const { return attrs.count(name); }
  int64_t getInt(const std::string &name, int64_t dflt) const;
  float getFloat(const std::string &name, float dflt) const;
  std::string getString(const std::string &name, const std::string &dflt) const;
  std::vector<int64_t> getInts(const std::string &name, std::vector<int64_t> dflt = {}) const;
  const onnx::AttributeProto *get(const std::string &name) const;

private:
  std::unordered_map<std::string, const onnx::AttributeProto *> attrs;
};

/// State shared while importing one graph.
struct GraphState {
  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  std::string modelDir;
  std::unordered_map<std::string, mlir::Value> values;
  std::unordered_map<std::string, mlir::DenseElementsAttr> constants;
  /// Nodes imported from If/Loop/Scan subgraphs so far (bounded: unrolling
  /// must not let a small model grow without limit).
  int64_t inlinedNodes = 0;
  /// Loop/Scan iteration bound (ImportOptions::maxLoopIterations).
  int64_t maxLoopIterations = 4096;
  /// The model's default-domain opset (the nodes importNodeList synthesizes
  /// are written for it).
  int64_t opset = 0;
  /// Set by an If whose condition is known only at run time and whose
  /// branches differ in rank: importNodeList then moves the If's consumers
  /// into both branches (IfSpecialize.cpp) instead of failing.
  bool rankSplit = false;
  /// The Ifs importNodeList synthesized (live as long as the import); their
  /// importer may turn a branch that cannot be compiled into a run-time error.
  std::deque<onnx::NodeProto> synthesized;
  std::unordered_set<const onnx::NodeProto *> specialized;
};

class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset, GraphState &g, mlir::Location loc)
      : node(node), opset(opset), attrs(node), g(g), b(g.builder), loc(loc) {}

  const onnx::NodeProto &node;
  int64_t opset;
  NodeAttrs attrs;
  GraphState &g;
  mlir::OpBuilder &b;
  mlir::Location loc;
  std::string error;

  size_t numInputs() const { return node.input_size(); }
  bool hasInput(size_t i) const { return i < (size_t)node.input_size() && !node.input(i).empty(); }
  /// Input i's value. A missing input (index out of range, empty, or a name
  /// with no value) gives a placeholder and sets `inputError`, which fails
  /// the node after its importer returns.
  mlir::Value input(size_t i);
  std::string inputError;
  mlir::RankedTensorType inputType(size_t i) { return llvm::cast<mlir::RankedTensorType>(input(i).getType()); }
  /// The constant value of input i, if it is an initializer or Constant output.
  std::optional<mlir::DenseElementsAttr> constantInput(size_t i) const;
  std::optional<std::vector<int64_t>> constantInts(size_t i) const;
  std::optional<float> constantScalar(size_t i) const;
  bool outputUsed(size_t i) const { return i < (size_t)node.output_size() && !node.output(i).empty(); }
  void setOutput(size_t i, mlir::Value v) {
    if (i < (size_t)node.output_size())
      g.values[node.output(i)] = v;
    else if (inputError.empty())
      inputError = "output " + std::to_string(i) + " is missing";
  }
  void setConstantOutput(size_t i, mlir::DenseElementsAttr attr);

  mlir::Value missingInput(const std::string &why);
  mlir::LogicalResult fail(const std::string &msg) {
    error = msg;
    return mlir::failure();
  }
  mlir::Value constF32(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> values);
};

/// The newest ONNX opset every importer accepts (OpImporter::maxOpset).
constexpr int64_t kMaxOpset = 28;
/// A dynamic dimension in the importers' tensor types.
constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

struct OpImporter {
  int64_t minOpset, maxOpset;
  /// Attribute-level check that needs no shapes: returns a reason or "".
  std::function<std::string(const NodeAttrs &, int64_t opset)> check;
  std::function<mlir::LogicalResult(NodeContext &)> import;
};

/// The OpImporter::check of an op whose attributes need no check.
inline std::string noCheck(const NodeAttrs &, int64_t) { return ""; }

const std::unordered_map<std::string, OpImporter> &opImporters();
/// The opImporters() key of a node: its op_type in the default domain,
/// "domain:op_type" in any other.
std::string importerKey(const onnx::NodeProto &node);

/// Imports one node through the importer table (storage-type guard
/// included); on failure `error` says why. The caller checked that every
/// input name is bound in g.values or g.constants.
mlir::LogicalResult importNode(GraphState &g, const onnx::NodeProto &node, int64_t opset, mlir::Location loc,
                               std::string &error);
/// Imports one node of a list (its importer's errors formatted by the caller).
using NodeStep = std::function<mlir::LogicalResult(const onnx::NodeProto &node, int index)>;
/// Imports `nodes` in order through `step` (the graph's nodes, or a
/// subgraph's). A run-time If whose branches differ in rank is specialized:
/// the nodes after it that read its outputs (directly or from a subgraph)
/// move into a copy in each branch of one synthesized If, whose outputs are
/// those of `liveOuts` (the graph's or the body's outputs) they produce;
/// within a branch the rank is known again (IfSpecialize.cpp).
mlir::LogicalResult importNodeList(GraphState &g, const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                                   const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &liveOuts,
                                   const NodeStep &step);
/// Registers If, Loop and Scan, whose subgraphs are inlined (ControlFlowOps.cpp).
void addControlFlowImporters(std::unordered_map<std::string, OpImporter> &table);

/// NodeContext forms of the shared builders (v4f/Dialect/V4F/Utils/Builders.h):
/// the node's builder and location, failures reported through c.fail.
/// Builds a v4f.elementwise over `inputs` (broadcast) whose body `body`
/// computes the result element of type `resultElement`.
mlir::FailureOr<mlir::Value> buildElementwise(NodeContext &c, llvm::ArrayRef<mlir::Value> inputs,
                                              mlir::Type resultElement, const ElementwiseBodyFn &body);

/// Small builders shared by the composite importers (ImportBuilders.cpp).
/// Reshape to `shape`; `sources[i] >= 0` takes result dim i from input dim
/// sources[i] (dynamic dims); empty sources mean a static reshape.
mlir::Value reshapeTo(NodeContext &c, mlir::Value in, llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> sources = {});
/// Transpose by `perm` (the input itself for the identity).
mlir::Value transposeBy(NodeContext &c, mlir::Value in, llvm::ArrayRef<int64_t> perm);
/// Gives input i the dims of `shape` (kDyn: any) where its own are dynamic:
/// the op's definition fixes them (a grid's last dim, a threshold's one
/// element) but the model declares them symbolic. Through a reshape whose
/// element count the plan checks at run time; later uses of the input see
/// the refined value. False (nothing changed) when the rank or a static dim
/// differs.
bool refineInput(NodeContext &c, size_t i, llvm::ArrayRef<int64_t> shape);
/// `in` reshaped at run time so that result dim k is the product of input
/// dims [bounds[k], bounds[k + 1]) (a v4f.shape / multiply / concat chain
/// the plan follows into the reshape's shape operand).
mlir::FailureOr<mlir::Value> reshapeToDimProducts(NodeContext &c, mlir::Value in, llvm::ArrayRef<int64_t> bounds);
/// Splits `v` along `axis` into parts of the given sizes.
llvm::SmallVector<mlir::Value> splitBy(NodeContext &c, mlir::Value v, int64_t axis, llvm::ArrayRef<int64_t> sizes);

/// What element `i` of a 1-D integer (shape) tensor is known to be at
/// compile time: a constant, or dim `dim` of value `dimOf` (a dynamic dim
/// read through v4f.shape), or nothing. Follows constants, v4f.shape, 1-D
/// concat / slice (constant bounds, positive step) / gather (constant
/// indices) and one-element reshapes (ImportBuilders.cpp).
struct ShapeElement {
  std::optional<int64_t> value;
  mlir::Value dimOf;
  int64_t dim = -1;
};
ShapeElement shapeElement(mlir::Value v, int64_t i);

/// When `v` is a v4f.elementwise over constants only, evaluates it (erasing
/// the op) and returns the constant result.
std::optional<mlir::DenseElementsAttr> foldElementwise(mlir::Value v);

/// Registers the v4f.elementwise-based importers (ElementwiseOps.cpp).
void addElementwiseImporters(std::unordered_map<std::string, OpImporter> &table);
/// BatchNormalization, LayerNormalization, RMSNormalization (NormalizationOps.cpp).
void addNormalizationImporters(std::unordered_map<std::string, OpImporter> &table);
/// Float-only math functions and activations (ActivationOps.cpp).
void addActivationImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers the shape/indexing importers (ShapeOps.cpp).
void addShapeImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers Tile, CenterCropPad, OneHot, ReverseSequence, NonZero, Compress
/// (ShapePatternOps.cpp); called by addShapeImporters.
void addShapePatternImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (LossOps.cpp).
void addLossImporters(std::unordered_map<std::string, OpImporter> &table);
/// meanAndVariance (Builders.h) of input 0 over `axes` (ImportBuilders.cpp).
mlir::FailureOr<MomentValues> meanAndVariance(NodeContext &c, llvm::ArrayRef<int64_t> axes);

/// Registers Attention, imported as a composition (AttentionOps.cpp).
void addAttentionImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers RNN, GRU and LSTM, unrolled over the static sequence (RecurrentOps.cpp).
void addRecurrentImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers Einsum, lowered to transpose/reshape/matmul/reduce (EinsumOp.cpp).
void addEinsumImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers GridSample and AffineGrid, imported as compositions (GridSampleOps.cpp).
void addGridSampleImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers the ops imported whole as v4f composite ops (CompositeOps.cpp).
void addCompositeImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers ScatterElements, Scatter, ScatterND, GatherND and TopK (IndexingOps.cpp).
void addIndexingImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers Resize (ResizeOp.cpp).
void addResizeImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers ReduceX / ArgMax / ArgMin (ReductionOps.cpp).
void addReductionImporters(std::unordered_map<std::string, OpImporter> &table);
/// Registers the quantization operators (QuantizationOps.cpp).
void addQuantizationImporters(std::unordered_map<std::string, OpImporter> &table);
/// Conv/pool attribute check (auto_pad, 2-D windows, positive strides) (ONNXOps.cpp).
std::string checkWindowAttrs(const NodeAttrs &a, int64_t opset);
/// A float32 2-D v4f.conv of `x` and `weight` (+ optional float32 `bias`)
/// from the node's Conv attributes (kernel_shape, strides, dilations, pads,
/// auto_pad, group), with Conv's shape checks (ONNXOps.cpp).
/// Imports a float32-only op whose inputs are float16/bfloat16 by converting
/// those inputs to float32, importing the node, and rounding its data output
/// back to the inputs' type (numpy computes these in float32 too, up to the
/// final rounding) (ONNXOps.cpp).
mlir::LogicalResult importThroughFloat32(NodeContext &c, mlir::LogicalResult (*import)(NodeContext &));
/// `axis` in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Input i must be float32 (a clear error otherwise).
mlir::LogicalResult requireF32(NodeContext &c, size_t i);
/// Registers Conv, ConvTranspose and the pooling ops (WindowOps.cpp).
void addWindowImporters(std::unordered_map<std::string, OpImporter> &table);
/// ConvTranspose whose channels or kernel are known only at run time
/// (ConvTransposeRuntime.cpp; called by the ConvTranspose importer).
mlir::LogicalResult importConvTransposeRuntime(NodeContext &c);
/// Operators of other domains are keyed "domain:op_type" (importerKey).
void addTreeEnsembleImporters(std::unordered_map<std::string, OpImporter> &table);
/// com.microsoft DynamicQuantizeLSTM, expanded into standard ops that round
/// as ONNX Runtime does (QuantizedLSTM.cpp).
void addQuantizedRecurrentImporters(std::unordered_map<std::string, OpImporter> &table);
/// ai.onnx.ml Scaler, Binarizer, Normalizer and ArrayFeatureExtractor (MLOps.cpp).
void addMLImporters(std::unordered_map<std::string, OpImporter> &table);
/// ai.onnx.ml TreeEnsembleClassifier / TreeEnsembleRegressor (TreeEnsembleLegacy.cpp).
void addLegacyTreeEnsembleImporters(std::unordered_map<std::string, OpImporter> &table);
/// ONNX Runtime's contrib normalizations and GELUs (ContribOps.cpp).
void addContribImporters(std::unordered_map<std::string, OpImporter> &table);
mlir::FailureOr<mlir::Value> buildConv2D(NodeContext &c, mlir::Value x, mlir::Value weight, mlir::Value bias);
/// A 2-D convolution window resolved from the node's Conv attributes for
/// input `in` and weight `w` (Conv's checks), and the output shape.
struct ConvWindow {
  llvm::SmallVector<int64_t> strides, dilations, pads, shape;
  int64_t group = 1;
  /// Spatial axes whose SAME auto_pad depends on a run-time size (only with
  /// allowRuntimeSame): their pads are 0 here, the caller pads at run time.
  llvm::SmallVector<bool> runtimeSame;
};
mlir::FailureOr<ConvWindow> convWindow(NodeContext &c, mlir::RankedTensorType in, mlir::RankedTensorType w,
                                       bool allowRuntimeSame = false);
/// `x` padded at run time on the spatial `axes` as auto_pad SAME_UPPER /
/// SAME_LOWER asks for a window of `kernel`, `strides`, `dilations`
/// (a v4f.pad whose pads the plan computes from x's dims) (WindowOps.cpp).
mlir::FailureOr<mlir::Value> padSameAtRunTime(NodeContext &c, mlir::Value x, llvm::ArrayRef<int64_t> kernel,
                                              llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                                              llvm::ArrayRef<bool> axes, float padValue);
/// numpy-style matmul of two float32 values (rank-1 operands handled) (ONNXOps.cpp).
mlir::LogicalResult importMatMulValues(NodeContext &c, mlir::Value a, mlir::Value b, mlir::Value &out);
/// Reshape whose shape input is known only at run time.
mlir::LogicalResult importRuntimeReshape(NodeContext &c);
/// Non-float32 forms of ops that import to named float ops.
mlir::LogicalResult importGenericArith(NodeContext &c, const std::string &op);
mlir::LogicalResult importGenericUnary(NodeContext &c, const std::string &op);
mlir::LogicalResult importGenericClip(NodeContext &c);

} // namespace v4f

#endif
