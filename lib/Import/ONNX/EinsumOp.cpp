//===- EinsumOp.cpp - ONNX Einsum -> v4f.einsum ---------------------------===//
//
// Einsum imports whole as v4f.einsum (v4f-decompose-einsum lowers it); the
// importer checks the inputs and the equation against them
// (parseEinsumEquation) so that a bad node is reported at import.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

using namespace mlir;

namespace v4f {
namespace {

std::string checkEinsum(const NodeAttrs &a, int64_t) {
  if (!a.has("equation")) return "the equation attribute is required";
  return "";
}

LogicalResult importEinsum(NodeContext &c) {
  if (c.numInputs() == 0) return c.fail("Einsum needs at least one input");
  Type io;
  SmallVector<Value> inputs;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (size_t k = 0; k < c.numInputs(); ++k) {
    if (!c.hasInput(k)) return c.fail("Einsum inputs cannot be omitted");
    auto t = c.inputType(k);
    if (k == 0) io = t.getElementType();
    if (t.getElementType() != io) return c.fail("Einsum inputs must share one element type");
    if (!llvm::isa<FloatType>(io)) return c.fail("only float Einsum is supported (integer inputs are not)");
    inputs.push_back(c.input(k));
    shapes.push_back(typeOf(inputs.back()).getShape());
  }
  std::string equation = c.attrs.getString("equation", "");
  EinsumEquation eq;
  if (std::string error = parseEinsumEquation(equation, shapes, eq); !error.empty()) return c.fail(error);
  c.setOutput(
      0, c.b.create<EinsumOp>(c.loc, RankedTensorType::get(eq.resultShape, io), inputs, c.b.getStringAttr(equation)));
  return success();
}

} // namespace

void addEinsumImporters(std::unordered_map<std::string, OpImporter> &t) {
  t["Einsum"] = {12, kMaxOpset, checkEinsum, importEinsum};
}

} // namespace v4f
