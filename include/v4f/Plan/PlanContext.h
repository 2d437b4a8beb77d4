//===- PlanContext.h - the plan under construction, shared by every target -*- C++ -*-===//
//
// What the plan builder (lib/Plan) and the targets that emit dispatches into
// the plan (lib/Codegen/CPU, lib/Codegen/CUDA) share: the plan itself, the
// constants blob, the shape program, and a tensor's description during plan
// building (TensorInfo: dims as shape registers, its buffer, followed values).
//
//===----------------------------------------------------------------------===//
#ifndef V4F_PLAN_PLANCONTEXT_H
#define V4F_PLAN_PLANCONTEXT_H

#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Plan/ExecutablePlan.h"
#include "v4f/Plan/ShapeProgram.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace v4f {

/// A tensor during plan building: dims as shape registers, and its plan buffer.
struct TensorInfo {
  std::vector<Reg> dims;
  uint32_t buffer = 0;
  mlir::Type elementType;
  /// For small integer tensors whose elements the plan can follow (shape
  /// computations): every element, row-major, as a shape register.
  std::optional<std::vector<Reg>> values;
  /// For a compile-time constant: its value (the GEMM emitters pack weights
  /// from it). `buffer` is ~0u when the constant is stored only packed.
  mlir::DenseElementsAttr constant;
  /// A 4-D tensor stored channels-last (v4f.layout = "nhwc" on its
  /// producer): element (n, c, h, w) at ((n H + h) W + w) C + c.
  bool channelsLast = false;
};

/// Where a channels-last tensor's logical dims N, C, H, W go in storage
/// order N, H, W, C (storage position i holds logical dim
/// kChannelsLastOrder[i]).
inline constexpr size_t kChannelsLastOrder[4] = {0, 2, 3, 1};
/// 4-D logical dims (N, C, H, W) in channels-last storage order.
inline std::vector<Reg> channelsLastDims(const std::vector<Reg> &dims) { return {dims[0], dims[2], dims[3], dims[1]}; }

/// Name of a dispatch in errors and profiles: the op and its ONNX node.
inline std::string dispatchName(mlir::Operation *op) {
  std::string name = op->getName().stripDialect().str();
  mlir::Location loc = op->getLoc();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations())
      if (llvm::isa<mlir::NameLoc>(l)) {
        loc = l;
        break;
      }
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc)) name += " '" + named.getName().str() + "'";
  return name;
}

/// Bytes per element in a buffer (i1 / ONNX bool takes one byte).
inline int64_t elementBytes(mlir::Type t) {
  if (isStorageOnlyType(t)) t = bodyScalarType(t);
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

/// The plan element type of an MLIR element type (DType::Unknown if none).
DType dtypeOf(mlir::Type t);

/// The plan, its constants and its shape program while they are built.
class PlanContext {
public:
  PlanContext(ExecutablePlan &plan, std::vector<uint8_t> &constants) : plan(plan), constants(constants) {}

  ExecutablePlan &plan;
  std::vector<uint8_t> &constants;
  ShapeProgramBuilder shapes;
  /// Set while the body of a run-time loop is emitted: kernel emitters then
  /// add no guards of their own (the runtime reads a guard on a loop's first
  /// dispatch as "the loop is on the untaken side of an If").
  bool inRunTimeLoop = false;

  /// A transient buffer of `sizeBytes` (placed in the arena by liveness).
  uint32_t newTransient(Reg sizeBytes);
  /// A constant buffer of `bytes`, 64-byte aligned in the constants blob;
  /// `fill` writes its contents (zeroed before).
  uint32_t newConstant(size_t bytes, const std::function<void(uint8_t *)> &fill);
  /// A constant table of int32 values; equal tables share one buffer.
  uint32_t int32Table(const std::vector<int32_t> &values);
  Reg numel(const TensorInfo &t) { return shapes.product(t.dims, 0, t.dims.size()); }
  /// Number of workgroups for `rows` rows of `rowSize` elements each so a
  /// workgroup handles about `grain` elements; returns {count, rowsPerGroup}.
  std::pair<Reg, Reg> splitRows(Reg rows, Reg rowSize, int64_t grain = 16384);

private:
  std::map<std::vector<int32_t>, uint32_t> int32Tables;
};

} // namespace v4f

#endif // V4F_PLAN_PLANCONTEXT_H
