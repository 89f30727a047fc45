// RUN: %hexir-opt %s -split-input-file -hexir-sink-packed-views | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-sink-packed-views="window-borders=false" | FileCheck %s --check-prefix=NOBORDER

// A packed matmul's view read by an elementwise op (a residual add and a ReLU): the op now runs
// over the packed 4x2x16 shape, reading the matmul's result directly and the residual through
// an expand_shape; the view moves below it.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2x16xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [4, 2, 16]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[R]] : tensor<4x2x16xf32>, tensor<4x2x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
// CHECK: return %[[V]]
#a = affine_map<(m, no, ni, k) -> (m, k)>
#p = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c = affine_map<(m, no, ni, k) -> (m, no, ni)>
#id = affine_map<(m, n) -> (m, n)>
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
  %e = tensor.empty() : tensor<4x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %r : tensor<4x32xf32>, tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// A pad of a packed result's view becomes a view of a pad over the packed shape (the panel
// dimensions are not padded), so the pad's kernel can compute the matmul into it.
// CHECK-LABEL: func.func @pad
// CHECK: %[[MM:.*]] = linalg.generic
// CHECK: %[[P:.*]] = tensor.pad %[[MM]] low[1, 0, 0] high[1, 0, 0]
// CHECK: tensor<4x2x16xf32> to tensor<6x2x16xf32>
// CHECK: tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<6x2x16xf32> into tensor<6x32xf32>
#a2 = affine_map<(m, no, ni, k) -> (m, k)>
#p2 = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c2 = affine_map<(m, no, ni, k) -> (m, no, ni)>
func.func @pad(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>) -> tensor<6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a2, #p2, #c2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
  %p = tensor.pad %v low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x32xf32> to tensor<6x32xf32>
  return %p : tensor<6x32xf32>
}

// -----

// A view read twice (by the elementwise op and returned) stays where it is.
// CHECK-LABEL: func.func @shared
// CHECK: %[[V:.*]] = tensor.collapse_shape
// CHECK: linalg.generic {{.*}} ins(%[[V]] : tensor<4x32xf32>)
#a3 = affine_map<(m, no, ni, k) -> (m, k)>
#p3 = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c3 = affine_map<(m, no, ni, k) -> (m, no, ni)>
#id3 = affine_map<(m, n) -> (m, n)>
func.func @shared(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a3, #p3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
  %e = tensor.empty() : tensor<4x32xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.maximumf %i, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %y, %v : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// A pad that a depthwise convolution reads stays on the unpadded view: the depthwise kernel
// computes its border itself and no padded tensor is made (with window-borders=false, for
// targets that keep pads as kernels, the view moves below the pad as above).
// CHECK-LABEL: func.func @depthwise_pad
// CHECK: %[[V:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x4x2x16xf32> into tensor<1x4x4x32xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[V]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[P]],
// NOBORDER-LABEL: func.func @depthwise_pad
// NOBORDER: %[[P:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0]
// NOBORDER: tensor.collapse_shape %[[P]]
#a4 = affine_map<(n, h, w, po, pi, c) -> (n, h, w, c)>
#p4 = affine_map<(n, h, w, po, pi, c) -> (po, c, pi)>
#c4 = affine_map<(n, h, w, po, pi, c) -> (n, h, w, po, pi)>
func.func @depthwise_pad(%x: tensor<1x4x4x8xf32>, %w: tensor<2x8x16xf32>, %dw: tensor<3x3x32xf32>) -> tensor<1x4x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x4x4x2x16xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x4x4x2x16xf32>) -> tensor<1x4x4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a4, #p4, #c4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x4x4x8xf32>, tensor<2x8x16xf32>) outs(%f5 : tensor<1x4x4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1], [2], [3, 4]] : tensor<1x4x4x2x16xf32> into tensor<1x4x4x32xf32>
  %p = tensor.pad %v low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x32xf32> to tensor<1x6x6x32xf32>
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %dw : tensor<1x6x6x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  return %d : tensor<1x4x4x32xf32>
}

// -----

// An int32 matmul of 24 columns packed in panels of 16 (padded to 32, sliced back) whose
// requantization to int8 reads the slice, with a per-column scale: the requantization moves
// above the slice, over all 32 columns (the scale extended by its last value, 0.5 for the 8
// padding columns), then below the view onto the packed 4x2x16 result: it reads the matmul
// directly (its narrowing epilogue), and the slice copies int8. A residual add of a run-time
// tensor along the columns stays below its slice.
// CHECK-LABEL: func.func @sliced_columns
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<{{\[\[}}2.500000e-01, {{.*}}, 2.500000e-01], [5.000000e-01, {{.*}}, 5.000000e-01]]> : tensor<2x16xf32>
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2x16xi32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[SCALE]] : tensor<4x2x16xi32>, tensor<2x16xf32>) outs(%{{.*}} : tensor<4x2x16xi8>)
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0], [1, 2]] : tensor<4x2x16xi8> into tensor<4x32xi8>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[V]][0, 0] [4, 24] [1, 1] : tensor<4x32xi8> to tensor<4x24xi8>
// CHECK: return %[[S]]
#a = affine_map<(m, no, ni, k) -> (m, k)>
#p = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c = affine_map<(m, no, ni, k) -> (m, no, ni)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
func.func @sliced_columns(%x: tensor<4x8xi8>, %w: tensor<2x8x16xi8>) -> tensor<4x24xi8> {
  %zero = arith.constant 0 : i32
  %scale = arith.constant dense<[0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                                 0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]> : tensor<24xf32>
  %e3 = tensor.empty() : tensor<4x2x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e3 : tensor<4x2x16xi32>) -> tensor<4x2x16xi32>
  %mm = linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xi8>, tensor<2x8x16xi8>) outs(%f : tensor<4x2x16xi32>) {
  ^bb0(%i: i8, %j: i8, %o: i32):
    %i32 = arith.extsi %i : i8 to i32
    %j32 = arith.extsi %j : i8 to i32
    %m = arith.muli %i32, %j32 : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2x16xi32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xi32> into tensor<4x32xi32>
  %sl = tensor.extract_slice %v[0, 0] [4, 24] [1, 1] : tensor<4x32xi32> to tensor<4x24xi32>
  %e = tensor.empty() : tensor<4x24xi8>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sl, %scale : tensor<4x24xi32>, tensor<24xf32>) outs(%e : tensor<4x24xi8>) {
  ^bb0(%i: i32, %c: f32, %o: i8):
    %t = arith.sitofp %i : i32 to f32
    %u = arith.mulf %t, %c : f32
    %q = arith.fptosi %u : f32 to i8
    linalg.yield %q : i8
  } -> tensor<4x24xi8>
  return %y : tensor<4x24xi8>
}

// -----

// A reader of a run-time tensor along the columns (after a per-column constant, which the
// pattern must not extend before it knows it applies: the rewrite would never converge).
// CHECK-LABEL: func.func @sliced_residual
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2x16xf32>)
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[MM]]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[V]][0, 0] [4, 24] [1, 1] : tensor<4x32xf32> to tensor<4x24xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]], %{{.*}}, %arg2 : tensor<4x24xf32>, tensor<24xf32>, tensor<4x24xf32>)
// CHECK-NOT: tensor<32xf32>
#a2 = affine_map<(m, no, ni, k) -> (m, k)>
#p2 = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c2 = affine_map<(m, no, ni, k) -> (m, no, ni)>
#id2 = affine_map<(m, n) -> (m, n)>
func.func @sliced_residual(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %r: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a2, #p2, #c2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
  %sl = tensor.extract_slice %v[0, 0] [4, 24] [1, 1] : tensor<4x32xf32> to tensor<4x24xf32>
  %e = tensor.empty() : tensor<4x24xf32>
  %bias = arith.constant dense<1.5> : tensor<24xf32>
  %y = linalg.generic {indexing_maps = [#id2, affine_map<(m, n) -> (n)>, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sl, %bias, %r : tensor<4x24xf32>, tensor<24xf32>, tensor<4x24xf32>) outs(%e : tensor<4x24xf32>) {
  ^bb0(%i: f32, %b: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x24xf32>
  return %y : tensor<4x24xf32>
}

// -----

// A padded result with another reader (a fused product split several ways): its readers stay
// below their slices, so no reader computes every part.
// CHECK-LABEL: func.func @sliced_shared
// CHECK: %[[V:.*]] = tensor.collapse_shape
// CHECK: tensor.extract_slice %[[V]][0, 0] [4, 24] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x24xf32>) outs(%{{.*}} : tensor<4x24xf32>)
// CHECK-NOT: tensor<4x32xf32>) outs
#a3 = affine_map<(m, no, ni, k) -> (m, k)>
#p3 = affine_map<(m, no, ni, k) -> (no, k, ni)>
#c3 = affine_map<(m, no, ni, k) -> (m, no, ni)>
#id3 = affine_map<(m, n) -> (m, n)>
func.func @sliced_shared(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>) -> (tensor<4x24xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  %mm = linalg.generic {indexing_maps = [#a3, #p3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<4x2x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %v = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
  %sl = tensor.extract_slice %v[0, 0] [4, 24] [1, 1] : tensor<4x32xf32> to tensor<4x24xf32>
  %rest = tensor.extract_slice %v[0, 24] [4, 8] [1, 1] : tensor<4x32xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x24xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%sl : tensor<4x24xf32>) outs(%e : tensor<4x24xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.maximumf %i, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x24xf32>
  return %y, %rest : tensor<4x24xf32>, tensor<4x8xf32>
}
