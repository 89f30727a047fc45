// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="vector-bits=256" | FileCheck %s

// AVX2: register tiles of 12 accumulators (6 rows x 2 vectors of 8).
// A 1x1 convolution as a packed contraction over a 56x56 image with a ReLU epilogue: the row
// loop of its register tiles is ow, whatever the workgroups and the peeled columns leave of oh
// and ow (56 = 54 + 2 columns): 6 columns x 16 channels, then 2 x 16; never one column at a
// time inside a 6-column block.
// CHECK-LABEL: func.func @pointwise_rows
// CHECK: vector.contract {{.*}} : vector<1x1x6x1xf32>, vector<1x1x16xf32> into vector<1x1x6x1x16xf32>
// CHECK-NOT: into vector<1x1x1x1x16xf32>
// CHECK: vector.contract {{.*}} : vector<1x1x2x1xf32>, vector<1x1x16xf32> into vector<1x1x2x1x16xf32>
// CHECK-NOT: into vector<1x1x1x1x16xf32>
// CHECK: return
func.func @pointwise_rows(%x: tensor<1x56x56x64xf32>, %w: tensor<8x64x16xf32>) -> tensor<1x56x56x8x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x8x16xf32>) -> tensor<1x56x56x8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, c) -> (n, h, w, c)>,
                                        affine_map<(n, h, w, p, f, c) -> (p, c, f)>,
                                        affine_map<(n, h, w, p, f, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x56x56x64xf32>, tensor<8x64x16xf32>) outs(%f : tensor<1x56x56x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x56x56x8x16xf32>
  %e2 = tensor.empty() : tensor<1x56x56x8x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>,
                                           affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x56x56x8x16xf32>) outs(%e2 : tensor<1x56x56x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x56x56x8x16xf32>
  return %relu : tensor<1x56x56x8x16xf32>
}

// -----

// A 3x3 convolution with a packed filter over a 14-wide image: its divisors allow 7 columns of
// one vector (7 accumulators); the tiles compare by accumulators, so the columns are peeled
// into 12 (tiles of 6 x 2 vectors) and 2 (2 x 2). Input channels in blocks of 32: a 3x3
// block of a 16-wide panel is 18 KiB, inside a 32 KiB L1.
// CHECK-LABEL: func.func @conv_14_columns
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
// CHECK: vector.contract {{.*}} : vector<1x6x1xf32>, vector<1x16xf32> into vector<1x6x16xf32>
// CHECK: vector.contract {{.*}} : vector<1x2x1xf32>, vector<1x16xf32> into vector<1x2x16xf32>
// CHECK-NOT: vector<1x7x8xf32>
// CHECK: return
func.func @conv_14_columns(%x: tensor<1x16x16x64xf32>, %w: tensor<4x3x3x64x16xf32>) -> tensor<1x14x14x4x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x4x16xf32>) -> tensor<1x14x14x4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h + kh, w + kw, c)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (p, kh, kw, c, f)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x16x16x64xf32>, tensor<4x3x3x64x16xf32>) outs(%f : tensor<1x14x14x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x14x14x4x16xf32>
  return %r : tensor<1x14x14x4x16xf32>
}

// -----

// A matmul whose B (an input) is packed into panels in its kernel (packPanelsInPlace): the
// packing is tiled to each cache block of the contraction, four 16-wide panels (256 bytes of
// each row of B; 8 workgroups of 4 panels) by 192 reduction steps, written into a view of one
// 48 KiB stack buffer before the row tiles read it; no packed copy of the whole B remains.
// CHECK-LABEL: func.func @packs_b_in_kernel
// CHECK: %[[STACK:.*]] = memref.alloca() {alignment = 64 : i64, hexir.packed_panels} : memref<49152xi8>
// CHECK-NOT: tensor<32x768x16xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c768 step %c192
// CHECK: %[[BUF:.*]] = memref.view %[[STACK]][%{{.*}}][] : memref<49152xi8> to memref<4x192x16xf32>
// CHECK: %[[DEST:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<4x192x16xf32> to tensor<4x192x16xf32>
// CHECK: %[[PACKED:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[DEST]])
// CHECK: vector.transfer_read %arg1[{{.*}} : tensor<768x32x16xf32>, vector<1x1x16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x16xf32>, tensor<4x192x16xf32>
// CHECK: vector.transfer_read %[[PACKED]][{{.*}} : tensor<4x192x16xf32>, vector<1x1x16xf32>
// CHECK: vector.contract {{.*}} : vector<6x1xf32>, vector<1x1x16xf32> into vector<6x1x16xf32>
// CHECK-NOT: tensor<32x768x16xf32>
// CHECK: return
func.func @packs_b_in_kernel(%a: tensor<96x768xf32>, %b: tensor<768x32x16xf32>) -> tensor<96x32x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<32x768x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(k, no, ni) -> (k, no, ni)>, affine_map<(k, no, ni) -> (no, k, ni)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<768x32x16xf32>) outs(%pe : tensor<32x768x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<32x768x16xf32>
  %e = tensor.empty() : tensor<96x32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x32x16xf32>) -> tensor<96x32x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, no, ni, k) -> (m, k)>, affine_map<(m, no, ni, k) -> (no, k, ni)>,
                                        affine_map<(m, no, ni, k) -> (m, no, ni)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %p : tensor<96x768xf32>, tensor<32x768x16xf32>) outs(%f : tensor<96x32x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x32x16xf32>
  return %r : tensor<96x32x16xf32>
}

// -----

// An int8 3x3 convolution over a 7-wide image with its filter packed in pairs (a target without
// VNNI, DotGroups.h), 2.4 MB of filter: its divisors allow 7 columns of one vector, and each
// row of a pair tile costs a broadcast and a widening, so the columns are peeled into 6 (6 x 2
// vectors) and 1 (1 x 2) before the kernel is cut into workgroups, even though the rest streams
// the filter again (an f32 filter of that size is left whole). Its requantization to int8 is
// each tile's narrowing epilogue.
// CHECK-LABEL: func.func @int8_pairs_7_columns
// CHECK: vector.contract {{.*}} : vector<1x1x6x1x2xi32>, vector<1x1x1x1x16x2xi32> into vector<1x1x6x1x16xi32>
// CHECK: vector.contract {{.*}} : vector<1x1x1x1x2xi32>, vector<1x1x1x1x16x2xi32> into vector<1x1x1x1x16xi32>
// CHECK-NOT: into vector<1x1x7x1x8xi32>
// CHECK: return
func.func @int8_pairs_7_columns(%x: tensor<1x9x9x256x2xi8>, %w: tensor<32x3x3x256x16x2xi8>) -> tensor<1x7x7x32x16xi8> attributes {hexir.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x7x7x32x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x7x7x32x16xi32>) -> tensor<1x7x7x32x16xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, kh, kw, c, g) -> (n, h + kh, w + kw, c, g)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c, g) -> (p, kh, kw, c, f, g)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c, g) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x9x9x256x2xi8>, tensor<32x3x3x256x16x2xi8>) outs(%f : tensor<1x7x7x32x16xi32>) {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %au = arith.extui %a : i8 to i32
    %bs = arith.extsi %b : i8 to i32
    %p = arith.muli %au, %bs : i32
    %s = arith.addi %c, %p : i32
    linalg.yield %s : i32
  } -> tensor<1x7x7x32x16xi32>
  %e8 = tensor.empty() : tensor<1x7x7x32x16xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>,
                                        affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x7x7x32x16xi32>) outs(%e8 : tensor<1x7x7x32x16xi8>) {
  ^bb0(%a: i32, %o: i8):
    %scale = arith.constant 0.001 : f32
    %af = arith.sitofp %a : i32 to f32
    %m = arith.mulf %af, %scale : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %c = arith.maximumf %m, %lo : f32
    %d = arith.minimumf %c, %hi : f32
    %i = arith.fptosi %d : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x7x7x32x16xi8>
  return %q : tensor<1x7x7x32x16xi8>
}
