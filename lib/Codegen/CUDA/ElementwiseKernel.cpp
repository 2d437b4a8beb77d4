//===- ElementwiseKernel.cpp - elementwise ops and their fused chains -----===//
//
// One thread per output element: every external operand is read once at its
// broadcast offset, the chain's ops (named elementwise ops, v4f.elementwise
// bodies translated to C) compute in registers (float, or bool between the
// ops of a chain), the last value is stored. Float32 at the region's
// borders (cudaSupportsRegion).
//
//===----------------------------------------------------------------------===//
#include "KernelRegistry.h"
#include "KernelText.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace v4f {
namespace cudagen {
namespace {

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
std::string translateBody(ElementwiseOp op, llvm::ArrayRef<std::string> inputs, std::string &stmts, std::string &why,
                          unsigned &counter) {
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
      if (auto f = llvm::dyn_cast<FloatAttr>(c.getValue()))
        e = lit(float(f.getValueAsDouble()));
      else if (auto b = llvm::dyn_cast<IntegerAttr>(c.getValue()))
        e = b.getValue().isZero() ? "false" : "true";
    } else if (isa<arith::AddFOp>(inner))
      e = "(" + in(0) + " + " + in(1) + ")";
    else if (isa<arith::SubFOp>(inner))
      e = "(" + in(0) + " - " + in(1) + ")";
    else if (isa<arith::MulFOp>(inner))
      e = "(" + in(0) + " * " + in(1) + ")";
    else if (isa<arith::DivFOp>(inner))
      e = "(" + in(0) + " / " + in(1) + ")";
    else if (isa<arith::RemFOp>(inner))
      e = "fmodf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::NegFOp>(inner))
      e = "(-" + in(0) + ")";
    else if (isa<arith::MaximumFOp>(inner))
      e = "v4f_maximumf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MinimumFOp>(inner))
      e = "v4f_minimumf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MaxNumFOp>(inner))
      e = "fmaxf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::MinNumFOp>(inner))
      e = "fminf(" + in(0) + ", " + in(1) + ")";
    else if (isa<arith::SelectOp>(inner))
      e = "(" + in(0) + " ? " + in(1) + " : " + in(2) + ")";
    else if (isa<arith::AndIOp>(inner) && inner.getResult(0).getType().isInteger(1))
      e = "(" + in(0) + " && " + in(1) + ")";
    else if (isa<arith::OrIOp>(inner) && inner.getResult(0).getType().isInteger(1))
      e = "(" + in(0) + " || " + in(1) + ")";
    else if (isa<arith::XOrIOp>(inner) && inner.getResult(0).getType().isInteger(1))
      e = "(" + in(0) + " != " + in(1) + ")";
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
    } else if (isa<math::ExpOp>(inner))
      e = "expf(" + in(0) + ")";
    else if (isa<math::Exp2Op>(inner))
      e = "exp2f(" + in(0) + ")";
    else if (isa<math::ExpM1Op>(inner))
      e = "expm1f(" + in(0) + ")";
    else if (isa<math::LogOp>(inner))
      e = "logf(" + in(0) + ")";
    else if (isa<math::Log2Op>(inner))
      e = "log2f(" + in(0) + ")";
    else if (isa<math::Log1pOp>(inner))
      e = "log1pf(" + in(0) + ")";
    else if (isa<math::TanhOp>(inner))
      e = "tanhf(" + in(0) + ")";
    else if (isa<math::SqrtOp>(inner))
      e = "sqrtf(" + in(0) + ")";
    else if (isa<math::RsqrtOp>(inner))
      e = "(1.f / sqrtf(" + in(0) + "))";
    else if (isa<math::AbsFOp>(inner))
      e = "fabsf(" + in(0) + ")";
    else if (isa<math::SinOp>(inner))
      e = "sinf(" + in(0) + ")";
    else if (isa<math::CosOp>(inner))
      e = "cosf(" + in(0) + ")";
    else if (isa<math::TanOp>(inner))
      e = "tanf(" + in(0) + ")";
    else if (isa<math::AsinOp>(inner))
      e = "asinf(" + in(0) + ")";
    else if (isa<math::AcosOp>(inner))
      e = "acosf(" + in(0) + ")";
    else if (isa<math::AtanOp>(inner))
      e = "atanf(" + in(0) + ")";
    else if (isa<math::SinhOp>(inner))
      e = "sinhf(" + in(0) + ")";
    else if (isa<math::CoshOp>(inner))
      e = "coshf(" + in(0) + ")";
    else if (isa<math::AsinhOp>(inner))
      e = "asinhf(" + in(0) + ")";
    else if (isa<math::AcoshOp>(inner))
      e = "acoshf(" + in(0) + ")";
    else if (isa<math::AtanhOp>(inner))
      e = "atanhf(" + in(0) + ")";
    else if (isa<math::ErfOp>(inner))
      e = "erff(" + in(0) + ")";
    else if (isa<math::FloorOp>(inner))
      e = "floorf(" + in(0) + ")";
    else if (isa<math::CeilOp>(inner))
      e = "ceilf(" + in(0) + ")";
    else if (isa<math::RoundEvenOp>(inner))
      e = "rintf(" + in(0) + ")";
    else if (isa<math::RoundOp>(inner))
      e = "roundf(" + in(0) + ")";
    else if (isa<math::TruncOp>(inner))
      e = "truncf(" + in(0) + ")";
    else if (isa<math::PowFOp>(inner))
      e = "powf(" + in(0) + ", " + in(1) + ")";
    else if (isa<math::CopySignOp>(inner))
      e = "copysignf(" + in(0) + ", " + in(1) + ")";
    else if (isa<math::FmaOp>(inner))
      e = "fmaf(" + in(0) + ", " + in(1) + ", " + in(2) + ")";
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

} // namespace

bool isElementwiseRegion(llvm::ArrayRef<Operation *> ops) {
  return ops.size() > 1 || isNamedElementwise(ops[0]) || isa<ElementwiseOp>(ops[0]);
}

void registerElementwiseKernels(CudaKernelRegistry &registry) {
  registry.addOpKernel<AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, SqrtOp, LeakyReluOp, ClipOp,
                       HardSigmoidOp, HardSwishOp, ElementwiseOp>(elementwiseSupported, [](const KernelRequest &r) {
    return elementwiseKernel(r.ops, r.externals, r.ext, r.result, r.name);
  });
}

} // namespace cudagen
} // namespace v4f
