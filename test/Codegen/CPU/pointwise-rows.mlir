// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v4 | FileCheck %s --check-prefix=V4
// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v3 | FileCheck %s --check-prefix=V3
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=GEN

// A 1x1 stride-1 conv that writes more than it reads (more output than
// input channels per group) over at least 2 x NB pixels runs each register
// tile across all of its workgroup's columns (pointwiseRowTilesOuter), and
// takes a column block NB whose K block of input fills half of L2 (2 MiB
// on x86-64-v4, 512 KiB on x86-64-v3), between NB and 4 x NB:
// v4 (KC = 192, NB = 256): K = 64, 128 and 512 (three K blocks of 176)
// -> 4096, 2048 and 1472 columns fit, capped at 1024.
// v3 (KC = 256, NB = 256): K = 64 -> 1024; K = 128 -> 512; K = 512 (two
// K blocks of 256) -> 256. A reducing conv, a small plane and a strided
// conv keep NB = 256; run-time planes count as large. A conv that does not
// expand, over as many pixels, takes all output channels of a group in one
// row block MB (rounded up to MR) while MB rows of a K block of the weight
// fill at most a quarter of L2 (v4: 256 x 176 floats; v3: 126 x 256, so
// 128 rows run as two blocks of 66 and 1024 as nine of 114; on v4 that
// conv computes channels in lanes); an expanding conv on few pixels keeps
// MB = 8 MR.

// V4-LABEL: func.func @main
// V4: v4f.conv %arg0, {{.*}}mr = 8, nr = 32, lanes = 16, mb = 64, nb = 1024, kc = 192{{.*}}-> tensor<1x256x56x56xf32>
// V4: v4f.conv %arg1, {{.*}}nb = 1024, kc = 192{{.*}}-> tensor<1x512x28x28xf32>
// V4: v4f.conv %arg2, {{.*}}mb = 64, nb = 256, kc = 192{{.*}}-> tensor<1x64x56x56xf32>
// V4: v4f.conv %arg3, {{.*}}nb = 1024, kc = 192{{.*}}-> tensor<1x2048x28x28xf32>
// V4: v4f.conv %arg4, {{.*}}nb = 1024, kc = 192{{.*}}-> tensor<1x256x?x?xf32>
// V4: v4f.conv %arg5, {{.*}}mb = 64, nb = 256, kc = 192{{.*}}-> tensor<1x256x16x16xf32>
// V4: v4f.conv %arg0, {{.*}}mb = 64, nb = 256, kc = 192{{.*}}-> tensor<1x256x28x28xf32>
// V4: v4f.conv %arg0, {{.*}}nb = 1024, kc = 192{{.*}}-> tensor<1x256x56x56xf32>
// V4: v4f.conv %arg6, {{.*}}mb = 128, nb = 256, kc = 192{{.*}}-> tensor<1x128x28x28xf32>
// V3-LABEL: func.func @main
// V3: v4f.conv %arg0, {{.*}}mr = 6, nr = 16, lanes = 8, mb = 48, nb = 1024, kc = 256{{.*}}-> tensor<1x256x56x56xf32>
// V3: v4f.conv %arg1, {{.*}}nb = 512, kc = 256{{.*}}-> tensor<1x512x28x28xf32>
// V3: v4f.conv %arg2, {{.*}}nb = 256, kc = 256{{.*}}-> tensor<1x64x56x56xf32>
// V3: v4f.conv %arg3, {{.*}}nb = 256, kc = 256{{.*}}-> tensor<1x2048x28x28xf32>
// V3: v4f.conv %arg4, {{.*}}nb = 1024, kc = 256{{.*}}-> tensor<1x256x?x?xf32>
// V3: v4f.conv %arg6, {{.*}}mb = 66, nb = 256, kc = 256{{.*}}-> tensor<1x128x28x28xf32>
// V3: v4f.conv %arg7, {{.*}}mb = 114, nb = 256, kc = 256{{.*}}-> tensor<1x1024x28x28xf32>
func.func @main(%a: tensor<1x64x56x56xf32>, %b: tensor<1x128x28x28xf32>, %c: tensor<1x256x56x56xf32>,
                %d: tensor<1x512x28x28xf32>, %e: tensor<1x64x?x?xf32>, %f: tensor<1x64x16x16xf32>,
                %g: tensor<1x512x28x28xf32>, %h: tensor<1x2048x28x28xf32>)
    -> (tensor<1x256x56x56xf32>, tensor<1x512x28x28xf32>, tensor<1x64x56x56xf32>, tensor<1x2048x28x28xf32>,
        tensor<1x256x?x?xf32>, tensor<1x256x16x16xf32>, tensor<1x256x28x28xf32>, tensor<1x256x56x56xf32>,
        tensor<1x128x28x28xf32>, tensor<1x1024x28x28xf32>) {
  %w6 = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %w7 = arith.constant dense<0.01> : tensor<1024x2048x1x1xf32>
  %w0 = arith.constant dense<0.01> : tensor<256x64x1x1xf32>
  %w1 = arith.constant dense<0.01> : tensor<512x128x1x1xf32>
  %w2 = arith.constant dense<0.01> : tensor<64x256x1x1xf32>
  %w3 = arith.constant dense<0.01> : tensor<2048x512x1x1xf32>
  %wg = arith.constant dense<0.01> : tensor<256x32x1x1xf32>
  %0 = v4f.conv %a, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  %1 = v4f.conv %b, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x28x28xf32>
  %2 = v4f.conv %c, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x256x56x56xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x56x56xf32>
  %3 = v4f.conv %d, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x28x28xf32>, tensor<2048x512x1x1xf32>) -> tensor<1x2048x28x28xf32>
  %4 = v4f.conv %e, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x?x?xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x?x?xf32>
  %5 = v4f.conv %f, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x16x16xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x16x16xf32>
  %6 = v4f.conv %a, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x28x28xf32>
  %7 = v4f.conv %a, %wg {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, groups = 2 : i64}
       : (tensor<1x64x56x56xf32>, tensor<256x32x1x1xf32>) -> tensor<1x256x56x56xf32>
  %8 = v4f.conv %g, %w6 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
  %9 = v4f.conv %h, %w7 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x2048x28x28xf32>, tensor<1024x2048x1x1xf32>) -> tensor<1x1024x28x28xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<1x256x56x56xf32>, tensor<1x512x28x28xf32>, tensor<1x64x56x56xf32>,
      tensor<1x2048x28x28xf32>, tensor<1x256x?x?xf32>, tensor<1x256x16x16xf32>, tensor<1x256x28x28xf32>,
      tensor<1x256x56x56xf32>, tensor<1x128x28x28xf32>, tensor<1x1024x28x28xf32>
}

// -----

// The kernels: the expanding conv's row tiles (step MR = 8) enclose its
// column panels (step NR = 32), each panel's K loop carrying 8 x 2
// accumulators; the reducing conv's panels enclose its row tiles.
// GEN-LABEL: func.func @v4f_kernel_0
// GEN: scf.for %{{.*}} step %c8_i64{{.*}} : i64 {
// GEN-NOT: vector<16xf32>
// GEN: scf.for %{{.*}} step %c32_i64{{.*}} : i64 {
// GEN: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// GEN-LABEL: func.func @v4f_kernel_1
// GEN: scf.for %{{.*}} step %c32_i64{{.*}} : i64 {
// GEN-NOT: vector<16xf32>
// GEN: scf.for %{{.*}} step %c8_i64{{.*}} : i64 {
// GEN: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
func.func @main(%y: tensor<1x64x56x56xf32>, %z: tensor<1x256x56x56xf32>) -> (tensor<1x256x56x56xf32>, tensor<1x64x56x56xf32>) {
  %w0 = arith.constant dense<0.01> : tensor<256x64x1x1xf32>
  %w2 = arith.constant dense<0.01> : tensor<64x256x1x1xf32>
  %0 = v4f.conv %y, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  %1 = v4f.conv %z, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x256x56x56xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x56x56xf32>
  return %0, %1 : tensor<1x256x56x56xf32>, tensor<1x64x56x56xf32>
}
