//===- QuantizedConvKernels.cpp - v4f.quantized_conv ------------------------===//
//
// A static int8 convolution (NCHW, groups 1) runs as two dispatches:
//
//  1. "quantize + im2col": the float input is quantized with the calibrated
//     scale and zero point while it is gathered into the im2col matrix B
//     (K = C*KH*KW rows, P = OH*OW columns per image), never materialized in
//     float. B is stored as the integer GEMM reads it: per image, panels of
//     NR columns; in a panel, for each K step kk (STEP consecutive k), NR
//     32-bit words, word j holding the STEP values of column j:
//       - VNNI (AVX-512 VNNI, STEP 4): the bytes u = q + 128 (u8);
//       - otherwise (STEP 2): the int16 values q - zp (pmaddwd).
//     The padding is a real 0, i.e. the zero point. One vector of L columns
//     per k: a contiguous load for 1x1 stride-1 convs, otherwise a masked
//     gather with the input row/column of every output column taken from a
//     compile-time table (the padding is what the mask leaves out); the STEP
//     vectors are combined into words with shifts and ors.
//  2. the integer GEMM C[o, p] = sum_k W[o, k] B[k, p]: MR x NR register
//     tiles of int32 accumulators over the K steps, the weight row's word
//     broadcast (int8 quads / int16 pairs, packed at compile time) against
//     the B panel's vectors (vpdpbusd / pmaddwd, both exact). The epilogue
//     subtracts the VNNI correction (zp + 128) * sum_k W[o, k], converts to
//     float, multiplies by act_scale * weight_scale[o] (one constant per
//     channel), adds bias and residual, applies the activation and stores
//     NCHW rows (lane-masked past P).
//
// The column space of the GEMM is all images' panels (N * panels * NR), so
// a tile never straddles two images.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "KernelRegistry.h"
#include "QuantizedGemm.h"
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cstring>

using namespace mlir;

namespace v4f {

namespace {

struct QConv {
  std::string name;
  int64_t OC, C, H, W, KH, KW, OH, OW, P, K;
  int64_t strides[2], dil[2], pads[4];
  int64_t step, steps, lanes, nr, mr, mb, nb, panels, colsPerImage;
  bool vnni, x86, pointwise;
  float actScale;
  int32_t zp;
  // int8 carried (v4f-carry-int8): the input already holds the quantized
  // values; the result is requantized to out_scale / out_zp and stored int8.
  bool int8Input = false, int8Output = false, int8Residual = false;
  float outScale = 1.f, residualScale = 1.f;
  int32_t outZp = 0, residualZp = 0;
  Reg Nb;
  std::string act;
  float alpha, beta;
};

/// A scalar i64 as a vector<L x i32> splat.
Value splatIndex(KernelBuilder &kb, Value i64, int64_t lanes) {
  Value v = kb.b.create<arith::TruncIOp>(kb.loc, kb.b.getI32Type(), i64);
  return kb.b.create<vector::BroadcastOp>(kb.loc, VectorType::get({lanes}, kb.b.getI32Type()), v);
}

/// Dispatch 1: quantize + im2col into the GEMM's B panels (binding 0), from
/// the float input (binding 1) and, unless pointwise, the position table
/// (binding 2: the top input row of every padded output column, then the
/// left input column — columns past P have rows far below 0 —, then per
/// vector of columns whether it lies inside one output row).
void emitQuantizeIm2col(CPUKernelContext &ctx, const QConv &q, uint32_t bBuf, uint32_t xBuf,
                        std::optional<uint32_t> posBuf) {
  auto &sp = ctx.shapes;
  const int64_t L = q.lanes;
  Reg rows = sp.mul(q.Nb, sp.constant(q.steps));
  auto [groups, perGroup] = ctx.splitRows(rows, sp.constant(q.colsPerImage * q.step), 16384);
  const std::string what = q.int8Input ? " int8 im2col" : " quantize+im2col";
  auto kb = ctx.newKernel(q.name + what);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  auto i32v = VectorType::get({L}, b.getI32Type());
  Type vt = kb->vec(L);
  Value Bq = kb->binding(0), X = kb->binding(1);
  Value Pos = posBuf ? kb->binding(2) : Value();
  Value inv = kb->cf(1.f / q.actScale, vt);
  // The loaded values: float32, or the int8 values themselves (their
  // missing lanes, the padding, are the zero point).
  Type elemT = q.int8Input ? Type(b.getI8Type()) : kb->f32();
  const uint32_t elemBytes = q.int8Input ? 1 : 4;
  Type lt = q.int8Input ? Type(VectorType::get({L}, b.getI8Type())) : vt;
  Value zpLoaded = q.int8Input
                       ? b.create<arith::ConstantOp>(
                              loc, DenseElementsAttr::get(llvm::cast<ShapedType>(lt), b.getI8IntegerAttr(int8_t(q.zp))))
                             .getResult()
                       : kb->cf(0.f, vt);
  // q = clamp(roundeven(x / s) + zp, -128, 127); stored as q + 128 (VNNI)
  // or q - zp (int16).
  auto quantize = [&](Value x) -> Value {
    if (q.int8Input) {
      Value v = b.create<arith::ExtSIOp>(loc, i32v, x);
      return b.create<arith::AddIOp>(loc, v, splatI32(*kb, L, q.vnni ? 128 : -q.zp));
    }
    return b.create<arith::FPToSIOp>(loc, i32v, quantizedValue(*kb, x, inv, q.zp, -128.f, q.vnni));
  };
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  auto ptrVecType = LLVM::LLVMFixedVectorType::get(ptrType, unsigned(L));
  Value iota32 = b.create<arith::TruncIOp>(loc, i32v, kb->iota(L));
  auto [begin, end] = kb->workgroupRange(kb->dim(rows), kb->dim(perGroup));
  kb->forLoop(begin, end, kb->c(1), [&](Value r) {
    Value n = kb->div(r, kb->c(q.steps)), kk = kb->rem(r, kb->c(q.steps));
    Value dstRow = kb->mul(kb->add(kb->mul(n, kb->c(q.panels * q.steps)), kk), kb->c(q.nr));
    // Per k of the step: its input plane (a pointer), its row/column offset
    // in the window and whether it exists (k < K).
    struct KInfo {
      Value plane, dh, dw, valid;
      Value dhScalar, dwScalar, validScalar;
      // int8 input: the plane's first 4-byte word at or before it, and the
      // plane's offset from that word (a vector of i32).
      Value alignedPlane, misalign;
    };
    SmallVector<KInfo> ks;
    for (int64_t h = 0; h < q.step; ++h) {
      Value k = kb->add(kb->mul(kk, kb->c(q.step)), kb->c(h));
      Value valid = kb->cmp(arith::CmpIPredicate::slt, k, kb->c(q.K));
      k = kb->select(valid, k, kb->c(0));
      Value c = kb->div(k, kb->c(q.KH * q.KW)), rest = kb->rem(k, kb->c(q.KH * q.KW));
      Value kh = kb->div(rest, kb->c(q.KW)), kw = kb->rem(rest, kb->c(q.KW));
      Value planeOff = kb->mul(kb->add(kb->mul(n, kb->c(q.C)), c), kb->c(q.H * q.W));
      Value plane = b.create<LLVM::GEPOp>(loc, ptrType, elemT, X, ValueRange{planeOff});
      Value dh = kb->mul(kh, kb->c(q.dil[0])), dw = kb->mul(kw, kb->c(q.dil[1]));
      Value alignedPlane, misalign;
      if (q.int8Input) {
        Value rem4 = b.create<arith::AndIOp>(loc, planeOff, kb->c(3));
        alignedPlane = b.create<LLVM::GEPOp>(loc, ptrType, elemT, X, ValueRange{kb->sub(planeOff, rem4)});
        misalign = splatIndex(*kb, rem4, L);
      }
      ks.push_back({plane, splatIndex(*kb, dh, L), splatIndex(*kb, dw, L),
                    b.create<vector::BroadcastOp>(loc, VectorType::get({L}, b.getI1Type()), valid), dh, dw, valid,
                    alignedPlane, misalign});
    }
    Value Pv = splatI32(*kb, L, int32_t(q.P)), Hv = splatI32(*kb, L, int32_t(q.H)), Wv = splatI32(*kb, L, int32_t(q.W));
    Value zero32 = splatI32(*kb, L, 0);
    auto land = [&](Value x, Value y) -> Value { return b.create<arith::AndIOp>(loc, x, y); };
    auto icmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
      return b.create<arith::CmpIOp>(loc, p, x, y);
    };
    kb->forLoop(kb->c(0), kb->c(q.colsPerImage), kb->c(L), [&](Value p0) {
      Value cols = b.create<arith::AddIOp>(loc, splatIndex(*kb, p0, L), iota32);
      Value inP = icmp(arith::CmpIPredicate::slt, cols, Pv);
      Value ih0, iw0;
      // Stride 1 along W: whether the chunk lies inside one output row (the
      // table's flag) and its first column's input row and column.
      Value rowChunk, ih0s, iw0s;
      if (!q.pointwise) {
        ih0 = kb->load(i32v, Pos, p0);
        iw0 = kb->load(i32v, Pos, kb->add(p0, kb->c(q.colsPerImage)));
        if (q.strides[1] <= 2) {
          auto scalarPos = [&](Value at) {
            return b.create<arith::ExtSIOp>(loc, b.getI64Type(), kb->load(b.getI32Type(), Pos, at));
          };
          rowChunk = kb->cmp(arith::CmpIPredicate::ne,
                             scalarPos(kb->add(kb->c(2 * q.colsPerImage), kb->div(p0, kb->c(L)))), kb->c(0));
          ih0s = scalarPos(p0);
          iw0s = scalarPos(kb->add(p0, kb->c(q.colsPerImage)));
        }
      }
      Value word = zero32;
      for (int64_t h = 0; h < q.step; ++h) {
        const KInfo &ki = ks[h];
        Value x;
        if (q.pointwise) {
          Value mask = land(inP, ki.valid);
          x = kb->maskedLoad(lt, ki.plane, p0, mask);
          if (q.int8Input) x = b.create<arith::SelectOp>(loc, mask, x, zpLoaded);
        } else {
          auto gather = [&]() -> SmallVector<Value> {
            Value ih = b.create<arith::AddIOp>(loc, ih0, ki.dh), iw = b.create<arith::AddIOp>(loc, iw0, ki.dw);
            Value mask =
                land(land(land(icmp(arith::CmpIPredicate::sge, ih, zero32), icmp(arith::CmpIPredicate::slt, ih, Hv)),
                          land(icmp(arith::CmpIPredicate::sge, iw, zero32), icmp(arith::CmpIPredicate::slt, iw, Wv))),
                     ki.valid);
            Value idx = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, ih, Wv), iw);
            idx = b.create<arith::SelectOp>(loc, mask, idx, zero32);
            if (q.int8Input) {
              // No byte gather on x86: gather the aligned 4-byte words that
              // hold the bytes (inside the buffer: arena buffers are 64-byte
              // aligned and padded) and shift each byte down.
              Value at = b.create<arith::AddIOp>(loc, idx, ki.misalign);
              Value word = b.create<arith::AndIOp>(loc, at, splatI32(*kb, L, ~3));
              Value shift = b.create<arith::ShLIOp>(loc, b.create<arith::AndIOp>(loc, at, splatI32(*kb, L, 3)),
                                                    splatI32(*kb, L, 3));
              Value ptrs = b.create<LLVM::GEPOp>(loc, ptrVecType, elemT, ki.alignedPlane, ValueRange{word});
              Value words = b.create<LLVM::masked_gather>(loc, i32v, ptrs, mask, ValueRange{zero32}, uint32_t(4));
              Value bytes = b.create<arith::TruncIOp>(loc, lt, b.create<arith::ShRUIOp>(loc, words, shift));
              return {b.create<arith::SelectOp>(loc, mask, bytes, zpLoaded).getResult()};
            }
            Value ptrs = b.create<LLVM::GEPOp>(loc, ptrVecType, elemT, ki.plane, ValueRange{idx});
            return {b.create<LLVM::masked_gather>(loc, lt, ptrs, mask, ValueRange{zpLoaded}, elemBytes)};
          };
          if (q.strides[1] > 2) {
            x = gather().front();
          } else {
            // Stride 1 or 2: a chunk inside one output row whose input row
            // exists and whose inputs lie inside it is one contiguous load
            // (stride 2: of 2L values, the even ones kept), most chunks of
            // rows at least 2 vectors wide.
            const int64_t st = q.strides[1];
            Value ih = kb->add(ih0s, ki.dhScalar), iw = kb->add(iw0s, ki.dwScalar);
            Value fast = land(land(rowChunk, ki.validScalar),
                              land(land(kb->cmp(arith::CmpIPredicate::sge, ih, kb->c(0)),
                                        kb->cmp(arith::CmpIPredicate::slt, ih, kb->c(q.H))),
                                   land(kb->cmp(arith::CmpIPredicate::sge, iw, kb->c(0)),
                                        kb->cmp(arith::CmpIPredicate::sle, kb->add(iw, kb->c(st * L)), kb->c(q.W)))));
            x = kb->ifYield(
                      fast, TypeRange{lt},
                      [&]() -> SmallVector<Value> {
                        Value at = kb->add(kb->mul(ih, kb->c(q.W)), iw);
                        if (st == 1) return {kb->load(lt, ki.plane, at)};
                        auto wide = VectorType::get({2 * L}, llvm::cast<VectorType>(lt).getElementType());
                        Value all = kb->load(wide, ki.plane, at);
                        SmallVector<int64_t> even(L);
                        for (int64_t l = 0; l < L; ++l) even[l] = 2 * l;
                        return {b.create<vector::ShuffleOp>(loc, all, all, even).getResult()};
                      },
                      gather)
                    .front();
          }
        }
        Value v = quantize(x);
        if (!q.vnni) v = b.create<arith::AndIOp>(loc, v, splatI32(*kb, L, 0xFFFF));
        if (h) v = b.create<arith::ShLIOp>(loc, v, splatI32(*kb, L, int32_t(h * (q.vnni ? 8 : 16))));
        word = h ? b.create<arith::OrIOp>(loc, word, v).getResult() : v;
      }
      Value panel = kb->div(p0, kb->c(q.nr)), lane = kb->rem(p0, kb->c(q.nr));
      kb->store(word, Bq, kb->add(dstRow, kb->add(kb->mul(panel, kb->c(q.steps * q.nr)), lane)));
    });
  });
  kb->finish();
  std::vector<uint32_t> bindings = {bBuf, xBuf};
  if (posBuf) bindings.push_back(*posBuf);
  ctx.addDispatch(*kb, bindings, groups, q.name + what);
  ctx.plan.dispatches.back().precision = "int8";
}

struct GemmBindings {
  uint32_t c, bq, a, scale;
  std::optional<uint32_t> corr, bias, residual;
};

/// Dispatch 2: the integer GEMM with the dequantizing epilogue.
void emitQConvGemm(CPUKernelContext &ctx, const QConv &q, const GemmBindings &buffers) {
  auto &sp = ctx.shapes;
  std::vector<uint32_t> bindings = {buffers.c, buffers.bq, buffers.a, buffers.scale};
  auto slot = [&](std::optional<uint32_t> buf) -> std::optional<unsigned> {
    if (!buf) return std::nullopt;
    bindings.push_back(*buf);
    return unsigned(bindings.size() - 1);
  };
  std::optional<unsigned> corrSlot = slot(buffers.corr), biasSlot = slot(buffers.bias),
                          residualSlot = slot(buffers.residual);
  auto kb = ctx.newKernel(q.name);
  OpBuilder &b = kb->b;
  Location loc = kb->loc;
  const int64_t L = q.lanes, vecs = q.nr / q.lanes;
  auto i32v = VectorType::get({L}, b.getI32Type());
  auto i16v = VectorType::get({2 * L}, b.getI16Type());
  Type vt = kb->vec(L);
  Value outInv = kb->cf(1.f / q.outScale, vt);
  Reg cols = sp.mul(q.Nb, sp.constant(q.colsPerImage));
  Reg groups =
      emitGemmBlocks(ctx, *kb, sp.constant(q.OC), cols, q.mr, q.nr, q.mb, q.nb, [&](Value m, Value n, int rows, Value) {
        Value Bq = kb->binding(1), A = kb->binding(2);
        Value image = kb->div(n, kb->c(q.colsPerImage)), pcol = kb->rem(n, kb->c(q.colsPerImage));
        Value bBase = kb->mul(kb->div(n, kb->c(q.nr)), kb->c(q.steps * q.nr));
        SmallVector<Value> aBase;
        for (int r = 0; r < rows; ++r) aBase.push_back(kb->mul(kb->add(m, kb->c(r)), kb->c(q.steps)));
        SmallVector<Value> init(rows * vecs, splatI32(*kb, L, 0));
        auto acc = kb->forLoop(kb->c(0), kb->c(q.steps), kb->c(1), init, [&](Value kk, ValueRange a) {
          Value bRow = kb->add(bBase, kb->mul(kk, kb->c(q.nr)));
          SmallVector<Value> bv;
          for (int64_t v = 0; v < vecs; ++v) bv.push_back(kb->load(i32v, Bq, kb->add(bRow, kb->c(v * L))));
          SmallVector<Value> next;
          for (int r = 0; r < rows; ++r) {
            Value word = b.create<vector::BroadcastOp>(loc, i32v, kb->load(b.getI32Type(), A, kb->add(aBase[r], kk)));
            for (int64_t v = 0; v < vecs; ++v) {
              if (q.vnni) {
                next.push_back(dotU8S8(*kb, a[r * vecs + v], bv[v], word));
              } else {
                Value prod = pairwiseMulAdd(*kb, b.create<vector::BitCastOp>(loc, i16v, bv[v]),
                                            b.create<vector::BitCastOp>(loc, i16v, word), L, q.x86);
                next.push_back(b.create<arith::AddIOp>(loc, a[r * vecs + v], prod));
              }
            }
          }
          return next;
        });
        Value valid = kb->sub(kb->c(q.P), pcol);
        Value outBase = kb->add(kb->mul(image, kb->c(q.OC * q.P)), pcol);
        auto epilogue = [&](bool masked) {
          SmallVector<Value> masks;
          if (masked)
            for (int64_t v = 0; v < vecs; ++v) masks.push_back(kb->laneMask(kb->sub(valid, kb->c(v * L)), L));
          for (int r = 0; r < rows; ++r) {
            Value o = kb->add(m, kb->c(r));
            Value scale = kb->splat(kb->load(kb->f32(), kb->binding(3), o), L);
            Value bias = biasSlot ? kb->splat(kb->load(kb->f32(), kb->binding(*biasSlot), o), L) : Value();
            Value corr =
                corrSlot ? b.create<vector::BroadcastOp>(loc, i32v, kb->load(b.getI32Type(), kb->binding(*corrSlot), o))
                               .getResult()
                         : Value();
            Value rowBase = kb->add(outBase, kb->mul(o, kb->c(q.P)));
            for (int64_t v = 0; v < vecs; ++v) {
              Value sum = acc[r * vecs + v];
              if (corr) sum = b.create<arith::SubIOp>(loc, sum, corr);
              Value f = b.create<arith::MulFOp>(loc, b.create<arith::SIToFPOp>(loc, vt, sum), scale);
              if (bias) f = b.create<arith::AddFOp>(loc, f, bias);
              Value idx = kb->add(rowBase, kb->c(v * L));
              if (residualSlot && q.int8Residual) {
                // The carried int8 skip connection: (q - zp) * scale.
                auto i8v = VectorType::get({L}, b.getI8Type());
                Value r8 = masked ? kb->maskedLoad(i8v, kb->binding(*residualSlot), idx, masks[v])
                                  : kb->load(i8v, kb->binding(*residualSlot), idx);
                Value ri = b.create<arith::SubIOp>(loc, b.create<arith::ExtSIOp>(loc, i32v, r8),
                                                   splatI32(*kb, L, q.residualZp));
                f = b.create<arith::AddFOp>(
                    loc, f,
                    b.create<arith::MulFOp>(loc, b.create<arith::SIToFPOp>(loc, vt, ri), kb->cf(q.residualScale, vt)));
              } else if (residualSlot) {
                f = b.create<arith::AddFOp>(loc, f,
                                            masked ? kb->maskedLoad(vt, kb->binding(*residualSlot), idx, masks[v])
                                                   : kb->load(vt, kb->binding(*residualSlot), idx));
              }
              f = applyActivation(*kb, f, q.act, q.alpha, q.beta);
              if (q.int8Output) {
                // Requantized as the int8 consumer would quantize this float.
                Value r = b.create<math::RoundEvenOp>(loc, b.create<arith::MulFOp>(loc, f, outInv));
                if (q.outZp) r = b.create<arith::AddFOp>(loc, r, kb->cf(float(q.outZp), vt));
                r = b.create<arith::MaxNumFOp>(loc, r, kb->cf(-128.f, vt));
                r = b.create<arith::MinNumFOp>(loc, r, kb->cf(127.f, vt));
                f = b.create<arith::TruncIOp>(loc, VectorType::get({L}, b.getI8Type()),
                                              b.create<arith::FPToSIOp>(loc, i32v, r));
              }
              if (masked)
                kb->maskedStore(f, kb->binding(0), idx, masks[v]);
              else
                kb->store(f, kb->binding(0), idx);
            }
          }
        };
        kb->ifThenElse(
            kb->cmp(arith::CmpIPredicate::sge, valid, kb->c(q.nr)), [&] { epilogue(false); }, [&] { epilogue(true); });
      });
  kb->finish();
  ctx.addDispatch(*kb, bindings, groups, q.name);
  ctx.plan.dispatches.back().precision = "int8";
  ctx.plan.dispatches.back().flops = sp.mul(sp.constant(2 * q.K * q.OC * q.P), q.Nb);
}

} // namespace

LogicalResult emitQuantizedConv(CPUKernelContext &ctx, Operation *op, ArrayRef<TensorInfo> operands,
                                const TensorInfo &result) {
  auto qc = cast<QuantizedConvOp>(op);
  auto &sp = ctx.shapes;
  auto tiling = requireGemmTiling(op);
  if (!tiling) return failure();
  const TensorInfo &X = operands[0], &W = operands[1], &WS = operands[2];
  if (!W.constant || !WS.constant) return op->emitOpError("needs a constant int8 weight and constant scales");
  auto inType = qc.getInput().getType(), outType = qc.getType();
  if (inType.isDynamicDim(1) || inType.isDynamicDim(2) || inType.isDynamicDim(3) || outType.isDynamicDim(2) ||
      outType.isDynamicDim(3))
    return op->emitOpError("needs static input channels, height and width");
  auto wShape = qc.getWeight().getType().getShape();
  QConv q;
  q.name = dispatchName(op);
  q.OC = wShape[0];
  q.C = wShape[1];
  q.KH = wShape[2];
  q.KW = wShape[3];
  q.H = inType.getDimSize(2);
  q.W = inType.getDimSize(3);
  q.OH = outType.getDimSize(2);
  q.OW = outType.getDimSize(3);
  q.P = q.OH * q.OW;
  q.K = q.C * q.KH * q.KW;
  for (int i = 0; i < 2; ++i) {
    q.strides[i] = qc.getStrides()[i];
    q.dil[i] = qc.getDilations()[i];
  }
  for (int i = 0; i < 4; ++i) q.pads[i] = qc.getPads()[i];
  if (q.H * q.W >= (int64_t(1) << 30) || q.P >= (int64_t(1) << 30))
    return op->emitOpError("input plane too large for the int8 conv kernel's 32-bit positions");
  q.lanes = tiling.getLanes();
  q.nr = tiling.getNr();
  q.mr = tiling.getMr();
  q.mb = tiling.getMb();
  q.nb = tiling.getNb();
  IntegerIsa isa = integerIsa(op, q.lanes);
  q.vnni = isa.vnni;
  q.x86 = isa.x86;
  q.step = q.vnni ? 4 : 2;
  q.steps = (q.K + q.step - 1) / q.step;
  q.panels = (q.P + q.nr - 1) / q.nr;
  q.colsPerImage = q.panels * q.nr;
  q.pointwise = q.KH == 1 && q.KW == 1 && q.strides[0] == 1 && q.strides[1] == 1 &&
                llvm::all_of(ArrayRef<int64_t>(q.pads, 4), [](int64_t p) { return p == 0; });
  q.actScale = qc.getActScale().convertToFloat();
  q.zp = int32_t(qc.getActZeroPoint());
  q.int8Input = inType.getElementType().isInteger(8);
  q.int8Output = bool(qc.getOutScale());
  if (auto rs = qc.getResidualScale()) {
    q.int8Residual = true;
    q.residualScale = rs->convertToFloat();
    q.residualZp = int32_t(qc.getResidualZeroPoint());
  }
  if (q.int8Output) {
    q.outScale = qc.getOutScale()->convertToFloat();
    q.outZp = int32_t(qc.getOutZeroPoint());
  }
  q.Nb = X.dims[0];
  q.act = qc.getActivation().str();
  q.alpha = qc.getActAlpha().convertToFloat();
  q.beta = qc.getActBeta().convertToFloat();

  // Compile-time constants: the weight rows as words, the per-channel
  // scales (act_scale folded in), the VNNI correction, the positions.
  std::vector<int8_t> w = int8Values(W.constant);
  std::vector<float> wScale = floatValues(WS.constant);
  std::vector<int32_t> words(size_t(q.OC * q.steps), 0);
  for (int64_t o = 0; o < q.OC; ++o)
    for (int64_t k = 0; k < q.K; ++k) {
      uint32_t v = q.vnni ? uint32_t(uint8_t(w[o * q.K + k])) : uint32_t(uint16_t(int16_t(w[o * q.K + k])));
      uint32_t &word = reinterpret_cast<uint32_t &>(words[o * q.steps + k / q.step]);
      word |= v << ((k % q.step) * (32 / q.step));
    }
  GemmBindings buffers;
  buffers.a =
      ctx.newConstant(words.size() * 4, [&](uint8_t *dst) { std::memcpy(dst, words.data(), words.size() * 4); });
  std::vector<float> scales(size_t(q.OC));
  for (int64_t o = 0; o < q.OC; ++o) scales[o] = q.actScale * wScale[o];
  buffers.scale =
      ctx.newConstant(scales.size() * 4, [&](uint8_t *dst) { std::memcpy(dst, scales.data(), scales.size() * 4); });
  if (q.vnni) {
    std::vector<int32_t> corr(size_t(q.OC), 0);
    for (int64_t o = 0; o < q.OC; ++o) {
      int32_t sum = 0;
      for (int64_t k = 0; k < q.K; ++k) sum += w[o * q.K + k];
      corr[o] = (q.zp + 128) * sum;
    }
    buffers.corr =
        ctx.newConstant(corr.size() * 4, [&](uint8_t *dst) { std::memcpy(dst, corr.data(), corr.size() * 4); });
  }
  std::optional<uint32_t> posBuf;
  if (!q.pointwise) {
    // [0, cols): top input row of each column; [cols, 2 cols): left input
    // column; then one flag per vector of L columns: all inside one output
    // row (and inside P).
    std::vector<int32_t> pos(size_t(2 * q.colsPerImage + q.colsPerImage / q.lanes));
    for (int64_t p = 0; p < q.colsPerImage; ++p) {
      bool inside = p < q.P;
      int64_t oh = inside ? p / q.OW : 0, ow = inside ? p % q.OW : 0;
      pos[p] = inside ? int32_t(oh * q.strides[0] - q.pads[0]) : -(int32_t(1) << 30);
      pos[q.colsPerImage + p] = int32_t(ow * q.strides[1] - q.pads[1]);
    }
    for (int64_t c = 0; c < q.colsPerImage / q.lanes; ++c) {
      int64_t first = c * q.lanes, last = first + q.lanes - 1;
      pos[2 * q.colsPerImage + c] = last < q.P && first / q.OW == last / q.OW;
    }
    posBuf = ctx.int32Table(pos);
  }
  size_t next = 3;
  if (qc.getBias()) buffers.bias = operands[next++].buffer;
  if (qc.getResidual()) buffers.residual = operands[next++].buffer;
  buffers.c = result.buffer;
  buffers.bq = ctx.newTransient(sp.mul(q.Nb, sp.constant(q.colsPerImage * q.steps * 4)));
  emitQuantizeIm2col(ctx, q, buffers.bq, X.buffer, posBuf);
  emitQConvGemm(ctx, q, buffers);
  return success();
}

void registerQuantizedConvKernels(CPUKernelRegistry &registry) {
  registry.addOpKernel<QuantizedConvOp>(emitQuantizedConv);
}

} // namespace v4f
