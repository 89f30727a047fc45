// RUN: %hexir-opt %s -split-input-file -hexir-reduce-precision | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-reduce-precision="bf16-operands=false" | FileCheck %s --check-prefix=F32

// --precision bf16 with bf16 dot products: a matmul with a constant weight and a Gemm with
// transB read one activation, rounded once (truncf to a bf16 tensor); the weights become bf16
// constants rounded to nearest even (1 + 2^-8 and 1 + 3 * 2^-8 are ties: 1.0 and 1 + 2^-6) and the
// bodies multiply the extended operands, accumulating in f32. Without bf16 dot products the
// operands are rounded but stay f32 (truncf then extf), the bodies unchanged.
// CHECK-LABEL: func.func @shared_activation
// CHECK: %[[A:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: arith.truncf
// CHECK: arith.constant dense<1.000000e+00> : tensor<16x32xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.constant dense<1.01563{{.*}}> : tensor<32x16xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<8x16xbf16>, tensor<32x16xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// F32-LABEL: func.func @shared_activation
// F32: %[[A:.*]] = linalg.generic
// F32-SAME: ins(%arg0 : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// F32: arith.truncf %{{.*}} : f32 to bf16
// F32: arith.extf %{{.*}} : bf16 to f32
// F32: arith.constant dense<1.000000e+00> : tensor<16x32xf32>
// F32: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
// F32-NOT: arith.extf
// F32: arith.constant dense<1.015625> : tensor<32x16xf32>
// F32: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<8x16xf32>, tensor<32x16xf32>)
func.func @shared_activation(%a: tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %b = arith.constant dense<1.00390625> : tensor<16x32xf32>
  %bt = arith.constant dense<1.01171875> : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                         affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : tensor<8x16xf32>, tensor<32x16xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %w, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %r, %r2 : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// An odd reduction (no whole pairs): the operands are rounded in f32 even with bf16 dot
// products. A Gemm's alpha (no contraction to linalg, nor to the packing passes) and a product
// of two activations stay f32.
// CHECK-LABEL: func.func @rounded_in_f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x15xf32>)
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: arith.constant dense<1.000000e+00> : tensor<15x32xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x15xf32>, tensor<15x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg1, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%arg1, %arg2 : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK-NOT: bf16
func.func @rounded_in_f32(%a: tensor<8x15xf32>, %c: tensor<8x16xf32>, %d: tensor<16x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) {
  %b = arith.constant dense<1.00390625> : tensor<15x32xf32>
  %b16 = arith.constant dense<1.00390625> : tensor<16x32xf32>
  %alpha = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x15xf32>, tensor<15x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                         affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %b16 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %q = arith.mulf %p, %alpha : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                         affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %r, %r2, %r3 : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// A channels-last convolution with a constant filter: image and filter in bf16, f32 output. Its
// padded image is rounded before the pad (the pad then pads bf16 with the rounded value), so the
// rounding kernel writes into the padded tensor. Without bf16 dot products: rounded f32 values,
// the filter rounded (1 + 2^-8: 1.0).
// CHECK-LABEL: func.func @conv
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x6x6x3xf32>) outs(%{{.*}} : tensor<1x6x6x3xbf16>)
// CHECK: arith.truncf
// CHECK: %[[P:.*]] = tensor.pad %[[R]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %{{.*}} : bf16
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %{{.*}} : tensor<1x8x8x3xbf16>, tensor<3x3x3x16xbf16>) outs(%{{.*}} : tensor<1x6x6x16xf32>)
// F32-LABEL: func.func @conv
// F32: linalg.generic {{.*}} ins(%arg0 : tensor<1x6x6x3xf32>) outs(%{{.*}} : tensor<1x6x6x3xf32>)
// F32: arith.truncf
// F32: arith.extf
// F32: arith.constant dense<1.000000e+00> : tensor<3x3x3x16xf32>
// F32: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) outs(%{{.*}} : tensor<1x6x6x16xf32>)
func.func @conv(%x: tensor<1x6x6x3xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x3xf32> to tensor<1x8x8x3xf32>
  %w = arith.constant dense<1.00390625> : tensor<3x3x3x16xf32>
  %e = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) outs(%f : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  return %y : tensor<1x6x6x16xf32>
}

// -----

// 10 columns (panels padded to 16) over an initial value the packing cannot widen (a broadcast
// of one value, not one per column): no pairs, so the operands are rounded in f32 rather than
// made bf16 tensors no kernel would take as dot products.
// CHECK-LABEL: func.func @unpackable
// CHECK-NOT: bf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<64x10xf32>)
func.func @unpackable(%a: tensor<4x64xf32>) -> tensor<4x10xf32> {
  %b = arith.constant dense<0.5> : tensor<64x10xf32>
  %c = arith.constant dense<0.25> : tensor<1xf32>
  %e = tensor.empty() : tensor<4x10xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, n) -> (0)>, affine_map<(m, n) -> (m, n)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<1xf32>) outs(%e : tensor<4x10xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<64x10xf32>) outs(%init : tensor<4x10xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}
