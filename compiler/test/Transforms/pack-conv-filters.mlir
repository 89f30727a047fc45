// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters | FileCheck %s
// AVX2's register tile is two vectors of 8: panels at most 16 wide.
// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters=max-panel=16 | FileCheck %s --check-prefix=AVX2
// SSE's is two vectors of 4: 8-wide panels, none padded wider.
// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters=max-panel=8 | FileCheck %s --check-prefix=SSE

// A 1x2 convolution with 24 output channels and a bias: the filter W[0][kw][0][f] = 24 kw + f
// is packed into three panels of 8 channels, P[p][0][kw][0][fi] = W[0][kw][0][8 p + fi]: panel 0
// holds 0..7 then 24..31, panel 1 holds 8..15 then 32..39. The convolution runs over
// (n, oh, ow, p, fi, kh, kw, c) with its stride in the image's map, into a 1x3x2x3x8
// accumulator whose bias broadcast is rebuilt in that shape; the result is viewed back as
// 1x3x2x24.
// CHECK-DAG: #[[I:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 * 2 + d6, d7)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[PACKED:.*]] = arith.constant dense<{{\[\[\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]], {{\[\[}}2.400000e+01, 2.500000e+01{{.*}}3.100000e+01]]]], {{\[\[\[\[}}8.000000e+00{{.*}}> : tensor<3x1x2x1x8xf32>
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x2x3x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[I]], #[[P]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %[[PACKED]] : tensor<1x3x5x1xf32>, tensor<3x1x2x1x8xf32>) outs(%[[BIAS]] : tensor<1x3x2x3x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x2x3x8xf32> into tensor<1x3x2x24xf32>
// CHECK: return %[[OUT]]
func.func @conv(%x: tensor<1x3x5x1xf32>) -> tensor<1x3x2x24xf32> {
  %w4 = arith.constant dense<[[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0]], [[24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0]]]]> : tensor<1x2x1x24xf32>
  %bias = arith.constant dense<0.5> : tensor<24xf32>
  %e = tensor.empty() : tensor<1x3x2x24xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<24xf32>) outs(%e : tensor<1x3x2x24xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x3x2x24xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>}
      ins(%x, %w4 : tensor<1x3x5x1xf32>, tensor<1x2x1x24xf32>) outs(%acc : tensor<1x3x2x24xf32>) -> tensor<1x3x2x24xf32>
  return %r : tensor<1x3x2x24xf32>
}

// -----

// A 1x1 convolution with stride 1 reads the image as a matrix: it becomes a contraction over
// (n, oh, ow, p, fi, c), a packed matmul, its zero fill rebuilt in the packed shape.
// CHECK-DAG: #[[I:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5, d4)>
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[PACKED:.*]] = arith.constant dense<2.500000e-01> : tensor<2x4x32xf32>
// CHECK: %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<1x7x7x2x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[I]], #[[P]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %[[PACKED]] : tensor<1x7x7x4xf32>, tensor<2x4x32xf32>) outs(%[[FILL]] : tensor<1x7x7x2x32xf32>)
// CHECK: tensor.collapse_shape
// AVX2-LABEL: func.func @pointwise
// AVX2: arith.constant dense<2.500000e-01> : tensor<4x4x16xf32>
// AVX2: outs(%{{.*}} : tensor<1x7x7x4x16xf32>)
// SSE-LABEL: func.func @pointwise
// SSE: arith.constant dense<2.500000e-01> : tensor<8x4x8xf32>
func.func @pointwise(%x: tensor<1x7x7x4xf32>) -> tensor<1x7x7x64xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.25> : tensor<1x1x4x64xf32>
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x7x7x4xf32>, tensor<1x1x4x64xf32>) outs(%f : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %r : tensor<1x7x7x64xf32>
}

// -----

// Run-time filters and output channel counts no panel width divides (F = 12) stay named
// convolutions.
// CHECK-LABEL: func.func @unpacked
// CHECK-NOT: tensor.collapse_shape
// CHECK-COUNT-2: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: tensor.collapse_shape
func.func @unpacked(%x: tensor<1x5x5x4xf32>, %w: tensor<3x3x4x16xf32>) -> (tensor<1x3x3x16xf32>, tensor<1x3x3x12xf32>) {
  %zero = arith.constant 0.0 : f32
  %w12 = arith.constant dense<0.5> : tensor<3x3x4x12xf32>
  %e = tensor.empty() : tensor<1x3x3x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x4xf32>, tensor<3x3x4x16xf32>) outs(%f : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  %e12 = tensor.empty() : tensor<1x3x3x12xf32>
  %f12 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<1x3x3x12xf32>) -> tensor<1x3x3x12xf32>
  %r12 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w12 : tensor<1x5x5x4xf32>, tensor<3x3x4x12xf32>) outs(%f12 : tensor<1x3x3x12xf32>) -> tensor<1x3x3x12xf32>
  return %r, %r12 : tensor<1x3x3x16xf32>, tensor<1x3x3x12xf32>
}

// -----

// A bias read as [F, 1, 1] (ONNX's layout for a broadcast over NCHW) is still rebuilt as a
// broadcast in the packed shape, its F dimension split in two.
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d1, d2)>
// CHECK-LABEL: func.func @bias_fhw
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [3, 8, 1, 1] : tensor<24x1x1xf32> into tensor<3x8x1x1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[B]], #{{.*}}]{{.*}} ins(%[[E]] : tensor<3x8x1x1xf32>) outs(%{{.*}} : tensor<1x1x1x3x8xf32>)
func.func @bias_fhw(%x: tensor<1x1x1x4xf32>) -> tensor<1x1x1x24xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x4x24xf32>
  %bias = arith.constant dense<0.5> : tensor<24x1x1xf32>
  %e = tensor.empty() : tensor<1x1x1x24xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f, h, w)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<24x1x1xf32>) outs(%e : tensor<1x1x1x24xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x1x1x24xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x1x1x4xf32>, tensor<1x1x4x24xf32>) outs(%acc : tensor<1x1x1x24xf32>) -> tensor<1x1x1x24xf32>
  return %r : tensor<1x1x1x24xf32>
}

// -----

// 136 output channels (8 x 17; 16 does not divide them): 16-wide panels, the ninth one padded
// with 8 zero channels, the bias padded with zeros too; the real 136 channels are a slice of the
// 144 computed.
// CHECK-LABEL: func.func @padded_panels
// CHECK: %[[BIAS:.*]] = arith.constant dense<{{.*}}> : tensor<144xf32>
// CHECK: %[[PACKED:.*]] = arith.constant dense<{{.*}}> : tensor<9x4x16xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0, %[[PACKED]] : tensor<1x3x3x4xf32>, tensor<9x4x16xf32>) outs(%{{.*}} : tensor<1x3x3x9x16xf32>)
// CHECK: %[[WIDE:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x3x9x16xf32> into tensor<1x3x3x144xf32>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[WIDE]][0, 0, 0, 0] [1, 3, 3, 136] [1, 1, 1, 1]
// CHECK: return %[[OUT]]
func.func @padded_panels(%x: tensor<1x3x3x4xf32>) -> tensor<1x3x3x136xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x4x136xf32>
  %bias = arith.constant dense<0.5> : tensor<136xf32>
  %e = tensor.empty() : tensor<1x3x3x136xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<136xf32>) outs(%e : tensor<1x3x3x136xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x3x3x136xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x3x4xf32>, tensor<1x1x4x136xf32>) outs(%acc : tensor<1x3x3x136xf32>) -> tensor<1x3x3x136xf32>
  return %r : tensor<1x3x3x136xf32>
}

// -----

// 1000 output channels (a classifier): padding to 1024 adds under 1/32 more work, so 32-wide
// panels (two vectors per register-tile row), the last one with 24 zero channels.
// CHECK-LABEL: func.func @padded_panels_32
// CHECK: %[[BIAS:.*]] = arith.constant dense<{{.*}}> : tensor<1024xf32>
// CHECK: %[[PACKED:.*]] = arith.constant dense<{{.*}}> : tensor<32x4x32xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0, %[[PACKED]] : tensor<1x3x3x4xf32>, tensor<32x4x32xf32>) outs(%{{.*}} : tensor<1x3x3x32x32xf32>)
// CHECK: %[[WIDE:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x3x32x32xf32> into tensor<1x3x3x1024xf32>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[WIDE]][0, 0, 0, 0] [1, 3, 3, 1000] [1, 1, 1, 1]
// CHECK: return %[[OUT]]
// AVX2-LABEL: func.func @padded_panels_32
// AVX2: arith.constant dense<{{.*}}> : tensor<63x4x16xf32>
// AVX2: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 3, 3, 1000] [1, 1, 1, 1]
// SSE-LABEL: func.func @padded_panels_32
// SSE: arith.constant dense<{{.*}}> : tensor<125x4x8xf32>
// SSE-NOT: tensor.extract_slice
// SSE: return
func.func @padded_panels_32(%x: tensor<1x3x3x4xf32>) -> tensor<1x3x3x1000xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x4x1000xf32>
  %bias = arith.constant dense<0.5> : tensor<1000xf32>
  %e = tensor.empty() : tensor<1x3x3x1000xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<1000xf32>) outs(%e : tensor<1x3x3x1000xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x3x3x1000xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x3x4xf32>, tensor<1x1x4x1000xf32>) outs(%acc : tensor<1x3x3x1000xf32>) -> tensor<1x3x3x1000xf32>
  return %r : tensor<1x3x3x1000xf32>
}
