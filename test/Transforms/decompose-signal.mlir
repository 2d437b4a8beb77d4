// RUN: v4f-opt %s -split-input-file -v4f-decompose-signal | FileCheck %s

// A symmetric Hann window: range(0, size) and sin^2(pi i / (size - 1)) in
// float64, truncated to float32.
// CHECK-LABEL: func @hann
// CHECK: %[[N:.*]] = v4f.reshape %arg0 {{.*}} -> tensor<i32>
// CHECK: %[[I:.*]] = v4f.range %{{.*}}, %[[N]], %{{.*}} {{.*}} -> tensor<?xi32>
// CHECK: %[[W:.*]] = v4f.elementwise %[[I]], %[[N]] : (tensor<?xi32>, tensor<i32>) -> tensor<?xf32>
// CHECK: arith.sitofp
// CHECK: arith.subf
// CHECK: math.sin
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT: v4f.window
// CHECK: return %[[W]]
func.func @hann(%n: tensor<1xi32>) -> tensor<?xf32> {
  %w = v4f.window %n {kind = "hann", periodic = false} : tensor<1xi32> -> tensor<?xf32>
  return %w : tensor<?xf32>
}

// -----

// Blackman: 0.42 - 0.5 cos(2 pi i / N) + 0.08 cos(4 pi i / N), periodic.
// CHECK-LABEL: func @blackman
// CHECK: v4f.elementwise
// CHECK-NOT: arith.subf
// CHECK: arith.constant 4.200000e-01 : f64
// CHECK: math.cos
// CHECK: arith.constant -5.000000e-01 : f64
// CHECK: math.cos
// CHECK: arith.constant 8.000000e-02 : f64
func.func @blackman(%n: tensor<i64>) -> tensor<?xf64> {
  %w = v4f.window %n {kind = "blackman", periodic = true} : tensor<i64> -> tensor<?xf64>
  return %w : tensor<?xf64>
}

// -----

// A one-sided forward DFT of 8 points over a 6-sample real signal: the
// signal zero-padded to 8, two matmuls with [8, 5] cos / sin matrices, the
// imaginary part negated, the parts concatenated in the last dim.
// CHECK-LABEL: func @rfft
// CHECK: %[[P:.*]] = v4f.pad %{{.*}}, %{{.*}} {mode = "constant"} : (tensor<2x6xf32>, tensor<4xi64>) -> tensor<2x8xf32>
// CHECK: %[[C:.*]] = arith.constant dense<{{.*}}> : tensor<8x5xf32>
// CHECK: %[[S:.*]] = arith.constant dense<{{.*}}> : tensor<8x5xf32>
// CHECK: %[[RE:.*]] = v4f.matmul %[[P]], %[[C]]
// CHECK: %[[XS:.*]] = v4f.matmul %[[P]], %[[S]]
// CHECK: v4f.sub %{{.*}}, %[[XS]]
// CHECK: %[[Y:.*]] = v4f.concat %{{.*}}, %{{.*}} {axis = 2 : i64} {{.*}} -> tensor<2x5x2xf32>
// CHECK-NOT: v4f.dft
// CHECK: return %[[Y]]
func.func @rfft(%x: tensor<2x6x1xf32>) -> tensor<2x5x2xf32> {
  %y = v4f.dft %x {axis = 1 : i64, length = 8 : i64, inverse = false, onesided = true} : tensor<2x6x1xf32> -> tensor<2x5x2xf32>
  return %y : tensor<2x5x2xf32>
}

// -----

// An inverse complex DFT along axis 0: the axis moved last, matrices
// scaled by 1/3, re = xr C - xi S and im = xr S + xi C, the axis moved back.
// CHECK-LABEL: func @ifft
// CHECK: v4f.split %arg0 {axis = 2 : i64, sizes = array<i64: 1, 1>}
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 1, 0>} {{.*}} -> tensor<4x3xf32>
// CHECK: arith.constant dense<{{\[\[}}0.333333343, 0.333333343, 0.333333343]
// CHECK: v4f.sub
// CHECK: v4f.add
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 1, 0>} {{.*}} -> tensor<3x4xf32>
// CHECK: v4f.concat {{.*}} -> tensor<3x4x2xf32>
func.func @ifft(%x: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %y = v4f.dft %x {axis = 0 : i64, length = 3 : i64, inverse = true, onesided = false} : tensor<3x4x2xf32> -> tensor<3x4x2xf32>
  return %y : tensor<3x4x2xf32>
}

// -----

// STFT of a run-time length: the frame count (N - 4) / 2 + 1 from the
// signal's length, frame indices f * 2 + k gathered, the window applied,
// matmuls with [4, 3] cos / sin matrices, the parts stacked last.
// CHECK-LABEL: func @stft
// CHECK: %[[X:.*]] = v4f.reshape %arg0 {{.*}} -> tensor<1x?xf32>
// CHECK: %[[N:.*]] = v4f.shape %arg0 {end = 2 : i64, start = 1 : i64}
// CHECK: v4f.elementwise %[[N]]
// CHECK: arith.divsi
// CHECK: %[[F:.*]] = v4f.range {{.*}} -> tensor<?xi64>
// CHECK: %[[I:.*]] = v4f.elementwise {{.*}} -> tensor<?x4xi64>
// CHECK: %[[G:.*]] = v4f.gather %[[X]], %[[I]] {axis = 1 : i64}
// CHECK: %[[W:.*]] = v4f.elementwise %[[G]], %arg1
// CHECK: v4f.matmul %[[W]], %{{.*}} : (tensor<1x?x4xf32>, tensor<4x3xf32>) -> tensor<1x?x3xf32>
// CHECK: v4f.matmul %[[W]]
// CHECK: %[[Y:.*]] = v4f.concat {{.*}} {axis = 3 : i64} {{.*}} -> tensor<1x?x3x2xf32>
// CHECK-NOT: v4f.stft
// CHECK: return %[[Y]]
func.func @stft(%x: tensor<1x?x1xf32>, %w: tensor<4xf32>) -> tensor<1x?x3x2xf32> {
  %y = v4f.stft %x window(%w) {frame_step = 2 : i64, frame_length = 4 : i64, onesided = true} : (tensor<1x?x1xf32>, tensor<4xf32>) -> tensor<1x?x3x2xf32>
  return %y : tensor<1x?x3x2xf32>
}
