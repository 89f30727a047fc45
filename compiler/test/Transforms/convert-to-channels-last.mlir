// RUN: %hexir-opt %s -split-input-file -hexir-convert-to-channels-last="max-rewrites=1000" -verify-diagnostics | FileCheck %s

// conv -> relu -> pad -> conv, NCHW as imported from ONNX. Both convolutions become NHWC with
// HWCF filters (a constant transposed at compile time: w[f][c][kh][kw] -> w[kh][kw][c][f]; a
// fill refilled in the new shape); the relu is computed channels-last (identity maps, NHWC
// shapes) and the pad pads NHWC. The only transposes left are the input image's and the
// result's.
// CHECK-LABEL: func.func @chain
// CHECK-DAG: arith.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00]], {{\[\[}}2.000000e+00, 4.000000e+00]]]]> : tensor<1x2x1x2xf32>
// CHECK-DAG: linalg.transpose ins(%arg0 : tensor<1x1x4x4xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<1x4x3x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]]{{.*}} outs(%{{.*}} : tensor<1x4x3x2xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.pad
// CHECK: } : tensor<1x4x3x2xf32> to tensor<1x6x5x2xf32>
// CHECK: linalg.fill {{.*}} -> tensor<3x3x2x2xf32>
// CHECK: %[[OUT:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK: %[[BACK:.*]] = linalg.transpose ins(%[[OUT]] : tensor<1x4x3x2xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[BACK]]
func.func @chain(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x3xf32> {
  %w1 = arith.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %quarter = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %w2e = tensor.empty() : tensor<2x2x3x3xf32>
  %w2 = linalg.fill ins(%quarter : f32) outs(%w2e : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %e1 = tensor.empty() : tensor<1x2x4x3xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>) outs(%i1 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x2x4x3xf32>) outs(%e1 : tensor<1x2x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x3xf32>
  %p2 = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x3xf32> to tensor<1x2x6x5xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p2, %w2 : tensor<1x2x6x5xf32>, tensor<2x2x3x3xf32>) outs(%i1 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  return %c2 : tensor<1x2x4x3xf32>
}

// -----

// Two max poolings added and returned: the poolings become NHWC (their -inf init refilled in
// NHWC). The add could be recomputed in NHWC only by adding a transpose before the return, so
// it stays NCHW and reads both pooled results through permuted maps: no transpose but the
// input's.
// CHECK-LABEL: func.func @residual
// CHECK: linalg.pooling_nhwc_max {{.*}} -> tensor<1x2x2x2xf32>
// CHECK: linalg.pooling_nhwc_max {{.*}} -> tensor<1x2x2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[P:.*]], #[[P]], #[[ID:.*]]]
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @residual(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %q = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %q : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x2x2x2xf32>
  return %s : tensor<1x2x2x2xf32>
}

// -----

// A fire module's tail: two NCHW convolutions, a ReLU on each, a concat along channels, then a
// convolution. The ReLUs are computed channels-last, reading the convolutions' NHWC results
// with identity maps, and the concat runs along NHWC's channel dimension (3): no transpose is
// left between the convolutions.
// CHECK-LABEL: func.func @concat_of_activations
// CHECK: %[[A:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK: %[[RA:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]]{{.*}} ins(%[[A]] : tensor<1x5x5x8xf32>)
// CHECK: %[[B:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK: %[[RB:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]]{{.*}} ins(%[[B]] : tensor<1x5x5x8xf32>)
// CHECK: %[[C:.*]] = tensor.concat dim(3) %[[RA]], %[[RB]] : (tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x16xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[C]],
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @concat_of_activations(%x: tensor<1x4x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant dense<0.5> : tensor<8x4x1x1xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x4x1x1xf32>
  %w3 = arith.constant dense<0.125> : tensor<2x16x1x1xf32>
  %e8 = tensor.empty() : tensor<1x8x5x5xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) outs(%f8 : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %ra = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x8x5x5xf32>) outs(%e8 : tensor<1x8x5x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x5x5xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w2 : tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) outs(%f8 : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %rb = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x8x5x5xf32>) outs(%e8 : tensor<1x8x5x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x5x5xf32>
  %c = tensor.concat dim(1) %ra, %rb : (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x16x5x5xf32>
  %e2 = tensor.empty() : tensor<1x2x5x5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%c, %w3 : tensor<1x16x5x5xf32>, tensor<2x16x1x1xf32>) outs(%f2 : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return %y : tensor<1x2x5x5xf32>
}

// -----

// A SiLU after a 1x1 int8 convolution (its dequantization read by the sigmoid and the product),
// then a mean over the image (efficientnet_b0's head in a QDQ model). Recomputing the sigmoid
// NCHW removed its result's transpose but read its input strided; recomputed NHWC again it
// gave its reader a transpose back, which the first rewrite then removed again: the two
// alternated until the rewrite bound (345,907 rewrites, 36 s of efficientnet_b0's QDQ
// compile), which now warns (-verify-diagnostics fails; the bound is 1,000 rewrites here). A
// generic reader now reads the new layout through its indexing map, with no transpose to
// remove. Everything ends channels-last, each op reading its input contiguously, and the only
// transpose left is the input image's.
// CHECK-LABEL: func.func @silu_mean
// CHECK: linalg.transpose ins(%arg0 : tensor<1x4x2x2xi8>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<1x2x2x8xi32>
// CHECK: %[[D:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]]{{.*}} outs(%{{.*}} : tensor<1x2x2x8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]]{{.*}} ins(%[[D]] : tensor<1x2x2x8xf32>) outs(%{{.*}} : tensor<1x2x2x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]]{{.*}} ins(%[[D]], %[[S]] : tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
#red = affine_map<(n, c, h, w) -> (n, c)>
func.func @silu_mean(%x: tensor<1x4x2x2xi8>) -> tensor<1x8xf32> {
  %w = arith.constant dense<1> : tensor<8x4x1x1xi8>
  %bias = arith.constant dense<3> : tensor<8xi32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %s = arith.constant 0.5 : f32
  %eb = tensor.empty() : tensor<1x8x2x2xi32>
  %init = linalg.generic {indexing_maps = [#ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xi32>) outs(%eb : tensor<1x8x2x2xi32>) {
  ^bb0(%in: i32, %o: i32):
    linalg.yield %in : i32
  } -> tensor<1x8x2x2xi32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x2x2xi8>, tensor<8x4x1x1xi8>) outs(%init : tensor<1x8x2x2xi32>) -> tensor<1x8x2x2xi32>
  %e1 = tensor.empty() : tensor<1x8x2x2xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x8x2x2xi32>) outs(%e1 : tensor<1x8x2x2xf32>) {
  ^bb0(%in: i32, %o: f32):
    %f = arith.sitofp %in : i32 to f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x8x2x2xf32>
  %e2 = tensor.empty() : tensor<1x8x2x2xf32>
  %sg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : tensor<1x8x2x2xf32>) outs(%e2 : tensor<1x8x2x2xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %a = arith.addf %e, %one : f32
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x8x2x2xf32>
  %e3 = tensor.empty() : tensor<1x8x2x2xf32>
  %p = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d, %sg : tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>) outs(%e3 : tensor<1x8x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x8x2x2xf32>
  %er = tensor.empty() : tensor<1x8xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<1x8xf32>) -> tensor<1x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #red], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%p : tensor<1x8x2x2xf32>) outs(%fr : tensor<1x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}
