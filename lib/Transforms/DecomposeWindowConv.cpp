//===- DecomposeWindowConv.cpp - v4f.window_conv -> gathers and a matmul ----===//
//
// A convolution the conv kernels do not take (3-D, or a weight whose dims
// are known only at run time) as an explicit im2col: every spatial dim of
// the padded input is gathered at the window taps k * dilation + o * stride
// (an index table [K, O] built from two ranges whose sizes the plan
// computes), which turns [N, C, P1..Pk] into [N, C, K1, O1, .., Kk, Ok]; a
// transpose and a reshape give the columns [N, G, C/G * K1..Kk, O1..Ok], and
// one matmul with the weight viewed as [1, G, F/G, C/G * K1..Kk] computes
// every group. The columns are K1..Kk times the input: this is the general
// path, not the fast one.
//
//===----------------------------------------------------------------------===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEWINDOWCONV
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// A 1-element dim as a 0-D int64 tensor (v4f.range's operands).
Value scalarOf(BuildContext &c, Value dim) { return reshapeTo(c, dim, {}); }

/// [0, n) * step as a 1-D int64 tensor.
FailureOr<Value> scaledRange(BuildContext &c, Value n, int64_t step) {
  auto i64 = c.b.getI64Type();
  auto scalar = [&](int64_t v) {
    return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
  };
  Value r = c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), scalar(0), scalarOf(c, n), scalar(1));
  if (step == 1) return r;
  return buildElementwise(c, {r, scalar(step)}, i64, [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
    return b.create<arith::MulIOp>(l, a[0], a[1]);
  });
}

LogicalResult decomposeWindowConv(BuildContext &c, WindowConvOp op, SmallVectorImpl<Value> &results) {
  Value x = op.getInput(), w = op.getWeight();
  int64_t rank = typeOf(x).getRank(), k = rank - 2, G = op.getGroups();
  auto strides = op.getStrides(), dilations = op.getDilations(), pads = op.getPads();
  auto i64 = c.b.getI64Type();

  // --- The padded input --------------------------------------------------------
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    SmallVector<int64_t> axes, shape(typeOf(x).getShape());
    for (int64_t i = 0; i < k; ++i) {
      axes.push_back(2 + i);
      if (shape[2 + i] != kDyn) shape[2 + i] += pads[i] + pads[k + i];
    }
    auto vec = [&](ArrayRef<int64_t> v) {
      return c.b.create<arith::ConstantOp>(c.loc,
                                           DenseElementsAttr::get(RankedTensorType::get({int64_t(v.size())}, i64), v));
    };
    x = c.b.create<PadOp>(c.loc, RankedTensorType::get(shape, typeOf(x).getElementType()), x, vec(pads), Value(),
                          vec(axes), c.b.getStringAttr("constant"));
  }

  // --- One gather of the window taps per spatial dim ---------------------------
  SmallVector<Value> kernel, outSizes;
  Value cols = x;
  for (int64_t i = 0; i < k; ++i) {
    Value K = dimOf(c, w, 2 + i), P = dimOf(c, x, 2 + i);
    // O = (P - dilation * (K - 1) - 1) / stride + 1
    auto reach = dimMul(c, K, dimConstant(c, dilations[i]));
    if (failed(reach)) return failure();
    auto span = dimSub(c, P, *reach);
    if (failed(span)) return failure();
    auto shifted = dimAdd(c, *span, dimConstant(c, dilations[i] - 1));
    if (failed(shifted)) return failure();
    auto steps = dimDiv(c, *shifted, dimConstant(c, strides[i]));
    if (failed(steps)) return failure();
    auto O = dimAdd(c, *steps, dimConstant(c, 1));
    if (failed(O)) return failure();
    kernel.push_back(K), outSizes.push_back(*O);
    auto taps = scaledRange(c, K, dilations[i]);
    auto starts = scaledRange(c, *O, strides[i]);
    if (failed(taps) || failed(starts)) return failure();
    auto column = reshapeToDims(c, *taps, {dimOf(c, *taps, 0), dimConstant(c, 1)});
    auto row = reshapeToDims(c, *starts, {dimConstant(c, 1), dimOf(c, *starts, 0)});
    if (failed(column) || failed(row)) return failure();
    auto index = buildElementwise(c, {*column, *row}, i64, [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      return b.create<arith::AddIOp>(l, a[0], a[1]);
    });
    if (failed(index)) return failure();
    cols = c.b.create<GatherOp>(c.loc, cols, *index, c.b.getI64IntegerAttr(2 + 2 * i));
  }

  // --- Columns [N, G, C/G * K, O] times the weight [1, G, F/G, C/G * K] ---------
  SmallVector<int64_t> perm = {0, 1};
  for (int64_t i = 0; i < k; ++i) perm.push_back(2 + 2 * i);
  for (int64_t i = 0; i < k; ++i) perm.push_back(3 + 2 * i);
  cols = transposeBy(c, cols, perm);
  Value groups = dimConstant(c, G), Cg = dimOf(c, w, 1), depth = Cg, plane = dimConstant(c, 1);
  for (int64_t i = 0; i < k; ++i) {
    auto d = dimMul(c, depth, kernel[i]);
    auto p = dimMul(c, plane, outSizes[i]);
    if (failed(d) || failed(p)) return failure();
    depth = *d, plane = *p;
  }
  auto colsView = reshapeToDims(c, cols, {dimOf(c, x, 0), groups, depth, plane});
  Value F = dimOf(c, w, 0);
  auto Fg = dimDiv(c, F, groups);
  if (failed(colsView) || failed(Fg)) return failure();
  auto wView = reshapeToDims(c, w, {dimConstant(c, 1), groups, *Fg, depth});
  if (failed(wView)) return failure();
  auto product = buildMatMul(c, *wView, *colsView);
  if (failed(product)) return failure();
  SmallVector<Value> outDims = {dimOf(c, *product, 0), F};
  outDims.append(outSizes.begin(), outSizes.end());
  auto y = reshapeToDims(c, *product, outDims);
  if (failed(y)) return failure();
  Value out = *y;
  if (Value bias = op.getBias()) {
    SmallVector<Value> biasDims = {dimOf(c, bias, 0)};
    biasDims.append(k, dimConstant(c, 1));
    auto b = reshapeToDims(c, bias, biasDims);
    if (failed(b)) return failure();
    out = c.b.create<AddOp>(c.loc, out, *b);
  }
  // The op's result type (the plan checks the dims it states).
  auto typed = reshapeToType(c, out, typeOf(op.getResult()), /*exact=*/false);
  if (failed(typed)) return failure();
  out = *typed;
  results.push_back(out);
  return success();
}

struct DecomposeWindowConvPass : v4f::impl::DecomposeWindowConvBase<DecomposeWindowConvPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<WindowConvOp>(getOperation(), decomposeWindowConv))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeWindowConvPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<WindowConvOp>>(patterns.getContext(), decomposeWindowConv);
}

std::unique_ptr<Pass> v4f::createDecomposeWindowConvPass() { return std::make_unique<DecomposeWindowConvPass>(); }
