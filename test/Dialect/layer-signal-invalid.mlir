// RUN: v4f-opt %s -split-input-file -verify-diagnostics

func.func @depth_space_not_multiple(%x: tensor<1x6x3x3xf32>) -> tensor<1x1x6x6xf32> {
  // expected-error @+1 {{input dim 1 is not a multiple of the block}}
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = true} : tensor<1x6x3x3xf32> -> tensor<1x1x6x6xf32>
  return %0 : tensor<1x1x6x6xf32>
}

// -----

func.func @depth_space_wrong_result(%x: tensor<1x8x4x4xf32>) -> tensor<1x32x2x3xf32> {
  // expected-error @+1 {{result dim 3 should be 2}}
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = false} : tensor<1x8x4x4xf32> -> tensor<1x32x2x3xf32>
  return %0 : tensor<1x32x2x3xf32>
}

// -----

func.func @moment_norm_axes(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{axes must be increasing and within the input's rank}}
  %0 = v4f.moment_norm %x {axes = array<i64: 2, 1>, epsilon = 1.0e-05 : f32} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @moment_norm_scale(%x: tensor<1x3x4xf32>, %s: tensor<4xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{scale must hold 3 elements along its first dim}}
  %0 = v4f.moment_norm %x scale(%s) bias(%s) {axes = array<i64: 2>, epsilon = 1.0e-05 : f32} : (tensor<1x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @group_norm_groups(%x: tensor<1x6x4xf32>, %s: tensor<6xf32>) -> tensor<1x6x4xf32> {
  // expected-error @+1 {{num_groups must divide the channel count}}
  %0 = v4f.group_norm %x, %s, %s {num_groups = 4 : i64, epsilon = 1.0e-05 : f32, per_group = false} : (tensor<1x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}

// -----

func.func @lp_norm_p(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{p must be 1 or 2}}
  %0 = v4f.lp_norm %x {axis = 1 : i64, p = 3 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @lrn_size(%x: tensor<1x5x4xf32>) -> tensor<1x5x4xf32> {
  // expected-error @+1 {{size must be positive}}
  %0 = v4f.lrn %x {size = 0 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : tensor<1x5x4xf32>
  return %0 : tensor<1x5x4xf32>
}

// -----

func.func @window_kind(%n: tensor<i32>) -> tensor<?xf32> {
  // expected-error @+1 {{kind must be "hann", "hamming" or "blackman"}}
  %0 = v4f.window %n {kind = "kaiser", periodic = true} : tensor<i32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dft_result(%x: tensor<2x8x1xf32>) -> tensor<2x8x2xf32> {
  // expected-error @+1 {{result shape does not follow from the input}}
  %0 = v4f.dft %x {axis = 1 : i64, length = 8 : i64, inverse = false, onesided = true} : tensor<2x8x1xf32> -> tensor<2x8x2xf32>
  return %0 : tensor<2x8x2xf32>
}

// -----

func.func @dft_axis(%x: tensor<2x8x2xf32>) -> tensor<2x8x2xf32> {
  // expected-error @+1 {{axis must be a dim other than the last}}
  %0 = v4f.dft %x {axis = 2 : i64, length = 2 : i64, inverse = false, onesided = false} : tensor<2x8x2xf32> -> tensor<2x8x2xf32>
  return %0 : tensor<2x8x2xf32>
}

// -----

func.func @rotary_heads(%x: tensor<1x3x8xf32>, %c: tensor<1x3x2xf32>) -> tensor<1x3x8xf32> {
  // expected-error @+1 {{a 3-D input needs num_heads}}
  %0 = v4f.rotary_embedding %x, %c, %c {rotary_dim = 0 : i64, num_heads = 0 : i64, interleaved = false} : (tensor<1x3x8xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @stft_bins(%x: tensor<1x16x1xf32>) -> tensor<1x7x4x2xf32> {
  // expected-error @+1 {{result must be [batch, frames, 3, 2]}}
  %0 = v4f.stft %x {frame_step = 2 : i64, frame_length = 4 : i64, onesided = true} : (tensor<1x16x1xf32>) -> tensor<1x7x4x2xf32>
  return %0 : tensor<1x7x4x2xf32>
}
