// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters="dot-groups=true" -mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters | FileCheck %s --check-prefix=NODOT
// RUN: %hexir-opt %s -split-input-file -hexir-pack-conv-filters="dot-groups=true int8-group=2 max-panel=16" -mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s --check-prefix=PAIRS

// An int8 channels-last convolution on a target with VNNI dot products: the image's sign bits
// are flipped inside its padding (the pad of the source's producer; the pad value 3 becomes
// 3 ^ 0x80 = -125), the filter is packed as P[p][kh][kw][c4][fi][4], the initial value (a
// constant bias) loses 128 * sum(w) per channel, and the convolution becomes a generic over
// (n, oh, ow, p, fi, kh, kw, c4, g) reading the image as [N, H, W, C/4, 4] through
// zext x sext. Without dot groups, int8 filters stay as they are.
// CHECK-LABEL: func.func @conv3x3
// CHECK: arith.xori
// CHECK: tensor.pad
// CHECK: tensor.yield %c-125_i8
// CHECK: arith.constant dense<{{.*}}> : tensor<1x3x3x2x16x4xi8>
// CHECK: tensor.expand_shape {{.*}} : tensor<1x10x10x8xi8> into tensor<1x10x10x2x4xi8>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
// CHECK: arith.extui
// CHECK: arith.extsi
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x8x16xi32>
// Without VNNI (int8-group=2): the same in pairs of channels, P[p][kh][kw][c2][fi][2].
// PAIRS-LABEL: func.func @conv3x3
// PAIRS: arith.xori
// PAIRS: tensor.yield %c-125_i8
// PAIRS: arith.constant dense<1> : tensor<1x3x3x4x16x2xi8>
// PAIRS: tensor.expand_shape {{.*}} : tensor<1x10x10x8xi8> into tensor<1x10x10x4x2xi8>
// PAIRS: tensor.collapse_shape {{.*}} into tensor<1x8x8x16xi32>
// NODOT-LABEL: func.func @conv3x3
// NODOT: linalg.conv_2d_nhwc_hwcf
func.func @conv3x3(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x16xi32> {
  %e0 = tensor.empty() : tensor<1x8x8x8xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x8x8xf32>) outs(%e0 : tensor<1x8x8x8xi8>) {
  ^bb0(%in: f32, %o: i8):
    %i = arith.fptosi %in : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x8x8x8xi8>
  %zp = arith.constant 3 : i8
  %p = tensor.pad %q low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x8x8x8xi8> to tensor<1x10x10x8xi8>
  %w = arith.constant dense<1> : tensor<3x3x8x16xi8>
  %bias = arith.constant dense<7> : tensor<16xi32>
  %e = tensor.empty() : tensor<1x8x8x16xi32>
  %init = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<16xi32>) outs(%e : tensor<1x8x8x16xi32>) {
  ^bb0(%in: i32, %o: i32):
    linalg.yield %in : i32
  } -> tensor<1x8x8x16xi32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x8xi8>, tensor<3x3x8x16xi8>) outs(%init : tensor<1x8x8x16xi32>) -> tensor<1x8x8x16xi32>
  return %r : tensor<1x8x8x16xi32>
}

// -----

// A 1x1 convolution with stride 1 over 3 channels (padded to a group of 4 with a zero weight)
// into 24 channels (one-vector panels of 16, padded to 32 and sliced back): a contraction over
// (n, oh, ow, p, fi, c4, g); the image is an argument, so its flip is an elementwise op of its
// own. The correction is -128 * 2 * 3 = -768 per real channel, 0 for the padding ones.
// In pairs: 3 channels padded to 2 pairs (the last weight of each pair of the second 0), 24
// output channels three panels of 8 (AVX2's lanes), no padding columns.
// PAIRS-LABEL: func.func @pointwise_padded
// PAIRS: arith.constant dense<{{\[\[\[\[}}2, 2], {{.*}}{{\[\[}}2, 0], [2, 0], {{.*}}> : tensor<3x2x8x2xi8>
// PAIRS: tensor.expand_shape {{.*}} : tensor<1x4x4x4xi8> into tensor<1x4x4x2x2xi8>
// PAIRS: tensor.collapse_shape {{.*}} : tensor<1x4x4x3x8xi32> into tensor<1x4x4x24xi32>
// PAIRS-NOT: tensor.extract_slice
// PAIRS: return
// CHECK-LABEL: func.func @pointwise_padded
// CHECK: %[[FLIP:.*]] = linalg.generic
// CHECK: arith.xori
// CHECK: arith.constant dense<[-768, {{.*}}, -768, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<32xi32>
// CHECK: arith.constant dense<{{.*}}> : tensor<2x1x16x4xi8>
// CHECK: tensor.pad %[[FLIP]] low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x4x32xi32>
// CHECK: tensor.extract_slice {{.*}} to tensor<1x4x4x24xi32>
func.func @pointwise_padded(%q: tensor<1x4x4x3xi8>) -> (tensor<1x4x4x24xi32>, tensor<1x4x4x3xi8>) {
  %w = arith.constant dense<2> : tensor<1x1x3x24xi8>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x4x4x24xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x4x4x24xi32>) -> tensor<1x4x4x24xi32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%q, %w : tensor<1x4x4x3xi8>, tensor<1x1x3x24xi8>) outs(%init : tensor<1x4x4x24xi32>) -> tensor<1x4x4x24xi32>
  return %r, %q : tensor<1x4x4x24xi32>, tensor<1x4x4x3xi8>
}

// -----

// Two 1x1 convolutions of one int8 tensor (a pooled image read by a block's first convolution
// and its downsample) share one flip of its sign bits: the tensor keeps one reader, so the flip
// can join its producer's kernel.
// CHECK-LABEL: func.func @shared_flip
// CHECK-COUNT-1: arith.xori
// CHECK-NOT: arith.xori
// CHECK: return
func.func @shared_flip(%q: tensor<1x4x4x16xi8>) -> (tensor<1x4x4x32xi32>, tensor<1x4x4x32xi32>) {
  %w = arith.constant dense<2> : tensor<1x1x16x32xi8>
  %v = arith.constant dense<3> : tensor<1x1x16x32xi8>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x4x4x32xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x4x4x32xi32>) -> tensor<1x4x4x32xi32>
  %a = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%q, %w : tensor<1x4x4x16xi8>, tensor<1x1x16x32xi8>) outs(%init : tensor<1x4x4x32xi32>) -> tensor<1x4x4x32xi32>
  %b = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%q, %v : tensor<1x4x4x16xi8>, tensor<1x1x16x32xi8>) outs(%init : tensor<1x4x4x32xi32>) -> tensor<1x4x4x32xi32>
  return %a, %b : tensor<1x4x4x32xi32>, tensor<1x4x4x32xi32>
}

// -----

// bf16 (--precision bf16): a 3x3 convolution over 3 channels into 24, its bias broadcast: the
// channels padded to a pair, the fourth channel taking the spatial padding's value (-1: the
// canonicalizer folds the two pads into one), the filter packed as P[p][kh][kw][c2][fi][2] (W[kh][kw][c][f] = c +
// 0.5 f at tap (0, 0): P[0][0][0][0][fi] = [0.5 fi, 1 + 0.5 fi], P[0][0][0][1][fi] = [2 + 0.5 fi,
// 0]), the bias widened to 32 channels with zeros. No sign flip, no correction.
// CHECK-LABEL: func.func @bf16_padded
// CHECK-NOT: arith.xori
// CHECK: %[[S:.*]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %[[V:.*]] : bf16
// CHECK: arith.constant dense<[2.500000e-01, {{.*}}, 2.500000e-01, 0.000000e+00, {{.*}}]> : tensor<32xf32>
// CHECK: arith.constant dense<{{\[\[\[\[\[\[}}0.000000e+00, 1.000000e+00], [5.000000e-01, 1.500000e+00]{{.*}}[7.500000e+00, 8.500000e+00]], {{\[\[}}2.000000e+00, 0.000000e+00], [2.500000e+00, 0.000000e+00]{{.*}}> : tensor<2x3x3x2x16x2xbf16>
// CHECK: tensor.pad %[[S]] low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK: tensor.yield %[[V]] : bf16
// CHECK: tensor.expand_shape {{.*}} into tensor<1x10x10x2x2xbf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x10x10x2x2xbf16>, tensor<2x3x3x2x16x2xbf16>) outs(%{{.*}} : tensor<1x8x8x2x16xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: tensor.extract_slice {{.*}} to tensor<1x8x8x24xf32>
// NODOT-LABEL: func.func @bf16_padded
// NODOT: linalg.conv_2d_nhwc_hwcf
func.func @bf16_padded(%x: tensor<1x8x8x3xbf16>) -> tensor<1x8x8x24xf32> {
  %minus = arith.constant -1.0 : bf16
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %minus : bf16
  } : tensor<1x8x8x3xbf16> to tensor<1x10x10x3xbf16>
  // W[kh][kw][c][f] = c + 0.5 f
  %w = arith.constant dense<[[[[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]]],
      [[[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]]],
      [[[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]], [[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5], [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5], [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5]]]]> : tensor<3x3x3x24xbf16>
  %bias = arith.constant dense<0.25> : tensor<24xf32>
  %e = tensor.empty() : tensor<1x8x8x24xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<24xf32>) outs(%e : tensor<1x8x8x24xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x8x24xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x3xbf16>, tensor<3x3x3x24xbf16>) outs(%init : tensor<1x8x8x24xf32>) -> tensor<1x8x8x24xf32>
  return %r : tensor<1x8x8x24xf32>
}
