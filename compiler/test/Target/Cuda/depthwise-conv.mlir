// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_90" -canonicalize -cse | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-lower-kernels | FileCheck %s --check-prefix=PTX

// A depthwise convolution reuses no input along a parallel loop (each output channel reads its
// own), but a 3x3 window reads each input pixel for 9 outputs: StageContractions stages it by
// that overlap. Of the tiles whose window reuse reaches 4, the one with the most outputs (at
// most 100352 / 128 = 784) and then the most channels: 7x7 pixels x 16 channels. The block
// copies its 9x9x16 input window (the tile and its halo) and its 3x3x16 filter to shared memory
// 4 channels a thread (16-byte vectors), and each of 112 threads keeps a column of 7 outputs in
// registers.
// CHECK-LABEL: gpu.func @depthwise
// CHECK-SAME: workgroup(%{{.*}} : memref<1x9x9x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<3x3x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: hexir.cuda_staged
// CHECK-SAME: hexir.workgroups = 128 : i64
// CHECK: memref.alloca() {hexir.cuda_thread_private} : memref<1x7x1x1xf32>
// CHECK: scf.for %{{.*}} = %thread_id_x to %c112 step %c256
// The window's copy: 9 x 9 x 16 / 4 = 324 vectors.
// CHECK: scf.for %{{.*}} = %thread_id_x to %c324 step %c256
// CHECK: vector.load
// PTX: .shared .align 16 .b8 __wg_depthwise_0[5184];
// PTX: .shared .align 16 .b8 __wg_depthwise_1[576];
// PTX-NOT: .local
// PTX: ld.global.v4
// PTX-COUNT-63: fma.rn.f32
func.func @depthwise(%x: tensor<1x58x58x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x56x56x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x58x58x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  return %c : tensor<1x56x56x32xf32>
}
