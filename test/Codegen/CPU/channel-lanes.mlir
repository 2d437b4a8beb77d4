// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v4 --v4f-pack-weights | FileCheck %s --check-prefix=V4
// RUN: v4f-opt %s -split-input-file --v4f-select-cpu-strategy=target-cpu=x86-64-v3 --v4f-pack-weights | FileCheck %s --check-prefix=V3
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-pack-weights,v4f-build-plan)" | FileCheck %s --check-prefix=GEN

// Convs whose few output pixels would leave much of a pixels-in-lanes tile
// empty compute output channels in lanes (v4f.conv_algorithm =
// "channel_lanes", weight packed as lane_panels): ResNet-50's stage 4 (7 x 7
// = 49 pixels fill 49 of 64 lanes), and stage 3's 1x1 convs (196 of 224),
// whose output vectors are transposed in registers and stored as runs of 8
// pixels (1 + LANES / K against 224 / 196); the 7x7 stem over 3 channels
// takes the direct small-input kernel instead (small-input-conv.mlir), and
// the 3x3 stride-1 conv of 64 channels on 56 x 56 Winograd (winograd.mlir).
// A 1x1 stride-1 conv of
// K = 64 on a large plane reads its input as the GEMM's B and keeps pixels
// in lanes; never a weight computed at run time.
// V4-LABEL: func.func @main
// With few pixels (one row block of 12-row tiles) AVX-512 takes 12-row
// register tiles for 1x1 convs (the 1x1 conv of the next case); 196 pixels
// keep 8 (AVX2's 16 registers: 6), and so do 3x3 convs, which read their
// input implicitly at a per-pixel origin.
// V4: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}v4f.packed_weight = "lane_panels"{{.*}}mr = 8, nr = 32, lanes = 16, mb = 64{{.*}}-> tensor<?x512x7x7xf32>
// V4: v4f.conv %arg1, %{{.*}}v4f.conv_algorithm = "winograd_4x4"{{.*}}-> tensor<1x64x56x56xf32>
// V4: v4f.conv %arg2, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}mr = 8, nr = 32{{.*}}-> tensor<1x1024x14x14xf32>
// V4: v4f.conv %arg3, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}mr = 8, nr = 32{{.*}}-> tensor<1x256x14x14xf32>
// V4: v4f.conv %arg0, %arg4 {
// V4-NOT: channel_lanes
// V4-SAME: -> tensor<?x512x7x7xf32>
// V4: v4f.conv %arg5, %{{.*}}v4f.conv_algorithm = "small_input"{{.*}}-> tensor<1x64x112x112xf32>
// V4: v4f.conv %arg1, %{{.*}}v4f.packed_weight = "a_panels"{{.*}}-> tensor<1x256x56x56xf32>
// V4-NOT: channel_lanes
// V4: return
// V3-LABEL: func.func @main
// V3: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}mr = 6, nr = 16{{.*}}-> tensor<?x512x7x7xf32>
// V3: v4f.conv %arg1, %{{.*}}v4f.conv_algorithm = "winograd_4x4"{{.*}}-> tensor<1x64x56x56xf32>
// V3: v4f.conv %arg2, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x1024x14x14xf32>
// V3: v4f.conv %arg3, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}-> tensor<1x256x14x14xf32>
// V3: v4f.conv %arg5, %{{.*}}v4f.conv_algorithm = "small_input"{{.*}}-> tensor<1x64x112x112xf32>
// V3: v4f.conv %arg1, %{{.*}}v4f.packed_weight = "a_panels"{{.*}}-> tensor<1x256x56x56xf32>
// V3-NOT: channel_lanes
// V3: return
func.func @main(%x: tensor<?x512x7x7xf32>, %y: tensor<1x64x56x56xf32>, %z: tensor<1x256x14x14xf32>,
                  %z2: tensor<1x1024x14x14xf32>, %wr: tensor<512x512x1x1xf32>, %img: tensor<1x3x224x224xf32>)
    -> (tensor<?x512x7x7xf32>, tensor<1x64x56x56xf32>, tensor<1x1024x14x14xf32>, tensor<1x256x14x14xf32>,
        tensor<?x512x7x7xf32>, tensor<1x64x112x112xf32>, tensor<1x256x56x56xf32>) {
  %w4 = arith.constant dense<0.01> : tensor<512x512x3x3xf32>
  %w1 = arith.constant dense<0.01> : tensor<64x64x3x3xf32>
  %w3 = arith.constant dense<0.01> : tensor<1024x256x1x1xf32>
  %w3r = arith.constant dense<0.01> : tensor<256x1024x1x1xf32>
  %0 = v4f.conv %x, %w4 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<?x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<?x512x7x7xf32>
  %1 = v4f.conv %y, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %2 = v4f.conv %z, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x256x14x14xf32>, tensor<1024x256x1x1xf32>) -> tensor<1x1024x14x14xf32>
  %3 = v4f.conv %z2, %w3r {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x1024x14x14xf32>, tensor<256x1024x1x1xf32>) -> tensor<1x256x14x14xf32>
  %4 = v4f.conv %x, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<?x512x7x7xf32>, tensor<512x512x1x1xf32>) -> tensor<?x512x7x7xf32>
  %ws = arith.constant dense<0.01> : tensor<64x3x7x7xf32>
  %5 = v4f.conv %img, %ws {dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
       : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
  %wp = arith.constant dense<0.01> : tensor<256x64x1x1xf32>
  %6 = v4f.conv %y, %wp {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x512x7x7xf32>, tensor<1x64x56x56xf32>, tensor<1x1024x14x14xf32>,
                              tensor<1x256x14x14xf32>, tensor<?x512x7x7xf32>, tensor<1x64x112x112xf32>,
                              tensor<1x256x56x56xf32>
}

// -----

// The kernel: the activation read down its columns (no im2col for a 1x1),
// the weight's 48 x 96 lane_panels (2 panels of 32 channels x K = 96:
// 24576 bytes, then the 192-byte bias), partial sums in the worker's scratch, one masked scatter
// per output vector (with a gathered residual) in the last K block.
// V4: v4f.conv %arg0, %{{.*}}v4f.conv_algorithm = "channel_lanes"{{.*}}mr = 12, nr = 32, lanes = 16, mb = 96{{.*}}-> tensor<2x48x3x3xf32>
// GEN: module attributes {v4f.plan = {buffers = 5 : i64, constant_bytes = 24768 : i64, dispatches = 1 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN: llvm.intr.masked.gather {{.*}} -> vector<16xf32>
// GEN: llvm.intr.masked.scatter {{.*}} : vector<16xf32>, vector<16xi1> into !llvm.vec<16 x ptr>
func.func @main(%x: tensor<2x96x3x3xf32>, %r: tensor<2x48x3x3xf32>) -> tensor<2x48x3x3xf32> {
  %w = arith.constant dense<0.25> : tensor<48x96x1x1xf32>
  %b = arith.constant dense<0.5> : tensor<48xf32>
  %0 = v4f.conv %x, %w bias(%b) residual(%r) {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<2x96x3x3xf32>, tensor<48x96x1x1xf32>, tensor<48xf32>, tensor<2x48x3x3xf32>) -> tensor<2x48x3x3xf32>
  return %0 : tensor<2x48x3x3xf32>
}

// -----

// A padded 3x3 conv in channels-in-lanes form has no im2col matrix: a "pad"
// dispatch writes the zero-padded copy of the input (masked row loads and
// stores), and the GEMM reads its broadcast operand from that copy at each
// pixel's window origin plus an int32 offset per K row, a constant table of
// K + 32 entries (147456 bytes of lane_panels + 608 x 4 bytes of offsets +
// the plan's other constants).
// GEN: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 150464 : i64, dispatches = 2 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv pad"]
// GEN: llvm.intr.masked.load
// GEN: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN: llvm.load {{.*}} -> i32
// The 64 channels are two whole column tiles: each 8 x 16 block of the tile
// is transposed by shuffles and stored as 16 runs of 8 pixels (the last row
// tile, 49 = 6 x 8 + 1, by masked stores); only the code of a partial
// column tile (emitted, unused here) scatters.
// GEN: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xf32>, vector<16xf32>
// GEN: llvm.store {{.*}} : vector<8xf32>, !llvm.ptr
// GEN: llvm.intr.masked.store {{.*}} : vector<8xf32>, vector<8xi1> into !llvm.ptr
// GEN-NOT: im2col
func.func @main(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = arith.constant dense<0.25> : tensor<64x64x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// A strided conv reads a copy split into stride phases: a "phases" dispatch
// writes, per input channel, the 2 x 2 phase images of the zero-padded
// 15 x 15 input (17 x 17 padded: 9 x 9 each), the even or odd columns by two
// masked loads and an even-lane shuffle; the GEMM then reads neighbouring
// floats for neighbouring output pixels. The copy is 64 x 4 x 81 floats
// (82944 bytes) and the table K + 32 = 608 int32 offsets.
// GEN: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 150464 : i64, dispatches = 2 : i64
// GEN: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv phases"]
// GEN: llvm.intr.masked.load
// GEN: llvm.intr.masked.load
// GEN: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>, vector<16xf32>
// GEN: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"]
// GEN-NOT: im2col
func.func @main(%x: tensor<1x64x15x15xf32>) -> tensor<1x64x8x8xf32> {
  %w = arith.constant dense<0.25> : tensor<64x64x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x64x15x15xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32>
  return %0 : tensor<1x64x8x8xf32>
}
