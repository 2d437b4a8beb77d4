// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-pack-weights | FileCheck %s --check-prefixes=SEL,SEL42
// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v3 --v4f-pack-weights | FileCheck %s --check-prefixes=SEL,SEL3
// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v2 --v4f-pack-weights | FileCheck %s --check-prefixes=SEL,SEL42
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=GEN

// v4f-select-cpu-strategy gives 3x3 stride-1 convs Winograd F(m x m, 3x3)
// (WinogradConvKernels.cpp) where its cost model puts it below the direct
// conv, on every target: F(4x4, 3x3) ("winograd_4x4") for ResNet-50's
// stage-1 conv (56 x 56 x 64); for its stage-3 conv (14 x 14 x 256) F(4x4)
// from the direct weight, transformed by the kernel
// ("winograd_4x4_direct_weights": the 4x larger transformed weight would
// stream from memory for few tiles) on AVX-512 and SSE, F(2x2, 3x3)
// ("winograd_2x2") on AVX2 (whose 512 KB of L2 do not hold F(4x4)'s
// transformed input block of 2 vectors of 8 tiles). Not: ResNet-50's stage 4 (7 x 7 x 512: even
// F(2x2)'s 16 / 9 larger weights cost more than they save for 49 pixels, and
// F(4x4) wastes most lanes on 4 tiles); on AVX2 a small conv
// whose transforms cost more than they save (13 x 11, 20 -> 32 channels);
// stride 2, dilation 2, a 5x5 kernel, two groups. The weight is not packed
// into panels (the kernel stores it transformed).
// SEL-LABEL: func.func @main
// SEL: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "winograd_4x4"
// SEL-NOT: v4f.packed_weight
// SEL-SAME: -> tensor<1x64x56x56xf32>
// SEL: v4f.conv %arg1, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<?x512x7x7xf32>
// SEL3: v4f.conv %arg2, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x32x13x11xf32>
// (On AVX-512 and SSE it takes F(4x4) from the direct weight, on AVX-512 as
// fast alone: 14.3 against 13.8 us.)
// SEL42: v4f.conv %arg2, %{{.*}}v4f.conv_algorithm = "winograd_4x4_direct_weights"{{.*}}-> tensor<1x32x13x11xf32>
// SEL: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x64x28x28xf32>
// SEL: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x64x52x52xf32>
// SEL: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x64x56x56xf32>
// SEL: v4f.conv %arg0, %{{.*}}groups = 2
// SEL-NOT: winograd
// SEL-SAME: -> tensor<1x64x56x56xf32>
// SEL42: v4f.conv %arg3, %{{.*}}v4f.conv_algorithm = "winograd_4x4_direct_weights"{{.*}}-> tensor<1x256x14x14xf32>
// SEL3: v4f.conv %arg3, %{{.*}}v4f.conv_algorithm = "winograd_2x2"{{.*}}-> tensor<1x256x14x14xf32>
// A transformed input block larger than L2 (2048 channels) keeps the
// direct conv.
// SEL: v4f.conv %arg4, %{{.*}} {
// SEL-NOT: winograd
// SEL-SAME: -> tensor<1x64x28x28xf32>
// SEL: return
func.func @main(%a: tensor<1x64x56x56xf32>, %b: tensor<?x512x7x7xf32>, %c: tensor<1x20x15x13xf32>,
                %d: tensor<1x256x14x14xf32>, %e: tensor<1x2048x28x28xf32>)
    -> (tensor<1x64x56x56xf32>, tensor<?x512x7x7xf32>, tensor<1x32x13x11xf32>, tensor<1x64x28x28xf32>,
        tensor<1x64x52x52xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>,
        tensor<1x256x14x14xf32>, tensor<1x64x28x28xf32>) {
  %w1 = arith.constant dense<0.01> : tensor<64x64x3x3xf32>
  %w4 = arith.constant dense<0.01> : tensor<512x512x3x3xf32>
  %ws = arith.constant dense<0.01> : tensor<32x20x3x3xf32>
  %w5 = arith.constant dense<0.01> : tensor<64x64x5x5xf32>
  %wg = arith.constant dense<0.01> : tensor<64x32x3x3xf32>
  %w3 = arith.constant dense<0.01> : tensor<256x256x3x3xf32>
  %wl = arith.constant dense<0.01> : tensor<64x2048x3x3xf32>
  %0 = v4f.conv %a, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %1 = v4f.conv %b, %w4 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<?x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<?x512x7x7xf32>
  %2 = v4f.conv %c, %ws {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x20x15x13xf32>, tensor<32x20x3x3xf32>) -> tensor<1x32x13x11xf32>
  %3 = v4f.conv %a, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32>
  %4 = v4f.conv %a, %w1 {dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x52x52xf32>
  %5 = v4f.conv %a, %w5 {dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x5x5xf32>) -> tensor<1x64x56x56xf32>
  %6 = v4f.conv %a, %wg {dilations = array<i64: 1, 1>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32>
  %7 = v4f.conv %d, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
  %8 = v4f.conv %e, %wl {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x2048x28x28xf32>, tensor<64x2048x3x3xf32>) -> tensor<1x64x28x28xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<1x64x56x56xf32>, tensor<?x512x7x7xf32>, tensor<1x32x13x11xf32>,
      tensor<1x64x28x28xf32>, tensor<1x64x52x52xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>,
      tensor<1x256x14x14xf32>, tensor<1x64x28x28xf32>
}

// -----

// The kernels of a small conv taking F(4x4, 3x3) from its direct weight
// (16 -> 16 channels, 20 x 20, bias, residual, Relu; AVX-512: 25 tiles of
// 4 x 4 pixels in one
// block of 2 vectors, so the 2 output-channel tiles of 8 form 2 groups): an
// "input transform" dispatch writes V = B^T d B of the block once, for both
// groups — per segment (a tile row the vector's 16 tiles reach) and input
// row, two masked loads of 64 floats (4 per lane) whose strided lanes are
// the tiles' 6 inputs, 36 values per tile combined by adds and FMAs of the
// transform's constants — and the conv dispatch runs per xi (36) an 8 x
// 2-vector register tile over the channels (FMAs of a broadcast element of
// U, which it transformed first), then A^T m A (its columns scaled by G's
// row scales), bias, the residual (masked loads), Relu, and stores each
// output row's 4 pixels per lane interleaved (two levels of shuffles) by
// masked stores. The constants: the weight, 16 x 16 x 9 floats (9216
// bytes), and the bias (64).
// GEN: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 9280 : i64, dispatches = 2 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv input transform"]
// GEN: llvm.intr.masked.load {{.*}} -> vector<64xf32>
// GEN: vector.shuffle {{.*}} [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xf32>, vector<64xf32>
// GEN: vector.shuffle {{.*}} [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xf32>, vector<64xf32>
// GEN: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// GEN: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xf32>, vector<16xf32>
// GEN: vector.shuffle {{.*}} [0, 32, 1, 33, 2, 34, {{.*}} : vector<32xf32>, vector<32xf32>
// GEN: llvm.intr.masked.load {{.*}} -> vector<64xf32>
// GEN: llvm.intr.masked.store {{.*}} : vector<64xf32>, vector<64xi1> into !llvm.ptr
// GEN: return
func.func @main(%x: tensor<1x16x20x20xf32>, %r: tensor<1x16x20x20xf32>) -> tensor<1x16x20x20xf32> {
  %w = arith.constant dense<0.25> : tensor<16x16x3x3xf32>
  %b = arith.constant dense<0.5> : tensor<16xf32>
  %0 = v4f.conv %x, %w bias(%b) residual(%r) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x16x20x20xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>, tensor<1x16x20x20xf32>) -> tensor<1x16x20x20xf32>
  return %0 : tensor<1x16x20x20xf32>
}

// -----

// ResNet-50's stage-3 conv takes F(4x4, 3x3) from the direct weight on
// AVX-512: 16 tiles of 4 x 4 pixels, one vector; 8 output-channel groups
// sharing the input transform. The constants are the direct weight packed
// per output-channel tile (256 x 256 x 9 floats, not 36 / 9 of that). Per
// output-channel tile of 8 and chunk of 20 channels the kernel transforms
// the weight, 2 channels x 8 output channels per vector: 9 loads, the 3-tap
// transform by G' (its 4 as an FMA constant) per column and row, 36 stores
// into the scratch; then per xi (36), while it prefetches the next chunk's
// weight, an 8 x 1-vector register tile over the chunk's channels.
// GEN: module attributes {v4f.plan = {buffers = 4 : i64, constant_bytes = 2359296 : i64, dispatches = 2 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv input transform"]
// GEN: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN-COUNT-9: llvm.load {{.*}} -> vector<16xf32>
// GEN: arith.constant dense<4.000000e+00> : vector<16xf32>
// GEN-COUNT-36: llvm.store {{.*}} : vector<16xf32>, !llvm.ptr
// GEN: scf.for {{.*}} to %c36_i64
// GEN: "llvm.intr.prefetch"
// GEN-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// GEN: scf.for {{.*}} step %c20_i64
// GEN: return
func.func @main(%x: tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> {
  %w = arith.constant dense<0.01> : tensor<256x256x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
  return %0 : tensor<1x256x14x14xf32>
}

// -----

// A 21 x 21 conv of 24 -> 20 channels takes F(2x2, 3x3): 121 tiles of
// 2 x 2 pixels in 4 blocks of 32 (the last one's 25 tiles in both its
// vectors), 3 output-channel tiles (the last one zero-padded) in 2 groups
// sharing the input transform (two masked loads of 32 floats per segment
// and row, even and odd lanes); 16 xi. The constants: the transformed
// weight, 3 x 16 x 24 x 8 floats.
// GEN: module attributes {v4f.plan = {buffers = 4 : i64, constant_bytes = 36864 : i64, dispatches = 2 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv input transform"]
// GEN: llvm.intr.masked.load {{.*}} -> vector<32xf32>
// GEN: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// GEN: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<32xf32>, vector<32xf32>
// GEN: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// GEN: llvm.intr.masked.store {{.*}} : vector<32xf32>, vector<32xi1> into !llvm.ptr
// GEN: return
func.func @main(%x: tensor<1x24x21x21xf32>) -> tensor<1x20x21x21xf32> {
  %w = arith.constant dense<0.01> : tensor<20x24x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x24x21x21xf32>, tensor<20x24x3x3xf32>) -> tensor<1x20x21x21xf32>
  return %0 : tensor<1x20x21x21xf32>
}

// -----

// ResNet-50's stage-1 conv takes F(4x4, 3x3): 196 tiles in 7 blocks of 32,
// enough to balance two threads alone, so its output channels stay in one
// group and each work item transforms its own input block inline (no
// "input transform" dispatch, whose blocks would cross between the cores).
// The last block's 4 tiles fill one vector: its items run an 8 x 1
// register tile, the others 8 x 2.
// GEN: module attributes {v4f.plan = {{{.*}}dispatches = 1 : i64
// GEN-NOT: input transform
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %c6_i64 : i64
// GEN-NEXT: scf.if %[[LAST]] {
// GEN: llvm.intr.masked.load {{.*}} -> vector<64xf32>
// GEN: %{{.*}}:8 = scf.for
// GEN-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// GEN: } else {
// GEN: llvm.intr.masked.load {{.*}} -> vector<64xf32>
// GEN: %{{.*}}:16 = scf.for
// GEN-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// GEN: return
func.func @main(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %w = arith.constant dense<0.01> : tensor<64x64x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}
