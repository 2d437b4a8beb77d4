//===- DecomposeRotary.cpp - v4f.rotary_embedding -> splits, products, concats ===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEROTARY
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// The first rotary_dim features of each head are rotated pairwise (halves,
/// or adjacent pairs when interleaved) by the cos / sin of the position
/// (gathered by position_ids when given), in [batch, seq, heads, head_size]
/// order; the input's layout is restored at the end. Dims known only at run
/// time are read there (Builders.h); the views and splits then check them.
LogicalResult decomposeRotary(BuildContext &c, RotaryEmbeddingOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  int64_t rank = in.getRank();
  Value x = op.getInput();
  Value B = dimOf(c, x, 0), S, H, D;
  if (rank == 4) {
    H = dimOf(c, x, 1), S = dimOf(c, x, 2), D = dimOf(c, x, 3);
    x = transposeBy(c, x, {0, 2, 1, 3});
  } else {
    int64_t heads = op.getNumHeads();
    if (!in.isDynamicDim(2) && in.getDimSize(2) % heads)
      return c.fail("3-D input needs num_heads dividing the hidden size");
    S = dimOf(c, x, 1), H = dimConstant(c, heads);
    auto d = dimDiv(c, dimOf(c, x, 2), H);
    if (failed(d)) return failure();
    D = *d;
    auto viewed = reshapeToDims(c, x, {B, S, H, D});
    if (failed(viewed)) return failure();
    x = *viewed;
  }
  Value R = op.getRotaryDim() ? dimConstant(c, op.getRotaryDim()) : D;
  auto Rs = constantDim(R), Ds = constantDim(D);
  if (Rs && (*Rs < 2 || *Rs % 2 || (Ds && *Rs > *Ds)))
    return c.fail("rotary_embedding_dim must be even and at most the head size");
  auto halfOr = dimDiv(c, R, dimConstant(c, 2));
  if (failed(halfOr)) return failure();
  Value half = *halfOr, one = dimConstant(c, 1);
  bool interleaved = op.getInterleaved();
  auto caches = [&](Value cache) -> FailureOr<Value> {
    if (Value positions = op.getPositionIds()) {
      if (typeOf(cache).getRank() != 2) return c.fail("with position_ids the caches must be 2-D [max_position, dim/2]");
      cache = c.b.create<GatherOp>(c.loc, cache, positions, c.b.getI64IntegerAttr(0));
    }
    auto t = typeOf(cache);
    auto differ = [](int64_t have, Value want) {
      auto w = constantDim(want);
      return have != kDyn && w && *w != have;
    };
    if (t.getRank() != 3 || differ(t.getDimSize(0), B) || differ(t.getDimSize(1), S) || differ(t.getDimSize(2), half))
      return c.fail("the caches must give [batch, sequence, rotary_embedding_dim / 2]");
    SmallVector<Value> dims = {dimOf(c, cache, 0), dimOf(c, cache, 1), one, dimOf(c, cache, 2)};
    if (interleaved) dims.push_back(one);
    return reshapeToDims(c, cache, dims);
  };
  auto cosV = caches(op.getCosCache());
  if (failed(cosV)) return failure();
  auto sinV = caches(op.getSinCache());
  if (failed(sinV)) return failure();
  bool whole = !op.getRotaryDim() || (Rs && Ds && *Rs == *Ds);
  SmallVector<Value> parts = {x};
  if (!whole) {
    auto rest = dimSub(c, D, R);
    if (failed(rest)) return failure();
    auto split = splitByDims(c, x, 3, {R, *rest});
    if (failed(split)) return failure();
    parts = *split;
  }
  Value rot = parts[0];
  SmallVector<Value> halves;
  if (interleaved) {
    auto pairs = reshapeToDims(c, rot, {dimOf(c, rot, 0), dimOf(c, rot, 1), dimOf(c, rot, 2), half, dimConstant(c, 2)});
    if (failed(pairs)) return failure();
    halves = splitBy(c, *pairs, 4, {1, 1});
  } else {
    auto split = splitByDims(c, rot, 3, {half, half});
    if (failed(split)) return failure();
    halves = *split;
  }
  auto combine = [&](bool real) {
    return buildElementwise(c, {halves[0], halves[1], *cosV, *sinV}, f,
                            [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                              if (real)
                                return b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, a[2], a[0]),
                                                               b.create<arith::MulFOp>(l, a[3], a[1]));
                              return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, a[3], a[0]),
                                                             b.create<arith::MulFOp>(l, a[2], a[1]));
                            });
  };
  auto re = combine(true);
  if (failed(re)) return failure();
  auto im = combine(false);
  if (failed(im)) return failure();
  int64_t catAxis = interleaved ? 4 : 3;
  auto reT = typeOf(*re);
  SmallVector<int64_t> catShape(reT.getShape());
  if (catShape[catAxis] != kDyn) catShape[catAxis] *= 2;
  Value rotated = c.b.create<ConcatOp>(c.loc, RankedTensorType::get(catShape, f), ValueRange{*re, *im},
                                       c.b.getI64IntegerAttr(catAxis));
  if (interleaved) {
    auto flat = reshapeToDims(c, rotated, {dimOf(c, rotated, 0), dimOf(c, rotated, 1), dimOf(c, rotated, 2), R});
    if (failed(flat)) return failure();
    rotated = *flat;
  }
  Value y = rotated;
  if (!whole) {
    SmallVector<int64_t> shape(typeOf(rotated).getShape());
    int64_t a = shape[3], b = typeOf(parts[1]).getDimSize(3);
    shape[3] = a == kDyn || b == kDyn ? kDyn : a + b;
    y = c.b.create<ConcatOp>(c.loc, RankedTensorType::get(shape, f), ValueRange{rotated, parts[1]},
                             c.b.getI64IntegerAttr(3));
  }
  Value out;
  if (rank == 4) {
    out = transposeBy(c, y, {0, 2, 1, 3});
  } else {
    SmallVector<Value> dims;
    for (int64_t i = 0; i < 3; ++i) dims.push_back(dimOf(c, op.getInput(), i));
    auto flat = reshapeToDims(c, y, dims);
    if (failed(flat)) return failure();
    out = *flat;
  }
  // The op's result type (it may know dims the views above do not).
  auto typed = reshapeToType(c, out, typeOf(op.getResult()), /*exact=*/false);
  if (failed(typed)) return failure();
  out = *typed;
  results.push_back(out);
  return success();
}

struct DecomposeRotaryPass : v4f::impl::DecomposeRotaryBase<DecomposeRotaryPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<RotaryEmbeddingOp>(getOperation(), decomposeRotary))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeRotaryPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<RotaryEmbeddingOp>>(patterns.getContext(), decomposeRotary);
}

std::unique_ptr<Pass> v4f::createDecomposeRotaryPass() { return std::make_unique<DecomposeRotaryPass>(); }
