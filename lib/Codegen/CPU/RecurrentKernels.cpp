//===- RecurrentKernels.cpp - v4f.recurrent as one time-loop kernel -------===//
//
// A recurrent layer whose sequence length (or batch) is known only at run
// time stays whole through the graph passes (v4f-decompose-recurrent unrolls
// only static ones) and runs here as one kernel. Its workgroups are the
// (direction, batch entry) pairs, which are independent: each keeps its
// states h (and c) in per-worker scratch memory and walks the steps in order
// (backwards for a reverse direction):
//
//   gates[j] = X_t . W_j + Wb_j + H_{t-1} . R_j + Rb_j   (dot products over
//              the contiguous rows of W and R, 8 lanes at a time)
//   GRU: the h gate's recurrent part is (r * H_{t-1}) . Rh_j + Rbh_j, or with
//        linear_before_reset r * (H_{t-1} . Rh_j + Rbh_j);
//   then the cell update of every hidden unit (RecurrentMath.h: the same
//   activations and clip as the unrolled form) and Y_t.
//
// Steps at or past the entry's sequence_lens keep the state and write 0 to
// Y. Y_h / Y_c are the final states. Operands are float32 (the pass widens
// float16 / bfloat16 around the op). Run-time checks, reported through the
// kernel's status: the states' and sequence_lens' batch dims must equal X's
// (V4F_KERNEL_ERROR_SHAPE_MISMATCH) and every sequence length must lie in
// [0, seq] (V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE).
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"

#include "v4f/Plan/PlanBuilder.h"
#include "v4f/Dialect/V4F/IR/RecurrentMath.h"
#include "v4f/kernel_abi.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace v4f {
namespace {

class RecurrentKernel {
public:
  RecurrentKernel(KernelBuilder &kb, RecurrentOp op) : kb(kb), b(kb.b), l(kb.loc), op(op) {
    cell = op.getCell().str();
    lstm = cell == "lstm";
    gru = cell == "gru";
    G = lstm ? 4 : gru ? 3 : 1;
    auto w = llvm::cast<RankedTensorType>(op.getW().getType());
    D = w.getDimSize(0);
    I = w.getDimSize(2);
    H = llvm::cast<RankedTensorType>(op.getR().getType()).getDimSize(2);
    layout = op.getLayout() != 0;
    reverse = op.getDirection() == "reverse";
    linearBeforeReset = op.getLinearBeforeReset();
    inputForget = op.getInputForget();
    if (auto c = op.getClip()) clip = c->convertToFloat();
    for (auto [name, alpha, beta] : llvm::zip(op.getActivations(), op.getActivationAlpha(), op.getActivationBeta()))
      acts.push_back({llvm::cast<StringAttr>(name).getValue().str(), alpha, beta});
  }

  /// Binding indices (-1: absent) and run-time sizes, set by the emitter.
  int y = 0, yh = 1, yc = -1, x = -1, w = -1, r = -1, bias = -1, lens = -1, h0 = -1, c0 = -1, peep = -1;
  Value T, B;

  /// Scratch floats per workgroup: h, c, the gates, and GRU's h-gate part.
  int64_t scratchFloats() const { return 3 * H + G * H; }

  /// The whole body for one workgroup (direction `dir`, batch entry `bi`)
  /// with sequence length `len`.
  void run(int64_t dir, Value bi, Value len) {
    bool backwards = reverse || dir == 1;
    size_t perDir = acts.size() / D;
    ArrayRef<RecurrentActivation> a = ArrayRef<RecurrentActivation>(acts).slice(dir * perDir, perDir);
    Value S = kb.scratch();
    Value hOff = kb.c(0), cOff = kb.c(H), gOff = kb.c(2 * H), hhOff = kb.c(2 * H + G * H);
    auto stateAt = [&](Value k) {
      return layout ? kb.add(kb.mul(kb.add(kb.mul(bi, kb.c(D)), kb.c(dir)), kb.c(H)), k)
                    : kb.add(kb.mul(kb.add(kb.mul(kb.c(dir), B), bi), kb.c(H)), k);
    };
    kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
      kb.store(h0 >= 0 ? kb.load(kb.f32(), kb.binding(h0), stateAt(k)) : kb.cf(0.f), S, kb.add(hOff, k));
      if (lstm) kb.store(c0 >= 0 ? kb.load(kb.f32(), kb.binding(c0), stateAt(k)) : kb.cf(0.f), S, kb.add(cOff, k));
    });
    kb.forLoop(kb.c(0), T, kb.c(1), [&](Value i) {
      Value t = backwards ? kb.sub(kb.sub(T, kb.c(1)), i) : i;
      auto yAt = [&](Value k) {
        return layout ? kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(bi, T), t), kb.c(D)), kb.c(dir)), kb.c(H)), k)
                      : kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(t, kb.c(D)), kb.c(dir)), B), bi), kb.c(H)), k);
      };
      Value valid = kb.cmp(arith::CmpIPredicate::slt, t, len);
      kb.ifThen(valid, [&] { step(dir, a, bi, t, S, hOff, cOff, gOff, hhOff, yAt); });
      kb.ifThen(b.create<arith::XOrIOp>(l, valid, b.create<arith::ConstantIntOp>(l, 1, 1)), [&] {
        kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) { kb.store(kb.cf(0.f), kb.binding(y), yAt(k)); });
      });
    });
    kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
      kb.store(kb.load(kb.f32(), S, kb.add(hOff, k)), kb.binding(yh), stateAt(k));
      if (lstm) kb.store(kb.load(kb.f32(), S, kb.add(cOff, k)), kb.binding(yc), stateAt(k));
    });
  }

private:
  /// sum_k a[aOff + k] * b[bOff + k] over a static length n.
  Value dot(Value aBase, Value aOff, Value bBase, Value bOff, int64_t n) {
    int64_t nv = n / 8 * 8;
    Value sum = kb.cf(0.f);
    if (nv > 0) {
      auto acc = kb.forLoop(kb.c(0), kb.c(nv), kb.c(8), ValueRange{kb.cf(0.f, kb.vec())},
                            [&](Value k, ValueRange carried) -> SmallVector<Value> {
                              Value av = kb.load(kb.vec(), aBase, kb.add(aOff, k));
                              Value bv = kb.load(kb.vec(), bBase, kb.add(bOff, k));
                              return {b.create<vector::FMAOp>(l, av, bv, carried[0])};
                            });
      sum = b.create<vector::ReductionOp>(l, vector::CombiningKind::ADD, acc[0]);
    }
    if (nv < n) {
      auto acc = kb.forLoop(kb.c(nv), kb.c(n), kb.c(1), ValueRange{sum},
                            [&](Value k, ValueRange carried) -> SmallVector<Value> {
                              Value av = kb.load(kb.f32(), aBase, kb.add(aOff, k));
                              Value bv = kb.load(kb.f32(), bBase, kb.add(bOff, k));
                              return {b.create<math::FmaOp>(l, av, bv, carried[0])};
                            });
      sum = acc[0];
    }
    return sum;
  }

  Value addF(Value p, Value q) { return b.create<arith::AddFOp>(l, p, q); }
  Value mulF(Value p, Value q) { return b.create<arith::MulFOp>(l, p, q); }
  Value gate(const RecurrentActivation &act, Value v) { return buildRecurrentGate(b, l, clip, act, v); }

  /// Bias `which` (0: the input side Wb, 1: the recurrent side Rb) of gate row j.
  Value biasOf(int64_t dir, int which, Value j) {
    if (bias < 0) return kb.cf(0.f);
    return kb.load(kb.f32(), kb.binding(bias), kb.add(kb.c(dir * 2 * G * H + which * G * H), j));
  }

  /// One step t: the gates from X_t and H_{t-1}, then the new states and Y_t.
  void step(int64_t dir, ArrayRef<RecurrentActivation> a, Value bi, Value t, Value S, Value hOff, Value cOff,
            Value gOff, Value hhOff, const std::function<Value(Value)> &yAt) {
    Value xRow = layout ? kb.mul(kb.add(kb.mul(bi, T), t), kb.c(I)) : kb.mul(kb.add(kb.mul(t, B), bi), kb.c(I));
    auto wRow = [&](Value j) { return kb.mul(kb.add(kb.c(dir * G * H), j), kb.c(I)); };
    auto rRow = [&](Value j) { return kb.mul(kb.add(kb.c(dir * G * H), j), kb.c(H)); };
    // Gate rows [j0, j1): input side, plus the recurrent side when `withR`.
    auto gates = [&](int64_t j0, int64_t j1, bool withR) {
      kb.forLoop(kb.c(j0), kb.c(j1), kb.c(1), [&](Value j) {
        Value v = addF(dot(kb.binding(x), xRow, kb.binding(w), wRow(j), I), biasOf(dir, 0, j));
        if (withR) v = addF(v, addF(dot(S, hOff, kb.binding(r), rRow(j), H), biasOf(dir, 1, j)));
        kb.store(v, S, kb.add(gOff, j));
      });
    };
    auto g = [&](int64_t part, Value k) { return kb.load(kb.f32(), S, kb.add(gOff, kb.add(kb.c(part * H), k))); };
    if (!gru) {
      gates(0, G * H, true);
    } else {
      gates(0, 2 * H, true);
      gates(2 * H, 3 * H, false);
      if (linearBeforeReset) {
        // hh = H_{t-1} . Rh + Rbh, scaled by r in the update.
        kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
          Value j = kb.add(kb.c(2 * H), k);
          kb.store(addF(dot(S, hOff, kb.binding(r), rRow(j), H), biasOf(dir, 1, j)), S, kb.add(hhOff, k));
        });
      } else {
        // hh = r * H_{t-1}; then the h gate adds hh . Rh + Rbh.
        kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
          kb.store(mulF(gate(a[0], g(1, k)), kb.load(kb.f32(), S, kb.add(hOff, k))), S, kb.add(hhOff, k));
        });
        kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
          Value j = kb.add(kb.c(2 * H), k);
          Value v = addF(g(2, k), addF(dot(S, hhOff, kb.binding(r), rRow(j), H), biasOf(dir, 1, j)));
          kb.store(v, S, kb.add(gOff, j));
        });
      }
    }
    // The new state of every hidden unit.
    kb.forLoop(kb.c(0), kb.c(H), kb.c(1), [&](Value k) {
      Value prevH = kb.load(kb.f32(), S, kb.add(hOff, k)), newH;
      if (cell == "rnn") {
        newH = gate(a[0], g(0, k));
      } else if (gru) {
        Value z = gate(a[0], g(0, k)), pre = g(2, k);
        if (linearBeforeReset) pre = addF(pre, mulF(gate(a[0], g(1, k)), kb.load(kb.f32(), S, kb.add(hhOff, k))));
        Value hc = gate(a[1], pre);
        // (1 - z) * h + z * H_{t-1}
        newH = addF(mulF(b.create<arith::SubFOp>(l, kb.cf(1.f), z), hc), mulF(z, prevH));
      } else {
        // Gates i, o, f, c; peepholes i, o, f.
        Value prevC = kb.load(kb.f32(), S, kb.add(cOff, k));
        auto p = [&](int64_t part) {
          return kb.load(kb.f32(), kb.binding(peep), kb.add(kb.c(dir * 3 * H + part * H), k));
        };
        Value iPre = g(0, k), oPre = g(1, k), fPre = g(2, k);
        if (peep >= 0) {
          iPre = addF(iPre, mulF(p(0), prevC));
          fPre = addF(fPre, mulF(p(2), prevC));
        }
        Value iv = gate(a[0], iPre);
        Value fv = inputForget ? (Value)b.create<arith::SubFOp>(l, kb.cf(1.f), iv) : gate(a[0], fPre);
        Value newC = addF(mulF(fv, prevC), mulF(iv, gate(a[1], g(3, k))));
        if (peep >= 0) oPre = addF(oPre, mulF(p(1), newC));
        // h is not clipped: the clip bounds gate inputs only.
        newH = mulF(gate(a[0], oPre), buildRecurrentActivation(b, l, a[2], newC));
        kb.store(newC, S, kb.add(cOff, k));
      }
      kb.store(newH, S, kb.add(hOff, k));
      kb.store(newH, kb.binding(y), yAt(k));
    });
  }

  KernelBuilder &kb;
  OpBuilder &b;
  Location l;
  RecurrentOp op;
  std::string cell;
  bool lstm = false, gru = false, layout = false, reverse = false, linearBeforeReset = false, inputForget = false;
  int64_t G = 1, D = 1, I = 0, H = 0;
  std::optional<float> clip;
  SmallVector<RecurrentActivation> acts;
};

} // namespace

LogicalResult emitRecurrent(CPUKernelContext &ctx, RecurrentOp op, ArrayRef<TensorInfo> operands,
                            ArrayRef<TensorInfo> results) {
  auto &sp = ctx.shapes;
  auto operandInfo = [&](Value v) -> const TensorInfo * {
    if (!v) return nullptr;
    for (auto [i, o] : llvm::enumerate(op->getOperands()))
      if (o == v) return &operands[i];
    return nullptr;
  };
  for (Value v : op->getOperands())
    if (llvm::isa<FloatType>(llvm::cast<RankedTensorType>(v.getType()).getElementType()) &&
        !llvm::cast<RankedTensorType>(v.getType()).getElementType().isF32())
      return op.emitOpError("the time-loop kernel computes float32 only (v4f-decompose-recurrent widens other "
                            "float types; internal error)");
  std::string name = dispatchName(op);
  auto kb = ctx.newKernel(name);
  RecurrentKernel rk(*kb, op);
  const TensorInfo &X = *operandInfo(op.getX());
  bool layout = op.getLayout() != 0;
  Reg T = X.dims[layout ? 1 : 0], B = X.dims[layout ? 0 : 1];
  int64_t D = llvm::cast<RankedTensorType>(op.getW().getType()).getDimSize(0);

  std::vector<uint32_t> bindings = {results[0].buffer, results[1].buffer};
  if (results.size() > 2) {
    rk.yc = 2;
    bindings.push_back(results[2].buffer);
  }
  auto bind = [&](Value v) -> int {
    const TensorInfo *t = operandInfo(v);
    if (!t) return -1;
    bindings.push_back(t->buffer);
    return int(bindings.size()) - 1;
  };
  rk.x = bind(op.getX());
  rk.w = bind(op.getW());
  rk.r = bind(op.getR());
  rk.bias = bind(op.getB());
  rk.lens = bind(op.getSequenceLens());
  rk.h0 = bind(op.getInitialH());
  rk.c0 = bind(op.getInitialC());
  rk.peep = bind(op.getPeepholes());
  rk.T = kb->dim(T);
  rk.B = kb->dim(B);

  // Run-time checks: the other operands' batch dims equal X's.
  OpBuilder &b = kb->b;
  Location l = kb->loc;
  Value mismatch = b.create<arith::ConstantIntOp>(l, 0, 1);
  auto sameAsBatch = [&](Value v, size_t dim) {
    const TensorInfo *t = operandInfo(v);
    if (!t || t->dims[dim] == B) return;
    auto ct = sp.constValue(t->dims[dim]), cb = sp.constValue(B);
    if (ct && cb && *ct == *cb) return;
    mismatch = b.create<arith::OrIOp>(l, mismatch, kb->cmp(arith::CmpIPredicate::ne, kb->dim(t->dims[dim]), rk.B));
  };
  sameAsBatch(op.getInitialH(), layout ? 0 : 1);
  sameAsBatch(op.getInitialC(), layout ? 0 : 1);
  sameAsBatch(op.getSequenceLens(), 0);

  Value wg = kb->workgroupId();
  Value bi = kb->rem(wg, rk.B), dirId = kb->div(wg, rk.B);
  // This entry's sequence length (read only when the dims agree).
  Value len = rk.T;
  Value badLen = b.create<arith::ConstantIntOp>(l, 0, 1);
  if (rk.lens >= 0) {
    Type lensType = operandInfo(op.getSequenceLens())->elementType;
    auto read = b.create<scf::IfOp>(l, TypeRange{b.getI64Type()}, mismatch, true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(read.thenBlock());
      b.create<scf::YieldOp>(l, ValueRange{kb->c(0)});
      b.setInsertionPointToStart(read.elseBlock());
      Value n = kb->load(lensType, kb->binding(rk.lens), bi);
      if (!lensType.isInteger(64)) n = b.create<arith::ExtSIOp>(l, b.getI64Type(), n);
      b.create<scf::YieldOp>(l, ValueRange{n});
    }
    len = read.getResult(0);
    badLen = b.create<arith::OrIOp>(l, kb->cmp(arith::CmpIPredicate::slt, len, kb->c(0)),
                                    kb->cmp(arith::CmpIPredicate::sgt, len, rk.T));
  }
  Value ok =
      b.create<arith::XOrIOp>(l, b.create<arith::OrIOp>(l, mismatch, badLen), b.create<arith::ConstantIntOp>(l, 1, 1));
  for (int64_t dir = 0; dir < D; ++dir) {
    Value run = D == 1 ? ok : b.create<arith::AndIOp>(l, ok, kb->cmp(arith::CmpIPredicate::eq, dirId, kb->c(dir)));
    kb->ifThen(run, [&] { rk.run(dir, bi, len); });
  }
  auto code = [&](int v) -> Value { return b.create<arith::ConstantIntOp>(l, v, 32); };
  kb->finish(b.create<arith::SelectOp>(
      l, mismatch, code(V4F_KERNEL_ERROR_SHAPE_MISMATCH),
      b.create<arith::SelectOp>(l, badLen, code(V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE), code(V4F_KERNEL_OK))));
  int64_t scratch = (rk.scratchFloats() * 4 + 63) / 64 * 64;
  ctx.addDispatch(*kb, bindings, sp.mul(sp.constant(D), B), name, sp.constant(scratch));
  return success();
}

/// A whole recurrent layer: Y is [T, D, B, H] (layout 1: [B, T, D, H]), the
/// states [D, B, H] (layout 1: [B, D, H]), T and B from X.
static LogicalResult emitRecurrentOp(CPUKernelContext &ctx, PlanBuilder &pb, Operation *recurrentOp,
                                     ArrayRef<TensorInfo> operands) {
  auto op = cast<RecurrentOp>(recurrentOp);
  const TensorInfo &X = operands[0];
  bool layout = op.getLayout() != 0;
  Reg T = X.dims[layout ? 1 : 0], B = X.dims[layout ? 0 : 1];
  SmallVector<TensorInfo> results;
  for (Value v : op->getResults()) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    TensorInfo t;
    t.elementType = type.getElementType();
    int64_t rank = type.getRank();
    for (int64_t d = 0; d < rank; ++d) {
      bool isT = rank == 4 && d == (layout ? 1 : 0), isB = d == (layout ? 0 : rank - 2);
      t.dims.push_back(!type.isDynamicDim(d) ? ctx.shapes.constant(type.getDimSize(d)) : isT ? T : isB ? B : Reg());
      if (type.isDynamicDim(d) && !isT && !isB) return op.emitOpError("has an unexpected dynamic result dim");
    }
    t.buffer = ctx.newTransient(pb.bytesOf(t));
    pb.infos[v] = t;
    results.push_back(t);
  }
  return emitRecurrent(ctx, op, operands, results);
}

void registerRecurrentKernels(CPUKernelRegistry &registry) { registry.addResultsKernel<RecurrentOp>(emitRecurrentOp); }

} // namespace v4f
