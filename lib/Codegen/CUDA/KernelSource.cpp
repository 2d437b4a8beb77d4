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
#include "KernelRegistry.h"
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
  if (isMax)
    t.os << "      acc = v4f_maximumf(acc, x);\n";
  else
    t.os << "      acc += x; ++count;\n";
  t.os << "    }\n  }\n";
  if (isMax)
    t.os << "  ((float*)a.bindings[0])[i] = acc;\n";
  else
    t.os << "  ((float*)a.bindings[0])[i] = count ? acc / (float)count : 0.f;\n";
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
  if (kind == "max")
    t.os << "    acc = v4f_maximumf(acc, x);\n";
  else if (kind == "min")
    t.os << "    acc = v4f_minimumf(acc, x);\n";
  else if (kind == "prod")
    t.os << "    acc *= x;\n";
  else
    t.os << "    acc += x;\n";
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
  t.os << "  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;\n  const int lane = threadIdx.x % "
          "32;\n";
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
    t.os << "  const float r = 1.f / s;\n  for (long long j = lane; j < " << lit(A) << "; j += 32) y[j * " << lit(inner)
         << "] = " << (op.getNanToZero() ? "v4f_nan_to_zero(expf(" + v + " - m) * r)" : "expf(" + v + " - m) * r")
         << ";\n";
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
  t.os << "  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;\n  const int lane = threadIdx.x % "
          "32;\n";
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
  t.os << "  float q = 0.f;\n  for (long long j = lane; j < " << lit(D)
       << "; j += 32) { const float d = x[j] - mean; q += d * d; }\n";
  t.os << "  const float r = 1.f / sqrtf(v4f_warp_sum(q) / " << lit(float(D)) << " + "
       << lit(op.getEpsilon().convertToFloat()) << ");\n";
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
  t.os << "  const long long in_ = i % " << lit(inner) << ", ax = (i / " << lit(inner) << ") % "
       << lit(result.dims[axis]) << ", out_ = i / " << lit(inner * result.dims[axis]) << ";\n";
  int64_t start = 0;
  for (size_t e = 0; e < ext.size(); ++e) {
    int64_t len = ext[e].dims[axis];
    t.os << "  if (ax >= " << lit(start) << " && ax < " << lit(start + len)
         << ") { ((E*)a.bindings[0])[i] = ((const E*)a.bindings[" << (e + 1) << "])[(out_ * " << lit(len) << " + (ax - "
         << lit(start) << ")) * " << lit(inner) << " + in_]; return; }\n";
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
  t.os << "  if (j < 0 || j >= " << lit(A) << ") { " << failWith(V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE) << "return; }\n";
  t.os << "  ((E*)a.bindings[0])[i] = ((const E*)a.bindings[1])[(out_ * " << lit(A) << " + j) * " << lit(inner)
       << " + in_];\n";
  t.k.source = t.finish(name);
  return t.k;
}

bool reductionCommon(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  return true;
}

bool poolSupported(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  if (llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getRank() != 4)
    return why = "pooling that is not 2-D", false;
  return true;
}

bool softmaxSupported(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  auto s = cast<SoftmaxOp>(op);
  if (s.getMode() != "softmax" && s.getMode() != "log_softmax") return why = "hardmax", false;
  if (s.getMask()) {
    int64_t rank = llvm::cast<RankedTensorType>(s.getInput().getType()).getRank();
    int64_t mrank = llvm::cast<RankedTensorType>(s.getMask().getType()).getRank();
    if (s.getMode() != "softmax" || (s.getAxis() != rank - 1 && s.getAxis() != -1) || mrank > rank)
      return why = "a fused mask off the last axis", false;
  }
  return true;
}

bool layerNormSupported(Operation *op, std::string &why) {
  if (!allF32(op)) return why = "non-float32 operands", false;
  auto ln = cast<LayerNormOp>(op);
  int64_t rank = llvm::cast<RankedTensorType>(ln.getInput().getType()).getRank();
  int64_t axis = ln.getAxis() < 0 ? ln.getAxis() + rank : ln.getAxis();
  int64_t D = product(llvm::cast<RankedTensorType>(ln.getInput().getType()).getShape(), axis);
  int64_t sn = llvm::cast<RankedTensorType>(ln.getScale().getType()).getNumElements();
  int64_t bn = ln.getBias() ? llvm::cast<RankedTensorType>(ln.getBias().getType()).getNumElements() : 1;
  if ((sn != D && sn != 1) || (bn != D && bn != 1))
    return why = "a scale or bias that is not per normalized element", false;
  return true;
}

bool reduceSupported(Operation *op, std::string &why) {
  auto r = cast<ReduceOp>(op);
  if (!allF32(op) || r.getAxesTensor()) return why = "a reduction over non-float32 data or run-time axes", false;
  StringRef k = r.getKind();
  if (!llvm::is_contained({"sum", "mean", "max", "min", "prod", "l1", "l2", "log_sum", "log_sum_exp", "sum_square"}, k))
    return why = "reduction kind '" + k.str() + "'", false;
  if (llvm::cast<RankedTensorType>(r.getInput().getType()).getNumElements() == 0)
    return why = "an empty reduction", false;
  return true;
}

/// Transpose, concat and gather copy elements of at least a byte.
bool byteElementsSupported(Operation *op, std::string &why) {
  Value data = isa<GatherOp>(op) ? Value(cast<GatherOp>(op).getData()) : op->getResult(0);
  Type et = llvm::cast<RankedTensorType>(data.getType()).getElementType();
  if (!et.isIntOrFloat() || et.getIntOrFloatBitWidth() < 8) return why = "sub-byte or bool elements", false;
  return true;
}

} // namespace

namespace cudagen {

void registerPoolKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<MaxPoolOp>(poolSupported, [](const KernelRequest &r) {
    return poolKernel(cast<MaxPoolOp>(r.ops.front()), true, r.ext, r.result, r.name);
  });
  registry.addOpKernel<AvgPoolOp>(poolSupported, [](const KernelRequest &r) {
    return poolKernel(cast<AvgPoolOp>(r.ops.front()), false, r.ext, r.result, r.name);
  });
}

void registerRowsKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<ReduceMeanOp>(reductionCommon, [](const KernelRequest &r) {
    return reduceKernel("mean", cast<ReduceMeanOp>(r.ops.front()).getAxes(), r.ext[0], r.result, r.name);
  });
  registry.addOpKernel<ReduceOp>(reduceSupported, [](const KernelRequest &r) {
    auto op = cast<ReduceOp>(r.ops.front());
    return reduceKernel(op.getKind(), op.getAxes(), r.ext[0], r.result, r.name);
  });
  registry.addOpKernel<SoftmaxOp>(softmaxSupported, [](const KernelRequest &r) {
    return softmaxKernel(cast<SoftmaxOp>(r.ops.front()), r.ext, r.name);
  });
  registry.addOpKernel<LayerNormOp>(layerNormSupported, [](const KernelRequest &r) {
    return layerNormKernel(cast<LayerNormOp>(r.ops.front()), r.ext, r.name);
  });
}

void registerDataMovementKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<TransposeOp>(byteElementsSupported, [](const KernelRequest &r) {
    return transposeKernel(cast<TransposeOp>(r.ops.front()), r.ext[0], r.result, r.name);
  });
  registry.addOpKernel<ConcatOp>(byteElementsSupported, [](const KernelRequest &r) {
    return concatKernel(cast<ConcatOp>(r.ops.front()), r.ext, r.result, r.name);
  });
  registry.addOpKernel<GatherOp>(byteElementsSupported, [](const KernelRequest &r) {
    return gatherKernel(cast<GatherOp>(r.ops.front()), r.ext, r.result, r.name);
  });
}

} // namespace cudagen

namespace {

/// Whether `op` has a CUDA kernel (a registered family's, on static shapes).
bool supportedSingleOp(Operation *op, std::string &why) {
  auto staticTypes = [&]() {
    for (Value v : op->getOperands())
      if (!llvm::cast<RankedTensorType>(v.getType()).hasStaticShape()) return false;
    return llvm::cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape();
  };
  if (!staticTypes()) {
    why = "dynamic dims (CUDA kernels are specialized on static shapes)";
    return false;
  }
  CudaKernelRegistry::OpKernel kernel = cudaKernels().opKernel(op);
  if (!kernel.supports) {
    why = "'" + op->getName().getStringRef().str() + "' has no CUDA kernel yet";
    return false;
  }
  return kernel.supports(op, why);
}

} // namespace

bool cudaSupportsRegion(Operation *region, std::string &reason) {
  auto dispatch = dyn_cast<DispatchOp>(region);
  if (!dispatch) return reason = "not a dispatch region", false;
  SmallVector<Operation *> ops;
  for (Operation &op : dispatch.getBodyOps()) ops.push_back(&op);
  if (ops.empty()) return reason = "an empty region", false;
  if (StringRef kind = fusedKernelOf(region); !kind.empty()) {
    CudaKernelRegistry::RegionKernel kernel = cudaKernels().regionKernel(kind);
    if (!kernel.supports) return reason = "a fused '" + kind.str() + "' region has no CUDA kernel", false;
    std::string why;
    if (!kernel.supports(ops, why)) return reason = why, false;
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
  if (isElementwiseRegion(ops)) {
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
  KernelRequest request{ops, externals, ext, result, name, options};
  Operation *op = ops.front();
  if (StringRef kind = fusedKernelOf(op->getParentOp()); !kind.empty()) {
    CudaKernelRegistry::RegionKernel kernel = cudaKernels().regionKernel(kind);
    if (!kernel.generate) return op->getParentOp()->emitOpError("has no CUDA kernel for its fused kind"), failure();
    return kernel.generate(request);
  }
  // A region of several ops is a chain of elementwise ops: the elementwise
  // family's kernel, found through its first op.
  CudaKernelRegistry::OpKernel kernel = cudaKernels().opKernel(op);
  if (!kernel.generate) return op->emitOpError("has no CUDA kernel"), failure();
  return kernel.generate(request);
}

std::string cudaPrelude(const CudaOptions &options) {
  std::string s = "// Generated by v4fc: CUDA kernels of one model (kernel_abi.h: v4f_cuda_args_t).\n";
  if (options.precision == "fp16") s += "#include <cuda_fp16.h>\n#include <mma.h>\n";
  if (options.precision == "bf16") s += "#include <cuda_bf16.h>\n#include <mma.h>\n";
  if (options.precision == "tf32") s += "#include <mma.h>\n";
  // The args struct of kernel_abi.h (v4f_cuda_args_t), from its constants.
  s += "typedef struct {\n"
       "  unsigned long long bindings[" +
       std::to_string(V4F_CUDA_MAX_BINDINGS) +
       "];\n"
       "  unsigned long long binding_lengths[" +
       std::to_string(V4F_CUDA_MAX_BINDINGS) +
       "];\n"
       "  long long push_constants[" +
       std::to_string(V4F_CUDA_MAX_PUSH_CONSTANTS) +
       "];\n"
       "  unsigned long long error;\n"
       "  unsigned int binding_count;\n"
       "  unsigned int dispatch_index;\n"
       "} v4f_cuda_args_t;\n"
       "static_assert(sizeof(v4f_cuda_args_t) == " +
       std::to_string(sizeof(v4f_cuda_args_t)) + ", \"kernel_abi.h layout\");\n\n";
  s += R"(__device__ __forceinline__ void v4f_fail(const v4f_cuda_args_t& a, unsigned code) {
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
