// RUN: v4f-opt %s -split-input-file -verify-diagnostics -v4f-decompose-rotary | FileCheck %s

// 4-D input, the first half of each head rotated (rotary_dim 4 of 8): heads
// moved to [batch, seq, heads, size], the rotated part split in halves,
// cos * a - sin * b and sin * a + cos * b, then the untouched features
// appended and the layout restored.
// CHECK-LABEL: func @rotate_half
// CHECK: %[[X:.*]] = v4f.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[C:.*]] = v4f.reshape %arg1 {{.*}} -> tensor<1x3x1x2xf32>
// CHECK: %[[S:.*]] = v4f.reshape %arg2 {{.*}} -> tensor<1x3x1x2xf32>
// CHECK: %[[P:.*]]:2 = v4f.split %[[X]] {axis = 3 : i64, sizes = array<i64: 4, 4>}
// CHECK: %[[H:.*]]:2 = v4f.split %[[P]]#0 {axis = 3 : i64, sizes = array<i64: 2, 2>}
// CHECK: %[[RE:.*]] = v4f.elementwise %[[H]]#0, %[[H]]#1, %[[C]], %[[S]]
// CHECK: arith.subf
// CHECK: %[[IM:.*]] = v4f.elementwise %[[H]]#0, %[[H]]#1, %[[C]], %[[S]]
// CHECK: arith.addf
// CHECK: %[[R:.*]] = v4f.concat %[[RE]], %[[IM]] {axis = 3 : i64}
// CHECK: %[[ALL:.*]] = v4f.concat %[[R]], %[[P]]#1 {axis = 3 : i64}
// CHECK: %[[Y:.*]] = v4f.transpose %[[ALL]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NOT: v4f.rotary_embedding
// CHECK: return %[[Y]]
func.func @rotate_half(%x: tensor<1x2x3x8xf32>, %cos: tensor<1x3x2xf32>, %sin: tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32> {
  %y = v4f.rotary_embedding %x, %cos, %sin {rotary_dim = 4 : i64, num_heads = 0 : i64, interleaved = false} : (tensor<1x2x3x8xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32>
  return %y : tensor<1x2x3x8xf32>
}

// -----

// 3-D input with num_heads, caches gathered by position_ids, interleaved
// pairs (adjacent features) rotated.
// CHECK-LABEL: func @interleaved_positions
// CHECK: v4f.reshape %arg0 {{.*}} -> tensor<1x3x2x4xf32>
// CHECK: v4f.gather %arg1, %arg3 {axis = 0 : i64} {{.*}} -> tensor<1x3x2xf32>
// CHECK: v4f.gather %arg2, %arg3 {axis = 0 : i64}
// CHECK: v4f.split %{{.*}} {axis = 4 : i64, sizes = array<i64: 1, 1>}
// CHECK: v4f.concat %{{.*}}, %{{.*}} {axis = 4 : i64}
// CHECK: %[[Y:.*]] = v4f.reshape %{{.*}} -> tensor<1x3x8xf32>
// CHECK: return %[[Y]]
func.func @interleaved_positions(%x: tensor<1x3x8xf32>, %cos: tensor<16x2xf32>, %sin: tensor<16x2xf32>, %p: tensor<1x3xi64>) -> tensor<1x3x8xf32> {
  %y = v4f.rotary_embedding %x, %cos, %sin positions(%p) {rotary_dim = 0 : i64, num_heads = 2 : i64, interleaved = true} : (tensor<1x3x8xf32>, tensor<16x2xf32>, tensor<16x2xf32>, tensor<1x3xi64>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// Caches of the wrong size are an error on the op, and the pass fails.
func.func @wrong_cache(%x: tensor<1x3x8xf32>, %cos: tensor<1x3x3xf32>) -> tensor<1x3x8xf32> {
  // expected-error @+1 {{'v4f.rotary_embedding' op the caches must give [batch, sequence, rotary_embedding_dim / 2]}}
  %y = v4f.rotary_embedding %x, %cos, %cos {rotary_dim = 0 : i64, num_heads = 2 : i64, interleaved = false} : (tensor<1x3x8xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// Every dim known only at run time, rotary_dim 0 (the whole head): the
// halves are a split whose sizes (head_size / 2 twice) the plan computes,
// and the caches are viewed as [batch, seq, 1, head_size / 2] at run time.
// CHECK-LABEL: func @runtime_dims
// CHECK: v4f.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
// CHECK: arith.divsi
// CHECK: v4f.split %{{.*}} split(%{{.*}}) {axis = 3 : i64
// CHECK: v4f.concat %{{.*}}, %{{.*}} {axis = 3 : i64} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
// CHECK-NOT: v4f.rotary_embedding
func.func @runtime_dims(%x: tensor<?x?x?x?xf32>, %cos: tensor<?x?x?xf32>, %sin: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %y = v4f.rotary_embedding %x, %cos, %sin {rotary_dim = 0 : i64, num_heads = 0 : i64, interleaved = false}
       : (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %y : tensor<?x?x?x?xf32>
}
