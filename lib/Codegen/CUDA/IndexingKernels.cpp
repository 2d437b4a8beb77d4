//===- IndexingKernels.cpp - GatherElements/GatherND/Scatter* on the GPU --===//
//
// Data addressed by run-time indices, any element type of 8+ bits copied as
// bits (the reductions of the scatters: float32 only):
//
//   gather_elements, gather_nd   one output element per thread;
//   scatter_elements, scatter_nd one block of 1024 threads: the copy of
//                                `data` into the result, a barrier, then
//                                the updates (a grid-wide order between the
//                                copy and the writes needs one block). With
//                                reduction "none" duplicate targets keep one
//                                of their updates (ONNX leaves which
//                                undefined; the CPU keeps the last); add,
//                                mul, max and min combine atomically.
//
// A negative index counts from the end; one out of range stores error code
// 1 (kernel_abi.h) and its element is skipped, so the run fails with the
// dispatch's name, as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "KernelRegistry.h"
#include "KernelText.h"

using namespace mlir;

namespace v4f {
namespace cudagen {

namespace {

const char *indexType(const CudaTensor &indices) { return indices.elementType.isInteger(64) ? "long long" : "int"; }

int64_t indexBytes(const CudaTensor &indices) { return indices.elementType.isInteger(64) ? 8 : 4; }

/// Statements reading index `at` of binding `binding` into `name`, wrapped
/// and checked against `bound` (`onBad` runs after the failure is stored).
std::string readIndex(const CudaTensor &indices, int binding, const std::string &at, const std::string &name,
                      int64_t bound, const std::string &onBad) {
  return "  long long " + name + " = ((const " + indexType(indices) + "*)a.bindings[" + std::to_string(binding) +
         "])[" + at + "];\n  if (" + name + " < 0) " + name + " += " + lit(bound) + ";\n  if (" + name + " < 0 || " +
         name + " >= " + lit(bound) + ") { " + failWith(V4F_KERNEL_ERROR_INDEX_OUT_OF_RANGE) + onBad + " }\n";
}

/// The statement combining `v` into element `target` of the result (E
/// elements: bit copies, or float for the reductions).
std::string combine(StringRef reduction, const std::string &target, const std::string &v) {
  if (reduction == "none") return "    out[" + target + "] = " + v + ";\n";
  if (reduction == "add") return "    atomicAdd(&out[" + target + "], " + v + ");\n";
  std::string f = reduction == "mul" ? "x_ * v_" : reduction == "max" ? "v4f_maximumf(x_, v_)" : "v4f_minimumf(x_, v_)";
  return "    { const float v_ = " + v + "; unsigned* q_ = (unsigned*)&out[" + target +
         "]; unsigned old_ = *q_, seen_;\n"
         "      do { seen_ = old_; const float x_ = __uint_as_float(seen_);\n"
         "        old_ = atomicCAS(q_, seen_, __float_as_uint(" +
         f + ")); } while (old_ != seen_); }\n";
}

/// A scatter's kernel: copy, barrier, then `updates` statements (inside a
/// loop over j < count, with `out` and `upd` in scope).
CudaKernel scatterKernel(KernelText &t, const CudaTensor &data, StringRef reduction, int64_t count,
                         const std::string &updates, const std::string &name) {
  int64_t total = product(data.dims);
  t.k.grid[0] = 1;
  t.k.block[0] = 1024;
  t.k.flops = reduction == "none" ? 0.0 : double(count);
  const char *E = reduction == "none" ? copyType(data.elementType) : "float";
  t.os << "  typedef " << E << " E;\n  E* out = (E*)a.bindings[0];\n  const E* in = (const E*)a.bindings[1];\n";
  t.os << "  const E* upd = (const E*)a.bindings[3];\n";
  t.os << "  for (long long i = threadIdx.x; i < " << lit(total) << "; i += 1024) out[i] = in[i];\n";
  t.os << "  __syncthreads();\n";
  t.os << "  for (long long j = threadIdx.x; j < " << lit(count) << "; j += 1024) {\n" << updates << "  }\n";
  t.k.source = t.finish(name, "1024");
  return t.k;
}

} // namespace

bool indexingSupported(Operation *op, std::string &why) {
  Type et = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (!et.isIntOrFloat() || et.getIntOrFloatBitWidth() < 8) return why = "sub-byte or bool elements", false;
  StringRef reduction = "none";
  if (auto s = dyn_cast<ScatterElementsOp>(op)) reduction = s.getReduction();
  if (auto s = dyn_cast<ScatterNDOp>(op)) reduction = s.getReduction();
  if (reduction != "none" && !et.isF32()) return why = "a scatter reduction over non-float32 data", false;
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return why = "scatter reduction '" + reduction.str() + "'", false;
  return true;
}

FailureOr<CudaKernel> gatherElementsKernel(GatherElementsOp op, llvm::ArrayRef<CudaTensor> ext,
                                           const CudaTensor &result, const std::string &name) {
  const CudaTensor &D = ext[0], &I = ext[1];
  const int64_t rank = D.dims.size(), axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  const int64_t total = product(I.dims), eb = elementBytesOf(D.elementType);
  std::vector<int64_t> ds = contiguousStrides(D.dims);
  KernelText t;
  t.bind(-1, 2, total * eb);
  t.bind(0, 1, product(D.dims) * eb);
  t.bind(1, 1, total * indexBytes(I));
  t.linear(total);
  t.os << "  typedef " << copyType(D.elementType) << " E;\n";
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n" << coordinates(I.dims);
  t.os << readIndex(I, 2, "i", "k", D.dims[axis], "return;");
  t.os << "  const long long off = k * " << lit(ds[axis]);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) t.os << " + c" << d << " * " << lit(ds[d]);
  t.os << ";\n  ((E*)a.bindings[0])[i] = ((const E*)a.bindings[1])[off];\n";
  t.k.source = t.finish(name);
  return t.k;
}

FailureOr<CudaKernel> gatherNDKernel(GatherNDOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                     const std::string &name) {
  const CudaTensor &D = ext[0], &I = ext[1];
  const int64_t b = op.getBatchDims(), q = I.dims.back();
  const int64_t inner = product(D.dims, b + q), total = product(result.dims), eb = elementBytesOf(D.elementType);
  const int64_t perBatch = product(I.dims, b, I.dims.size() - 1); // tuples per batch index
  std::vector<int64_t> ds = contiguousStrides(D.dims);
  KernelText t;
  t.bind(-1, 2, total * eb);
  t.bind(0, 1, product(D.dims) * eb);
  t.bind(1, 1, product(I.dims) * indexBytes(I));
  t.linear(total);
  t.os << "  typedef " << copyType(D.elementType) << " E;\n";
  t.os << "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t.os << "  if (i >= " << lit(total) << ") return;\n";
  t.os << "  const long long tuple = i / " << lit(inner) << ", e = i % " << lit(inner) << ";\n";
  t.os << "  long long off = (tuple / " << lit(perBatch) << ") * " << lit(product(D.dims, b)) << " + e;\n";
  for (int64_t k = 0; k < q; ++k) {
    t.os << readIndex(I, 2, "tuple * " + lit(q) + " + " + lit(k), "k" + std::to_string(k), D.dims[b + k], "return;");
    t.os << "  off += k" << k << " * " << lit(ds[b + k]) << ";\n";
  }
  t.os << "  ((E*)a.bindings[0])[i] = ((const E*)a.bindings[1])[off];\n";
  t.k.source = t.finish(name);
  return t.k;
}

FailureOr<CudaKernel> scatterElementsKernel(ScatterElementsOp op, llvm::ArrayRef<CudaTensor> ext,
                                            const CudaTensor &result, const std::string &name) {
  const CudaTensor &D = ext[0], &I = ext[1], &U = ext[2];
  const int64_t rank = D.dims.size(), axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  const int64_t count = product(I.dims), eb = elementBytesOf(D.elementType);
  std::vector<int64_t> ds = contiguousStrides(D.dims), us = contiguousStrides(U.dims);
  KernelText t;
  t.bind(-1, 2, product(D.dims) * eb);
  t.bind(0, 1, product(D.dims) * eb);
  t.bind(1, 1, count * indexBytes(I));
  t.bind(2, 1, product(U.dims) * eb);
  // Element j of the indices (coordinates over their dims), the update at
  // the same coordinates (updates may be larger than the indices).
  std::string s = "    long long t_ = j;\n";
  std::string target = "k * " + lit(ds[axis]), source = "0";
  for (int64_t d = rank; d-- > 0;) {
    std::string c = "c" + std::to_string(d);
    s += "    const long long " + c + " = t_ % " + lit(I.dims[d]) + "; t_ /= " + lit(I.dims[d]) + ";\n";
    if (d != axis) target += " + " + c + " * " + lit(ds[d]);
    source += " + " + c + " * " + lit(us[d]);
  }
  s += "    (void)t_;\n";
  s += readIndex(I, 2, "j", "k", D.dims[axis], "continue;");
  s += combine(op.getReduction(), target, "upd[" + source + "]");
  return scatterKernel(t, D, op.getReduction(), count, s, name);
}

FailureOr<CudaKernel> scatterNDKernel(ScatterNDOp op, llvm::ArrayRef<CudaTensor> ext, const CudaTensor &result,
                                      const std::string &name) {
  const CudaTensor &D = ext[0], &I = ext[1], &U = ext[2];
  const int64_t q = I.dims.back(), inner = product(D.dims, q), tuples = product(I.dims, 0, I.dims.size() - 1);
  const int64_t eb = elementBytesOf(D.elementType);
  std::vector<int64_t> ds = contiguousStrides(D.dims);
  KernelText t;
  t.bind(-1, 2, product(D.dims) * eb);
  t.bind(0, 1, product(D.dims) * eb);
  t.bind(1, 1, product(I.dims) * indexBytes(I));
  t.bind(2, 1, product(U.dims) * eb);
  std::string s = "    const long long tuple = j / " + lit(inner) + ", e = j % " + lit(inner) + ";\n";
  s += "    long long off = e;\n";
  for (int64_t k = 0; k < q; ++k) {
    std::string kn = "k" + std::to_string(k);
    s += readIndex(I, 2, "tuple * " + lit(q) + " + " + lit(k), kn, D.dims[k], "continue;");
    s += "    off += " + kn + " * " + lit(ds[k]) + ";\n";
  }
  s += combine(op.getReduction(), "off", "upd[j]");
  return scatterKernel(t, D, op.getReduction(), tuples * inner, s, name);
}

void registerIndexingKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<GatherElementsOp>(indexingSupported, [](const KernelRequest &r) {
    return gatherElementsKernel(cast<GatherElementsOp>(r.ops.front()), r.ext, r.result, r.name);
  });
  registry.addOpKernel<GatherNDOp>(indexingSupported, [](const KernelRequest &r) {
    return gatherNDKernel(cast<GatherNDOp>(r.ops.front()), r.ext, r.result, r.name);
  });
  registry.addOpKernel<ScatterElementsOp>(indexingSupported, [](const KernelRequest &r) {
    return scatterElementsKernel(cast<ScatterElementsOp>(r.ops.front()), r.ext, r.result, r.name);
  });
  registry.addOpKernel<ScatterNDOp>(indexingSupported, [](const KernelRequest &r) {
    return scatterNDKernel(cast<ScatterNDOp>(r.ops.front()), r.ext, r.result, r.name);
  });
}

} // namespace cudagen
} // namespace v4f
