// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights | FileCheck %s
// Panels at most as wide as the target's register tile of two vectors: 16 with AVX2, 8 with SSE.
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights=max-panel=16 | FileCheck %s --check-prefix=AVX2
// RUN: %hexir-opt %s -split-input-file -hexir-pack-matmul-weights=max-panel=8 | FileCheck %s --check-prefix=SSE

// A Gemm with transB (weights [N, K] = [16, 2], B[n][k] = 2n + k) and a bias: the weights are
// packed into one 2x16 panel P[0][k][n] = B[n][k] (row k = 0 holds 0, 2, 4, ...), the
// contraction runs over (m, no, ni, k) into a 4x1x16 accumulator whose bias broadcast is
// rebuilt in that shape (the bias viewed as 1x16), and the result is viewed back as 4x16.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gemm
// CHECK: %[[PACKED:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00{{.*}}> : tensor<1x2x16xf32>
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[P]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %[[PACKED]] : tensor<4x2xf32>, tensor<1x2x16xf32>) outs(%[[BIAS]] : tensor<4x1x16xf32>)
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<4x1x16xf32> into tensor<4x16xf32>
// CHECK: return %[[OUT]]
func.func @gemm(%x: tensor<4x2xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0], [24.0, 25.0], [26.0, 27.0], [28.0, 29.0], [30.0, 31.0]]> : tensor<16x2xf32>
  %bias = arith.constant dense<1.5> : tensor<16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x2xf32>, tensor<16x2xf32>) outs(%acc : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Run-time weights (a function argument) and a column count no panel width divides (N = 12)
// stay as they are.
// CHECK-LABEL: func.func @unpacked
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @unpacked(%x: tensor<4x2xf32>, %w: tensor<2x16xf32>) -> (tensor<4x16xf32>, tensor<4x12xf32>) {
  %zero = arith.constant 0.0 : f32
  %w12 = arith.constant dense<0.5> : tensor<2x12xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e12 = tensor.empty() : tensor<4x12xf32>
  %f12 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<4x12xf32>) -> tensor<4x12xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w12 : tensor<4x2xf32>, tensor<2x12xf32>) outs(%f12 : tensor<4x12xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  return %y, %z : tensor<4x16xf32>, tensor<4x12xf32>
}

// -----

// 64 columns: two 32-wide panels by default, four 16-wide ones under AVX2, eight 8-wide ones
// under SSE.
// CHECK-LABEL: func.func @wide
// CHECK: ins(%arg0, %{{.*}} : tensor<4x2xf32>, tensor<2x2x32xf32>) outs(%{{.*}} : tensor<4x2x32xf32>)
// AVX2-LABEL: func.func @wide
// AVX2: ins(%arg0, %{{.*}} : tensor<4x2xf32>, tensor<4x2x16xf32>) outs(%{{.*}} : tensor<4x4x16xf32>)
// SSE-LABEL: func.func @wide
// SSE: ins(%arg0, %{{.*}} : tensor<4x2xf32>, tensor<8x2x8xf32>) outs(%{{.*}} : tensor<4x8x8xf32>)
func.func @wide(%x: tensor<4x2xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<2x64xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x2xf32>, tensor<2x64xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// A run-time B[K][N] read by 64 rows is packed by a kernel of its own: B viewed as [K][N/nr][nr]
// and permuted, with loops in B's order (k, no, ni), into panels P[no][k][ni]; the contraction
// then reads the panels as it reads packed constants. With 32 rows it stays unpacked where
// B's rows are 48 floats apart, and is packed where they are 1024 floats (4 KiB) apart.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[KNO:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @runtime
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [8, 3, 16] : tensor<8x48xf32> into tensor<8x3x16xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x8x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KNO]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[VIEW]] : tensor<8x3x16xf32>) outs(%[[E]] : tensor<3x8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[P]] : tensor<64x8xf32>, tensor<3x8x16xf32>) outs(%{{.*}} : tensor<64x3x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg2, %arg1 : tensor<32x8xf32>, tensor<8x48xf32>) outs(%{{.*}} : tensor<32x48xf32>)
// CHECK: tensor.expand_shape %arg3 {{.*}} : tensor<8x1024xf32> into tensor<8x32x32xf32>
// CHECK: linalg.generic {{.*}} ins(%arg2, %{{.*}} : tensor<32x8xf32>, tensor<32x8x32xf32>) outs(%{{.*}} : tensor<32x32x32xf32>)
func.func @runtime(%a: tensor<64x8xf32>, %b: tensor<8x48xf32>, %c: tensor<32x8xf32>, %d: tensor<8x1024xf32>)
    -> (tensor<64x48xf32>, tensor<32x48xf32>, tensor<32x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<8x48xf32>) outs(%f : tensor<64x48xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  %e2 = tensor.empty() : tensor<32x48xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %b : tensor<32x8xf32>, tensor<8x48xf32>) outs(%f2 : tensor<32x48xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x48xf32>
  %e3 = tensor.empty() : tensor<32x1024xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<32x1024xf32>) -> tensor<32x1024xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<32x8xf32>, tensor<8x1024xf32>) outs(%f3 : tensor<32x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x1024xf32>
  return %y, %z, %u : tensor<64x48xf32>, tensor<32x48xf32>, tensor<32x1024xf32>
}

// -----

// A run-time B read with k innermost: as [N][K] (a Gemm with transB) packed whatever the rows,
// B viewed as [N/nr][nr][K] and transposed in the panels' loop order; batched (attention's
// Q x K^T) transposed into [..., K, N] by an elementwise op.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[NIK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @k_innermost
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [1, 32, 8] : tensor<32x8xf32> into tensor<1x32x8xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[NIK]], #[[ID3]]], {{.*}} ins(%[[VIEW]] : tensor<1x32x8xf32>) outs(%{{.*}} : tensor<1x8x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[P]] : tensor<4x8xf32>, tensor<1x8x32xf32>) outs(%{{.*}} : tensor<4x1x32xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<2x32x8xf32>) outs(%{{.*}} : tensor<2x8x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg2, %[[T]] : tensor<2x16x8xf32>, tensor<2x8x32xf32>) outs(%{{.*}} : tensor<2x16x32xf32>)
func.func @k_innermost(%a: tensor<4x8xf32>, %b: tensor<32x8xf32>, %q: tensor<2x16x8xf32>, %k: tensor<2x32x8xf32>)
    -> (tensor<4x32xf32>, tensor<2x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<32x8xf32>) outs(%f : tensor<4x32xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<2x16x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, m, n, k) -> (h, m, k)>, affine_map<(h, m, n, k) -> (h, n, k)>, affine_map<(h, m, n, k) -> (h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16x8xf32>, tensor<2x32x8xf32>) outs(%f2 : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<2x16x32xf32>
  return %y, %s : tensor<4x32xf32>, tensor<2x16x32xf32>
}
