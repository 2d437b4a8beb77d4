// RUN: v4f-opt %s -split-input-file -verify-diagnostics

func.func @types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'v4f.dispatch' op yields 1 values whose types differ from its 1 results}}
  %0 = v4f.dispatch -> tensor<4xf32> {
    %1 = v4f.shape %x {start = 0 : i64, end = 1 : i64} : (tensor<4xf32>) -> tensor<1xi64>
    v4f.dispatch_return %1 : tensor<1xi64>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @empty() {
  // expected-error @+1 {{'v4f.dispatch' op has an empty body}}
  v4f.dispatch {
    v4f.dispatch_return
  }
  return
}

// -----

func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = v4f.dispatch -> tensor<4xf32> {
    // expected-error @+1 {{dispatch regions do not nest}}
    %1 = v4f.dispatch -> tensor<4xf32> {
      %2 = v4f.relu %x : tensor<4xf32>
      v4f.dispatch_return %2 : tensor<4xf32>
    }
    v4f.dispatch_return %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
// -----

func.func @fused_kernel_one_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is a fused 'attention' region of fewer than two ops}}
  %0 = v4f.dispatch -> tensor<4xf32> attributes {v4f.fused_kernel = "attention"} {
    %1 = v4f.relu %x : tensor<4xf32>
    v4f.dispatch_return %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fused_kernel_not_a_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has a v4f.fused_kernel that is not a kind name}}
  %0 = v4f.dispatch -> tensor<4xf32> attributes {v4f.fused_kernel = 3 : i64} {
    %1 = v4f.relu %x : tensor<4xf32>
    %2 = v4f.relu %1 : tensor<4xf32>
    v4f.dispatch_return %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
