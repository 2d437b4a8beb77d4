//===- DecomposeEinsum.cpp - v4f.einsum -> transpose/reshape/matmul/reduce ===//
//
// The equation's labels (parseEinsumEquation: one per operand dim, ellipsis
// dims right-aligned across operands so they broadcast) drive:
//
//   a label repeated in one operand (diagonal): transpose the pair last,
//     reshape [.., n*n], slice with step n+1 -> [.., n];
//   a label no later step needs: v4f.reduce sum over it;
//   operands fold left to right, two at a time, as one batched matmul:
//     [batch, left-only, contracted] x [batch, contracted, right-only],
//     reshaped to [batch.., M, K] x [batch.., K, N] (size-1 batch dims
//     broadcast) and back to [batch.., left-only.., right-only..] (float64:
//     a broadcast multiply [.., M, K, 1] * [.., 1, K, N] summed over K);
//   finally a transpose to the output's label order.
//
// float32 contractions are matmuls; float64 ones (the v4f matmul is
// float32-only) multiply with broadcasting and sum over the contracted dim.
// Other float types are computed in float32: converted on entry and the
// result converted back.
//
//===----------------------------------------------------------------------===//
#include "DecomposeDriver.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <set>

namespace v4f {
#define GEN_PASS_DEF_DECOMPOSEEINSUM
#include "v4f/Transforms/Passes.h.inc"
} // namespace v4f

using namespace mlir;
using namespace v4f;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

struct Operand {
  Value v;
  SmallVector<int> labels;
  int64_t size(size_t i) const { return typeOf(v).getDimSize(i); }
};

class EinsumBuilder {
public:
  explicit EinsumBuilder(BuildContext &c) : c(c) {}

  /// Takes repeated labels' diagonals until every label is distinct.
  LogicalResult diagonalize(Operand &o) {
    for (;;) {
      int p = -1, q = -1;
      for (size_t i = 0; i < o.labels.size() && p < 0; ++i)
        for (size_t j = i + 1; j < o.labels.size(); ++j)
          if (o.labels[i] == o.labels[j]) {
            p = i, q = j;
            break;
          }
      if (p < 0) return success();
      int64_t n = o.size(p);
      if (o.size(q) != n && n != kDyn && o.size(q) != kDyn)
        return c.fail("a repeated Einsum label spans dims of different sizes");
      if (n == kDyn) n = o.size(q);
      SmallVector<int64_t> perm;
      SmallVector<Value> dims;
      SmallVector<int> labels;
      for (size_t i = 0; i < o.labels.size(); ++i)
        if ((int)i != p && (int)i != q) {
          perm.push_back(i);
          dims.push_back(dimOf(c, o.v, i));
          labels.push_back(o.labels[i]);
        }
      perm.append({p, q});
      Value nv = n == kDyn ? dimOf(c, o.v, p) : dimConstant(c, n);
      auto square = dimMul(c, nv, nv);
      auto stride = dimAdd(c, nv, dimConstant(c, 1));
      if (failed(square) || failed(stride)) return failure();
      dims.push_back(*square);
      auto flat = reshapeToDims(c, transposeBy(c, o.v, perm), dims);
      if (failed(flat)) return failure();
      SmallVector<int64_t> shape(typeOf(*flat).getShape());
      int64_t axis = shape.size() - 1;
      shape.back() = n;
      labels.push_back(o.labels[p]);
      o.v = c.b.create<SliceOp>(c.loc, RankedTensorType::get(shape, typeOf(*flat).getElementType()), *flat,
                                dimConstant(c, 0), *square, dimConstant(c, axis), *stride);
      o.labels = labels;
    }
  }

  /// Sums `o` over the labels not in `keep` (dropping them, or keeping them
  /// as size 1 with `keepDims`).
  void sumOut(Operand &o, const std::function<bool(int)> &keep, bool keepDims = false) {
    SmallVector<int64_t> axes, shape;
    SmallVector<int> labels;
    for (size_t i = 0; i < o.labels.size(); ++i) {
      if (keep(o.labels[i])) {
        shape.push_back(o.size(i));
        labels.push_back(o.labels[i]);
      } else {
        axes.push_back(i);
        if (keepDims) {
          shape.push_back(1);
          labels.push_back(o.labels[i]);
        }
      }
    }
    if (axes.empty()) return;
    o.v = c.b.create<ReduceOp>(c.loc, RankedTensorType::get(shape, typeOf(o.v).getElementType()), o.v, Value(),
                               c.b.getStringAttr("sum"), c.b.getDenseI64ArrayAttr(axes), c.b.getBoolAttr(keepDims));
    o.labels = labels;
  }

  /// a x b over their shared labels; labels in `keep` survive.
  LogicalResult contract(Operand &a, Operand &b, const std::set<int> &keep) {
    auto has = [](const Operand &o, int l) { return llvm::is_contained(o.labels, l); };
    sumOut(a, [&](int l) { return keep.count(l) || has(b, l); });
    sumOut(b, [&](int l) { return keep.count(l) || has(a, l); });
    // A contracted label of size 1 on one side and n on the other: sum the n side first.
    auto pos = [](const Operand &o, int l) { return (size_t)(llvm::find(o.labels, l) - o.labels.begin()); };
    for (int side = 0; side < 2; ++side) {
      Operand &x = side ? b : a, &y = side ? a : b;
      sumOut(
          x,
          [&](int l) {
            // (A size known only at run time is taken as not 1.)
            return keep.count(l) || !has(y, l) || x.size(pos(x, l)) == y.size(pos(y, l)) || y.size(pos(y, l)) != 1;
          },
          /*keepDims=*/true);
    }
    SmallVector<int> batch, left, contracted, right;
    for (int l : a.labels) {
      if (!has(b, l))
        left.push_back(l);
      else if (keep.count(l))
        batch.push_back(l);
      else
        contracted.push_back(l);
    }
    for (int l : b.labels)
      if (!has(a, l)) right.push_back(l);
    for (int l : batch) {
      int64_t p = a.size(pos(a, l)), q = b.size(pos(b, l));
      if (p != q && p != 1 && q != 1 && p != kDyn && q != kDyn)
        return c.fail("Einsum dims labelled alike have different sizes");
    }
    for (int l : contracted) {
      int64_t p = a.size(pos(a, l)), q = b.size(pos(b, l));
      if (p != q && p != kDyn && q != kDyn) return c.fail("Einsum dims labelled alike have different sizes");
    }
    // [batch.., g1 product, g2 product]; the products are run-time dims
    // where a size is known only then.
    auto arrange = [&](Operand &o, ArrayRef<int> g1, ArrayRef<int> g2) -> FailureOr<Value> {
      SmallVector<int64_t> perm;
      SmallVector<Value> dims;
      for (int l : batch) perm.push_back(pos(o, l)), dims.push_back(dimOf(c, o.v, pos(o, l)));
      for (ArrayRef<int> group : {g1, g2}) {
        Value n = dimConstant(c, 1);
        for (int l : group) {
          perm.push_back(pos(o, l));
          auto m = dimMul(c, n, dimOf(c, o.v, pos(o, l)));
          if (failed(m)) return failure();
          n = *m;
        }
        dims.push_back(n);
      }
      Value t = transposeBy(c, o.v, perm);
      return reshapeToDims(c, t, dims);
    };
    auto lhsOr = arrange(a, left, contracted), rhsOr = arrange(b, contracted, right);
    if (failed(lhsOr) || failed(rhsOr)) return failure();
    Value lhs = *lhsOr, rhs = *rhsOr;
    Value prod;
    if (typeOf(lhs).getElementType().isF32()) {
      prod = c.b.create<MatMulOp>(c.loc, lhs, rhs, Value(), c.b.getStringAttr("none"), c.b.getF32FloatAttr(0),
                                  c.b.getF32FloatAttr(0));
    } else {
      // float64 (no matmul): [.., M, K, 1] * [.., 1, K, N], summed over K.
      SmallVector<Value> l4, r4;
      for (int64_t i = 0, r = typeOf(lhs).getRank(); i < r; ++i) l4.push_back(dimOf(c, lhs, i));
      for (int64_t i = 0, r = typeOf(rhs).getRank(); i < r; ++i) r4.push_back(dimOf(c, rhs, i));
      l4.push_back(dimConstant(c, 1));
      r4.insert(r4.end() - 2, dimConstant(c, 1));
      auto l4v = reshapeToDims(c, lhs, l4), r4v = reshapeToDims(c, rhs, r4);
      if (failed(l4v) || failed(r4v)) return failure();
      auto mul = buildElementwise(
          c, {*l4v, *r4v}, typeOf(lhs).getElementType(),
          [](OpBuilder &b, Location l, ArrayRef<Value> x) -> Value { return b.create<arith::MulFOp>(l, x[0], x[1]); });
      if (failed(mul)) return failure();
      Operand full{*mul, {}};
      int64_t rank = typeOf(*mul).getRank();
      for (int64_t i = 0; i < rank; ++i) full.labels.push_back(i == rank - 2 ? -1 : (int)i);
      sumOut(full, [](int l) { return l != -1; });
      prod = full.v;
    }
    SmallVector<Value> dims;
    for (size_t i = 0; i < batch.size(); ++i) dims.push_back(dimOf(c, prod, i));
    for (int l : left) dims.push_back(dimOf(c, a.v, pos(a, l)));
    for (int l : right) dims.push_back(dimOf(c, b.v, pos(b, l)));
    auto viewed = reshapeToDims(c, prod, dims);
    if (failed(viewed)) return failure();
    a.v = *viewed;
    a.labels = batch;
    a.labels.append(left.begin(), left.end());
    a.labels.append(right.begin(), right.end());
    return success();
  }

private:
  BuildContext &c;
};

LogicalResult decomposeEinsum(BuildContext &c, EinsumOp op, SmallVectorImpl<Value> &results) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : op.getInputs()) shapes.push_back(typeOf(v).getShape());
  EinsumEquation eq;
  if (std::string error = parseEinsumEquation(op.getEquation(), shapes, eq); !error.empty()) return c.fail(error);
  SmallVector<Operand> ops;
  for (auto [v, labels] : llvm::zip(op.getInputs(), eq.operandLabels)) ops.push_back({v, labels});
  const SmallVector<int> &out = eq.outputLabels;
  Type io = typeOf(op.getResult()).getElementType();

  // --- Lowering ---------------------------------------------------------------
  // float64 stays float64 (contractions become multiply + sum); other float
  // types are computed in float32 with matmuls.
  Type compute = io.isF64() ? io : c.b.getF32Type();
  EinsumBuilder eb(c);
  for (Operand &o : ops) {
    auto v = convertElementType(c, o.v, compute);
    if (failed(v)) return failure();
    o.v = *v;
    if (failed(eb.diagonalize(o))) return failure();
  }
  std::set<int> outSet(out.begin(), out.end());
  // Labels needed after operand k: the output's and those of operands > k.
  auto keepAfter = [&](size_t k) {
    std::set<int> keep = outSet;
    for (size_t j = k + 1; j < ops.size(); ++j) keep.insert(ops[j].labels.begin(), ops[j].labels.end());
    return keep;
  };
  Operand acc = ops[0];
  for (size_t k = 1; k < ops.size(); ++k)
    if (failed(eb.contract(acc, ops[k], keepAfter(k)))) return failure();
  eb.sumOut(acc, [&](int l) { return outSet.count(l) > 0; });
  SmallVector<int64_t> perm;
  for (int l : out) perm.push_back(llvm::find(acc.labels, l) - acc.labels.begin());
  Value y = transposeBy(c, acc.v, perm);
  auto converted = convertElementType(c, y, io);
  if (failed(converted)) return failure();
  results.push_back(*converted);
  return success();
}

struct DecomposeEinsumPass : v4f::impl::DecomposeEinsumBase<DecomposeEinsumPass> {
  void runOnOperation() override {
    if (failed(decomposeAll<EinsumOp>(getOperation(), decomposeEinsum))) signalPassFailure();
  }
};

} // namespace

void v4f::populateDecomposeEinsumPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposePattern<EinsumOp>>(patterns.getContext(), decomposeEinsum);
}

std::unique_ptr<Pass> v4f::createDecomposeEinsumPass() { return std::make_unique<DecomposeEinsumPass>(); }
