// RUN: v4f-opt %s -split-input-file -v4f-decompose-depth-space | FileCheck %s

// DepthToSpace, CRD: [N, C', bs, bs, H, W] with the block dims moved next to
// H and W.
// CHECK-LABEL: func @d2s_crd
// CHECK: %[[V:.*]] = v4f.reshape %arg0 {{.*}} -> tensor<1x2x2x2x3x3xf32>
// CHECK: %[[T:.*]] = v4f.transpose %[[V]] {perm = array<i64: 0, 1, 4, 2, 5, 3>} {{.*}} -> tensor<1x2x3x2x3x2xf32>
// CHECK: %[[Y:.*]] = v4f.reshape %[[T]] {{.*}} -> tensor<1x2x6x6xf32>
// CHECK-NOT: v4f.depth_space
// CHECK: return %[[Y]]
func.func @d2s_crd(%x: tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = true, mode = "CRD"} : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// DepthToSpace, DCR (the default): [N, bs, bs, C', H, W].
// CHECK-LABEL: func @d2s_dcr
// CHECK: v4f.reshape %arg0 {{.*}} -> tensor<1x2x2x2x3x3xf32>
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 0, 3, 4, 1, 5, 2>}
// CHECK: v4f.reshape %{{.*}} -> tensor<1x2x6x6xf32>
func.func @d2s_dcr(%x: tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = true} : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// SpaceToDepth on any element type: [N, C, H / bs, bs, W / bs, bs] with the
// block dims moved in front of the channels.
// CHECK-LABEL: func @s2d_dcr
// CHECK: v4f.reshape %arg0 {{.*}} -> tensor<1x2x2x2x3x2xi8>
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 0, 3, 5, 1, 2, 4>}
// CHECK: v4f.reshape %{{.*}} -> tensor<1x8x2x3xi8>
func.func @s2d_dcr(%x: tensor<1x2x4x6xi8>) -> tensor<1x8x2x3xi8> {
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = false} : tensor<1x2x4x6xi8> -> tensor<1x8x2x3xi8>
  return %0 : tensor<1x8x2x3xi8>
}

// -----

// SpaceToDepth, CRD: the block dims after the channels.
// CHECK-LABEL: func @s2d_crd
// CHECK: v4f.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 5, 2, 4>}
func.func @s2d_crd(%x: tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32> {
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = false, mode = "CRD"} : tensor<1x2x4x6xf32> -> tensor<1x8x2x3xf32>
  return %0 : tensor<1x8x2x3xf32>
}
