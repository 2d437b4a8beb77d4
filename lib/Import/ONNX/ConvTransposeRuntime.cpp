//===- ConvTransposeRuntime.cpp - ConvTranspose over run-time channels / kernels ===//
//
// The form of ConvTranspose that WindowOps.cpp's importer hands over when
// the input's channels or the weight's dims are known only at run time.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace v4f {

/// ConvTranspose whose channels or kernel are known only at run time: the
/// same construction as below with every size a run-time dim (Builders.h):
/// zeros inserted between the input's pixels, one run-time pad (negative
/// amounts crop) to the convolution's input, the weight regrouped and
/// flipped by gathers with run-time indices, then a v4f.window_conv.
LogicalResult importConvTransposeRuntime(NodeContext &c) {
  auto in = c.inputType(0);
  BuildContext bc(c.b, c.loc);
  auto fail = [&]() { return c.fail(bc.error); };
  int64_t group = c.attrs.getInt("group", 1);
  if (group <= 0) return c.fail("group must be positive");
  auto strides = c.attrs.getInts("strides", {1, 1}), dil = c.attrs.getInts("dilations", {1, 1});
  auto outPad = c.attrs.getInts("output_padding", {0, 0});
  if (strides.size() != 2 || dil.size() != 2 || outPad.size() != 2)
    return c.fail("strides/dilations/output_padding must have 2 entries");
  std::string autoPad = c.attrs.getString("auto_pad", "NOTSET");
  auto outputShape = c.attrs.getInts("output_shape");
  auto pads = c.attrs.getInts("pads", {0, 0, 0, 0});
  if (pads.size() != 4) return c.fail("pads must have 4 entries");
  auto i64 = c.b.getI64Type();
  Value x = c.input(0), w = c.input(1);
  Value K[2] = {dimOf(bc, w, 2), dimOf(bc, w, 3)}, In[2] = {dimOf(bc, x, 2), dimOf(bc, x, 3)};
  // Per axis: the pads before / after the zero-inserted input, from
  // full = s (in - 1) + output_padding + (k - 1) d + 1 and the begin / end
  // padding the attributes ask for.
  SmallVector<Value> before, after;
  for (int i = 0; i < 2; ++i) {
    int64_t s = strides[i], d = dil[i], op = outPad[i];
    int64_t target = outputShape.empty() ? -1 : outputShape[outputShape.size() - 2 + i];
    int64_t pb = autoPad == "VALID" ? 0 : pads[i], pe = autoPad == "VALID" ? 0 : pads[2 + i];
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER", upper = autoPad == "SAME_UPPER";
    // before = (k - 1) d - begin; after = (k - 1) d - end + output_padding - (s - 1).
    auto amount = [&](bool wantAfter) {
      return buildElementwise(c, {K[i], In[i]}, i64, [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        auto cst = [&](int64_t v) -> Value { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
        auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
        auto sub = [&](Value x, Value y) -> Value { return b.create<arith::SubIOp>(l, x, y); };
        auto mul = [&](Value x, int64_t y) -> Value { return b.create<arith::MulIOp>(l, x, cst(y)); };
        Value reach = mul(sub(a[0], cst(1)), d); // (k - 1) d
        Value full = add(add(mul(sub(a[1], cst(1)), s), cst(op)), add(reach, cst(1)));
        Value begin = cst(pb), end = cst(pe);
        if (same) {
          Value total = target >= 0 ? sub(full, cst(target)) : add(reach, cst(op + 1 - s));
          // floor(total / 2), from the truncating division the plan follows.
          Value q = b.create<arith::DivSIOp>(l, total, cst(2)), r = b.create<arith::RemSIOp>(l, total, cst(2));
          Value half = b.create<arith::SelectOp>(l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, r, cst(0)),
                                                 sub(q, cst(1)), q);
          begin = upper ? half : sub(total, half);
          end = sub(total, begin);
        } else if (target >= 0) {
          end = sub(sub(full, begin), cst(target));
        }
        return wantAfter ? sub(add(sub(reach, end), cst(op)), cst(s - 1)) : sub(reach, begin);
      });
    };
    auto amounts = amount(false), ends = amount(true);
    if (failed(amounts) || failed(ends)) return failure();
    before.push_back(*amounts), after.push_back(*ends);
  }
  // Zero insertion: [.., n, ..] viewed as [.., n, 1, ..], padded to
  // [.., n, s, ..], viewed as [.., n * s, ..] (the s - 1 trailing zeros are
  // taken off by `after`).
  auto insertZeros = [&](Value v, int axis, int64_t s) -> FailureOr<Value> {
    if (s == 1) return v;
    SmallVector<Value> view, merged;
    for (int d = 0; d < 4; ++d) {
      view.push_back(dimOf(bc, v, d));
      if (d == axis) view.push_back(dimConstant(bc, 1));
    }
    auto v5 = reshapeToDims(bc, v, view);
    if (failed(v5)) return failure();
    SmallVector<int64_t> pads5(10, 0);
    pads5[5 + axis + 1] = s - 1;
    SmallVector<int64_t> shape(typeOf(*v5).getShape());
    shape[axis + 1] = s;
    Value p =
        c.b.create<PadOp>(c.loc, RankedTensorType::get(shape, typeOf(v).getElementType()), *v5,
                          c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({10}, i64),
                                                                                      ArrayRef<int64_t>(pads5))),
                          Value(), Value(), c.b.getStringAttr("constant"));
    for (int d = 0; d < 4; ++d) {
      if (d != axis) {
        merged.push_back(dimOf(bc, v, d));
        continue;
      }
      auto m = dimMul(bc, dimOf(bc, v, d), dimConstant(bc, s));
      if (failed(m)) return failure();
      merged.push_back(*m);
    }
    return reshapeToDims(bc, p, merged);
  };
  auto z = insertZeros(x, 3, strides[1]);
  if (failed(z)) return fail();
  z = insertZeros(*z, 2, strides[0]);
  if (failed(z)) return fail();
  Value zero = dimConstant(bc, 0);
  Value padV = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({8}, i64),
                                    ValueRange{zero, zero, before[0], before[1], zero, zero, after[0], after[1]},
                                    c.b.getI64IntegerAttr(0));
  SmallVector<int64_t> padded(typeOf(*z).getShape());
  padded[2] = padded[3] = kDyn;
  Value xp = c.b.create<PadOp>(c.loc, RankedTensorType::get(padded, typeOf(*z).getElementType()), *z, padV, Value(),
                               Value(), c.b.getStringAttr("constant"));
  // Weight [C, M/g, k0, k1] -> [g, C/g, M/g, k0, k1] -> [g, M/g, C/g, ..] ->
  // [M, C/g, k0, k1], flipped along both kernel axes.
  Value G = dimConstant(bc, group), C = dimOf(bc, w, 0), Mg = dimOf(bc, w, 1);
  auto Cg = dimDiv(bc, C, G);
  auto M = dimMul(bc, Mg, G);
  if (failed(Cg) || failed(M)) return fail();
  auto w5 = reshapeToDims(bc, w, {G, *Cg, Mg, K[0], K[1]});
  if (failed(w5)) return fail();
  Value t = c.b.create<TransposeOp>(c.loc, *w5, c.b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
  auto w4 = reshapeToDims(bc, t, {*M, *Cg, K[0], K[1]});
  if (failed(w4)) return fail();
  Value weight = *w4;
  for (int axis = 2; axis < 4; ++axis) {
    Value n = K[axis - 2];
    auto scalar = [&](int64_t v) {
      return c.b.create<arith::ConstantOp>(c.loc, DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
    };
    Value r =
        c.b.create<RangeOp>(c.loc, RankedTensorType::get({kDyn}, i64), scalar(0), reshapeTo(bc, n, {}), scalar(1));
    auto rev = buildElementwise(c, {r, n}, i64, [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
      Value last = b.create<arith::SubIOp>(l, a[1], b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1)));
      return b.create<arith::SubIOp>(l, last, a[0]);
    });
    if (failed(rev)) return failure();
    weight = c.b.create<GatherOp>(c.loc, weight, *rev, c.b.getI64IntegerAttr(axis));
  }
  // The convolution: stride 1, the dilations, no pads.
  auto wt4 = typeOf(weight);
  SmallVector<int64_t> outShape = {in.getDimSize(0), wt4.getDimSize(0), kDyn, kDyn};
  auto op = c.b.create<WindowConvOp>(c.loc, RankedTensorType::get(outShape, in.getElementType()), xp, weight,
                                     c.hasInput(2) ? c.input(2) : Value(), c.b.getDenseI64ArrayAttr({1, 1}),
                                     c.b.getDenseI64ArrayAttr(dil), c.b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                                     c.b.getI64IntegerAttr(group));
  if (failed(mlir::verify(op))) return c.fail("the ConvTranspose's operands do not fit (see above)");
  c.setOutput(0, op.getResult());
  return success();
}

} // namespace v4f
