// RUN: v4f-opt %s --pass-pipeline='builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cuda})' | FileCheck %s --check-prefix=CUDA
// RUN: v4f-opt %s --pass-pipeline='builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cpu,cuda})' | FileCheck %s --check-prefix=BOTH
// RUN: v4f-opt %s --pass-pipeline='builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cpu})' | FileCheck %s --check-prefix=CPU
// RUN: not v4f-opt %s --pass-pipeline='builtin.module(v4f-assign-placement{targets=tpu})' 2>&1 | FileCheck %s --check-prefix=BAD

// targets=cuda: every region with a GPU kernel goes to the GPU; a region
// with dynamic dims or an op without a GPU kernel stays on the CPU and says
// why. The fused elementwise chain is one region, placed as a whole.
// CUDA: v4f.dispatch {{.*}}v4f.placement = "cuda"
// CUDA-NEXT: v4f.matmul
// CUDA: v4f.dispatch {{.*}}v4f.placement = "cuda"
// CUDA-NEXT: v4f.relu
// CUDA-NEXT: v4f.sigmoid
// CUDA: v4f.dispatch {{.*}}v4f.placement = "cpu", v4f.placement_reason = "top_k: 'v4f.top_k' has no CUDA kernel yet"
// CUDA-NEXT: v4f.top_k
// CUDA: v4f.dispatch {{.*}}v4f.placement = "cpu", v4f.placement_reason = "relu: dynamic dims (CUDA kernels are specialized on static shapes)"
// CUDA-NEXT: v4f.relu

// targets=cpu,cuda: the cost model keeps the 4x5 product (a few hundred
// flops, operands on the host) on the CPU and says so; the 512x512x512
// product pays for its transfers and goes to the GPU, and so does the
// add that reads its result there (its other operand is on the GPU
// already: the product's transfer brought it).
// BOTH: v4f.dispatch {{.*}}v4f.placement = "cpu", v4f.placement_reason = "cost model: {{.*}} us on the CPU vs {{.*}} us on the GPU with its transfers"
// BOTH-NEXT: v4f.matmul {{.*}}tensor<4x5xf32>
// BOTH: v4f.dispatch {{.*}}v4f.placement = "cuda"
// BOTH-NEXT: v4f.matmul {{.*}}tensor<512x512xf32>
// BOTH: v4f.dispatch {{.*}}v4f.placement = "cuda"
// BOTH-NEXT: v4f.add

// targets=cpu: everything on the CPU, no reasons (nobody asked for a GPU).
// CPU-NOT: placement_reason
// CPU-NOT: "cuda"

// BAD: v4f-assign-placement: targets must be cpu, cuda or cpu,cuda

func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %x: tensor<?x5xf32>, %big: tensor<512x512xf32>)
    -> (tensor<4x5xf32>, tensor<4x2xf32>, tensor<?x5xf32>, tensor<512x512xf32>) {
  %0 = v4f.matmul %a, %b : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = v4f.relu %0 : tensor<4x5xf32>
  %2 = v4f.sigmoid %1 : tensor<4x5xf32>
  %k = arith.constant dense<2> : tensor<1xi64>
  %v, %i = v4f.top_k %2, %k {axis = 1 : i64, largest = true, sorted = true} : (tensor<4x5xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %3 = v4f.relu %x : tensor<?x5xf32>
  %4 = v4f.matmul %big, %big : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %5 = v4f.add %4, %big : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  return %2, %v, %3, %5 : tensor<4x5xf32>, tensor<4x2xf32>, tensor<?x5xf32>, tensor<512x512xf32>
}
