//===- AssignLayouts.cpp - v4f-assign-cpu-layouts -------------------------===//
//
// Chooses, per group of tensors that must share a layout, whether they are
// stored channels-first (N, C, H, W: the model's) or channels-last (N, H, W,
// C), and marks the producers (v4f.layout = "nhwc"). The IR's types stay the
// logical N, C, H, W; kernel generation reads the marks (TensorInfo::
// channelsLast) and fails on a channels-last tensor reaching a kernel that
// cannot read it (CPUPlanTarget.cpp: checkLayouts). The contract is in
// Passes.td.
//
// Why channels-last, and where. A conv that computes output channels in
// vector lanes ("channel_lanes": C^T = X^T W^T) holds, per register tile, a
// few pixels x 32 channels. Stored channels-first, each vector is turned
// into runs of pixels by in-register transposes (8 x 8 blocks, 24 shuffles)
// and 8-float stores per channel; stored channels-last it is one aligned
// row store per pixel, and the residual it adds is read the same way. Read
// channels-last, its A operand (pixels x K) is rows of C adjacent floats per
// pixel — a few forward streams — instead of K plane rows P floats apart
// (ResNet-50's 128 -> 512 1x1 convs at 28 x 28: K = 128 streams). So a
// tensor goes channels-last when every op writing it and every op reading
// it handles that: convs that can take channel_lanes (switched to it when
// they computed pixels in lanes), unpadded for the readers (the A operand is
// read in place at each pixel's window origin), elementwise maps (which then
// iterate in the stored order, ElementwiseKernels.cpp) and
// GlobalAveragePool, concats of channels, and the ops that store their
// result in their data operand's layout (followsDataLayout): 2-D max and
// average pools, pads of 4-D tensors, gathers along H or W (Resize's
// per-axis gathers) — and splits of channels (splitsChannels, a region of
// several results: YOLOv8's C2f). A conv's residual must share
// its result's layout, which ties a residual network's trunk of one stage
// into one group, and so must an elementwise map's operands of its result's
// shape, a concat's operands, a pool's, pad's, gather's or split's data
// operand.
// Anything else reading the tensor (Winograd, depthwise, the graph's outputs,
// control flow) keeps the group channels-first: no reorder dispatches are
// inserted, so the count of reorders left is zero by construction and the
// price of a border is only that the group stays channels-first.
//
// Not every conv gains: an expanding 1x1 conv over large planes runs faster
// computing pixels in lanes (prefersPixelLanes), and switching a reader whose
// output stays channels-first costs it the transposing store (switchable).
// A max pool that read channels-last and stored channels-first (9 masked
// loads or a load per distinct input pixel per 16 outputs, transposed
// stores) ran ResNet-50's stem pool slower than the pixels-in-lanes
// stride-2 kernel by more than the stem conv saved (measurements:
// bench/results/history.md, "Measurements behind code decisions"): a pool,
// pad or gather stores what it reads, never converting, so it joins its
// input's group (whose readers then decide).
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"

#include "llvm/ADT/EquivalenceClasses.h"

namespace v4f {
#define GEN_PASS_DEF_ASSIGNCPULAYOUTS
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {
namespace {

/// The op whose result a CPU-side dispatch region stores, when the pass
/// can choose that result's layout: the region's only op when it is a conv
/// or a concat of channels of 4-D float tensors, or the last op of an
/// elementwise region (every op a fusible elementwise map; one kernel) with
/// a 4-D float result; it must be the region's one returned value. Else
/// null.
Operation *writerOf(DispatchOp region) {
  auto ops = region.getBodyOps();
  if (ops.empty()) return nullptr;
  Operation *last = &*std::prev(ops.end());
  auto ret = llvm::cast<DispatchReturnOp>(region.getBody().front().getTerminator());
  // A split of channels: the region's only op, returning every part in order.
  if (splitsChannels(last) && std::next(ops.begin()) == ops.end() && llvm::equal(ret.getValues(), last->getResults()))
    return last;
  if (region->getNumResults() != 1) return nullptr;
  if (ret.getValues().size() != 1 || ret.getValues()[0] != last->getResult(0)) return nullptr;
  bool single = std::next(ops.begin()) == ops.end();
  if (single && llvm::isa<ConvOp>(last)) return last;
  auto type = llvm::dyn_cast<RankedTensorType>(last->getResult(0).getType());
  if (!type || type.getRank() != 4 || !type.getElementType().isF32()) return nullptr;
  if (auto concat = llvm::dyn_cast<ConcatOp>(last)) return single && concat.getAxis() == 1 ? last : nullptr;
  if (followsDataLayout(last)) return single ? last : nullptr;
  return llvm::all_of(ops, [](Operation &op) { return isFusibleElementwise(&op); }) ? last : nullptr;
}

/// Whether `writer` (an elementwise map, a concat, a pool, pad or spatial
/// gather) stores its result in the layout of its operand `operand`: every
/// operand of a concat, the data operand of a pool, pad or gather (not its
/// pads or indices), the operands of an elementwise map's result shape (a
/// broadcast operand is read either way).
bool followsOperand(Operation *writer, Value operand, Value result) {
  if (followsDataLayout(writer) || splitsChannels(writer)) return operand == writer->getOperand(0);
  return llvm::isa<ConcatOp>(writer) || operand.getType() == result.getType();
}

/// The only op of the CPU dispatch region `op` is in, or null (a region on
/// the GPU reads its operands channels-first).
Operation *soleOpOfRegion(Operation *op) {
  auto region = llvm::dyn_cast_or_null<DispatchOp>(op->getParentOp());
  if (!region || isPlacedOnCuda(region)) return nullptr;
  auto ops = region.getBodyOps();
  return std::distance(ops.begin(), ops.end()) == 1 ? op : nullptr;
}

GemmTilingAttr tilingOf(Operation *op) { return op->getAttrOfType<GemmTilingAttr>(kTilingAttr); }

struct AssignCPULayoutsPass : impl::AssignCPULayoutsBase<AssignCPULayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module->getAttrOfType<CPUTargetAttr>("v4f.target");
    if (!target) {
      module.emitError("v4f-assign-cpu-layouts needs the module attribute v4f.target (run v4f-select-cpu-strategy)");
      return signalPassFailure();
    }
    int64_t tensors = 0, groups = 0, switched = 0, kept = 0;
    module.walk([&](func::FuncOp func) {
      // Writers: convs and elementwise maps (one op or a fused chain) whose
      // region returns their 4-D result, in the function's body (not
      // inside run-time control flow), on the CPU.
      SmallVector<Operation *> writers;
      DenseMap<Value, unsigned> index; // a writer's region result -> its index
      for (Operation &op : func.getBody().front())
        if (auto region = llvm::dyn_cast<DispatchOp>(op); region && !isPlacedOnCuda(region))
          if (Operation *writer = writerOf(region)) {
            for (Value result : region->getResults()) index[result] = writers.size();
            writers.push_back(writer);
          }
      llvm::EquivalenceClasses<unsigned> tied;
      SmallVector<bool> capable(writers.size(), true);
      SmallVector<SmallVector<ConvOp>> readers(writers.size());
      for (auto [i, writer] : llvm::enumerate(writers)) {
        tied.insert(unsigned(i));
        Value result = writer->getParentOp()->getResult(0); // a split's first part
        if (auto conv = llvm::dyn_cast<ConvOp>(writer)) {
          if (!tilingOf(conv) || !canWriteChannelsLast(conv, tilingOf(conv)) || prefersPixelLanes(conv))
            capable[i] = false;
        } else {
          // An elementwise map shares its layout with every operand of its
          // shape (the map then walks all of them contiguously; broadcast
          // operands, a per-channel scale, are read either way), a concat
          // with all of its operands.
          auto region = llvm::cast<DispatchOp>(writer->getParentOp());
          for (Operation &inner : region.getBodyOps())
            for (Value operand : inner.getOperands()) {
              if (operand.getParentRegion() == &region.getBody() || !followsOperand(writer, operand, result)) continue;
              auto it = index.find(operand);
              if (it == index.end())
                capable[i] = false; // a graph input, another kernel's result
              else
                tied.unionSets(unsigned(i), it->second);
            }
        }
        for (Value part : writer->getParentOp()->getResults()) {
          for (OpOperand &use : part.getUses()) {
            Operation *owner = use.getOwner();
            Operation *user = soleOpOfRegion(owner);
            auto reader = llvm::dyn_cast_or_null<ConvOp>(user);
            // The writer the use's region is, if any (GPU regions are none).
            auto userRegion = llvm::dyn_cast_or_null<DispatchOp>(owner->getParentOp());
            auto userWriter = userRegion ? index.find(userRegion->getResult(0)) : index.end();
            bool ok = false;
            if (reader && reader.getInput() == use.get() && reader.getResidual() != use.get() && tilingOf(reader)) {
              ok = canReadChannelsLast(reader, tilingOf(reader)) && switchable(reader);
              readers[i].push_back(reader);
            } else if (reader && reader.getResidual() == use.get() && reader.getInput() != use.get() &&
                       userWriter != index.end()) {
              ok = true;
              tied.unionSets(unsigned(i), userWriter->second);
            } else if (user && meanReadsChannelsLast(user)) {
              ok = true;
            } else if (userWriter != index.end() && !llvm::isa<ConvOp>(writers[userWriter->second]) &&
                       followsOperand(writers[userWriter->second], use.get(), userRegion->getResult(0))) {
              ok = true; // an elementwise map of the same shape or a concat: tied above
            }
            if (!ok) capable[i] = false;
          }
        }
      }
      for (auto it = tied.begin(); it != tied.end(); ++it) {
        if (!it->isLeader()) continue;
        SmallVector<unsigned> members(tied.member_begin(it), tied.member_end());
        if (!llvm::all_of(members, [&](unsigned m) { return capable[m]; }) ||
            llvm::none_of(members, [&](unsigned m) { return llvm::isa<ConvOp>(writers[m]); })) {
          for (unsigned m : members) kept += int64_t(writers[m]->getNumResults());
          continue;
        }
        ++groups;
        Builder b(&getContext());
        auto toChannelLanes = [&](ConvOp conv) {
          auto algorithm = conv->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
          if (algorithm) return;
          conv->setAttr(kConvAlgorithmAttr, b.getStringAttr("channel_lanes"));
          // The tiling channel-lanes convs take (select-cpu-strategy's
          // pixels-in-lanes blocks of a 1x1 conv mean rows of channels).
          conv->setAttr(kTilingAttr, channelLanesTiling(conv, target));
          ++switched;
        };
        for (unsigned m : members) {
          if (auto conv = llvm::dyn_cast<ConvOp>(writers[m])) toChannelLanes(conv);
          writers[m]->setAttr(kLayoutAttr, b.getStringAttr(kChannelsLast));
          tensors += int64_t(writers[m]->getNumResults());
          for (ConvOp reader : readers[m]) toChannelLanes(reader);
        }
      }
    });
    module->setAttr(
        "v4f.layouts",
        StringAttr::get(
            &getContext(),
            std::to_string(tensors) + " tensors channels-last in " + std::to_string(groups) + " groups (" +
                std::to_string(switched) + " convs switched to channels in lanes), " + std::to_string(kept) +
                " conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"));
  }

  /// Whether a reader computing pixels in lanes may be switched to channels
  /// in lanes. Its output may stay channels-first, whose transposing store
  /// the cost model prices at LANES / K of its FMAs (isChannelLanesConv);
  /// up to a quarter the in-place row reads made up for it, at a half they
  /// did not (AVX-512: MobileNetV2's 32 -> 192 at 28 x 28, K = 32, ran
  /// slower switched, its 64 -> 384 at 14 x 14, K = 64, as fast, ResNet-50's
  /// 512 -> 128 at 28 x 28 faster; measurements: bench/results/history.md,
  /// "Measurements behind code decisions").
  static bool switchable(ConvOp reader) {
    if (reader->hasAttr(kConvAlgorithmAttr)) return true; // channel_lanes already
    if (prefersPixelLanes(reader)) return false;
    auto w = reader.getWeight().getType();
    int64_t K = w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3);
    return K >= 4 * tilingOf(reader).getLanes();
  }

  /// Whether `conv` runs faster computing pixels in lanes than channels in
  /// lanes whatever the layouts: an expanding 1x1 conv over at least two
  /// column blocks of the pixels-in-lanes kernel that runs its register
  /// tiles across the columns (kRowTilesOuterAttr). That kernel writes
  /// its output rows as a few long streams already and reads its input as
  /// B in place. On the AVX-512 Xeon, ResNet-50's stage-1 64 -> 256 convs at
  /// 56 x 56 (P = 3136 >= 2 x 1024) ran slower with channels in lanes and a
  /// channels-last output, whatever the tiling, while stage 2's 128 -> 512
  /// at 28 x 28 (P = 784) and its group's other convs gained from
  /// channels-last (measurements: bench/results/history.md, "Measurements
  /// behind code decisions"). Such a conv neither writes nor reads a
  /// channels-last tensor, so its groups stay channels-first.
  static bool prefersPixelLanes(ConvOp conv) {
    GemmTilingAttr tiling = tilingOf(conv);
    auto y = conv.getType();
    return tiling && conv->hasAttr(kRowTilesOuterAttr) &&
           (y.isDynamicDim(2) || y.isDynamicDim(3) || y.getDimSize(2) * y.getDimSize(3) >= 2 * tiling.getNb());
  }
};

} // namespace
} // namespace v4f
