// RUN: v4f-opt %s -split-input-file -v4f-decompose-recurrent -canonicalize | FileCheck %s

// Bidirectional LSTM with clip and a run-time sequence_lens: per direction
// one matmul projects every step, each step multiplies the state by R^T and
// updates C, then H, in elementwise ops that clip the gate inputs and mask
// steps past the length.
// CHECK-LABEL: func @lstm
// CHECK: %[[LENS:.*]] = v4f.reshape %arg3 {{.*}} : (tensor<2xi32>) -> tensor<2x1xi32>
// CHECK: %[[XW:.*]] = v4f.matmul %arg0, %{{.*}} : (tensor<3x2x4xf32>, tensor<4x12xf32>) -> tensor<3x2x12xf32>
// CHECK: v4f.split %[[XW]] {axis = 0 : i64, sizes = array<i64: 1, 1, 1>}
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x12xf32>) -> tensor<2x12xf32>
// CHECK: %[[G:.*]]:4 = v4f.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 3, 3, 3, 3>}
// CHECK: %[[C:.*]] = v4f.elementwise %[[G]]#0, %[[G]]#2, %[[G]]#3, %{{.*}}, %[[LENS]]
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: math.tanh
// CHECK: arith.cmpi sgt, %{{.*}}, %c0_i32
// CHECK: arith.select
// CHECK: v4f.elementwise %[[G]]#1, %[[C]], %{{.*}}, %[[LENS]]
// CHECK: v4f.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<3x2x2x3xf32>
// CHECK-NOT: v4f.recurrent
func.func @lstm(%x: tensor<3x2x4xf32>, %w: tensor<2x12x4xf32>, %r: tensor<2x12x3xf32>, %lens: tensor<2xi32>)
    -> (tensor<3x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
  %y, %yh, %yc = v4f.recurrent %x, %w, %r sequence_lens(%lens)
      {cell = "lstm", direction = "bidirectional", hidden_size = 3 : i64, clip = 2.0 : f32,
       activations = ["sigmoid", "tanh", "tanh", "sigmoid", "tanh", "tanh"],
       activation_alpha = array<f32: 0.0, 0.0, 0.0, 0.0, 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0, 0.0, 0.0, 0.0, 0.0>}
      : (tensor<3x2x4xf32>, tensor<2x12x4xf32>, tensor<2x12x3xf32>, tensor<2xi32>)
      -> (tensor<3x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>)
  return %y, %yh, %yc : tensor<3x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>
}

// -----

// A constant sequence_lens equal to the sequence length masks nothing; only
// Y_h used: the Y concatenation is dead and removed. Reverse RNN: the last
// step is computed first, with the leaky relu's alpha in its body.
// CHECK-LABEL: func @rnn_full_lens
// CHECK-NOT: arith.cmpi
// CHECK: v4f.elementwise
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK-NOT: v4f.concat
// CHECK: return
func.func @rnn_full_lens(%x: tensor<2x1x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) -> tensor<1x1x3xf32> {
  %lens = arith.constant dense<2> : tensor<1xi64>
  %y, %yh = v4f.recurrent %x, %w, %r sequence_lens(%lens)
      {cell = "rnn", direction = "reverse", hidden_size = 3 : i64, activations = ["leakyrelu"],
       activation_alpha = array<f32: 0.5>, activation_beta = array<f32: 0.0>}
      : (tensor<2x1x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1xi64>) -> (tensor<2x1x1x3xf32>, tensor<1x1x3xf32>)
  return %yh : tensor<1x1x3xf32>
}

// -----

// GRU without linear_before_reset: a second matmul (r * H) x Rh^T per step.
// CHECK-LABEL: func @gru
// CHECK: %[[RH:.*]] = v4f.elementwise
// CHECK: v4f.matmul %[[RH]], %{{.*}} : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
// CHECK-NOT: v4f.recurrent
func.func @gru(%x: tensor<1x1x3xf32>, %w: tensor<1x6x3xf32>, %r: tensor<1x6x2xf32>) -> tensor<1x1x1x2xf32> {
  %y, %yh = v4f.recurrent %x, %w, %r
      {cell = "gru", direction = "forward", hidden_size = 2 : i64, activations = ["sigmoid", "tanh"],
       activation_alpha = array<f32: 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<1x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>)
  return %y : tensor<1x1x1x2xf32>
}

// -----

// A run-time sequence length cannot be unrolled: a float32 layer stays whole
// (the CPU backend runs it as a time-loop kernel).
// CHECK-LABEL: func @dynamic_seq_f32
// CHECK: v4f.recurrent %arg0, %arg1, %arg2 {{.*}} : (tensor<?x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>) -> (tensor<?x1x2x3xf32>, tensor<1x2x3xf32>)
func.func @dynamic_seq_f32(%x: tensor<?x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) -> tensor<?x1x2x3xf32> {
  %y, %yh = v4f.recurrent %x, %w, %r {cell = "rnn", direction = "forward", hidden_size = 3 : i64, activations = ["tanh"],
      activation_alpha = array<f32: 0.0>, activation_beta = array<f32: 0.0>}
      : (tensor<?x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>) -> (tensor<?x1x2x3xf32>, tensor<1x2x3xf32>)
  return %y : tensor<?x1x2x3xf32>
}

// -----

// A float16 layer over a run-time batch stays whole, computed in float32
// between conversions.
// CHECK-LABEL: func @dynamic_batch_f16
// CHECK: v4f.elementwise %arg0 : (tensor<3x?x4xf16>) -> tensor<3x?x4xf32>
// CHECK: arith.extf
// CHECK: %[[Y:.*]], %{{.*}} = v4f.recurrent {{.*}} -> (tensor<3x1x?x3xf32>, tensor<1x?x3xf32>)
// CHECK: v4f.elementwise %[[Y]] : (tensor<3x1x?x3xf32>) -> tensor<3x1x?x3xf16>
// CHECK: arith.truncf
func.func @dynamic_batch_f16(%x: tensor<3x?x4xf16>, %w: tensor<1x9x4xf16>, %r: tensor<1x9x3xf16>) -> tensor<3x1x?x3xf16> {
  %y, %yh = v4f.recurrent %x, %w, %r {cell = "gru", direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"],
      activation_alpha = array<f32: 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<3x?x4xf16>, tensor<1x9x4xf16>, tensor<1x9x3xf16>) -> (tensor<3x1x?x3xf16>, tensor<1x?x3xf16>)
  return %y : tensor<3x1x?x3xf16>
}
