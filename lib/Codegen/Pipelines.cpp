//===- Pipelines.cpp - v4f-graph-pipeline and v4f-codegen-pipeline --------===//
#include "v4f/Codegen/Pipelines.h"
#include "v4f/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

namespace v4f {

void buildCodegenPipeline(mlir::OpPassManager &pm, const CodegenPipelineOptions &options) {
  pm.addNestedPass<mlir::func::FuncOp>(createFormDispatchRegionsPass());
  if (options.placement.cuda) pm.addPass(createAssignPlacementPass(options.placement));
  pm.addNestedPass<mlir::func::FuncOp>(createFuseAttentionRegionsPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFusePointwiseDepthwisePass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseDepthwisePointwisePass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseChannelScalePass());
  SelectCPUStrategyOptions strategy;
  strategy.targetCpu = options.targetCpu;
  pm.addPass(createSelectCPUStrategy(strategy));
  if (options.tuning) pm.addPass(createApplyTuningPass(*options.tuning));
  if (options.channelsLast) pm.addPass(createAssignCPULayouts());
  pm.addPass(createPackWeights());
  pm.addPass(createBuildPlanPass(options.sink));
  buildCPULowerToLLVMPipeline(pm);
}

namespace {

struct CodegenPipelineCLOptions : mlir::PassPipelineOptions<CodegenPipelineCLOptions> {
  Option<std::string> targets{*this, "targets", llvm::cl::desc("cpu, cuda or cpu,cuda (v4fc --target)"),
                              llvm::cl::init("cpu")};
  Option<std::string> targetCpu{*this, "target-cpu", llvm::cl::desc("the CPU target when the module has no v4f.target"),
                                llvm::cl::init("")};
  Option<bool> channelsLast{*this, "channels-last", llvm::cl::desc("v4f-assign-cpu-layouts (v4fc --cpu-layouts)"),
                            llvm::cl::init(true)};
};

} // namespace

void registerV4FPipelines() {
  mlir::PassPipelineRegistration<>("v4f-graph-pipeline",
                                   "The target-independent graph passes of v4fc (decomposition, folding, fusion)",
                                   [](mlir::OpPassManager &pm) { buildGraphOptimizationPipeline(pm); });
  mlir::PassPipelineRegistration<CodegenPipelineCLOptions>(
      "v4f-codegen-pipeline",
      "The codegen passes of v4fc for one CPU target: regions, placement, fusion, strategy, layouts, the plan "
      "and every target's kernels, the CPU kernels' lowering to LLVM",
      [](mlir::OpPassManager &pm, const CodegenPipelineCLOptions &cl) {
        CodegenPipelineOptions options;
        llvm::StringRef targets = cl.targets;
        options.placement.cuda = targets.contains("cuda");
        options.placement.cpu = targets.contains("cpu") || !options.placement.cuda;
        options.targetCpu = cl.targetCpu;
        options.channelsLast = cl.channelsLast;
        buildCodegenPipeline(pm, options);
      });
  registerCPULowerToLLVMPipeline();
}

} // namespace v4f
