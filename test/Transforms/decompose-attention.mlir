// RUN: v4f-opt %s -split-input-file -v4f-decompose-attention | FileCheck %s

// 3-D grouped-query attention with a KV cache: heads split by reshape /
// transpose, the past keys concatenated in front (also the present_key
// result), 4 query heads against 2 broadcast KV heads through a 5-D view,
// and the causal mask (offset by the past length 5) evaluated to a constant
// bias. A causal row always attends key 0: no empty-row guard.
// CHECK-LABEL: func @gqa_causal_cache
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x4xf32>) -> tensor<2x4x3x4xf32>
// CHECK: %[[PK:.*]] = v4f.concat %arg2, %{{.*}} {axis = 2 : i64} : (tensor<2x2x5x4xf32>, tensor<2x2x3x4xf32>) -> tensor<2x2x8x4xf32>
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<2x2x2x3x4xf32>, tensor<2x2x1x4x8xf32>) -> tensor<2x2x2x3x8xf32>
// CHECK: %[[CAUSAL:.*]] = arith.constant dense<{{.*}}> : tensor<3x8xf32>
// CHECK: %[[S:.*]] = v4f.add %{{.*}}, %[[CAUSAL]] : (tensor<2x4x3x8xf32>, tensor<3x8xf32>) -> tensor<2x4x3x8xf32>
// CHECK: v4f.softmax %[[S]] {axis = 3 : i64}
// CHECK-NOT: v4f.reduce
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<2x2x2x3x8xf32>, tensor<2x2x1x8x4xf32>) -> tensor<2x2x2x3x4xf32>
// CHECK: %[[Y:.*]] = v4f.reshape %{{.*}} : (tensor<2x3x4x4xf32>) -> tensor<2x3x16xf32>
// CHECK-NOT: v4f.attention
// CHECK: return %[[Y]], %[[PK]]
func.func @gqa_causal_cache(%q: tensor<2x3x16xf32>, %k: tensor<2x3x8xf32>, %pk: tensor<2x2x5x4xf32>)
    -> (tensor<2x3x16xf32>, tensor<2x2x8x4xf32>) {
  %y, %pk2, %pv2, %qk = v4f.attention %q, %k, %k past(%pk, %pk)
      {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.5 : f32, is_causal = true}
      : (tensor<2x3x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>)
      -> (tensor<2x3x16xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x4x3x8xf32>)
  return %y, %pk2 : tensor<2x3x16xf32>, tensor<2x2x8x4xf32>
}

// -----

// 4-D, softcap, a short boolean mask padded with false, nonpad_kv_seqlen and
// the post-softmax qk_matmul_output (mode 3) with the fully-masked-row guard.
// CHECK-LABEL: func @softcap_mask_nonpad
// CHECK: %[[SC:.*]] = v4f.elementwise %{{.*}} : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
// CHECK: math.tanh
// CHECK: %[[M:.*]] = v4f.concat %arg2, %{{.*}} {axis = 1 : i64} : (tensor<4x4xi1>, tensor<4x2xi1>) -> tensor<4x6xi1>
// CHECK: %[[B:.*]] = v4f.elementwise %[[M]], %{{.*}}, %{{.*}} : (tensor<4x6xi1>, tensor<1x6xi64>, tensor<1x1x1x1xi64>) -> tensor<1x1x4x6xf32>
// CHECK: arith.cmpi slt
// CHECK: arith.andi
// CHECK: v4f.add %[[SC]], %[[B]]
// CHECK: %[[P:.*]] = v4f.softmax
// CHECK: %[[ROW:.*]] = v4f.reduce %[[B]] {axes = array<i64: 3>, keepdims = true, kind = "max"}
// CHECK: %[[G:.*]] = v4f.elementwise %[[P]], %[[ROW]]
// CHECK: %[[Y:.*]] = v4f.matmul %[[G]], %arg1
// CHECK: return %[[Y]], %[[G]]
func.func @softcap_mask_nonpad(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<4x4xi1>, %n: tensor<1xi64>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>) {
  %y, %pk, %pv, %qk = v4f.attention %q, %k, %k mask(%m) nonpad_kv_seqlen(%n)
      {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, scale = 1.0 : f32, softcap = 2.0 : f32, qk_matmul_output_mode = 3 : i64}
      : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x4xi1>, tensor<1xi64>)
      -> (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x4x6xf32>)
  return %y, %qk : tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>
}

// -----

// float16 is computed in float32: widened on entry, the output narrowed.
// CHECK-LABEL: func @float16
// CHECK: v4f.elementwise %arg0 : (tensor<1x1x2x4xf16>) -> tensor<1x1x2x4xf32>
// CHECK: arith.extf
// CHECK: v4f.softmax
// CHECK: %[[Y:.*]] = v4f.elementwise %{{.*}} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf16>
// CHECK: arith.truncf
// CHECK: return %[[Y]]
func.func @float16(%q: tensor<1x1x2x4xf16>) -> tensor<1x1x2x4xf16> {
  %y, %pk, %pv, %qk = v4f.attention %q, %q, %q {q_num_heads = 1 : i64, kv_num_heads = 1 : i64, scale = 0.5 : f32}
      : (tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>)
      -> (tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, tensor<1x1x2x2xf16>)
  return %y : tensor<1x1x2x4xf16>
}

// -----

// Dynamic batch, query and past lengths: the heads are split with the
// dynamic dims carried over, and the causal positions come from v4f.range
// over the lengths read at run time (query positions offset by the past).
// CHECK-LABEL: func @dynamic_causal_cache
// CHECK: v4f.reshape %arg0 {dim_sources = array<i64: 0, 1, -1, -1>} : (tensor<?x?x16xf32>) -> tensor<?x?x4x4xf32>
// CHECK: v4f.concat %arg2, %{{.*}} {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
// CHECK: v4f.shape %arg0 {end = 2 : i64, start = 1 : i64}
// CHECK: v4f.shape %arg2 {end = 3 : i64, start = 2 : i64}
// CHECK: v4f.range {{.*}} -> tensor<?xi64>
// CHECK: arith.addi
// CHECK: v4f.range {{.*}} -> tensor<?xi64>
// CHECK: arith.cmpi sle
// CHECK: v4f.softmax
// CHECK-NOT: v4f.attention
func.func @dynamic_causal_cache(%q: tensor<?x?x16xf32>, %k: tensor<?x?x8xf32>, %pk: tensor<?x2x?x4xf32>)
    -> tensor<?x?x16xf32> {
  %y, %pk2, %pv2, %qk = v4f.attention %q, %k, %k past(%pk, %pk)
      {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.5 : f32, is_causal = true}
      : (tensor<?x?x16xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
      -> (tensor<?x?x16xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x4x?x?xf32>)
  return %y : tensor<?x?x16xf32>
}

// -----

// 4-D with every dim known only at run time: the heads and head sizes are
// read with v4f.shape, the group count Hq / Hkv is computed for the plan,
// the views are run-time reshapes, the default scale (written as 0) is
// head_size^(-1/4) on Q and K, and the mask is padded to the key length by
// a run-time pad.
// CHECK-LABEL: func @runtime_heads
// CHECK-DAG: %[[HQ:.*]] = v4f.shape %arg0 {end = 2 : i64, start = 1 : i64}
// CHECK-DAG: %[[HKV:.*]] = v4f.shape %arg1 {end = 2 : i64, start = 1 : i64}
// CHECK: %[[REPS:.*]] = v4f.elementwise %[[HQ]], %[[HKV]]
// CHECK: arith.divsi
// CHECK: math.sqrt
// CHECK: %[[SHAPE:.*]] = v4f.concat %{{.*}}, %[[HKV]], %[[REPS]], %{{.*}}, %{{.*}} {axis = 0 : i64}
// CHECK: v4f.reshape %{{.*}} shape(%[[SHAPE]]) {allowzero = true
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<?x?x?x?x?xf32>, tensor<?x?x1x?x?xf32>) -> tensor<?x?x?x?x?xf32>
// CHECK: v4f.pad %arg2, %{{.*}} value(%{{.*}}) axes(%{{.*}}) {mode = "constant"}
// CHECK: v4f.softmax
// CHECK-NOT: v4f.attention
func.func @runtime_heads(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %m: tensor<?x?xf32>)
    -> tensor<?x?x?x?xf32> {
  %y, %pk, %pv, %qk = v4f.attention %q, %k, %k mask(%m)
      {q_num_heads = 0 : i64, kv_num_heads = 0 : i64, scale = 0.0 : f32}
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  return %y : tensor<?x?x?x?xf32>
}
