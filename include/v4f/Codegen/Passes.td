//===- Passes.td - v4f code generation passes --------------*- tablegen -*-===//
#ifndef V4F_CODEGEN_PASSES_TD
#define V4F_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignPlacement : Pass<"v4f-assign-placement", "mlir::ModuleOp"> {
  let summary = "Place every dispatch region on the CPU or the CUDA GPU (v4f.placement)";
  let description = [{
    Input invariants: runs after v4f-form-dispatch-regions.
    Output: every `v4f.dispatch` gets `v4f.placement` = "cuda" or "cpu".
    With only the GPU asked for (`targets=cuda`) every region the CUDA
    target has a kernel for (`cudaSupportsRegion`) goes to the GPU; with both
    (`targets=cpu,cuda`) a cost model decides: the region's work at each
    device's rate plus a launch, plus moving every operand that lives on the
    other side (region by region in program order, so a chain stays where
    its producer is unless the work pays for the copy). A region that stays
    on the CPU while the GPU was asked for carries `v4f.placement_reason`
    (no GPU kernel, dynamic dims, run-time control flow, or the cost model),
    which --verbose and `v4fc inspect` report.
    Preserves: semantics (only attributes are added).
  }];
  let options = [
    Option<"targets", "targets", "std::string", /*default=*/"\"cpu\"", "cpu, cuda or cpu,cuda">
  ];
  let dependentDialects = ["v4f::V4FDialect"];
}

def SelectCPUStrategy : Pass<"v4f-select-cpu-strategy", "mlir::ModuleOp"> {
  let summary = "Choose tile and vector sizes for each dispatch from the CPU target";
  let description = [{
    Input invariants: the module carries `v4f.target = #v4f.cpu_target<...>`
    (set by the compile pipeline from `--target-cpu`; the `target-cpu` option
    of this pass sets it for tests when absent).
    Output: every `v4f.matmul` and `v4f.conv` gets `v4f.tiling =
    #v4f.gemm_tiling<mr, nr, lanes, mb, nb, kc>`: `lanes` = vector bits / 32;
    `nr` = two vectors; `mr` the most rows whose `mr * nr / lanes`
    accumulators plus the B vectors and the broadcast A value fit the vector
    register file (at most 8); `mb`/`nb` sized so an A panel (mb x 256) and a
    B panel (256 x nb) of float32 stay within L2; `kc` the K block whose
    kc x nr slice of B fills half of L1 (a multiple of 8, at least 32).
    A `v4f.conv` whose groups each read one input channel (static weight
    shape `[OC, 1, KH, KW]`, KH and KW at most 11, width stride 1 or 2:
    depthwise convs, and convs of a one-channel input) also gets
    `v4f.conv_algorithm = "depthwise"`: it lowers to the direct depthwise
    kernel (vectorized along the output row, `lanes` from the tiling)
    instead of im2col + GEMM, whose K of KH*KW would leave it copy-bound.
    Otherwise a float32 `v4f.conv` of one group over at most 4 input
    channels (an image stem) with a static weight, KH and KW at most 7,
    strides 1 or 2, static input and output planes and a left padding of at
    most 4 gets `v4f.conv_algorithm = "small_input"`: the direct kernel of
    SmallInputConvKernels.cpp (padded input rows in scratch, de-interleaved
    at stride 2; 8 output channels x 2 vectors per register tile with 32
    registers, 6 x 2 with 16) instead of im2col + GEMM with K = 27..196.
    A float `v4f.conv` of one group with a constant weight, static input and
    output planes (the batch may be dynamic) and output channels a multiple
    of `lanes` gets `v4f.conv_algorithm = "channel_lanes"` when its few
    output pixels would leave much of a pixels-in-lanes register tile empty:
    when P padded to whole `nr` tiles over P exceeds 1 + 4 * lanes / K (the
    cost of the one scatter per output vector the transposed kernel pays).
    It then computes output channels in vector lanes (C^T = X^T W^T).
    A float 3x3 stride-1 undilated `v4f.conv` of one group with a constant
    weight and static planes gets `v4f.conv_algorithm = "winograd_2x2"`,
    `"winograd_4x4"` (the transformed weight stored) or
    `"winograd_4x4_direct_weights"` (the direct weight stored, transformed by
    the kernel) when the cost model (`winogradCost`: multiplications, the
    transforms, wasted lanes, weight bytes, the kernel's weight transform per
    tile block) puts it below the direct conv.
    Preserves: semantics (only attributes are added); kernel generation reads
    the attribute and fails clearly when it is missing.
  }];
  let options = [
    Option<"targetCpu", "target-cpu", "std::string", /*default=*/"\"\"",
           "Set v4f.target for this CPU when the module has none (host, x86-64-v3, x86-64-v4, ...)">
  ];
  let dependentDialects = ["v4f::V4FDialect"];
}

def AssignCPULayouts : Pass<"v4f-assign-cpu-layouts", "mlir::ModuleOp"> {
  let summary = "Store conv tensors channels-last where every writer and reader handles it";
  let description = [{
    Input invariants: the module carries `v4f.target`; convs carry
    `v4f.tiling` (v4f-select-cpu-strategy, then v4f-apply-tuning if any).
    Considers the results of CPU dispatch regions in a function's body that
    are a `v4f.conv` or a `v4f.concat` of channels (axis 1; the region's only
    op), an elementwise map (every op fusible elementwise, one kernel; a
    4-D float result), or an op that stores its result in its data
    operand's layout (`followsDataLayout`, the region's only op: a 2-D
    float `v4f.max_pool` / `v4f.avg_pool`, a `v4f.pad` of a 4-D float
    tensor, a `v4f.gather` along axis 2 or 3 with 1-D indices, as Resize
    imports), or a `v4f.split` of a 4-D float tensor along axis 1 (the
    region's only op, returning every part; `splitsChannels`). A result may be
    stored channels-last (physically N, H, W, C) when its writer is such a
    conv that can compute output channels in vector lanes
    (`channelLanesEligible`, no other `v4f.conv_algorithm`, not an expanding
    1x1 conv over at least two of the pixels-in-lanes kernel's column
    blocks), an elementwise map, a concat or a follower, and every use is:
    the input of such a
    conv that pads nothing (one computing pixels in lanes only with K >= 4
    x lanes), the `residual` of a writer conv, an operand of an elementwise
    writer of the same shape, of a writer concat, or the data operand of a
    follower, or a `v4f.reduce_mean`
    over axes [2, 3] of a 4-D float tensor. A residual and its conv's
    result, an elementwise map's result and its same-shape operands, a
    concat's result and its operands, a follower's result and its data
    operand, and a split's parts and its input share a group (one layout); such an
    operand that no writer produces (a graph input, a constant) keeps its
    group channels-first, and so does
    any other use (Winograd, depthwise, a function result, control
    flow): no reorders are inserted. Groups without a conv are left alone.
    Output: the writers of each channels-last group get `v4f.layout =
    "nhwc"` (an elementwise region's last op; a follower reads and stores
    that layout); its convs and the convs
    reading its results that computed pixels in lanes get
    `v4f.conv_algorithm = "channel_lanes"` and `channelLanesTiling`. The
    module gets `v4f.layouts`, a one-line summary (tensors channels-last,
    groups, convs switched, outputs channels-first, reorders: 0) that
    `v4fc compile --verbose` prints as a note.
    Preserves: semantics (attributes only; kernel generation stores and
    reads the marked tensors channels-last and rejects a channels-last
    tensor reaching a kernel that cannot read it).
  }];
  let dependentDialects = ["v4f::V4FDialect"];
}

def PackWeights : Pass<"v4f-pack-weights", "mlir::ModuleOp"> {
  let summary = "Choose compile-time panel packing for the constant weights of GEMM-based ops";
  let description = [{
    Input invariants: `v4f.matmul` / `v4f.conv` carry `v4f.tiling`
    (v4f-select-cpu-strategy).
    Output: an op whose weight (operand 1) is a float32 `arith.constant` of
    static shape gets `v4f.packed_weight`, naming the layout kernel
    generation writes into the artifact's constants instead of the weight as
    the model stores it:
    - `"b_panels"` on `v4f.matmul`: B [batch..., K, N] becomes, per batch
      matrix, ceil(N/nr) panels of K x nr (row k of a panel is nr
      consecutive floats), the columns past N zero;
    - `"a_panels"` on `v4f.conv`: W [OC, C/G, KH, KW] becomes, per group,
      ceil((OC/G)/mr) panels of K x mr (K = C/G * KH * KW), the rows past
      OC/G zero;
    - `"lane_panels"` on a `v4f.conv` with `v4f.conv_algorithm =
      "channel_lanes"`: the same with `nr` output channels per panel (the B
      panels of C^T = X^T W^T).
    `nr`/`mr` come from the op's tiling; the packed copy starts 64-byte
    aligned in the artifact's constants.
    The micro-kernel then reads one contiguous stream per operand instead of
    `mr` (or K) strided rows. A constant also used by an op that does not
    pack it keeps its plain copy; one used only by packing ops is stored only
    packed, and one packed the same way twice is stored once.
    Preserves: semantics and types (only attributes are added); ops whose
    weight is computed at run time, and convs marked
    `v4f.conv_algorithm = "depthwise"` or `"small_input"` (their direct
    kernels read the weight as OIHW), are left as they are.
  }];
  let dependentDialects = ["v4f::V4FDialect"];
}

def ApplyTuning : Pass<"v4f-apply-tuning", "mlir::ModuleOp"> {
  let summary = "Replace the cost model's GEMM choices by measured ones (v4fc tune)";
  let description = [{
    Input invariants: the module carries `v4f.target`; `v4f.matmul` and
    `v4f.conv` carry the choices of v4f-select-cpu-strategy (`v4f.tiling`,
    `v4f.conv_algorithm`). Runs before v4f-pack-weights, which packs for the
    final tiling.
    Each float matmul and non-depthwise conv has an ordered candidate list
    (Tuning.h: candidate 0 is the cost model's choice; the others change one
    thing: the conv algorithm, half or twice the K block, another register
    tile height, half the column block), keyed by the op's signature (op,
    operand and result types, attributes).
    - `db=FILE`: an op whose key, target CPU and codegen version match an
      entry of the tuning database (written by `v4fc tune`) takes the
      entry's configuration; the others keep the cost model's.
    - `candidate=N`: every tunable op takes its candidate N (its default when
      it has fewer); `v4fc tune` compiles one artifact per N and measures.
    Preserves: semantics (only lowering attributes change); a database that
    cannot be read or parsed is an error naming the file.
  }];
  let options = [
    Option<"db", "db", "std::string", /*default=*/"\"\"", "Tuning database (JSON) to apply">,
    Option<"candidate", "candidate", "int", /*default=*/"-1", "Give every tunable op this candidate (-1: none)">
  ];
  let dependentDialects = ["v4f::V4FDialect"];
}

def BuildPlan : Pass<"v4f-build-plan", "mlir::ModuleOp"> {
  let summary = "Build the execution plan and generate the kernels of every dispatch region";
  let description = [{
    Input invariants: func @main whose work is in `v4f.dispatch` regions
    (v4f-form-dispatch-regions), each with `v4f.placement` when the GPU was
    asked for (v4f-assign-placement), fused regions with their
    `v4f.fused_kernel` kind (the fusion passes), CPU GEMM-based roots
    carrying `v4f.tiling` (v4f-select-cpu-strategy).
    Output: the plan builder (lib/Plan) walks the graph: inputs, outputs,
    constants, buffers, the shape program, run-time If and Loop; it hands
    every region to the target it is placed on. The CPU target's regions
    become kernels: the module holds them instead of the graph, one
    `func.func @v4f_kernel_N(!llvm.ptr) -> i32` per distinct kernel body
    (the argument is the dispatch state, kernel_abi.h), built from
    scf/arith/math/vector/llvm ops, each with `v4f.dispatches`, the names of
    the dispatches that run it. A fused elementwise region is one kernel; a
    conv without a pointwise shape is an im2col kernel (writing B straight
    into b_panels) and a GEMM kernel. The CUDA target's regions (only when
    the pipeline asks for CUDA) become CUDA C++ kernels, handed to the
    caller with the plan.
    The execution plan (buffers, lifetimes, shape program, dispatches) and
    the packed constants go to the caller (the compile pipeline); the module
    attribute `v4f.plan` summarizes them for tests.
    Preserves: semantics; every dim is a shape-program register, so dynamic
    shapes stay dynamic.
  }];
  let constructor = "v4f::createBuildPlanPass()";
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::math::MathDialect", "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect", "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def CPUApproximateMath : Pass<"v4f-cpu-approximate-math", "mlir::ModuleOp"> {
  let summary = "Polynomial approximations for transcendental math in CPU kernels";
  let description = [{
    Input invariants: generated kernels (func.func of scf/arith/math/vector).
    Output: `math.exp`, `math.tanh`, `math.erf`, ... become MLIR's polynomial
    approximations (so the kernel library calls no libm for them);
    `math.asin`/`math.acos`, whose approximations are too inaccurate, become
    calls to libm's asinf/acosf (f16 through f32).
    Preserves: results within the approximations' documented error.
  }];
  let dependentDialects = ["mlir::math::MathDialect", "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
}

#endif // V4F_CODEGEN_PASSES_TD
