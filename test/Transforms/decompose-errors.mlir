// RUN: v4f-opt %s -split-input-file -verify-diagnostics -v4f-decompose-quantization

// 30 uint8 input channels need an exact split (28 per chunk), which a
// dynamic channel dim does not allow: the error is on the op (its location
// names the ONNX node) and the pass fails.
func.func @dynamic_channels(%x: tensor<1x?x5x5xui8>, %w: tensor<4x30x3x3xui8>, %zx: tensor<ui8>) -> tensor<1x4x3x3xi32> {
  // expected-error @+1 {{'v4f.conv_integer' op the input channel dim must be static}}
  %y = v4f.conv_integer %x, %w x_zero_point(%zx) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x?x5x5xui8>, tensor<4x30x3x3xui8>, tensor<ui8>) -> tensor<1x4x3x3xi32>
  return %y : tensor<1x4x3x3xi32>
}
