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

/// The first rotary_dim features of each head are rotated pairwise (halves,
/// or adjacent pairs when interleaved) by the cos / sin of the position
/// (gathered by position_ids when given), in [batch, seq, heads, head_size]
/// order; the input's layout is restored at the end.
LogicalResult decomposeRotary(BuildContext &c, RotaryEmbeddingOp op, SmallVectorImpl<Value> &results) {
  auto in = typeOf(op.getInput());
  Type f = in.getElementType();
  if (!in.hasStaticShape()) return c.fail("input must have a static shape");
  int64_t rank = in.getRank();
  Value x = op.getInput();
  int64_t B = in.getDimSize(0), S, H, D;
  if (rank == 4) {
    H = in.getDimSize(1), S = in.getDimSize(2), D = in.getDimSize(3);
    x = transposeBy(c, x, {0, 2, 1, 3});
  } else {
    int64_t heads = op.getNumHeads();
    if (in.getDimSize(2) % heads) return c.fail("3-D input needs num_heads dividing the hidden size");
    S = in.getDimSize(1), H = heads, D = in.getDimSize(2) / heads;
    x = reshapeTo(c, x, {B, S, H, D});
  }
  int64_t R = op.getRotaryDim();
  if (R == 0) R = D;
  if (R < 2 || R > D || R % 2) return c.fail("rotary_embedding_dim must be even and at most the head size");
  bool interleaved = op.getInterleaved();
  auto caches = [&](Value cache) -> FailureOr<Value> {
    if (Value positions = op.getPositionIds()) {
      if (typeOf(cache).getRank() != 2) return c.fail("with position_ids the caches must be 2-D [max_position, dim/2]");
      cache = c.b.create<GatherOp>(c.loc, cache, positions, c.b.getI64IntegerAttr(0));
    }
    auto t = typeOf(cache);
    if (t.getRank() != 3 || t.getDimSize(0) != B || t.getDimSize(1) != S || t.getDimSize(2) != R / 2)
      return c.fail("the caches must give [batch, sequence, rotary_embedding_dim / 2]");
    return interleaved ? reshapeTo(c, cache, {B, S, 1, R / 2, 1}) : reshapeTo(c, cache, {B, S, 1, R / 2});
  };
  auto cosV = caches(op.getCosCache());
  if (failed(cosV)) return failure();
  auto sinV = caches(op.getSinCache());
  if (failed(sinV)) return failure();
  auto parts = splitBy(c, x, 3, R < D ? SmallVector<int64_t>{R, D - R} : SmallVector<int64_t>{D});
  Value rot = parts[0];
  SmallVector<Value> halves;
  if (interleaved)
    halves = splitBy(c, reshapeTo(c, rot, {B, S, H, R / 2, 2}), 4, {1, 1});
  else
    halves = splitBy(c, rot, 3, {R / 2, R / 2});
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
  catShape[catAxis] *= 2;
  Value rotated = c.b.create<ConcatOp>(c.loc, RankedTensorType::get(catShape, f), ValueRange{*re, *im},
                                       c.b.getI64IntegerAttr(catAxis));
  if (interleaved) rotated = reshapeTo(c, rotated, {B, S, H, R});
  Value y = rotated;
  if (R < D)
    y = c.b.create<ConcatOp>(c.loc, RankedTensorType::get({B, S, H, D}, f), ValueRange{rotated, parts[1]},
                             c.b.getI64IntegerAttr(3));
  results.push_back(rank == 4 ? transposeBy(c, y, {0, 2, 1, 3}) : reshapeTo(c, y, in.getShape()));
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
