//===- KernelText.h - shared pieces of the CUDA kernel emitters -*- C++ -*-===//
//
// Private to lib/Codegen/CUDA: the kernel text builder (binding list, ABI
// checks, launch geometry), literal and index-expression helpers, and the
// kernel emitters of each family (KernelSource.cpp: elementwise, pooling,
// reductions, data movement, dispatch; TensorCoreKernels.cpp: matmul and
// convolution).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_LIB_CODEGEN_CUDA_KERNELTEXT_H
#define V4F_LIB_CODEGEN_CUDA_KERNELTEXT_H

#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/KernelLimits.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/kernel_abi.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>
#include <vector>

namespace v4f {
namespace cudagen {

using llvm::StringRef;
using mlir::RankedTensorType;
using mlir::Type;

/// The kernel ABI (kernel_abi.h) as the generated CUDA C++ spells it: the
/// args struct's array sizes and the error codes v4f_fail reports.
inline constexpr size_t V4F_CUDA_MAX_BINDINGS_COUNT = V4F_CUDA_MAX_BINDINGS;
/// `v4f_fail(a, CODE); ` for kernel_abi.h's error `code`.
inline std::string failWith(unsigned code) { return "v4f_fail(a, " + std::to_string(code) + "); "; }

inline std::string lit(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  char buf[48];
  std::snprintf(buf, sizeof buf, "__int_as_float(0x%08x)", bits);
  return buf;
}

inline std::string lit(int64_t v) { return std::to_string(v) + "LL"; }

inline int64_t product(llvm::ArrayRef<int64_t> dims, size_t begin = 0, size_t end = ~size_t(0)) {
  int64_t p = 1;
  for (size_t i = begin; i < std::min(end, dims.size()); ++i) p *= dims[i];
  return p;
}

/// Row-major strides (in elements) of a contiguous tensor of shape `dims`.
inline std::vector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

inline int64_t elementBytesOf(Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

inline const char *copyType(Type t) {
  switch (elementBytesOf(t)) {
  case 1: return "unsigned char";
  case 2: return "unsigned short";
  case 4: return "unsigned int";
  default: return "unsigned long long";
  }
}

/// Builds one kernel's text and binding list.
struct KernelText {
  CudaKernel k;
  std::string body;
  llvm::raw_string_ostream os{body};
  std::vector<int64_t> bindingBytes;

  int bind(int operand, uint32_t access, int64_t bytes) {
    k.operands.push_back(operand);
    k.access.push_back(access);
    bindingBytes.push_back(bytes);
    return int(k.operands.size() - 1);
  }

  /// Grid of ceil(total / 256) blocks of 256 threads, one element each.
  void linear(int64_t total) {
    k.grid[0] = std::max<int64_t>(1, (total + 255) / 256);
    k.block[0] = 256;
  }

  std::string finish(const std::string &name, const std::string &launchBounds = "256") {
    std::string s;
    llvm::raw_string_ostream o(s);
    o << "extern \"C\" __global__ void __launch_bounds__(" << launchBounds << ") " << name
      << "(const v4f_cuda_args_t a) {\n";
    o << "  if (a.binding_count != " << bindingBytes.size();
    for (size_t j = 0; j < bindingBytes.size(); ++j)
      o << " || a.binding_lengths[" << j << "] < " << bindingBytes[j] << "ULL";
    o << ") { " << failWith(V4F_KERNEL_ERROR_BINDING_OUT_OF_RANGE) << "return; }\n";
    o << body << "}\n\n";
    return s;
  }
};

/// Offset expression of an operand of `dims` broadcast (numpy, right
/// aligned) to `out` at the coordinates c0..c{r-1} of the output.
inline std::string broadcastOffset(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> out) {
  if (dims == out) return "i";
  if (product(dims) == 1) return "0";
  size_t r = out.size(), rank = dims.size();
  std::string e;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    size_t od = r - rank + d;
    if (dims[d] != 1) e += (e.empty() ? "" : " + ") + std::string("c") + std::to_string(od) + " * " + lit(stride);
    stride *= dims[d];
  }
  return e.empty() ? "0" : e;
}

/// Statements computing coordinates c0..c{r-1} of linear index i over `out`.
inline std::string coordinates(llvm::ArrayRef<int64_t> out) {
  std::string s = "  long long t_ = i;\n";
  for (size_t d = out.size(); d-- > 0;) {
    s += "  const long long c" + std::to_string(d) + " = t_ % " + lit(out[d]) + "; t_ /= " + lit(out[d]) + ";\n";
  }
  s += "  (void)t_;\n";
  return s;
}

inline std::string activation(StringRef act, const std::string &v, float alpha, float beta) {
  if (act == "none") return v;
  if (act == "relu") return "v4f_maximumf(" + v + ", 0.f)";
  if (act == "leaky_relu") return "(" + v + " >= 0.f ? " + v + " : " + v + " * " + lit(alpha) + ")";
  if (act == "clip") return "v4f_minimumf(v4f_maximumf(" + v + ", " + lit(alpha) + "), " + lit(beta) + ")";
  if (act == "sigmoid") return "(1.f / (1.f + expf(-" + v + ")))";
  if (act == "tanh") return "tanhf(" + v + ")";
  if (act == "silu") return "(" + v + " * (1.f / (1.f + expf(-" + v + "))))";
  auto hardSigmoid = [&](float a, float c) {
    return "v4f_minimumf(v4f_maximumf(" + v + " * " + lit(a) + " + " + lit(c) + ", 0.f), 1.f)";
  };
  if (act == "hard_sigmoid") return hardSigmoid(alpha, beta);
  if (act == "hard_swish") return "(" + v + " * " + hardSigmoid(float(1.0 / 6.0), 0.5f) + ")";
  if (act == "gelu") return "(" + v + " * 0.5f * (1.f + erff(" + v + " * " + lit(float(M_SQRT1_2)) + ")))";
  if (act == "gelu_tanh")
    return "(" + v + " * 0.5f * (1.f + tanhf(" + lit(0.7978845608f) + " * (" + v + " + " + lit(0.044715f) + " * " + v +
           " * " + v + " * " + v + "))))";
  return "";
}

inline bool isF32Tensor(Type t) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  return r && r.getElementType().isF32() && r.hasStaticShape();
}

/// Whether every operand and the result of `op` are static float32 tensors.
inline bool allF32(mlir::Operation *op) {
  for (mlir::Value v : op->getOperands())
    if (!isF32Tensor(v.getType())) return false;
  return isF32Tensor(op->getResult(0).getType());
}

/// Whether a region's ops are one elementwise kernel (ElementwiseKernel.cpp):
/// several ops (a fused chain) or one elementwise op.
bool isElementwiseRegion(llvm::ArrayRef<mlir::Operation *> ops);

/// Matrix products and convolutions (TensorCoreKernels.cpp): FP32 FMA, or
/// FP16/BF16 tensor cores per `options.precision`.
mlir::FailureOr<CudaKernel> matmulKernel(MatMulOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                         const std::string &name, const CudaOptions &options);
mlir::FailureOr<CudaKernel> convKernel(ConvOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                       const std::string &name, const CudaOptions &options);

/// Data addressed by run-time indices (IndexingKernels.cpp).
bool indexingSupported(mlir::Operation *op, std::string &why);
mlir::FailureOr<CudaKernel> gatherElementsKernel(GatherElementsOp op, llvm::ArrayRef<CudaTensor> ext,
                                                 const CudaTensor &result, const std::string &name);
mlir::FailureOr<CudaKernel> gatherNDKernel(GatherNDOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                           const std::string &name);
mlir::FailureOr<CudaKernel> scatterElementsKernel(ScatterElementsOp op, llvm::ArrayRef<CudaTensor> ext,
                                                  const CudaTensor &result, const std::string &name);
mlir::FailureOr<CudaKernel> scatterNDKernel(ScatterNDOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                            const std::string &name);

/// Fused attention (AttentionKernel.cpp): a region merged by
/// v4f-fuse-attention-regions (v4f.fused_kernel = "attention"), head dims
/// up to kCudaMaxAttentionHeadDim (KernelLimits.h; the pass applies the same
/// limit to regions placed on the GPU).
bool attentionSupported(llvm::ArrayRef<mlir::Operation *> ops, std::string &why);
mlir::FailureOr<CudaKernel> attentionKernel(llvm::ArrayRef<mlir::Operation *> ops,
                                            llvm::ArrayRef<mlir::Value> externals, llvm::ArrayRef<CudaTensor> ext,
                                            const CudaTensor &result, const std::string &name);

} // namespace cudagen
} // namespace v4f

#endif // V4F_LIB_CODEGEN_CUDA_KERNELTEXT_H
