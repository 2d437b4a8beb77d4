// RUN: v4f-opt %s --split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v3 --v4f-pack-weights | FileCheck %s
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=BYTES

// A constant B is packed into 16-column panels (AVX2's nr); a B computed at
// run time is not. 8 x 5 floats pack into one zero-padded 8 x 16 panel: 512
// bytes, the only copy stored (the plain 160 bytes are not).
// CHECK-LABEL: func.func @main
// CHECK: v4f.matmul %arg0, %cst {{{.*}}v4f.packed_weight = "b_panels"
// CHECK: v4f.matmul %arg0, %arg1 {v4f.tiling
// CHECK-NOT: packed_weight
// BYTES: constant_bytes = 512 :
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %w = arith.constant dense<1.5> : tensor<8x5xf32>
  %0 = v4f.matmul %a, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = v4f.matmul %a, %b : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  return %0, %1 : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// One weight used by two matmuls is packed once.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-2: v4f.packed_weight = "b_panels"
// BYTES: constant_bytes = 512 :
func.func @main(%a: tensor<4x8xf32>, %c: tensor<2x8xf32>) -> (tensor<4x5xf32>, tensor<2x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<8x5xf32>
  %0 = v4f.matmul %a, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = v4f.matmul %c, %w : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<4x5xf32>, tensor<2x5xf32>
}

// -----

// A weight that is also read as a plain tensor (here: returned) keeps its
// plain copy next to the packed one: 160 bytes, then 512 at offset 192.
// CHECK-LABEL: func.func @main
// CHECK: v4f.packed_weight = "b_panels"
// BYTES: constant_bytes = 704 :
func.func @main(%a: tensor<4x8xf32>) -> (tensor<4x5xf32>, tensor<8x5xf32>) {
  %w = arith.constant dense<2.0> : tensor<8x5xf32>
  %0 = v4f.matmul %a, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  return %0, %w : tensor<4x5xf32>, tensor<8x5xf32>
}

// -----

// A constant conv weight is packed into 6-row panels (AVX2's mr): 4 output
// channels x K = 5*3*3 = 45 pad to one 6 x 45 panel, 1080 bytes; a weight
// computed at run time is not packed. Both convs' im2col reads one shared
// 408-byte position table (P = 36 columns padded to 48: 2 x 48 + 48 / 8
// int32), 64-byte aligned after the panel: 1088 + 408. (5 input channels:
// over 4 a conv takes im2col + GEMM, not the small-input kernel.)
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, %cst {{{.*}}v4f.packed_weight = "a_panels"
// CHECK: v4f.conv %arg0, %arg1 {
// CHECK-NOT: packed_weight
// BYTES: constant_bytes = 1496 :
func.func @main(%x: tensor<1x5x8x8xf32>, %v: tensor<4x5x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %w = arith.constant dense<0.25> : tensor<4x5x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = v4f.conv %x, %v {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// A depthwise conv takes the direct kernel, which reads its weight as OIHW:
// not packed, the plain 3 x 1 x 3 x 3 floats (108 bytes) stored as they are.
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, %cst {{{.*}}v4f.conv_algorithm = "depthwise"
// CHECK-NOT: packed_weight
// BYTES: constant_bytes = 108 :
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %w = arith.constant dense<0.5> : tensor<3x1x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, groups = 3 : i64}
       : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}
