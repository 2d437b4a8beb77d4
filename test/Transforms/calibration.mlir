// RUN: v4f-opt %s --split-input-file --pass-pipeline='builtin.module(v4f-insert-calibration-taps)' | FileCheck %s --check-prefix=TAPS
// RUN: v4f-opt %s --split-input-file --pass-pipeline='builtin.module(v4f-insert-calibration-taps,v4f-apply-calibration{stats=%S/Inputs/calibration-stats.json})' | FileCheck %s --check-prefix=MINMAX
// RUN: v4f-opt %s --split-input-file --pass-pipeline='builtin.module(v4f-insert-calibration-taps,v4f-apply-calibration{stats=%S/Inputs/calibration-stats.json method=percentile:98})' | FileCheck %s --check-prefix=PCT
// RUN: not v4f-opt %s --split-input-file --pass-pipeline='builtin.module(v4f-insert-calibration-taps,v4f-apply-calibration)' 2>&1 | FileCheck %s --check-prefix=NOSTATS

// The taps: the float lhs of each matmul and the input of each ungrouped
// conv in @main's body, in program order, become extra results named
// v4f.calibration_tap<i> after the model's own; a grouped conv is not
// observed. v4f-apply-calibration turns tap i's statistics into the range
// on the op and removes the taps again: minmax [-1, 3]; percentile:98, the
// 2nd and 98th percentiles of the 10-bin value histogram over [-1, 3] (bins
// 0.4 wide, 200 values: the 5th value lies in bin 4, the 196th in bin 5),
// gives [0.6, 1.4]; an all-zero activation gets [0, 0].
// TAPS-LABEL: func @main
// TAPS-SAME: -> (tensor<2x3xf32> {v4f.name = "y"}, tensor<2x4xf32> {v4f.name = "v4f.calibration_tap0"}, tensor<1x2x4x4xf32> {v4f.name = "v4f.calibration_tap1"})
// TAPS: v4f.matmul %arg0, {{.*}}v4f.calibration_tap = 0 : i64
// TAPS: v4f.conv %arg1, {{.*}}v4f.calibration_tap = 1 : i64
// TAPS: v4f.conv %arg2, {{.*}}groups = 2
// TAPS-NOT: v4f.calibration_tap =
// TAPS: return %{{.*}}, %arg0, %arg1
// MINMAX-LABEL: func @main
// MINMAX-SAME: -> (tensor<2x3xf32> {v4f.name = "y"})
// MINMAX: v4f.matmul {{.*}}v4f.calibration = array<f32: -1.000000e+00, 3.000000e+00>
// MINMAX-NOT: v4f.calibration_tap
// MINMAX: v4f.conv {{.*}}v4f.calibration = array<f32: 0.000000e+00, 0.000000e+00>
// MINMAX-NOT: v4f.calibration_tap
// PCT: v4f.matmul {{.*}}v4f.calibration = array<f32: 6.000000e-01, 1.400000e+00>
// NOSTATS: error: 'v4f.matmul' op calibration tap 0 has no statistics (0 given)
func.func @main(%x: tensor<2x4xf32>, %img: tensor<1x2x4x4xf32>, %g: tensor<1x2x4x4xf32>) -> (tensor<2x3xf32> {v4f.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<4x3xf32>
  %y = v4f.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %k = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = v4f.conv %img, %k {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %kg = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %d = v4f.conv %g, %kg {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<2x3xf32>
}
