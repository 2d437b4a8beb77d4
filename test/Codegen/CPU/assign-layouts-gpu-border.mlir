// RUN: v4f-opt %s --pass-pipeline="builtin.module(v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-assign-cpu-layouts)" | FileCheck %s

// A region placed on the GPU reads its operands channels-first: %t0, read
// by a conv on the GPU, stays channels-first (and nothing on the GPU is
// marked), while %t2, read only by a CPU conv, goes channels-last.

// CHECK: module attributes {v4f.layouts = "1 tensors channels-last in 1 groups (2 convs switched to channels in lanes), 2 conv, elementwise, concat, pool, pad, gather and split outputs channels-first, 0 reorders"
// CHECK-LABEL: func.func @main
// CHECK: v4f.conv %arg0, {{.*}}strides = array<i64: 1, 1>, v4f.tiling
// CHECK: v4f.dispatch -> tensor<1x128x28x28xf32> attributes {v4f.placement = "cuda"}
// CHECK-NEXT: v4f.conv %0, {{.*}}strides = array<i64: 1, 1>} :
// CHECK: v4f.conv %arg0, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.layout = "nhwc"
// CHECK: v4f.conv %2, {{.*}}v4f.conv_algorithm = "channel_lanes", v4f.tiling
func.func @main(%x: tensor<1x128x28x28xf32>) -> (tensor<1x128x28x28xf32>, tensor<1x128x28x28xf32>) {
  %we = arith.constant dense<0.01> : tensor<512x128x1x1xf32>
  %wr = arith.constant dense<0.01> : tensor<128x512x1x1xf32>
  %0 = v4f.dispatch -> tensor<1x512x28x28xf32> {
    %t0 = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
         : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x28x28xf32>
    v4f.dispatch_return %t0 : tensor<1x512x28x28xf32>
  }
  %1 = v4f.dispatch -> tensor<1x128x28x28xf32> attributes {v4f.placement = "cuda"} {
    %r = v4f.conv %0, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
         : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
    v4f.dispatch_return %r : tensor<1x128x28x28xf32>
  }
  %2 = v4f.dispatch -> tensor<1x512x28x28xf32> {
    %t2 = v4f.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
         : (tensor<1x128x28x28xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x28x28xf32>
    v4f.dispatch_return %t2 : tensor<1x512x28x28xf32>
  }
  %3 = v4f.dispatch -> tensor<1x128x28x28xf32> {
    %r2 = v4f.conv %2, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
         : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
    v4f.dispatch_return %r2 : tensor<1x128x28x28xf32>
  }
  return %1, %3 : tensor<1x128x28x28xf32>, tensor<1x128x28x28xf32>
}
