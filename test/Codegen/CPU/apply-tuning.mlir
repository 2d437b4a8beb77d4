// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=1 | FileCheck %s --check-prefix=C1
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=2 | FileCheck %s --check-prefix=C2
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=3 | FileCheck %s --check-prefix=C3
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=4 | FileCheck %s --check-prefix=C4
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=6 | FileCheck %s --check-prefix=C6
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=candidate=9 | FileCheck %s --check-prefix=C9
// RUN: not v4f-opt %s --v4f-apply-tuning=candidate=1 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-apply-tuning=db=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING

// v4fc tune's measuring compiles: every tunable op takes its candidate N.
// Candidate 0 is the cost model's choice; then, per op: the other conv
// algorithms (pixels in lanes, channels in lanes where the conv can take
// them, Winograd F(2x2), F(4x4) and F(4x4) from the direct weight for 3x3
// stride-1 convs), half and twice the K
// block, another register tile height (AVX-512: 12 rows; a 1x1 stage-4 conv,
// 12 rows by default as channels in lanes with few pixels, 6), half the
// column block. (This 3x3 stage-4 conv keeps 8 rows by default: it reads its
// input implicitly, ConvKernels.cpp.) An op with fewer candidates keeps its default; depthwise
// convs are not tuned.
// C1: v4f.conv %arg0, {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C1-NOT: channel_lanes
// C1-SAME: -> tensor<1x512x7x7xf32>
// C1: v4f.conv {{.*}}v4f.conv_algorithm = "depthwise", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C1: v4f.matmul {{.*}}kc = 96>
// C2: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "winograd_2x2", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C3: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "winograd_4x4", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C4: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "winograd_4x4_direct_weights", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C6: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 384>
// C6: v4f.matmul {{.*}}#v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C3: v4f.matmul {{.*}}#v4f.gemm_tiling<mr = 12, nr = 32, lanes = 16, mb = 96, nb = 256, kc = 192>
// C9: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// C9: v4f.matmul {{.*}}#v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// NOTARGET: error: v4f-apply-tuning needs the module attribute v4f.target
// MISSING: error: {{.*}}missing.json: cannot read the tuning database
func.func @main(%x: tensor<1x512x7x7xf32>, %a: tensor<16x768xf32>)
    -> (tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>, tensor<16x64xf32>) {
  %w = arith.constant dense<0.01> : tensor<512x512x3x3xf32>
  %wd = arith.constant dense<0.1> : tensor<512x1x3x3xf32>
  %m = arith.constant dense<0.1> : tensor<768x64xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  %1 = v4f.conv %x, %wd {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, groups = 512 : i64}
       : (tensor<1x512x7x7xf32>, tensor<512x1x3x3xf32>) -> tensor<1x512x7x7xf32>
  %2 = v4f.matmul %a, %m : (tensor<16x768xf32>, tensor<768x64xf32>) -> tensor<16x64xf32>
  return %0, %1, %2 : tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>, tensor<16x64xf32>
}
