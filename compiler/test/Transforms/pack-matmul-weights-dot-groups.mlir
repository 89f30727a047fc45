// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights="dot-groups=true" | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights | FileCheck %s --check-prefix=NODOT

// An int8 contraction zext(A) x sext(B) with a constant B[K][N] on a target with VNNI dot
// products: B's panels hold groups of four along k (P[no][k4][ni][g]), A is viewed as
// [M][K/4][4], the loops are (m, no, ni, k4, g), and the result is the [M][N/nr][nr] view.
// Without dot groups, int8 weights stay as they are.
// CHECK-LABEL: func.func @dot_groups
// CHECK: %[[P:.*]] = arith.constant dense<{{.*}}> : tensor<2x4x32x4xi8>
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xi8> into tensor<8x4x4xi8>
// CHECK: linalg.generic {indexing_maps = [#[[MA:.*]], #[[MB:.*]], #[[MC:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[P]] : tensor<8x4x4xi8>, tensor<2x4x32x4xi8>) outs(%{{.*}} : tensor<8x2x32xi32>)
// CHECK: arith.extui
// CHECK: arith.extsi
// CHECK: tensor.collapse_shape {{.*}} : tensor<8x2x32xi32> into tensor<8x64xi32>
// NODOT-LABEL: func.func @dot_groups
// NODOT-NOT: tensor.expand_shape
// NODOT: ins(%arg0, %{{.*}} : tensor<8x16xi8>, tensor<16x64xi8>)
func.func @dot_groups(%a: tensor<8x16xi8>) -> tensor<8x64xi32> {
  %b = arith.constant dense<3> : tensor<16x64xi8>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x64xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<8x64xi32>) -> tensor<8x64xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xi8>, tensor<16x64xi8>) outs(%f : tensor<8x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<8x64xi32>
  return %r : tensor<8x64xi32>
}

// -----

// Signed by signed (no vpdpbusd form), or K not a multiple of 4: left alone.
// CHECK-LABEL: func.func @not_dot_groups
// CHECK-NOT: tensor.expand_shape
// CHECK: ins(%arg0, %{{.*}} : tensor<8x16xi8>, tensor<16x64xi8>)
// CHECK: ins(%arg1, %{{.*}} : tensor<8x18xi8>, tensor<18x64xi8>)
func.func @not_dot_groups(%a: tensor<8x16xi8>, %c: tensor<8x18xi8>) -> (tensor<8x64xi32>, tensor<8x64xi32>) {
  %b = arith.constant dense<3> : tensor<16x64xi8>
  %d = arith.constant dense<3> : tensor<18x64xi8>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x64xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<8x64xi32>) -> tensor<8x64xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xi8>, tensor<16x64xi8>) outs(%f : tensor<8x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xs = arith.extsi %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xs, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<8x64xi32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                         affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<8x18xi8>, tensor<18x64xi8>) outs(%f : tensor<8x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<8x64xi32>
  return %r, %r2 : tensor<8x64xi32>, tensor<8x64xi32>
}

// -----

// bf16 (--precision bf16): pairs along k, P[no][k2][ni][2]; 40 columns in panels of 16, padded
// to 48 with zero weights and a zero-padded bias, the 40 real ones sliced back.
// CHECK-LABEL: func.func @bf16_pairs
// CHECK: arith.constant dense<{{.*}}> : tensor<48xf32>
// CHECK: %[[P:.*]] = arith.constant dense<{{.*}}> : tensor<3x8x16x2xbf16>
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 8, 2] : tensor<8x16xbf16> into tensor<8x8x2xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[P]] : tensor<8x8x2xbf16>, tensor<3x8x16x2xbf16>) outs(%{{.*}} : tensor<8x3x16xf32>)
// CHECK: tensor.extract_slice {{.*}} to tensor<8x40xf32>
// NODOT-LABEL: func.func @bf16_pairs
// NODOT: ins(%arg0, %{{.*}} : tensor<8x16xbf16>, tensor<16x40xbf16>)
func.func @bf16_pairs(%a: tensor<8x16xbf16>) -> tensor<8x40xf32> {
  %b = arith.constant dense<0.5> : tensor<16x40xbf16>
  %bias = arith.constant dense<0.25> : tensor<40xf32>
  %e = tensor.empty() : tensor<8x40xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<40xf32>) outs(%e : tensor<8x40xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<8x40xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x40xbf16>) outs(%init : tensor<8x40xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x40xf32>
  return %r : tensor<8x40xf32>
}
