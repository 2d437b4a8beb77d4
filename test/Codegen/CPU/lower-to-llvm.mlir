// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-build-plan,v4f-cpu-lower-to-llvm)" | FileCheck %s

// The whole CPU pipeline after the graph passes, as v4fc runs it: the
// softmax kernel ends in the LLVM dialect with its exp approximated by
// polynomials (no libm call), taking the ABI v3 dispatch state.
// CHECK: llvm.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32
// CHECK-NOT: llvm.call
// CHECK: llvm.return
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = v4f.softmax %x {axis = 1 : i64} : tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
