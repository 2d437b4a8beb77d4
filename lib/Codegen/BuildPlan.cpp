//===- BuildPlan.cpp - v4f-build-plan: the plan and every target's kernels -===//
//
// Runs the plan builder (lib/Plan) with the CPU as host target and, when the
// pipeline asks for CUDA, the CUDA target: the graph module becomes the CPU
// kernel module, the plan (and the CUDA translation unit) go to the
// pipeline's sink. Running it from v4f-opt shows the generated kernels of
// any small graph.
//
//===----------------------------------------------------------------------===//
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/CUDACodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Plan/PlanBuilder.h"

#include "mlir/IR/Builders.h"

#include <map>

namespace v4f {
#define GEN_PASS_DEF_BUILDPLAN
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {
namespace {

struct BuildPlanPass : impl::BuildPlanBase<BuildPlanPass> {
  explicit BuildPlanPass(GeneratedKernels *sink) : sink(sink) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OwningOpRef<ModuleOp> kernels = ModuleOp::create(module.getLoc());
    GeneratedKernels local;
    GeneratedKernels &out = sink ? *sink : local;
    PlanContext ctx(out.plan, out.constants);
    std::unique_ptr<HostPlanTarget> cpu = createCPUPlanTarget(ctx, *kernels);
    std::unique_ptr<PlanTarget> cuda;
    if (out.withCuda) cuda = createCudaPlanTarget(out.cuda);
    SmallVector<PlanTarget *> targets;
    if (cuda) targets.push_back(cuda.get());
    PlanBuilder builder(ctx, *cpu, targets);
    if (cuda) builder.cpuNotes = &out.cuda.cpuRegions;
    if (failed(builder.build(module))) return signalPassFailure();

    // Which dispatches run each kernel, for the reader of the IR.
    const PlanExecutable &exe = out.plan.executables.front();
    std::map<uint32_t, SmallVector<Attribute>> users;
    OpBuilder b(&getContext());
    // A guarded dispatch (one side of a run-time If) is marked "[guarded]".
    for (const PlanDispatch &d : out.plan.dispatches)
      if (d.executable == 0 && d.transfer == PlanDispatch::Transfer::None)
        users[d.entryPoint].push_back(b.getStringAttr(d.guard ? d.name + " [guarded]" : d.name));
    for (auto &[entry, names] : users)
      if (auto fn = kernels->lookupSymbol<func::FuncOp>(exe.entryPoints[entry]))
        fn->setAttr("v4f.dispatches", b.getArrayAttr(names));

    // The graph is replaced by the kernels.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) op.erase();
    for (Operation &op : llvm::make_early_inc_range(*kernels->getBody()))
      op.moveBefore(module.getBody(), module.getBody()->end());
    module->setAttr(
        "v4f.plan",
        b.getDictionaryAttr({b.getNamedAttr("dispatches", b.getI64IntegerAttr(out.plan.dispatches.size())),
                             b.getNamedAttr("kernels", b.getI64IntegerAttr(exe.entryPoints.size())),
                             b.getNamedAttr("buffers", b.getI64IntegerAttr(out.plan.buffers.size())),
                             b.getNamedAttr("shape_registers", b.getI64IntegerAttr(out.plan.shapeProgram.size())),
                             b.getNamedAttr("constant_bytes", b.getI64IntegerAttr(out.constants.size()))}));
  }

  GeneratedKernels *sink;
};

} // namespace

std::unique_ptr<Pass> createBuildPlanPass(GeneratedKernels *sink) { return std::make_unique<BuildPlanPass>(sink); }

} // namespace v4f
