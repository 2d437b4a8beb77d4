// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-assign-cpu-layouts)" | FileCheck %s
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-assign-cpu-layouts)" | FileCheck %s --check-prefix=V3
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-assign-cpu-layouts,v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=GEN

// A residual trunk at 28 x 28 (ResNet-50 stage 2): the expanding 1x1 conv
// %t0 and the one that adds it as its residual (%t1) form one group; the
// readers are a 1x1 conv (switched to channels in lanes, its own output
// channels-first for the Winograd conv after it) and the mean over H, W.
// Both writers store channels-last and compute channels in lanes with the
// target's base tiling (not the pixels-in-lanes 1x1 blocks, nb = 1024).

// CHECK: module attributes {v4f.layouts = "2 tensors channels-last in 1 groups (3 convs switched to channels in lanes), 2 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc", v4f.tiling = #v4f.gemm_tiling<mr = 8, nr = 32, lanes = 16, mb = 64, nb = 256, kc = 192>
// CHECK: v4f.conv %0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK-NOT: v4f.layout
// CHECK: v4f.conv %1, {{.*}}v4f.conv_algorithm = "winograd_4x4_direct_weights"
// CHECK-NOT: v4f.layout
// CHECK: v4f.conv %2, {{.*}}residual(%0) {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.reduce_mean %3
// V3: module attributes {v4f.layouts = "2 tensors channels-last in 1 groups (3 convs switched to channels in lanes), 2 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// V3: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc", v4f.tiling = #v4f.gemm_tiling<mr = 6, nr = 16, lanes = 8,

// Kernels: the first writer stores rows (none of the shuffles that
// transpose 8 x 16 blocks for a channels-first store, which its reader,
// storing channels-first, has).
// GEN-LABEL: func.func @v4f_kernel_0
// GEN-NOT: vector.shuffle
// GEN: func.func @v4f_kernel_1
// GEN: vector.shuffle
func.func @main(%x: tensor<1x128x28x28xf32>) -> tensor<1x512x1x1xf32> {
  %we = arith.constant dense<0.01> : tensor<512x128x1x1xf32>
  %wr = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %w3 = arith.constant dense<0.01> : tensor<128x128x3x3xf32>
  %b = arith.constant dense<0.1> : tensor<512xf32>
  %t0 = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x28x28xf32>
  %r = v4f.conv %t0, %wr {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
  %w = v4f.conv %r, %w3 {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32>
  %t1 = v4f.conv %w, %we bias(%b) residual(%t0) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>, tensor<512xf32>, tensor<1x512x28x28xf32>) -> tensor<1x512x28x28xf32>
  %g = v4f.reduce_mean %t1 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x512x28x28xf32>) -> tensor<1x512x1x1xf32>
  return %g : tensor<1x512x1x1xf32>
}

// -----

// The same trunk with %t1 also a function result (outputs are channels-
// first): the group {%t0, %t1} stays channels-first and its readers compute
// pixels in lanes, but %r, read only as the input of %t1, goes
// channels-last. A strided 1x1 reader and an unpadded dilated 3x3 reader
// (not Winograd's) read %s channels-last (in place, through the offset
// table). A max pool stores what it reads (followsDataLayout), so it joins
// %u's group, and its result is a function result: %u stays channels-first.

// CHECK: module attributes {v4f.layouts = "2 tensors channels-last in 2 groups (3 convs switched to channels in lanes), 6 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}strides = array<i64: 1, 1>, v4f.tiling
// CHECK: v4f.conv %0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.conv %1, {{.*}}residual(%0) {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %arg1, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.conv %3, {{.*}}strides = array<i64: 2, 2>, v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %3, {{.*}}dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %arg1, {{.*}}strides = array<i64: 1, 1>, v4f.tiling
// CHECK: v4f.max_pool
func.func @main(%x: tensor<1x128x28x28xf32>, %y: tensor<1x64x14x14xf32>)
    -> (tensor<1x512x28x28xf32>, tensor<1x128x7x7xf32>, tensor<1x64x10x10xf32>, tensor<1x128x7x7xf32>) {
  %we = arith.constant dense<0.01> : tensor<512x128x1x1xf32>
  %wr = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %wy = arith.constant dense<0.01> : tensor<128x64x1x1xf32>
  %ws = arith.constant dense<0.01> : tensor<128x128x1x1xf32>
  %w3 = arith.constant dense<0.01> : tensor<64x128x3x3xf32>
  %t0 = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x28x28xf32>
  %r = v4f.conv %t0, %wr {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
  %t1 = v4f.conv %r, %we residual(%t0) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>, tensor<1x512x28x28xf32>) -> tensor<1x512x28x28xf32>
  %s = v4f.conv %y, %wy {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x14x14xf32>, tensor<128x64x1x1xf32>) -> tensor<1x128x14x14xf32>
  %s2 = v4f.conv %s, %ws {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x128x14x14xf32>, tensor<128x128x1x1xf32>) -> tensor<1x128x7x7xf32>
  %s3 = v4f.conv %s, %w3 {dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<64x128x3x3xf32>) -> tensor<1x64x10x10xf32>
  %u = v4f.conv %y, %wy {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x14x14xf32>, tensor<128x64x1x1xf32>) -> tensor<1x128x14x14xf32>
  %p = v4f.max_pool %u {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x128x14x14xf32>) -> tensor<1x128x7x7xf32>
  return %t1, %s2, %s3, %p : tensor<1x512x28x28xf32>, tensor<1x128x7x7xf32>, tensor<1x64x10x10xf32>, tensor<1x128x7x7xf32>
}

// -----

// A stage-1 trunk (64 -> 256 at 56 x 56, P = 3136 >= 2 x NB = 2048): every
// writer and reader could take channels-last, but the expanding conv runs
// faster as pixels in lanes with its row tiles across the columns
// (worthIt), so the group stays channels-first.

// CHECK: module attributes {v4f.layouts = "0 tensors channels-last in 0 groups (0 convs switched to channels in lanes), 2 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK-NOT: v4f.layout
// CHECK: return
func.func @main(%x: tensor<1x64x56x56xf32>, %y: tensor<1x64x56x56xf32>) -> tensor<1x256x1x1xf32> {
  %we = arith.constant dense<0.01> : tensor<256x64x1x1xf32>
  %t0 = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  %t1 = v4f.conv %y, %we residual(%t0) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>, tensor<1x256x56x56xf32>) -> tensor<1x256x56x56xf32>
  %g = v4f.reduce_mean %t1 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x256x56x56xf32>) -> tensor<1x256x1x1xf32>
  return %g : tensor<1x256x1x1xf32>
}


// -----

// Elementwise maps join the group of their same-shape operands: the
// product of %p and %q, its sigmoid and a per-channel scale form one fused
// chain region that stores channels-last (its last op is marked), read by
// a 1x1 conv; the broadcast scale is read either way. (These convs at
// 14 x 14 already compute channels in lanes.) An add of a conv result and a
// graph input of the same shape cannot store that input channels-last, so
// %u's group stays channels-first.

// CHECK: module attributes {v4f.layouts = "3 tensors channels-last in 1 groups (0 convs switched to channels in lanes), 4 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.mul %0, %1 :
// CHECK-NEXT: v4f.sigmoid
// CHECK-NEXT: v4f.mul {{.*}} {v4f.layout = "nhwc"}
// CHECK: v4f.conv %2, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.add %4, %arg1 :
// CHECK: v4f.conv %5, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
func.func @main(%x: tensor<1x128x14x14xf32>, %y: tensor<1x512x14x14xf32>) -> (tensor<1x128x14x14xf32>, tensor<1x128x14x14xf32>) {
  %we = arith.constant dense<0.01> : tensor<512x128x1x1xf32>
  %wr = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %k = arith.constant dense<2.0> : tensor<1x512x1x1xf32>
  %p = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x14x14xf32>
  %q = v4f.conv %x, %we {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x14x14xf32>
  %m = v4f.mul %p, %q : (tensor<1x512x14x14xf32>, tensor<1x512x14x14xf32>) -> tensor<1x512x14x14xf32>
  %s = v4f.sigmoid %m : tensor<1x512x14x14xf32>
  %t = v4f.mul %s, %k : (tensor<1x512x14x14xf32>, tensor<1x512x1x1xf32>) -> tensor<1x512x14x14xf32>
  %r = v4f.conv %t, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x14x14xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x14x14xf32>
  %u = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x14x14xf32>
  %v = v4f.add %u, %y : (tensor<1x512x14x14xf32>, tensor<1x512x14x14xf32>) -> tensor<1x512x14x14xf32>
  %w = v4f.conv %v, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x14x14xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x14x14xf32>
  return %r, %w : tensor<1x128x14x14xf32>, tensor<1x128x14x14xf32>
}

// -----

// A concat of channels shares its operands' layout: two conv results
// joined and read by a 1x1 conv form one channels-last group; a concat
// with a graph input among its operands stays channels-first, and so do
// the conv results it joins.

// CHECK: module attributes {v4f.layouts = "3 tensors channels-last in 1 groups (0 convs switched to channels in lanes), 3 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.conv %arg0, {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.concat %0, %1 {axis = 1 : i64, v4f.layout = "nhwc"}
// CHECK: v4f.conv %2, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.concat %4, %arg1 {axis = 1 : i64} :
func.func @main(%x: tensor<1x128x14x14xf32>, %y: tensor<1x256x14x14xf32>) -> (tensor<1x128x14x14xf32>, tensor<1x512x14x14xf32>) {
  %wa = arith.constant dense<0.01> : tensor<256x128x1x1xf32>
  %wr = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %a = v4f.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<256x128x1x1xf32>) -> tensor<1x256x14x14xf32>
  %b = v4f.conv %x, %wa {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<256x128x1x1xf32>) -> tensor<1x256x14x14xf32>
  %c = v4f.concat %a, %b {axis = 1 : i64} : (tensor<1x256x14x14xf32>, tensor<1x256x14x14xf32>) -> tensor<1x512x14x14xf32>
  %r = v4f.conv %c, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x512x14x14xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x14x14xf32>
  %d = v4f.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x128x14x14xf32>, tensor<256x128x1x1xf32>) -> tensor<1x256x14x14xf32>
  %e = v4f.concat %d, %y {axis = 1 : i64} : (tensor<1x256x14x14xf32>, tensor<1x256x14x14xf32>) -> tensor<1x512x14x14xf32>
  return %r, %e : tensor<1x128x14x14xf32>, tensor<1x512x14x14xf32>
}

// -----

// Groups through the ops that store what they read: a max pool, an average
// pool, a pad and a gather along H (a Resize's) of %a each store
// channels-last, read by 1x1 convs switched to channels in lanes; all five
// tensors are one group. A gather along C (axis 1) is no follower: %b stays
// channels-first, and so does the pool of %c whose result is a function
// result.

// CHECK: module attributes {v4f.layouts = "5 tensors channels-last in 1 groups (5 convs switched to channels in lanes), 7 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.max_pool %0 {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.conv %1, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.avg_pool %0 {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.conv %3, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.pad %0, {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.conv %5, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.gather %0, {{.*}}axis = 2 : i64, v4f.layout = "nhwc"
// CHECK: v4f.conv %7, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
// CHECK: v4f.conv %arg0, {{.*}}v4f.tiling
// CHECK-NOT: v4f.layout
// CHECK: v4f.gather %9, {{.*}}axis = 1 : i64}
// CHECK-NOT: v4f.layout
// CHECK: v4f.max_pool %11 {{.*}}strides = array<i64: 2, 2>}
// CHECK: return
func.func @main(%x: tensor<1x64x12x10xf32>)
    -> (tensor<1x64x12x10xf32>, tensor<1x64x6x5xf32>, tensor<1x64x14x12xf32>, tensor<1x64x24x10xf32>,
        tensor<1x4x12x10xf32>, tensor<1x96x6x5xf32>) {
  %w1 = arith.constant dense<0.01> : tensor<96x64x1x1xf32>
  %w2 = arith.constant dense<0.02> : tensor<64x96x1x1xf32>
  %pads = arith.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %rows = arith.constant dense<[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11]> : tensor<24xi64>
  %chans = arith.constant dense<[0, 5, 17, 95]> : tensor<4xi64>
  %a = v4f.conv %x, %w1 {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x12x10xf32>, tensor<96x64x1x1xf32>) -> tensor<1x96x12x10xf32>
  %p = v4f.max_pool %a {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x96x12x10xf32>) -> tensor<1x96x12x10xf32>
  %y1 = v4f.conv %p, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x96x12x10xf32>, tensor<64x96x1x1xf32>) -> tensor<1x64x12x10xf32>
  %v = v4f.avg_pool %a {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x96x12x10xf32>) -> tensor<1x96x6x5xf32>
  %y2 = v4f.conv %v, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x96x6x5xf32>, tensor<64x96x1x1xf32>) -> tensor<1x64x6x5xf32>
  %q = v4f.pad %a, %pads {mode = "constant"} : (tensor<1x96x12x10xf32>, tensor<8xi64>) -> tensor<1x96x14x12xf32>
  %y3 = v4f.conv %q, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x96x14x12xf32>, tensor<64x96x1x1xf32>) -> tensor<1x64x14x12xf32>
  %g = v4f.gather %a, %rows {axis = 2 : i64} : (tensor<1x96x12x10xf32>, tensor<24xi64>) -> tensor<1x96x24x10xf32>
  %y4 = v4f.conv %g, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x96x24x10xf32>, tensor<64x96x1x1xf32>) -> tensor<1x64x24x10xf32>
  %b = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x12x10xf32>, tensor<96x64x1x1xf32>) -> tensor<1x96x12x10xf32>
  %h = v4f.gather %b, %chans {axis = 1 : i64} : (tensor<1x96x12x10xf32>, tensor<4xi64>) -> tensor<1x4x12x10xf32>
  %c = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x12x10xf32>, tensor<96x64x1x1xf32>) -> tensor<1x96x12x10xf32>
  %cp = v4f.max_pool %c {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x96x12x10xf32>) -> tensor<1x96x6x5xf32>
  return %y1, %y2, %y3, %y4, %h, %cp : tensor<1x64x12x10xf32>, tensor<1x64x6x5xf32>, tensor<1x64x14x12xf32>, tensor<1x64x24x10xf32>, tensor<1x4x12x10xf32>, tensor<1x96x6x5xf32>
}

// -----

// A split of channels (YOLOv8's C2f) stores its parts in its input's
// layout: %a, both parts, the conv on the second part and the concat of all
// three are one channels-last group read by a 1x1 conv.

// CHECK: module attributes {v4f.layouts = "5 tensors channels-last in 1 groups (3 convs switched to channels in lanes), 1 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}v4f.layout = "nhwc"
// CHECK: v4f.split %0 {axis = 1 : i64, sizes = array<i64: 32, 64>, v4f.layout = "nhwc"}
// CHECK: v4f.conv %1#1, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.concat %1#0, %1#1, %2 {axis = 1 : i64, v4f.layout = "nhwc"}
// CHECK: v4f.conv %3, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
func.func @main(%x: tensor<1x64x12x10xf32>) -> tensor<1x32x12x10xf32> {
  %w1 = arith.constant dense<0.01> : tensor<96x64x1x1xf32>
  %w2 = arith.constant dense<0.02> : tensor<64x64x1x1xf32>
  %w3 = arith.constant dense<0.03> : tensor<32x160x1x1xf32>
  %a = v4f.conv %x, %w1 {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x12x10xf32>, tensor<96x64x1x1xf32>) -> tensor<1x96x12x10xf32>
  %s:2 = v4f.split %a {axis = 1 : i64, sizes = array<i64: 32, 64>} : (tensor<1x96x12x10xf32>) -> (tensor<1x32x12x10xf32>, tensor<1x64x12x10xf32>)
  %b = v4f.conv %s#1, %w2 {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x12x10xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x12x10xf32>
  %c = v4f.concat %s#0, %s#1, %b {axis = 1 : i64} : (tensor<1x32x12x10xf32>, tensor<1x64x12x10xf32>, tensor<1x64x12x10xf32>) -> tensor<1x160x12x10xf32>
  %y = v4f.conv %c, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x160x12x10xf32>, tensor<32x160x1x1xf32>) -> tensor<1x32x12x10xf32>
  return %y : tensor<1x32x12x10xf32>
}
