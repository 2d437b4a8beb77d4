// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-build-plan)" | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-build-plan)" | FileCheck %s --check-prefix=V4
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v2},v4f-build-plan)" | FileCheck %s --check-prefix=V2
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=icelake-server},v4f-build-plan)" | FileCheck %s --check-prefix=VNNI

// An int8 matmul is two dispatches: the rows of x quantized to int16 pairs
// (dynamic: the row's max |x| by a vector max and a reduction, values
// rounded to even and clamped), then the integer GEMM: int8 weight pairs
// sign-extended to int16, the activation pair broadcast as one int32, and
// pmaddwd of the target's width into int32 accumulators, dequantized by
// float multiplies in the epilogue. K = 7 is odd (a zero pads the last
// pair), N = 20 leaves a column edge, M = 5 row edges.

// CHECK: func.func @v4f_kernel_0({{.*}}v4f.dispatches = ["quantized_matmul quantize rows"]
// CHECK: vector.reduction <maxnumf>
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi16>
// CHECK: func.func @v4f_kernel_1({{.*}}v4f.dispatches = ["quantized_matmul"]
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: vector.bitcast %{{.*}} : vector<8xi32> to vector<16xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: llvm.intr.masked.store

// V4: llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"(%{{.*}}, %{{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// With AVX-512 VNNI the rows are quantized to u8 (q + 128, K padded to a
// multiple of 4 with zeros), the weight is packed in K quads, one vpdpbusd
// adds four u8 x s8 products per int32 lane, and the epilogue subtracts
// (128 + zp) times the weight's column sums (a constant binding).
// VNNI: v4f.target = #v4f.cpu_target<{{.*}}vnni = true>
// VNNI: func.func @v4f_kernel_0({{.*}}v4f.dispatches = ["quantized_matmul quantize rows"]
// VNNI: arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// VNNI: func.func @v4f_kernel_1({{.*}}v4f.dispatches = ["quantized_matmul"]
// VNNI: vector.bitcast %{{.*}} : vector<64xi8> to vector<16xi32>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
// VNNI: arith.muli %{{.*}}, %{{.*}} : vector<16xi32>
// VNNI: arith.subi %{{.*}}, %{{.*}} : vector<16xi32>
// VNNI-NOT: pmadd
// V2: llvm.call_intrinsic "llvm.x86.sse2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<8xi16>, vector<8xi16>) -> vector<4xi32>
func.func @main(%x: tensor<5x7xf32> {v4f.name = "x"}) -> (tensor<5x20xf32> {v4f.name = "y"}) {
  %w = arith.constant dense<3> : tensor<7x20xi8>
  %s = arith.constant dense<0.5> : tensor<20xf32>
  %y = v4f.quantized_matmul %x, %w, %s {act_quant = "dynamic"} : (tensor<5x7xf32>, tensor<7x20xi8>, tensor<20xf32>) -> tensor<5x20xf32>
  return %y : tensor<5x20xf32>
}
