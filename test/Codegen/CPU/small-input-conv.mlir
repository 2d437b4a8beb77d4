// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-pack-weights | FileCheck %s
// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v3 --v4f-pack-weights | FileCheck %s
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=GEN

// Convs of one group over at most 4 input channels with static planes (image
// stems) take the direct small-input kernel, which reads the weight
// unpacked: a 7x7 stride-2 RGB stem, a dilated 3x3 over 4 channels, a 5x5
// with a weight computed at run time.
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "small_input"
// CHECK-NOT: packed_weight
// CHECK-SAME: -> tensor<1x64x112x112xf32>
// CHECK: v4f.conv %arg1, %{{.*}}v4f.conv_algorithm = "small_input"
// CHECK-SAME: -> tensor<2x16x30x30xf32>
// CHECK: v4f.conv %arg2, %arg3 {{.*}}v4f.conv_algorithm = "small_input"
// CHECK-SAME: -> tensor<1x8x20x20xf32>
func.func @main(%img: tensor<1x3x224x224xf32>, %rgba: tensor<2x4x30x30xf32>, %duo: tensor<1x2x20x20xf32>,
                 %wr: tensor<8x2x5x5xf32>)
    -> (tensor<1x64x112x112xf32>, tensor<2x16x30x30xf32>, tensor<1x8x20x20xf32>) {
  %w7 = arith.constant dense<0.01> : tensor<64x3x7x7xf32>
  %w3 = arith.constant dense<0.01> : tensor<16x4x3x3xf32>
  %0 = v4f.conv %img, %w7 {dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
       : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
  %1 = v4f.conv %rgba, %w3 {dilations = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>}
       : (tensor<2x4x30x30xf32>, tensor<16x4x3x3xf32>) -> tensor<2x16x30x30xf32>
  %2 = v4f.conv %duo, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>}
       : (tensor<1x2x20x20xf32>, tensor<8x2x5x5xf32>) -> tensor<1x8x20x20xf32>
  return %0, %1, %2 : tensor<1x64x112x112xf32>, tensor<2x16x30x30xf32>, tensor<1x8x20x20xf32>
}

// -----

// Not for it: 5 input channels, two groups, a stride of 3, a 9x9 kernel, a
// run-time plane, a left padding over 4.
// CHECK-LABEL: func.func @main
// CHECK-NOT: small_input
// CHECK: return
func.func @main(%x5: tensor<1x5x32x32xf32>, %x4: tensor<1x4x32x32xf32>, %xd: tensor<1x3x?x?xf32>)
    -> (tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>, tensor<1x8x11x11xf32>, tensor<1x8x32x32xf32>,
        tensor<1x8x?x?xf32>, tensor<1x8x30x40xf32>) {
  %w5 = arith.constant dense<0.01> : tensor<8x5x3x3xf32>
  %wg = arith.constant dense<0.01> : tensor<8x2x3x3xf32>
  %w4 = arith.constant dense<0.01> : tensor<8x4x3x3xf32>
  %w9 = arith.constant dense<0.01> : tensor<8x4x9x9xf32>
  %w3 = arith.constant dense<0.01> : tensor<8x3x3x3xf32>
  %0 = v4f.conv %x5, %w5 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x5x32x32xf32>, tensor<8x5x3x3xf32>) -> tensor<1x8x32x32xf32>
  %1 = v4f.conv %x4, %wg {dilations = array<i64: 1, 1>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x4x32x32xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x32x32xf32>
  %2 = v4f.conv %x4, %w4 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>}
       : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x11x11xf32>
  %3 = v4f.conv %x4, %w9 {dilations = array<i64: 1, 1>, pads = array<i64: 4, 4, 4, 4>, strides = array<i64: 1, 1>}
       : (tensor<1x4x32x32xf32>, tensor<8x4x9x9xf32>) -> tensor<1x8x32x32xf32>
  %4 = v4f.conv %xd, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x?x?xf32>
  %5 = v4f.conv %x4, %w4 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 5, 0, 5>, strides = array<i64: 1, 1>}
       : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x30x40xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>, tensor<1x8x11x11xf32>,
         tensor<1x8x32x32xf32>, tensor<1x8x?x?xf32>, tensor<1x8x30x40xf32>
}

// -----

// The kernel: one dispatch, the weight stored as it is (8 x 3 x 3 x 3
// floats = 864 bytes, then the 32-byte bias), the padded input rows
// de-interleaved at stride 2 (even-lane and odd-lane shuffles), FMAs of
// broadcast weights.
// GEN: module attributes {v4f.plan = {buffers = 4 : i64, constant_bytes = 928 : i64, dispatches = 1 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>
// GEN: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>
// GEN: vector.fma {{.*}} : vector<16xf32>
func.func @main(%x: tensor<1x3x64x64xf32>) -> tensor<1x8x32x32xf32> {
  %w = arith.constant dense<0.5> : tensor<8x3x3x3xf32>
  %b = arith.constant dense<0.1> : tensor<8xf32>
  %0 = v4f.conv %x, %w bias(%b) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x3x64x64xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x32x32xf32>
  return %0 : tensor<1x8x32x32xf32>
}
