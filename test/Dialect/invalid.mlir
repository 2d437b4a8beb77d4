// RUN: v4f-opt %s -split-input-file -verify-diagnostics

func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = v4f.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @wrong_inferred_type(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = v4f.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @clip_min_above_max(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{min must not exceed max}}
  %0 = v4f.clip %x {min = 2.0 : f32, max = 1.0 : f32} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{strides must be positive}}
  %0 = "v4f.conv"(%x, %w) <{strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x5x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input channels (5) != weight channels * groups (3)}}
  %0 = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x5x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32> {
  // expected-error @+1 {{output channels (5) not divisible by groups (2)}}
  %0 = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64}
       : (tensor<1x6x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
  return %0 : tensor<1x5x6x6xf32>
}

// -----

func.func @conv_empty_output(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x0x0xf32> {
  // expected-error @+1 {{pads, kernel and strides give an empty output}}
  %0 = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x0x0xf32>
  return %0 : tensor<1x4x0x0xf32>
}

// -----

func.func @conv_unknown_activation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{unknown activation 'swish'}}
  %0 = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, activation = "swish"}
       : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{contraction dims differ: 8 vs 7}}
  %0 = v4f.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @pool_pad_too_big(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32> {
  // expected-error @+1 {{pads must be smaller than the kernel}}
  %0 = v4f.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
         pads = array<i64: 2, 2, 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

func.func @reduce_unsorted(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = v4f.reduce_mean %x {axes = array<i64: 2, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = v4f.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale and bias must broadcast to the normalized dims}}
  %0 = v4f.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{element count changes from 6 to 7}}
  %0 = v4f.reshape %x {dim_sources = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @reshape_two_free(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{at most one result dim may be inferred}}
  %0 = v4f.reshape %x {dim_sources = array<i64: -1, -1>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @transpose_not_perm(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{perm must be a permutation}}
  %0 = v4f.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @batch_norm_params(%x: tensor<1x4x2x2xf32>, %s: tensor<3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{scale, bias, mean and variance must have shape [C]}}
  %0 = v4f.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f32} : (tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

func.func @elementwise_arg_type(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{body argument 0 must have type 'i8'}}
  %0 = v4f.elementwise %a : (tensor<4xui8>) -> tensor<4xui8> {
  ^bb0(%x: ui8):
    v4f.yield %x : ui8
  }
  return %0 : tensor<4xui8>
}

// -----

func.func @elementwise_yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must yield 'f32'}}
  %0 = v4f.elementwise %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %c = arith.constant 1 : i32
    v4f.yield %c : i32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @elementwise_shape(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input shapes are not broadcast-compatible}}
  %0 = v4f.elementwise %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    v4f.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_kind(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{unknown reduction kind 'median'}}
  %0 = v4f.reduce %x {kind = "median", axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4xf32>, %a: tensor<1xi64>, %b: tensor<2xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{starts and ends must have the same length}}
  %0 = v4f.slice %x, %a, %b : (tensor<4xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @shape_range(%x: tensor<4x2xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{requires 0 <= start <= end <= rank}}
  %0 = v4f.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<4x2xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @softmax_mode(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{mode must be softmax, log_softmax or hardmax}}
  %0 = v4f.softmax %x {axis = 1 : i64, mode = "sparsemax"} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_elements_bad_reduction(%d: tensor<4x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min}}
  %0 = v4f.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = "sub"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_elements_updates_shape(%d: tensor<4x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{updates must have the shape of indices}}
  %0 = v4f.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_elements_indices_too_wide(%d: tensor<4x4xf32>, %i: tensor<2x5xi64>, %u: tensor<2x5xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{indices dim 1 exceeds the data dim}}
  %0 = v4f.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_nd_updates_shape(%d: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{updates must have shape indices.shape[:-1] + data.shape[q:]}}
  %0 = v4f.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_nd_tuple_too_long(%d: tensor<4x4xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{the index tuple length must be in [1, rank(data)]}}
  %0 = v4f.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @gather_nd_batch_dims(%d: tensor<2x4xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{batch dims of data and indices must agree}}
  %0 = v4f.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x4xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_nd_result_shape(%d: tensor<4x4xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{result must have shape indices.shape[:-1] + data.shape[batch_dims + q:]}}
  %0 = v4f.gather_nd %d, %i : (tensor<4x4xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @top_k_too_many(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> tensor<3x5xf32> {
  // expected-error @+1 {{k exceeds the axis length}}
  %v, %i = v4f.top_k %x, %k {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return %v : tensor<3x5xf32>
}

// -----

func.func @top_k_k_shape(%x: tensor<3x4xf32>, %k: tensor<2xi64>) -> tensor<3x?xf32> {
  // expected-error @+1 {{k must hold one element}}
  %v, %i = v4f.top_k %x, %k {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return %v : tensor<3x?xf32>
}

// -----

func.func @unique_axis_range(%x: tensor<2x3xf32>) -> tensor<?xi64> {
  // expected-error @+1 {{axis out of range}}
  %y, %i, %inv, %n = v4f.unique %x {axis = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
  return %i : tensor<?xi64>
}

// -----

func.func @unique_inverse_length(%x: tensor<6xf32>) -> tensor<?xi64> {
  // expected-error @+1 {{inverse_indices must have one element per input element (or slice)}}
  %y, %i, %inv, %n = v4f.unique %x : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<5xi64>, tensor<?xi64>)
  return %i : tensor<?xi64>
}

// -----

func.func @unique_float8(%x: tensor<6xf8E4M3FN>) -> tensor<?xi64> {
  // expected-error @+1 {{input element type must be a computable integer or float type (or bf16)}}
  %y, %i, %inv, %n = v4f.unique %x : (tensor<6xf8E4M3FN>) -> (tensor<?xf8E4M3FN>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  return %i : tensor<?xi64>
}

// -----

func.func @nms_box_shape(%boxes: tensor<1x6x3xf32>, %scores: tensor<1x1x6xf32>, %max: tensor<1xi64>, %t: tensor<1xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{boxes must be [batches, boxes, 4]}}
  %s = v4f.non_max_suppression %boxes, %scores, %max, %t : (tensor<1x6x3xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  return %s : tensor<?x3xi64>
}

// -----

func.func @nms_box_count(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x5xf32>, %max: tensor<1xi64>, %t: tensor<1xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{boxes and scores disagree on the batch or box count}}
  %s = v4f.non_max_suppression %boxes, %scores, %max, %t : (tensor<1x6x4xf32>, tensor<1x1x5xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  return %s : tensor<?x3xi64>
}

// -----

func.func @nms_threshold_shape(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>, %max: tensor<1xi64>, %t: tensor<2xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{max_output_boxes_per_class and the thresholds must hold one element}}
  %s = v4f.non_max_suppression %boxes, %scores, %max, %t : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<2xf32>) -> tensor<?x3xi64>
  return %s : tensor<?x3xi64>
}

// -----

func.func @select_branch_cond(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{cond must have exactly one element}}
  %0 = v4f.select_branch %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<3xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @select_branch_rank(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<1x2xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{then_value, else_value and result must have one rank}}
  %0 = v4f.select_branch %c, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<1x2xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @select_branch_static(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result dim 0 is 2 but a branch does not give that static size}}
  %0 = v4f.select_branch %c, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @select_branch_type(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{then_value, else_value and result must have one element type}}
  %0 = v4f.select_branch %c, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bad_int8_result(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xi8> {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  // expected-error @+1 {{the result is int8 exactly when out_scale is set}}
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xi8>
  return %a : tensor<1x4x4x4xi8>
}

// -----

func.func @int8_pool_avg(%x: tensor<1x4x4x4xi8>) -> tensor<1x4x2x2xi8> {
  // expected-error @+1 {{pools float32 values only}}
  %p = v4f.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x2x2xi8>
  return %p : tensor<1x4x2x2xi8>
}

// -----

func.func @qconv_out_zero_point(%x: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8> {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  // expected-error @+1 {{out_zero_point must be in [-128, 127]}}
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32, out_scale = 0.5 : f32, out_zero_point = 200 : i32} : (tensor<1x4x4x4xi8>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xi8>
  return %a : tensor<1x4x4x4xi8>
}

// -----

func.func @integer_matmul_k(%a: tensor<3x4xui8>) -> tensor<3x2xi32> {
  %w = arith.constant dense<1> : tensor<5x2xi8>
  // expected-error @+1 {{contraction dims differ: 4 vs 5}}
  %y = v4f.integer_matmul %a, %w : (tensor<3x4xui8>, tensor<5x2xi8>) -> tensor<3x2xi32>
  return %y : tensor<3x2xi32>
}

// -----

func.func @integer_matmul_zp(%a: tensor<3x4xui8>, %z: tensor<2xui8>) -> tensor<3x2xi32> {
  %w = arith.constant dense<1> : tensor<4x2xi8>
  // expected-error @+1 {{lhs_zero_point must be one value of lhs's element type}}
  %y = v4f.integer_matmul %a, %w lhs_zero_point(%z) : (tensor<3x4xui8>, tensor<4x2xi8>, tensor<2xui8>) -> tensor<3x2xi32>
  return %y : tensor<3x2xi32>
}

// -----

func.func @softmax_mask_axis(%x: tensor<2x3x4xf32>, %m: tensor<1x3x1xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{a scale, mask or nan_to_zero needs mode softmax along the last axis}}
  %0 = v4f.softmax %x mask(%m : tensor<1x3x1xf32>) {axis = 1 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @softmax_nan_to_zero_mode(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{a scale, mask or nan_to_zero needs mode softmax along the last axis}}
  %0 = v4f.softmax %x {axis = 2 : i64, mode = "log_softmax", nan_to_zero = true} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @softmax_mask_shape(%x: tensor<2x3x4xf32>, %m: tensor<1x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{mask dim 5 does not broadcast to 3}}
  %0 = v4f.softmax %x mask(%m : tensor<1x5x4xf32>) {axis = 2 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
