// RUN: %hexir-opt %s -hexir-lower-tosa | FileCheck %s

// The TOSA lowering pipeline (upstream passes in Hexir's order) leaves linalg on tensors.
// CHECK-LABEL: func.func @main(
// CHECK-NOT: tosa.
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nhwc_fhwc
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.pooling_nhwc_max
// CHECK: return
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %r = tosa.clamp %c {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %p = tosa.max_pool2d %r {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return %p : tensor<1x4x4x4xf32>
}
