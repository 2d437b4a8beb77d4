// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v3 | FileCheck %s --check-prefix=V3
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v4 | FileCheck %s --check-prefix=V4
// RUN: v4f-opt %s --v4f-select-cpu-strategy=target-cpu=x86-64-v2 | FileCheck %s --check-prefix=V2
// RUN: not v4f-opt %s --v4f-select-cpu-strategy 2>&1 | FileCheck %s --check-prefix=NOTARGET

// The strategy comes from the target: AVX2 (16 ymm registers) gets a 6x16
// register tile of 8 lanes, AVX-512 (32 zmm registers) an 8x32 tile of 16
// lanes, SSE a 6x8 tile of 4 lanes.
// V3: module attributes {v4f.target = #v4f.cpu_target<cpu = "x86-64-v3", isa = "avx2", vector_bits = 256, vector_registers = 16
// V3: v4f.matmul {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 6, nr = 16, lanes = 8, mb = 48, nb = 256, kc = 256>
// V3: v4f.conv {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 6, nr = 16, lanes = 8, mb = 48, nb = 256, kc = 256>
// V3: v4f.relu %{{[0-9]+}} : tensor<1x4x6x6xf32>{{$}}
// V4: module attributes {v4f.target = #v4f.cpu_target<cpu = "x86-64-v4", isa = "avx512", vector_bits = 512, vector_registers = 32
// V4: v4f.matmul {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// V4: v4f.conv {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// V4: v4f.conv {{.*}}v4f.conv_algorithm = "depthwise"{{.*}}-> tensor<1x6x8x8xf32>
// V4: v4f.conv {{.*}}v4f.conv_algorithm = "depthwise"{{.*}}-> tensor<1x4x4x4xf32>
// V4-NOT: v4f.conv_algorithm
// V4: v4f.conv {{.*}}-> tensor<1x3x3x3xf32>
// V2: v4f.matmul {{.*}}v4f.tiling = #v4f.gemm_tiling<mr = 6, nr = 8, lanes = 4, mb = 48, nb = 256, kc = 512>

// NOTARGET: error: v4f-select-cpu-strategy needs the module attribute v4f.target

// Groups that read one input channel (depthwise, with a channel multiplier
// of 2; a one-channel input) at width stride 1 or 2 take the direct
// depthwise kernel; stride 3 stays im2col + GEMM.
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                %wd: tensor<6x1x3x3xf32>, %x1: tensor<1x1x8x8xf32>, %w1: tensor<4x1x3x3xf32>, %w3: tensor<3x1x3x3xf32>)
    -> (tensor<4x5xf32>, tensor<1x4x6x6xf32>, tensor<1x6x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x3x3x3xf32>) {
  %0 = v4f.matmul %a, %b : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %2 = v4f.relu %1 : tensor<1x4x6x6xf32>
  %3 = v4f.conv %x, %wd {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, groups = 3 : i64}
       : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
  %4 = v4f.conv %x1, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %5 = v4f.conv %x, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>, groups = 3 : i64}
       : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0, %2, %3, %4, %5 : tensor<4x5xf32>, tensor<1x4x6x6xf32>, tensor<1x6x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x3x3x3xf32>
}
