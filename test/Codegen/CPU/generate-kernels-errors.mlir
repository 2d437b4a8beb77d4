// RUN: not v4f-opt %s -split-input-file --v4f-build-plan 2>&1 | FileCheck %s

// Kernel generation refuses work outside dispatch regions and GEMM roots
// without a strategy, naming the pass that was skipped.
// CHECK: 'v4f.relu' op is not inside a v4f.dispatch region (run v4f-form-dispatch-regions before kernel generation)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = v4f.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: 'v4f.matmul' op has no v4f.tiling: run v4f-select-cpu-strategy before kernel generation
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = v4f.dispatch -> tensor<4x4xf32> {
    %1 = v4f.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    v4f.dispatch_return %1 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// A fused kernel kind is looked up in the target's kernel registry: an
// unknown one is refused by name, and a registered kernel refuses a region
// whose ops are not the ones it computes (hand-written IR; the fusion
// passes record the kind with the ops they merge).
// CHECK: 'v4f.dispatch' op is a fused 'winograd' region, which the CPU backend has no kernel for
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = v4f.dispatch -> tensor<4xf32> attributes {v4f.fused_kernel = "winograd"} {
    %1 = v4f.relu %x : tensor<4xf32>
    %2 = v4f.relu %1 : tensor<4xf32>
    v4f.dispatch_return %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// CHECK: 'v4f.dispatch' op is a fused 'attention' region whose ops are not two matmuls around a softmax
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = v4f.dispatch -> tensor<4xf32> attributes {v4f.fused_kernel = "attention"} {
    %1 = v4f.relu %x : tensor<4xf32>
    %2 = v4f.relu %1 : tensor<4xf32>
    v4f.dispatch_return %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// CHECK: 'v4f.dispatch' op is a fused 'channel_scaled_conv' region whose ops are not a mul feeding a conv
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = v4f.dispatch -> tensor<4xf32> attributes {v4f.fused_kernel = "channel_scaled_conv"} {
    %1 = v4f.relu %x : tensor<4xf32>
    %2 = v4f.relu %1 : tensor<4xf32>
    v4f.dispatch_return %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
