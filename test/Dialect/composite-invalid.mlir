// RUN: v4f-opt %s -split-input-file -verify-diagnostics

func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{contraction dims differ: 8 vs 7}}
  %0 = v4f.gemm %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @gemm_bad_c(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<3xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{C is not broadcastable to [M, N]}}
  %0 = v4f.gemm %a, %b, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<3xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @gemm_wrong_result(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = v4f.gemm %a, %b {trans_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = v4f.gelu %x {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @quantize_to_float(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{result element type must be a 2/4/8/16-bit integer or float8, got 'f32'}}
  %0 = v4f.quantize %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @quantize_zero_point_type(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xi8> {
  // expected-error @+1 {{zero point must have the result's element type}}
  %0 = v4f.quantize %x, %s zero_point(%z) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @quantize_per_axis_length(%x: tensor<2x3xf32>, %s: tensor<4xf32>) -> tensor<2x3xi8> {
  // expected-error @+1 {{scale has 4 elements but the input has 3 along axis 1}}
  %0 = v4f.quantize %x, %s {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @quantize_axis_out_of_range(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xi8> {
  // expected-error @+1 {{axis is out of range for the rank-2 input (scale is not a single value)}}
  %0 = v4f.quantize %x, %s {axis = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @quantize_blocks(%x: tensor<2x6xf32>, %s: tensor<2x2xf32>) -> tensor<2x6xi8> {
  // expected-error @+1 {{blocked quantization: scale has 2 blocks along axis 1, expected ceil(6 / 2) = 3}}
  %0 = v4f.quantize %x, %s {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x6xf32>, tensor<2x2xf32>) -> tensor<2x6xi8>
  return %0 : tensor<2x6xi8>
}

// -----

func.func @dequantize_shape(%x: tensor<2x3xi8>, %s: tensor<f32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result must have the input's shape}}
  %0 = v4f.dequantize %x, %s : (tensor<2x3xi8>, tensor<f32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @dequantize_to_int(%x: tensor<2x3xi8>, %s: tensor<f32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{result element type must be a float type, got 'i32'}}
  %0 = v4f.dequantize %x, %s : (tensor<2x3xi8>, tensor<f32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @matmul_integer_16bit(%a: tensor<4x8xi16>, %b: tensor<8x5xi8>) -> tensor<4x5xi32> {
  // expected-error @+1 {{a must be int8 or uint8, got 'i16'}}
  %0 = v4f.matmul_integer %a, %b : (tensor<4x8xi16>, tensor<8x5xi8>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// -----

func.func @matmul_integer_shape(%a: tensor<4x8xi8>, %b: tensor<8x5xi8>) -> tensor<4x6xi32> {
  // expected-error @+1 {{result shape must be 'tensor<4x5xi32>'}}
  %0 = v4f.matmul_integer %a, %b : (tensor<4x8xi8>, tensor<8x5xi8>) -> tensor<4x6xi32>
  return %0 : tensor<4x6xi32>
}

// -----

func.func @matmul_integer_zero_point(%a: tensor<4x8xi8>, %b: tensor<8x5xi8>, %za: tensor<3xi8>) -> tensor<4x5xi32> {
  // expected-error @+1 {{a_zero_point of type 'tensor<3xi8>' does not broadcast where it is used}}
  %0 = v4f.matmul_integer %a, %b a_zero_point(%za) : (tensor<4x8xi8>, tensor<8x5xi8>, tensor<3xi8>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// -----

func.func @qlinear_matmul_result_type(%a: tensor<2x4xui8>, %s: tensor<f32>, %z: tensor<ui8>, %b: tensor<4x3xui8>) -> tensor<2x3xi8> {
  // expected-error @+1 {{result element type must be 'ui8'}}
  %0 = v4f.qlinear_matmul %a, %s, %z, %b, %s, %z, %s, %z : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @qlinear_matmul_scale_type(%a: tensor<2x4xui8>, %s: tensor<f32>, %si: tensor<i32>, %z: tensor<ui8>, %b: tensor<4x3xui8>) -> tensor<2x3xui8> {
  // expected-error @+1 {{b_scale must be a float type, got 'i32'}}
  %0 = v4f.qlinear_matmul %a, %s, %z, %b, %si, %z, %s : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<i32>, tensor<ui8>, tensor<f32>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

func.func @conv_integer_shape(%x: tensor<1x2x5x5xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x5x5xi32> {
  // expected-error @+1 {{result shape must be 'tensor<1x3x3x3xi32>'}}
  %0 = v4f.conv_integer %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}

// -----

func.func @conv_integer_group(%x: tensor<1x4x5x5xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x3x3xi32> {
  // expected-error @+1 {{group 2 does not divide the output channels}}
  %0 = v4f.conv_integer %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x4x5x5xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x3x3xi32>
  return %0 : tensor<1x3x3x3xi32>
}

// -----

func.func @conv_integer_x_zero_point(%x: tensor<1x2x5x5xi8>, %w: tensor<3x2x3x3xi8>, %zx: tensor<2xi8>) -> tensor<1x3x3x3xi32> {
  // expected-error @+1 {{x_zero_point must be a single value}}
  %0 = v4f.conv_integer %x, %w x_zero_point(%zx) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>, tensor<2xi8>) -> tensor<1x3x3x3xi32>
  return %0 : tensor<1x3x3x3xi32>
}

// -----

func.func @qlinear_conv_bias(%x: tensor<1x2x5x5xi8>, %s: tensor<f32>, %z: tensor<i8>, %w: tensor<3x2x3x3xi8>, %bias: tensor<3xf32>) -> tensor<1x3x3x3xi8> {
  // expected-error @+1 {{bias must be an int32 tensor of shape [3]}}
  %0 = v4f.qlinear_conv %x, %s, %z, %w, %s, %z, %s, %z bias(%bias) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x5x5xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<3xf32>) -> tensor<1x3x3x3xi8>
  return %0 : tensor<1x3x3x3xi8>
}

// -----

func.func @qlinear_conv_w_scale(%x: tensor<1x2x5x5xi8>, %s: tensor<f32>, %z: tensor<i8>, %w: tensor<3x2x3x3xi8>, %sw: tensor<2xf32>) -> tensor<1x3x3x3xi8> {
  // expected-error @+1 {{w_scale must be a single value or have shape [3]}}
  %0 = v4f.qlinear_conv %x, %s, %z, %w, %sw, %z, %s, %z {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x5x5xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<2xf32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x3x3x3xi8>
  return %0 : tensor<1x3x3x3xi8>
}

// -----

func.func @einsum_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result type must be 'tensor<2x4xf32>'}}
  %0 = v4f.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{Einsum dims labelled alike have different sizes}}
  %0 = v4f.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @einsum_terms(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{the equation has 2 input term(s) but the node has 1 input(s)}}
  %0 = v4f.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @einsum_integer(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{inputs must have a float element type, got 'i32'}}
  %0 = v4f.einsum %a {equation = "ij->ij"} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @attention_heads(%q: tensor<1x3x12xf32>, %k: tensor<1x3x8xf32>) -> tensor<1x3x12xf32> {
  // expected-error @+1 {{q_num_heads (3) must be a multiple of kv_num_heads (2)}}
  %y, %pk, %pv, %qk = v4f.attention %q, %k, %k {q_num_heads = 3 : i64, kv_num_heads = 2 : i64, scale = 1.0 : f32}
      : (tensor<1x3x12xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>) -> (tensor<1x3x12xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3x3x3xf32>)
  return %y : tensor<1x3x12xf32>
}

// -----

func.func @attention_result(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x5xf32> {
  // expected-error @+1 {{output must be 'tensor<1x2x3x4xf32>'}}
  %y, %pk, %pv, %qk = v4f.attention %q, %q, %q {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, scale = 1.0 : f32}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x5xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>)
  return %y : tensor<1x2x3x5xf32>
}

// -----

func.func @attention_mask(%q: tensor<1x2x3x4xf32>, %m: tensor<3x5xi1>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{attn_mask's last dim (5) exceeds the total sequence length (3)}}
  %y, %pk, %pv, %qk = v4f.attention %q, %q, %q mask(%m) {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, scale = 1.0 : f32}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x5xi1>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>)
  return %y : tensor<1x2x3x4xf32>
}

// -----

func.func @recurrent_w(%x: tensor<5x2x4xf32>, %w: tensor<1x3x5xf32>, %r: tensor<1x3x3xf32>) -> tensor<5x1x2x3xf32> {
  // expected-error @+1 {{W must be [1, 3, 4]}}
  %y, %yh = v4f.recurrent %x, %w, %r {cell = "rnn", direction = "forward", hidden_size = 3 : i64, activations = ["tanh"],
      activation_alpha = array<f32: 0.0>, activation_beta = array<f32: 0.0>}
      : (tensor<5x2x4xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  return %y : tensor<5x1x2x3xf32>
}

// -----

func.func @recurrent_activation(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) -> tensor<5x1x2x3xf32> {
  // expected-error @+1 {{unknown activation 'gelu'}}
  %y, %yh = v4f.recurrent %x, %w, %r {cell = "rnn", direction = "forward", hidden_size = 3 : i64, activations = ["gelu"],
      activation_alpha = array<f32: 0.0>, activation_beta = array<f32: 0.0>}
      : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  return %y : tensor<5x1x2x3xf32>
}

// -----

func.func @recurrent_yc(%x: tensor<5x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>) -> tensor<5x1x2x3xf32> {
  // expected-error @+1 {{only an LSTM has a y_c result}}
  %y, %yh, %yc = v4f.recurrent %x, %w, %r {cell = "gru", direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"],
      activation_alpha = array<f32: 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  return %y : tensor<5x1x2x3xf32>
}

// -----

// The attributes are signed: -1 (no window) is valid, -2 is not.
func.func @attention_window(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{window sizes must be -1 or non-negative}}
  %y, %pk, %pv, %qk = v4f.attention %q, %q, %q {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, scale = 1.0 : f32, left_window_size = -1 : i64, right_window_size = -2 : i64}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>)
  return %y : tensor<1x2x3x4xf32>
}
