// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-build-plan)" | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-build-plan)" | FileCheck %s --check-prefix=V4

// An int4 weight-only matmul is one dispatch reading the weight two values
// per byte: L bytes per K step (AVX2: 8) sign-extended to int32 lanes, the
// low nibble by shifting left and back by 28, the high one by an arithmetic
// shift by 4, converted to float and accumulated by FMAs; each group's sum
// is scaled once (rows <= 2) or the weights are scaled per K step (more
// rows). K = 40 with groups of 16 leaves a short last group, N = 20 a column
// edge (masked store), M = 5 a row tile of 4 and a row edge of 1.

// The constants are the packed weight, 2 panels of 16 columns x 40 rows x 8
// bytes = 640, and the scales at the next 64-byte offset, 2 panels x 3 groups
// x 16 floats = 384 bytes: 1024 (the float weight alone would be 3200).
// CHECK: v4f.plan = {{.*}}constant_bytes = 1024 : i64
// CHECK: func.func @v4f_kernel_0({{.*}}v4f.dispatches = ["int4_matmul"]
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.shli %{{.*}} : vector<8xi32>
// CHECK: arith.shrsi %{{.*}} : vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: llvm.intr.masked.store

// V4: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi32>
// V4: vector.fma %{{.*}} : vector<16xf32>
func.func @main(%x: tensor<5x40xf32> {v4f.name = "x"}) -> (tensor<5x20xf32> {v4f.name = "y"}) {
  %w = arith.constant dense<-3> : tensor<40x20xi8>
  %s = arith.constant dense<0.5> : tensor<3x20xf32>
  %y = v4f.int4_matmul %x, %w, %s {group_size = 16 : i64} : (tensor<5x40xf32>, tensor<40x20xi8>, tensor<3x20xf32>) -> tensor<5x20xf32>
  return %y : tensor<5x20xf32>
}
