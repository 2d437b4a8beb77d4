// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-fuse-attention-regions))" -split-input-file | FileCheck %s

// Regions placed on the GPU merge only when all of the attention core is
// there, within the GPU kernel's head-dim limit (128: its key and value
// tiles live in shared memory); a transpose placed on the other side stays
// outside.

// The core on the GPU, the query's transpose on the CPU: the core and the
// key's transpose merge into one GPU region.
// CHECK-LABEL: func.func @transpose_elsewhere
// CHECK: v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cpu"} {
// CHECK-NEXT: v4f.transpose %arg0
// CHECK: v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.fused_kernel = "attention", v4f.placement = "cuda"} {
// CHECK-NEXT: v4f.transpose %arg1
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.softmax
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.dispatch_return
// CHECK-NOT: v4f.dispatch
func.func @transpose_elsewhere(%q: tensor<1x8x2x8xf32>, %k: tensor<1x8x2x8xf32>, %v: tensor<1x2x8x8xf32>)
    -> tensor<1x2x8x8xf32> {
  %0 = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cpu"} {
    %t = v4f.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x8xf32>) -> tensor<1x2x8x8xf32>
    v4f.dispatch_return %t : tensor<1x2x8x8xf32>
  }
  %1 = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %t = v4f.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x8xf32>) -> tensor<1x2x8x8xf32>
    v4f.dispatch_return %t : tensor<1x2x8x8xf32>
  }
  %2 = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %s = v4f.matmul %0, %1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
    v4f.dispatch_return %s : tensor<1x2x8x8xf32>
  }
  %3 = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %p = v4f.softmax %2 {axis = 3 : i64} : tensor<1x2x8x8xf32>
    v4f.dispatch_return %p : tensor<1x2x8x8xf32>
  }
  %4 = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %o = v4f.matmul %3, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
    v4f.dispatch_return %o : tensor<1x2x8x8xf32>
  }
  return %4 : tensor<1x2x8x8xf32>
}

// -----

// The scores' matmul on the CPU, the softmax and the value matmul on the
// GPU: nothing merges.
// CHECK-LABEL: func.func @core_split
// CHECK-COUNT-3: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @core_split(%q: tensor<2x8x8xf32>, %kt: tensor<2x8x8xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cpu"} {
    %s = v4f.matmul %q, %kt : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    v4f.dispatch_return %s : tensor<2x8x8xf32>
  }
  %1 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %p = v4f.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
    v4f.dispatch_return %p : tensor<2x8x8xf32>
  }
  %2 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %o = v4f.matmul %1, %v : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    v4f.dispatch_return %o : tensor<2x8x8xf32>
  }
  return %2 : tensor<2x8x8xf32>
}

// -----

// Head dim 160 on the GPU: over the kernel's 128, not merged; the same
// regions on the CPU merge.
// CHECK-LABEL: func.func @wide_heads
// CHECK-COUNT-3: v4f.dispatch -> {{.*}} "cuda"
// CHECK: v4f.dispatch -> tensor<2x8x160xf32> attributes {v4f.fused_kernel = "attention", v4f.placement = "cpu"} {
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.softmax
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.dispatch_return
func.func @wide_heads(%q: tensor<2x8x160xf32>, %kt: tensor<2x160x8xf32>, %v: tensor<2x8x160xf32>)
    -> (tensor<2x8x160xf32>, tensor<2x8x160xf32>) {
  %0 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %s = v4f.matmul %q, %kt : (tensor<2x8x160xf32>, tensor<2x160x8xf32>) -> tensor<2x8x8xf32>
    v4f.dispatch_return %s : tensor<2x8x8xf32>
  }
  %1 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cuda"} {
    %p = v4f.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
    v4f.dispatch_return %p : tensor<2x8x8xf32>
  }
  %2 = v4f.dispatch -> tensor<2x8x160xf32> attributes {v4f.placement = "cuda"} {
    %o = v4f.matmul %1, %v : (tensor<2x8x8xf32>, tensor<2x8x160xf32>) -> tensor<2x8x160xf32>
    v4f.dispatch_return %o : tensor<2x8x160xf32>
  }
  %3 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cpu"} {
    %s = v4f.matmul %q, %kt : (tensor<2x8x160xf32>, tensor<2x160x8xf32>) -> tensor<2x8x8xf32>
    v4f.dispatch_return %s : tensor<2x8x8xf32>
  }
  %4 = v4f.dispatch -> tensor<2x8x8xf32> attributes {v4f.placement = "cpu"} {
    %p = v4f.softmax %3 {axis = 2 : i64} : tensor<2x8x8xf32>
    v4f.dispatch_return %p : tensor<2x8x8xf32>
  }
  %5 = v4f.dispatch -> tensor<2x8x160xf32> attributes {v4f.placement = "cpu"} {
    %o = v4f.matmul %4, %v : (tensor<2x8x8xf32>, tensor<2x8x160xf32>) -> tensor<2x8x160xf32>
    v4f.dispatch_return %o : tensor<2x8x160xf32>
  }
  return %2, %5 : tensor<2x8x160xf32>, tensor<2x8x160xf32>
}
