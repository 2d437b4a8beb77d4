//===- KernelSource.cpp - dispatch regions -> CUDA C++ kernels ------------===//
//
// Every kernel is specialized on the region's static shapes (the placement
// pass keeps regions with dynamic dims on the CPU): dims, strides and
// attributes are literals, so NVRTC folds the index arithmetic. Every kernel
// starts with the ABI checks of kernel_abi.h (binding count and each
// binding's bytes), then computes one output element per thread, except the
// matrix products (64x64 tiles: FP32 FMA, or FP16/BF16 tensor cores through
// WMMA with FP32 accumulation) and the row kernels (softmax, layer norm: one
// warp per row with shuffle reductions).
//
//===----------------------------------------------------------------------===//
#include "KernelText.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <numeric>

using namespace mlir;

namespace v4f {

using namespace cudagen;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// C expression of a named elementwise op over operand expressions.
std::string namedElementwise(Operation *op, llvm::ArrayRef<std::string> x) {
  if (isa<AddOp>(op)) return "(" + x[0] + " + " + x[1] + ")";
  if (isa<SubOp>(op)) return "(" + x[0] + " - " + x[1] + ")";
  if (isa<MulOp>(op)) return "(" + x[0] + " * " + x[1] + ")";
  if (isa<DivOp>(op)) return "(" + x[0] + " / " + x[1] + ")";
  if (isa<ReluOp>(op)) return activation("relu", x[0], 0, 0);
  if (isa<SigmoidOp>(op)) return activation("sigmoid", x[0], 0, 0);
  if (isa<TanhOp>(op)) return "tanhf(" + x[0] + ")";
  if (isa<ErfOp>(op)) return "erff(" + x[0] + ")";
  if (isa<ExpOp>(op)) return "expf(" + x[0] + ")";
  if (isa<SqrtOp>(op)) return "sqrtf(" + x[0] + ")";
  if (auto l = dyn_cast<LeakyReluOp>(op)) return activation("leaky_relu", x[0], l.getAlpha().convertToFloat(), 0);
  if (auto c = dyn_cast<ClipOp>(op))
    return activation("clip", x[0], c.getMin().convertToFloat(), c.getMax().convertToFloat());
  if (auto h = dyn_cast<HardSigmoidOp>(op))
    return activation("hard_sigmoid", x[0], h.getAlpha().convertToFloat(), h.getBeta().convertToFloat());
  if (isa<HardSwishOp>(op)) return activation("hard_swish", x[0], 0, 0);
  return "";
}

bool isNamedElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp,
             HardSigmoidOp, HardSwishOp>(op);
}

/// Translates a v4f.elementwise body (f32 / i1 scalars, arith and math ops)
/// to statements; returns the result expression, or "" with `why` set.
std::string translateBody(ElementwiseOp op, llvm::ArrayRef<std::string> inputs, std::string &stmts,
                          std::string &why, unsigned &counter) {
  Block &body = op.getBody().front();
  llvm::DenseMap<Value, std::string> names;
  for (auto [arg, x] : llvm::zip_equal(body.getArguments(), inputs)) names[arg] = x;
  auto scalarType = [](Type t) -> const char * {
    if (t.isF32()) return "float";
    if (t.isInteger(1)) return "bool";
    return nullptr;
  };
  for (Operation &inner : body) {
    if (auto y = dyn_cast<YieldOp>(inner)) return names.lookup(y->getOperand(0));
    if (inner.getNumResults() != 1) {
      why = "its body has '" + inner.getName().getStringRef().str() + "'";
      return "";
    }
    const char *type = scalarType(inner.getResult(0).getType());
    if (!type) {
      why = "its body computes a value of a type other than float32 or bool";
      return "";
    }
    auto in = [&](unsigned i) { return names.lookup(inner.getOperand(i)); };
    std::string e;
    if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      if (auto f = llvm::dyn_cast<FloatAttr>(c.getValue())) e = lit(float(f.getValueAsDouble()));
      else if (auto b = llvm::dyn_cast<IntegerAttr>(c.getValue())) e = b.getValue().isZero() ? "false" : "true";
    } else if (isa<arith::AddFOp>(inner)) e = "(" + in(0) + " + " + in(1) + ")";
    else if (isa<arith::SubFOp>(inner)) e = "(" + in(0) + " - " + in(1) + ")";
    else if (isa<arith::MulFOp>(inner)) e = "(" + in(0) + " * " + in(1) + ")";
    else if (isa<arith::DivFOp>(inner)) e = "(" + in(0) + " / " + in(1) + ")";
    else if (isa<arith::RemFOp>(inner)) e = "fmodf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::NegFOp>(inner)) e = "(-" + in(0) + ")";
    else if (isa<arith::MaximumFOp>(inner)) e = "v4f_maximumf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MinimumFOp>(inner)) e = "v4f_minimumf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MaxNumFOp>(inner)) e = "fmaxf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MinNumFOp>(inner)) e = "fminf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::SelectOp>(inner)) e = "(" + in(0) + " ? " + in(1) + " : " + in(2) + ")";
    else if (isa<arith::AndIOp>(inner) && inner.getResult(0).getType().isInteger(1)) e = "(" + in(0) + " && " + in(1) + ")";
    else if (isa<arith::OrIOp>(inner) && inner.getResult(0).getType().isInteger(1)) e = "(" + in(0) + " || " + in(1) + ")";
    else if (isa<arith::XOrIOp>(inner) && inner.getResult(0).getType().isInteger(1)) e = "(" + in(0) + " != " + in(1) + ")";
    else if (auto cmp = dyn_cast<arith::CmpFOp>(inner)) {
      std::string a = in(0), b = in(1);
      switch (cmp.getPredicate()) {
      case arith::CmpFPredicate::OEQ: e = "(" + a + " == " + b + ")"; break;
      case arith::CmpFPredicate::OGT: e = "(" + a + " > " + b + ")"; break;
      case arith::CmpFPredicate::OGE: e = "(" + a + " >= " + b + ")"; break;
      case arith::CmpFPredicate::OLT: e = "(" + a + " < " + b + ")"; break;
      case arith::CmpFPredicate::OLE: e = "(" + a + " <= " + b + ")"; break;
      case arith::CmpFPredicate::ONE: e = "(" + a + " < " + b + " || " + a + " > " + b + ")"; break;
      case arith::CmpFPredicate::UNE: e = "(" + a + " != " + b + ")"; break;
      case arith::CmpFPredicate::UEQ: e = "!(" + a + " < " + b + " || " + a + " > " + b + ")"; break;
      case arith::CmpFPredicate::UGT: e = "!(" + a + " <= " + b + ")"; break;
      case arith::CmpFPredicate::UGE: e = "!(" + a + " < " + b + ")"; break;
      case arith::CmpFPredicate::ULT: e = "!(" + a + " >= " + b + ")"; break;
      case arith::CmpFPredicate::ULE: e = "!(" + a + " > " + b + ")"; break;
      case arith::CmpFPredicate::ORD: e = "(" + a + " == " + a + " && " + b + " == " + b + ")"; break;
      case arith::CmpFPredicate::UNO: e = "(" + a + " != " + a + " || " + b + " != " + b + ")"; break;
      case arith::CmpFPredicate::AlwaysTrue: e = "true"; break;
      case arith::CmpFPredicate::AlwaysFalse: e = "false"; break;
      }
    } else if (isa<math::ExpOp>(inner)) e = "expf(" + in(0) + ")";
    else if (isa<math::Exp2Op>(inner)) e = "exp2f(" + in(0) + ")";
    else if (isa<math::ExpM1Op>(inner)) e = "expm1f(" + in(0) + ")";
    else if (isa<math::LogOp>(inner)) e = "logf(" + in(0) + ")";
    else if (isa<math::Log2Op>(inner)) e = "log2f(" + in(0) + ")";
    else if (isa<math::Log1pOp>(inner)) e = "log1pf(" + in(0) + ")";
    else if (isa<math::TanhOp>(inner)) e = "tanhf(" + in(0) + ")";
    else if (isa<math::SqrtOp>(inner)) e = "sqrtf(" + in(0) + ")";
    else if (isa<math::RsqrtOp>(inner)) e = "(1.f / sqrtf(" + in(0) + "))";
    else if (isa<math::AbsFOp>(inner)) e = "fabsf(" + in(0) + ")";
    else if (isa<math::SinOp>(inner)) e = "sinf(" + in(0) + ")";
    else if (isa<math::CosOp>(inner)) e = "cosf(" + in(0) + ")";
    else if (isa<math::TanOp>(inner)) e = "tanf(" + in(0) + ")";
    else if (isa<math::AsinOp>(inner)) e = "asinf(" + in(0) + ")";
    else if (isa<math::AcosOp>(inner)) e = "acosf(" + in(0) + ")";
    else if (isa<math::AtanOp>(inner)) e = "atanf(" + in(0) + ")";
    else if (isa<math::SinhOp>(inner)) e = "sinhf(" + in(0) + ")";
    else if (isa<math::CoshOp>(inner)) e = "coshf(" + in(0) + ")";
    else if (isa<math::AsinhOp>(inner)) e = "asinhf(" + in(0) + ")";
    else if (isa<math::AcoshOp>(inner)) e = "acoshf(" + in(0) + ")";
    else if (isa<math::AtanhOp>(inner)) e = "atanhf(" + in(0) + ")";
    else if (isa<math::ErfOp>(inner)) e = "erff(" + in(0) + ")";
    else if (isa<math::FloorOp>(inner)) e = "floorf(" + in(0) + ")";
    else if (isa<math::CeilOp>(inner)) e = "ceilf(" + in(0) + ")";
    else if (isa<math::RoundEvenOp>(inner)) e = "rintf(" + in(0) + ")";
    else if (isa<math::RoundOp>(inner)) e = "roundf(" + in(0) + ")";
    else if (isa<math::TruncOp>(inner)) e = "truncf(" + in(0) + ")";
    else if (isa<math::PowFOp>(inner)) e = "powf(" + in(0) + ", " + in(1) + ")";
    else if (isa<math::CopySignOp>(inner)) e = "copysignf(" + in(0) + ", " + in(1) + ")";
    else if (isa<math::FmaOp>(inner)) e = "fmaf(" + in(0) + ", " + in(1) + ", " + in(2) + ")";
    if (e.empty()) {
      why = "its body has '" + inner.getName().getStringRef().str() + "', which has no CUDA translation yet";
      return "";
    }
    std::string v = "v" + std::to_string(counter++);
    stmts += std::string("  const ") + type + " " + v + " = " + e + ";\n";
    names[inner.getResult(0)] = v;
  }
  why = "its body has no yield";
  return "";
}

bool elementwiseSupported(Operation *op, std::string &why) {
  if (isNamedElementwise(op)) return true;
  auto ew = dyn_cast<ElementwiseOp>(op);
  if (!ew) return false;
  // float32, or bool between the ops of a fused chain (cudaSupportsRegion
  // requires float32 at the region's borders).
  auto f32OrBool = [](Type t) {
    auto r = llvm::dyn_cast<RankedTensorType>(t);
    return isF32Tensor(t) || (r && r.hasStaticShape() && r.getElementType().isInteger(1));
  };
  for (Value v : op->getOperands())
    if (!f32OrBool(v.getType())) {
      why = "an elementwise op with non-float32 operands";
      return false;
    }
  if (!f32OrBool(op->getResult(0).getType())) {
    why = "an elementwise op with a non-float32 result";
    return false;
  }
  std::string stmts;
  unsigned counter = 0;
  std::vector<std::string> inputs;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) inputs.push_back("x" + std::to_string(i));
  if (translateBody(ew, inputs, stmts, why, counter).empty()) {
    why = "an elementwise op whose " + why;
    return false;
  }
  return true;
}

FailureOr<CudaKernel> elementwiseKernel(llvm::ArrayRef<Operation *> ops, llvm::ArrayRef<Value> externals,
                                        llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                        const std::string &name) {
  KernelText t;
  int64_t total = product(result.dims);
  t.bind(-1, 2, total * 4);
  for (size_t e = 0; e < externals.size(); ++e) t.bind(int(e), 1, product(ext[e].dims) * 4);
  t.linear(total);
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << coordinates(result.dims);
  llvm::DenseMap<Value, std::string> names;
  for (size_t e = 0; e < externals.size(); ++e) {
    std::string v = "e" + std::to_string(e);
    t.os << "  const float " << v << " = ((const float*)a.bindings[" << (e + 1) << "])["
         << broadcastOffset(ext[e].dims, result.dims) << "];\n";
    names[externals[e]] = v;
  }
  unsigned counter = 0;
  for (Operation *op : ops) {
    std::vector<std::string> x;
    for (Value v : op->getOperands()) x.push_back(names.lookup(v));
    std::string expr;
    if (auto ew = dyn_cast<ElementwiseOp>(op)) {
      std::string stmts, why;
      expr = translateBody(ew, x, stmts, why, counter);
      if (expr.empty()) return op->emitOpError("has no CUDA kernel: ") << why, failure();
      t.os << stmts;
    } else {
      expr = namedElementwise(op, x);
      if (expr.empty()) return op->emitOpError("has no CUDA kernel"), failure();
    }
    std::string v = "v" + std::to_string(counter++);
    const bool boolean = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getElementType().isInteger(1);
    t.os << "  const " << (boolean ? "bool " : "float ") << v << " = " << expr << ";\n";
    names[op->getResult(0)] = v;
  }
  t.os << "  ((float*)a.bindings[0])[i] = " << names.lookup(ops.back()->getResult(0)) << ";\n";
  t.k.flops = double(total) * ops.size();
  t.k.source = t.finish(name);
  return t.k;
}

template <typename PoolOpT>
FailureOr<CudaKernel> poolKernel(PoolOpT op, bool isMax, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                 const std::string &name) {
  const CudaTensor &X = ext[0];
  int64_t OH = result.dims[2], OW = result.dims[3], H = X.dims[2], W = X.dims[3];
  auto k = op.getKernelShape(), s = op.getStrides(), dl = op.getDilations(), p = op.getPads();
  KernelText t;
  int64_t total = product(result.dims);
  t.bind(-1, 2, total * 4);
  t.bind(0, 1, product(X.dims) * 4);
  t.linear(total);
  t.k.flops = double(total) * k[0] * k[1];
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << "  const int ow = (int)(i % " << OW << "), oh = (int)((i / " << OW << ") % " << OH << ");\n";
  t.os << "  const float* xp = (const float*)a.bindings[1] + (i / " << lit(OW * OH) << ") * " << lit(H * W) << ";\n";
  t.os << "  float acc = " << (isMax ? "-__int_as_float(0x7f800000)" : "0.f") << ";\n  int count = 0;\n";
  t.os << "  for (int kh = 0; kh < " << k[0] << "; ++kh) {\n";
  t.os << "    const int ih = oh * " << s[0] << " - " << p[0] << " + kh * " << dl[0] << ";\n";
  t.os << "    if (ih >= " << (H + p[2]) << ") break;\n";
  t.os << "    for (int kw = 0; kw < " << k[1] << "; ++kw) {\n";
  t.os << "      const int iw = ow * " << s[1] << " - " << p[1] << " + kw * " << dl[1] << ";\n";
  t.os << "      if (iw >= " << (W + p[3]) << ") break;\n";
  t.os << "      if (ih < 0 || ih >= " << H << " || iw < 0 || iw >= " << W << ") { "
       << (op.getCountIncludePad() && !isMax ? "++count; " : "") << "continue; }\n";
  t.os << "      const float x = xp[ih * " << W << " + iw];\n";
  if (isMax) t.os << "      acc = v4f_maximumf(acc, x);\n";
  else t.os << "      acc += x; ++count;\n";
  t.os << "    }\n  }\n";
  if (isMax) t.os << "  ((float*)a.bindings[0])[i] = acc;\n";
  else t.os << "  ((float*)a.bindings[0])[i] = count ? acc / (float)count : 0.f;\n";
  t.k.source = t.finish(name);
  return t.k;
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, layer norm
//===----------------------------------------------------------------------===//

/// One thread per output element, looping over the reduced elements.
FailureOr<CudaKernel> reduceKernel(StringRef kind, llvm::ArrayRef<int64_t> axesIn, const CudaTensor &X,
                                   const CudaTensor &result, const std::string &name) {
  size_t rank = X.dims.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t ax : axesIn) reduced[ax < 0 ? ax + rank : ax] = true;
  if (axesIn.empty()) reduced.assign(rank, true);
  std::vector<int64_t> keptDims, redDims, keptStrides, redStrides;
  int64_t stride = 1;
  std::vector<int64_t> strides(rank);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= X.dims[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    (reduced[d] ? redDims : keptDims).push_back(X.dims[d]);
    (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
  }
  int64_t outTotal = product(result.dims), redTotal = product(redDims);
  KernelText t;
  t.bind(-1, 2, outTotal * 4);
  t.bind(0, 1, product(X.dims) * 4);
  t.linear(outTotal);
  t.k.flops = double(product(X.dims));
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(outTotal) << ") return;\n";
  t.os << "  const float* X = (const float*)a.bindings[1];\n";
  t.os << "  long long base = 0, t_ = i;\n";
  for (size_t d = keptDims.size(); d-- > 0;)
    t.os << "  base += (t_ % " << lit(keptDims[d]) << ") * " << lit(keptStrides[d]) << "; t_ /= " << lit(keptDims[d])
         << ";\n";
  std::string init = kind == "max"    ? "-__int_as_float(0x7f800000)"
                     : kind == "min"  ? "__int_as_float(0x7f800000)"
                     : kind == "prod" ? "1.f"
                                      : "0.f";
  t.os << "  float acc = " << init << ";\n";
  t.os << "  for (long long r = 0; r < " << lit(redTotal) << "; ++r) {\n    long long off = base, u_ = r;\n";
  for (size_t d = redDims.size(); d-- > 0;)
    t.os << "    off += (u_ % " << lit(redDims[d]) << ") * " << lit(redStrides[d]) << "; u_ /= " << lit(redDims[d])
         << ";\n";
  t.os << "    float x = X[off];\n";
  if (kind == "l1") t.os << "    x = fabsf(x);\n";
  if (kind == "l2" || kind == "sum_square") t.os << "    x = x * x;\n";
  if (kind == "log_sum_exp") t.os << "    x = expf(x);\n";
  if (kind == "max") t.os << "    acc = v4f_maximumf(acc, x);\n";
  else if (kind == "min") t.os << "    acc = v4f_minimumf(acc, x);\n";
  else if (kind == "prod") t.os << "    acc *= x;\n";
  else t.os << "    acc += x;\n";
  t.os << "  }\n";
  if (kind == "mean") t.os << "  acc = acc / " << lit(float(redTotal)) << ";\n";
  if (kind == "l2") t.os << "  acc = sqrtf(acc);\n";
  if (kind == "log_sum" || kind == "log_sum_exp") t.os << "  acc = logf(acc);\n";
  t.os << "  ((float*)a.bindings[0])[i] = acc;\n";
  t.k.source = t.finish(name);
  return t.k;
}

/// One warp per (outer, inner) row of `axis`.
/// Softmax / log-softmax along one axis, one warp per row; with the fused
/// scale and additive mask of attention (v4f-fuse-normalizations: the
/// softmax of x * scale + mask, the mask broadcast to x, last axis only).
FailureOr<CudaKernel> softmaxKernel(SoftmaxOp op, llvm::ArrayRef<CudaTensor> ext, const std::string &name) {
  const CudaTensor &X = ext[0];
  int64_t rank = X.dims.size(), axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t A = X.dims[axis], inner = product(X.dims, axis + 1), outer = product(X.dims, 0, axis);
  int64_t rows = outer * inner, total = product(X.dims);
  const bool masked = static_cast<bool>(op.getMask());
  const float scale = op.getScale().convertToFloat();
  KernelText t;
  t.bind(-1, 2, total * 4);
  t.bind(0, 1, total * 4);
  if (masked) t.bind(1, 1, product(ext[1].dims) * 4);
  t.k.grid[0] = std::max<int64_t>(1, (rows + 7) / 8);
  t.k.block[0] = 256;
  t.k.flops = (masked ? 6.0 : 4.0) * total;
  bool log = op.getMode() == "log_softmax";
  t.os << "  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;\n  const int lane = threadIdx.x % 32;\n";
  t.os << "  if (row >= " << lit(rows) << ") return;\n";
  t.os << "  const long long base = (row / " << lit(inner) << ") * " << lit(A * inner) << " + row % " << lit(inner)
       << ";\n";
  t.os << "  const float* x = (const float*)a.bindings[1] + base;\n  float* y = (float*)a.bindings[0] + base;\n";
  // v(j): the softmax's input at element j of the row.
  std::string v = "x[j * " + lit(inner) + "]";
  if (scale != 1.f) v = "(" + v + " * " + lit(scale) + ")";
  if (masked) {
    // The mask's offset at the row's coordinates (the last one 0), and its
    // step along the row (0 when the mask broadcasts along it).
    llvm::ArrayRef<int64_t> mdims = ext[1].dims;
    t.os << "  long long t_ = row;\n";
    for (int64_t d = rank - 1; d-- > 0;)
      t.os << "  const long long c" << d << " = t_ % " << lit(X.dims[d]) << "; t_ /= " << lit(X.dims[d]) << ";\n";
    t.os << "  const long long c" << (rank - 1) << " = 0;\n  (void)t_;\n";
    std::string offset = mdims == llvm::ArrayRef<int64_t>(X.dims) ? "row * " + lit(A) : broadcastOffset(mdims, X.dims);
    t.os << "  const float* mask = (const float*)a.bindings[2] + (" << offset << ");\n";
    v = "(" + v + " + mask[j * " + lit(int64_t(mdims.empty() || mdims.back() == 1 ? 0 : 1)) + "])";
  }
  t.os << "  float m = -__int_as_float(0x7f800000);\n";
  t.os << "  for (long long j = lane; j < " << lit(A) << "; j += 32) m = fmaxf(m, " << v << ");\n";
  t.os << "  m = v4f_warp_max(m);\n  float s = 0.f;\n";
  t.os << "  for (long long j = lane; j < " << lit(A) << "; j += 32) s += expf(" << v << " - m);\n";
  t.os << "  s = v4f_warp_sum(s);\n";
  if (log)
    t.os << "  const float ls = logf(s);\n  for (long long j = lane; j < " << lit(A) << "; j += 32) y[j * "
         << lit(inner) << "] = " << v << " - m - ls;\n";
  else
    t.os << "  const float r = 1.f / s;\n  for (long long j = lane; j < " << lit(A) << "; j += 32) y[j * "
         << lit(inner) << "] = "
         << (op.getNanToZero() ? "v4f_nan_to_zero(expf(" + v + " - m) * r)" : "expf(" + v + " - m) * r") << ";\n";
  t.k.source = t.finish(name);
  return t.k;
}

FailureOr<CudaKernel> layerNormKernel(LayerNormOp op, llvm::ArrayRef<CudaTensor> ext, const std::string &name) {
  const CudaTensor &X = ext[0];
  int64_t rank = X.dims.size(), axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t D = product(X.dims, axis), rows = product(X.dims, 0, axis), total = product(X.dims);
  int64_t scaleN = product(ext[1].dims), biasN = op.getBias() ? product(ext[2].dims) : 0;
  KernelText t;
  t.bind(-1, 2, total * 4);
  t.bind(0, 1, total * 4);
  t.bind(1, 1, scaleN * 4);
  if (op.getBias()) t.bind(2, 1, biasN * 4);
  t.k.grid[0] = std::max<int64_t>(1, (rows + 7) / 8);
  t.k.block[0] = 256;
  t.k.flops = 8.0 * total;
  t.os << "  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;\n  const int lane = threadIdx.x % 32;\n";
  t.os << "  if (row >= " << lit(rows) << ") return;\n";
  t.os << "  const float* x = (const float*)a.bindings[1] + row * " << lit(D) << ";\n";
  t.os << "  float* y = (float*)a.bindings[0] + row * " << lit(D) << ";\n";
  t.os << "  const float* scale = (const float*)a.bindings[2];\n";
  if (op.getBias()) t.os << "  const float* bias = (const float*)a.bindings[3];\n";
  if (!op.getRms()) {
    t.os << "  float s = 0.f;\n  for (long long j = lane; j < " << lit(D) << "; j += 32) s += x[j];\n";
    t.os << "  const float mean = v4f_warp_sum(s) / " << lit(float(D)) << ";\n";
  } else {
    t.os << "  const float mean = 0.f;\n";
  }
  t.os << "  float q = 0.f;\n  for (long long j = lane; j < " << lit(D) << "; j += 32) { const float d = x[j] - mean; q += d * d; }\n";
  t.os << "  const float r = 1.f / sqrtf(v4f_warp_sum(q) / " << lit(float(D)) << " + " << lit(op.getEpsilon().convertToFloat())
       << ");\n";
  t.os << "  for (long long j = lane; j < " << lit(D) << "; j += 32) {\n";
  t.os << "    float v = (x[j] - mean) * r * scale[" << (scaleN == 1 ? "0" : "j") << "];\n";
  if (op.getBias()) t.os << "    v += bias[" << (biasN == 1 ? "0" : "j") << "];\n";
  t.os << "    y[j] = v;\n  }\n";
  t.k.source = t.finish(name);
  return t.k;
}

//===----------------------------------------------------------------------===//
// Data movement: transpose, concat, gather (any element type, copied as bits)
//===----------------------------------------------------------------------===//

FailureOr<CudaKernel> transposeKernel(TransposeOp op, const CudaTensor &X, const CudaTensor &result,
                                      const std::string &name) {
  auto perm = op.getPerm();
  size_t rank = X.dims.size();
  std::vector<int64_t> inStrides(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    inStrides[d] = stride;
    stride *= X.dims[d];
  }
  int64_t total = product(result.dims), eb = elementBytesOf(X.elementType);
  KernelText t;
  t.bind(-1, 2, total * eb);
  t.bind(0, 1, product(X.dims) * eb);
  t.linear(total);
  t.os << "  typedef " << copyType(X.elementType) << " E;\n";
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n" << coordinates(result.dims);
  t.os << "  const long long off = 0";
  for (size_t d = 0; d < rank; ++d) t.os << " + c" << d << " * " << lit(inStrides[perm[d]]);
  t.os << ";\n  ((E*)a.bindings[0])[i] = ((const E*)a.bindings[1])[off];\n";
  t.k.source = t.finish(name);
  return t.k;
}

FailureOr<CudaKernel> concatKernel(ConcatOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                   const std::string &name) {
  size_t rank = result.dims.size();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t total = product(result.dims), eb = elementBytesOf(result.elementType);
  int64_t inner = product(result.dims, axis + 1), outerCount = product(result.dims, 0, axis);
  (void)outerCount;
  KernelText t;
  t.bind(-1, 2, total * eb);
  for (size_t e = 0; e < ext.size(); ++e) t.bind(int(e), 1, product(ext[e].dims) * eb);
  t.linear(total);
  t.os << "  typedef " << copyType(result.elementType) << " E;\n";
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << "  const long long in_ = i % " << lit(inner) << ", ax = (i / " << lit(inner) << ") % " << lit(result.dims[axis])
       << ", out_ = i / " << lit(inner * result.dims[axis]) << ";\n";
  int64_t start = 0;
  for (size_t e = 0; e < ext.size(); ++e) {
    int64_t len = ext[e].dims[axis];
    t.os << "  if (ax >= " << lit(start) << " && ax < " << lit(start + len) << ") { ((E*)a.bindings[0])[i] = ((const E*)a.bindings["
         << (e + 1) << "])[(out_ * " << lit(len) << " + (ax - " << lit(start) << ")) * " << lit(inner) << " + in_]; return; }\n";
    start += len;
  }
  t.k.source = t.finish(name);
  return t.k;
}

FailureOr<CudaKernel> gatherKernel(GatherOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                   const std::string &name) {
  const CudaTensor &D = ext[0], &I = ext[1];
  size_t rank = D.dims.size();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t total = product(result.dims), eb = elementBytesOf(D.elementType);
  int64_t inner = product(D.dims, axis + 1), A = D.dims[axis], nIdx = product(I.dims);
  bool idx64 = I.elementType.isInteger(64);
  KernelText t;
  t.bind(-1, 2, total * eb);
  t.bind(0, 1, product(D.dims) * eb);
  t.bind(1, 1, nIdx * (idx64 ? 8 : 4));
  t.linear(total);
  t.os << "  typedef " << copyType(D.elementType) << " E;\n";
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << "  const long long in_ = i % " << lit(inner) << ", k = (i / " << lit(inner) << ") % " << lit(nIdx)
       << ", out_ = i / " << lit(inner * nIdx) << ";\n";
  t.os << "  long long j = ((const " << (idx64 ? "long long" : "int") << "*)a.bindings[2])[k];\n";
  t.os << "  if (j < 0) j += " << lit(A) << ";\n";
  t.os << "  if (j < 0 || j >= " << lit(A) << ") { v4f_fail(a, 1); return; }\n";
  t.os << "  ((E*)a.bindings[0])[i] = ((const E*)a.bindings[1])[(out_ * " << lit(A) << " + j) * " << lit(inner)
       << " + in_];\n";
  t.k.source = t.finish(name);
  return t.k;
}

bool supportedSingleOp(Operation *op, std::string &why) {
  auto allF32 = [&]() {
    for (Value v : op->getOperands())
      if (!isF32Tensor(v.getType())) return false;
    return isF32Tensor(op->getResult(0).getType());
  };
  auto staticTypes = [&]() {
    for (Value v : op->getOperands())
      if (!llvm::cast<RankedTensorType>(v.getType()).hasStaticShape()) return false;
    return llvm::cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape();
  };
  if (!staticTypes()) {
    why = "dynamic dims (CUDA kernels are specialized on static shapes)";
    return false;
  }
  if (isNamedElementwise(op) || isa<ElementwiseOp>(op)) return elementwiseSupported(op, why);
  if (isa<MatMulOp, ConvOp, MaxPoolOp, AvgPoolOp, ReduceMeanOp, SoftmaxOp, LayerNormOp>(op)) {
    if (!allF32()) {
      why = "non-float32 operands";
      return false;
    }
    if (auto mm = dyn_cast<MatMulOp>(op))
      if (activation(mm.getActivation(), "v", 0, 0).empty()) return why = "an unknown activation", false;
    if (auto c = dyn_cast<ConvOp>(op)) {
      if (llvm::cast<RankedTensorType>(c.getInput().getType()).getRank() != 4) return why = "a conv that is not 2-D", false;
      if (activation(c.getActivation(), "v", 0, 0).empty()) return why = "an unknown activation", false;
    }
    if (auto s = dyn_cast<SoftmaxOp>(op)) {
      if (s.getMode() != "softmax" && s.getMode() != "log_softmax") return why = "hardmax", false;
      if (s.getMask()) {
        int64_t rank = llvm::cast<RankedTensorType>(s.getInput().getType()).getRank();
        int64_t mrank = llvm::cast<RankedTensorType>(s.getMask().getType()).getRank();
        if (s.getMode() != "softmax" || (s.getAxis() != rank - 1 && s.getAxis() != -1) || mrank > rank)
          return why = "a fused mask off the last axis", false;
      }
    }
    if (auto ln = dyn_cast<LayerNormOp>(op)) {
      int64_t rank = llvm::cast<RankedTensorType>(ln.getInput().getType()).getRank();
      int64_t axis = ln.getAxis() < 0 ? ln.getAxis() + rank : ln.getAxis();
      int64_t D = product(llvm::cast<RankedTensorType>(ln.getInput().getType()).getShape(), axis);
      int64_t sn = llvm::cast<RankedTensorType>(ln.getScale().getType()).getNumElements();
      int64_t bn = ln.getBias() ? llvm::cast<RankedTensorType>(ln.getBias().getType()).getNumElements() : 1;
      if ((sn != D && sn != 1) || (bn != D && bn != 1)) return why = "a scale or bias that is not per normalized element", false;
    }
    if (isa<MaxPoolOp, AvgPoolOp>(op) && llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getRank() != 4)
      return why = "pooling that is not 2-D", false;
    return true;
  }
  if (auto r = dyn_cast<ReduceOp>(op)) {
    if (!allF32() || r.getAxesTensor()) return why = "a reduction over non-float32 data or run-time axes", false;
    StringRef k = r.getKind();
    if (!llvm::is_contained({"sum", "mean", "max", "min", "prod", "l1", "l2", "log_sum", "log_sum_exp", "sum_square"}, k))
      return why = "reduction kind '" + k.str() + "'", false;
    if (llvm::cast<RankedTensorType>(r.getInput().getType()).getNumElements() == 0) return why = "an empty reduction", false;
    return true;
  }
  if (isa<TransposeOp, ConcatOp>(op)) {
    Type et = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    if (!et.isIntOrFloat() || et.getIntOrFloatBitWidth() < 8) return why = "sub-byte or bool elements", false;
    return true;
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    Type et = llvm::cast<RankedTensorType>(g.getData().getType()).getElementType();
    if (!et.isIntOrFloat() || et.getIntOrFloatBitWidth() < 8) return why = "sub-byte or bool elements", false;
    return true;
  }
  if (isa<GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp>(op)) return indexingSupported(op, why);
  why = "'" + op->getName().getStringRef().str() + "' has no CUDA kernel yet";
  return false;
}

} // namespace

bool cudaSupportsRegion(Operation *region, std::string &reason) {
  auto dispatch = dyn_cast<DispatchOp>(region);
  if (!dispatch) return reason = "not a dispatch region", false;
  SmallVector<Operation *> ops;
  for (Operation &op : dispatch.getBodyOps()) ops.push_back(&op);
  if (ops.empty()) return reason = "an empty region", false;
  if (ops.size() > 1 && isAttentionRegion(ops)) {
    std::string why;
    if (!attentionSupported(ops, why)) return reason = why, false;
    return true;
  }
  for (Operation *op : ops) {
    std::string why;
    if (!supportedSingleOp(op, why)) {
      reason = op->getName().stripDialect().str() + ": " + why;
      return false;
    }
    if (ops.size() > 1 && !isFusibleElementwise(op)) {
      reason = "a region of several ops that are not all elementwise";
      return false;
    }
  }
  // One binding per distinct operand from outside the region, plus the result.
  llvm::SmallPtrSet<void *, 32> distinct;
  size_t operands = 0;
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getParentOp() == region) continue;
      operands += ops.size() > 1 || isFusibleElementwise(op) ? distinct.insert(v.getAsOpaquePointer()).second : 1;
    }
  if (operands + 1 > V4F_CUDA_MAX_BINDINGS_COUNT)
    return reason = std::to_string(operands) + " operands, more than a CUDA kernel's " +
                    std::to_string(V4F_CUDA_MAX_BINDINGS_COUNT - 1),
           false;
  if (ops.size() > 1 || isNamedElementwise(ops[0]) || isa<ElementwiseOp>(ops[0])) {
    // float32 at the borders (bool values may pass between the chain's ops).
    for (Operation *op : ops)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if ((!def || def->getParentOp() != region) && !isF32Tensor(v.getType()))
          return reason = "elementwise over non-float32 tensors", false;
      }
    if (!isF32Tensor(ops.back()->getResult(0).getType()))
      return reason = "elementwise with a non-float32 result", false;
  }
  return true;
}

FailureOr<CudaKernel> generateCudaKernel(llvm::ArrayRef<Operation *> ops, llvm::ArrayRef<Value> externals,
                                         llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                         const std::string &name, const CudaOptions &options) {
  Operation *op = ops.front();
  if (ops.size() > 1 && isAttentionRegion(ops)) return attentionKernel(ops, externals, ext, result, name);
  if (ops.size() > 1 || isNamedElementwise(op) || isa<ElementwiseOp>(op))
    return elementwiseKernel(ops, externals, ext, result, name);
  if (auto mm = dyn_cast<MatMulOp>(op)) return matmulKernel(mm, ext, result, name, options);
  if (auto c = dyn_cast<ConvOp>(op)) return convKernel(c, ext, result, name, options);
  if (auto p = dyn_cast<MaxPoolOp>(op)) return poolKernel(p, true, ext, result, name);
  if (auto p = dyn_cast<AvgPoolOp>(op)) return poolKernel(p, false, ext, result, name);
  if (auto r = dyn_cast<ReduceMeanOp>(op)) return reduceKernel("mean", r.getAxes(), ext[0], result, name);
  if (auto r = dyn_cast<ReduceOp>(op)) return reduceKernel(r.getKind(), r.getAxes(), ext[0], result, name);
  if (auto s = dyn_cast<SoftmaxOp>(op)) return softmaxKernel(s, ext, name);
  if (auto l = dyn_cast<LayerNormOp>(op)) return layerNormKernel(l, ext, name);
  if (auto t = dyn_cast<TransposeOp>(op)) return transposeKernel(t, ext[0], result, name);
  if (auto c = dyn_cast<ConcatOp>(op)) return concatKernel(c, ext, result, name);
  if (auto g = dyn_cast<GatherOp>(op)) return gatherKernel(g, ext, result, name);
  if (auto g = dyn_cast<GatherElementsOp>(op)) return gatherElementsKernel(g, ext, result, name);
  if (auto g = dyn_cast<GatherNDOp>(op)) return gatherNDKernel(g, ext, result, name);
  if (auto s = dyn_cast<ScatterElementsOp>(op)) return scatterElementsKernel(s, ext, result, name);
  if (auto s = dyn_cast<ScatterNDOp>(op)) return scatterNDKernel(s, ext, result, name);
  return op->emitOpError("has no CUDA kernel"), failure();
}

std::string cudaPrelude(const CudaOptions &options) {
  std::string s = "// Generated by v4fc: CUDA kernels of one model (kernel_abi.h: v4f_cuda_args_t).\n";
  if (options.precision == "fp16") s += "#include <cuda_fp16.h>\n#include <mma.h>\n";
  if (options.precision == "bf16") s += "#include <cuda_bf16.h>\n#include <mma.h>\n";
  if (options.precision == "tf32") s += "#include <mma.h>\n";
  s += R"(typedef struct {
  unsigned long long bindings[24];
  unsigned long long binding_lengths[24];
  long long push_constants[16];
  unsigned long long error;
  unsigned int binding_count;
  unsigned int dispatch_index;
} v4f_cuda_args_t;
static_assert(sizeof(v4f_cuda_args_t) == 528, "kernel_abi.h layout");

__device__ __forceinline__ void v4f_fail(const v4f_cuda_args_t& a, unsigned code) {
  if (a.error) atomicCAS((unsigned*)a.error, 0u, ((a.dispatch_index + 1u) << 8) | code);
}
__device__ __forceinline__ float v4f_maximumf(float x, float y) {
  return (x != x || y != y) ? __int_as_float(0x7fc00000) : fmaxf(x, y);
}
__device__ __forceinline__ float v4f_minimumf(float x, float y) {
  return (x != x || y != y) ? __int_as_float(0x7fc00000) : fminf(x, y);
}
__device__ __forceinline__ float v4f_nan_to_zero(float x) { return x != x ? 0.f : x; }
__device__ __forceinline__ float v4f_warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float v4f_warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

)";
  return s;
}

} // namespace v4f
