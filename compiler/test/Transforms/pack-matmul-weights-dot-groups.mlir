// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights="dot-groups=true" -mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights | FileCheck %s --check-prefix=NODOT
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights="dot-groups=true" -mlir-print-local-scope | FileCheck %s --check-prefix=RT
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights="dot-groups=true int8-group=2 max-panel=16" | FileCheck %s --check-prefix=PAIRS

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
// Without VNNI (int8-group=2, AVX2's 16-wide panels): pairs along k, P[no][k2][ni][2].
// PAIRS-LABEL: func.func @dot_groups
// PAIRS: %[[P:.*]] = arith.constant dense<3> : tensor<4x8x16x2xi8>
// PAIRS: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 8, 2] : tensor<8x16xi8> into tensor<8x8x2xi8>
// PAIRS: ins(%[[A]], %[[P]] : tensor<8x8x2xi8>, tensor<4x8x16x2xi8>) outs(%{{.*}} : tensor<8x4x16xi32>)
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

// Signed by signed (no vpdpbusd form), or K not a multiple of 4: left alone. In pairs, K = 18
// is 9 of them.
// PAIRS-LABEL: func.func @not_dot_groups
// PAIRS: ins(%arg0, %{{.*}} : tensor<8x16xi8>, tensor<16x64xi8>)
// PAIRS: tensor.expand_shape %arg1 {{.*}} : tensor<8x18xi8> into tensor<8x9x2xi8>
// PAIRS: tensor<8x9x2xi8>, tensor<4x9x16x2xi8>
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

// bf16 (--precision bf16): pairs along k, P[no][k2][ni][2] = B[2 k2 + g][16 no + ni] (B[k][n] =
// 10 k + n); 20 columns in panels of 16, padded to 32 with zero weights and a zero-padded bias,
// the 20 real ones sliced back.
// CHECK-LABEL: func.func @bf16_pairs
// CHECK: arith.constant dense<[2.500000e-01, {{.*}}, 2.500000e-01, 0.000000e+00, {{.*}}]> : tensor<32xf32>
// CHECK: %[[P:.*]] = arith.constant dense<{{\[\[\[\[}}0.000000e+00, 1.000000e+01], [1.000000e+00, 1.100000e+01], [2.000000e+00, 1.200000e+01]{{.*}}> : tensor<2x2x16x2xbf16>
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 2, 2] : tensor<8x4xbf16> into tensor<8x2x2xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[P]] : tensor<8x2x2xbf16>, tensor<2x2x16x2xbf16>) outs(%{{.*}} : tensor<8x2x16xf32>)
// CHECK: tensor.extract_slice {{.*}} to tensor<8x20xf32>
// NODOT-LABEL: func.func @bf16_pairs
// NODOT: ins(%arg0, %{{.*}} : tensor<8x4xbf16>, tensor<4x20xbf16>)
func.func @bf16_pairs(%a: tensor<8x4xbf16>) -> tensor<8x20xf32> {
  %b = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0],
                             [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0],
                             [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0],
                             [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0]]> : tensor<4x20xbf16>
  %bias = arith.constant dense<0.25> : tensor<20xf32>
  %e = tensor.empty() : tensor<8x20xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<20xf32>) outs(%e : tensor<8x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<8x20xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x4xbf16>, tensor<4x20xbf16>) outs(%init : tensor<8x20xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x20xf32>
  return %r : tensor<8x20xf32>
}

// -----

// A run-time int8 B (attention's Q x K^T in a QDQ model: K stored [n][batch][k], as the
// importer reads it through its transpose) is packed by an elementwise kernel into
// P[batch][no][kg][ni][g] = B[32 no + ni][batch][4 kg + g]; the contraction reads A in groups of
// four and the panels with their batch loop. N not a multiple of a vector (40) or K not of four
// (18): left alone (a run-time B is not padded).
// CHECK-LABEL: func.func @run_time_b
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3, 4]] output_shape [2, 32, 3, 4, 4] : tensor<64x3x16xi8> into tensor<2x32x3x4x4xi8>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[VIEW]] : tensor<2x32x3x4x4xi8>) outs(%{{.*}} : tensor<3x2x4x32x4xi8>)
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [3, 8, 4, 4] : tensor<3x8x16xi8> into tensor<3x8x4x4xi8>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[A]], %[[P]] : tensor<3x8x4x4xi8>, tensor<3x2x4x32x4xi8>) outs(%{{.*}} : tensor<3x8x2x32xi32>)
// CHECK: tensor.collapse_shape {{.*}} : tensor<3x8x2x32xi32> into tensor<3x8x64xi32>
// CHECK: ins(%arg2, %arg3 : tensor<3x8x16xi8>, tensor<3x16x40xi8>)
// CHECK: ins(%arg4, %arg5 : tensor<3x8x18xi8>, tensor<3x18x64xi8>)
// RT-LABEL: func.func @run_time_b
// RT: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// RT: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d4, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]
// NODOT-LABEL: func.func @run_time_b
// NODOT-NOT: tensor.expand_shape
func.func @run_time_b(%a: tensor<3x8x16xi8>, %b: tensor<64x3x16xi8>, %c: tensor<3x8x16xi8>, %d: tensor<3x16x40xi8>,
                      %e: tensor<3x8x18xi8>, %f: tensor<3x18x64xi8>) -> (tensor<3x8x64xi32>, tensor<3x8x40xi32>, tensor<3x8x64xi32>) {
  %zero = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<3x8x64xi32>
  %f0 = linalg.fill ins(%zero : i32) outs(%e0 : tensor<3x8x64xi32>) -> tensor<3x8x64xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, b, k)>,
                                        affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<3x8x16xi8>, tensor<64x3x16xi8>) outs(%f0 : tensor<3x8x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x8x64xi32>
  %e1 = tensor.empty() : tensor<3x8x40xi32>
  %f1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<3x8x40xi32>) -> tensor<3x8x40xi32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>,
                                         affine_map<(b, m, n, k) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<3x8x16xi8>, tensor<3x16x40xi8>) outs(%f1 : tensor<3x8x40xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x8x40xi32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>,
                                         affine_map<(b, m, n, k) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %f : tensor<3x8x18xi8>, tensor<3x18x64xi8>) outs(%f0 : tensor<3x8x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x8x64xi32>
  return %r, %r1, %r2 : tensor<3x8x64xi32>, tensor<3x8x40xi32>, tensor<3x8x64xi32>
}
