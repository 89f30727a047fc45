// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="vector-bits=512" | FileCheck %s

// A softmax over rows of 128 as one kernel, AVX-512 (16 lanes). 64 rows x 128 x 4 ops at the
// default 32,768 elements of work per workgroup: 2 workgroups of 32 rows. Each runs the chain on its rows: the
// row max as 64-wide partial maxima (two steps of four vectors) combined into one value per row,
// exp(x - max) written into the output's rows, the row sum the same way from the output, then
// the division in place. The per-row values and partials are stack buffers of the chunk, made
// once at the kernel's entry; no full-size temporary exists.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: hexir.workgroups = 2
// CHECK-DAG: memref.alloca() : memref<32x64xf32>
// CHECK-DAG: memref.alloca() : memref<32xf32>
// CHECK: %[[BEGIN:.*]], %[[END:.*]] = hexir.workgroup_range
// CHECK: scf.for %[[W:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: %[[OUT:.*]] = tensor.extract_slice %{{.*}}[%[[ROW:.*]], 0] [32, 128] [1, 1]
// CHECK: vector.multi_reduction <maximumf>, %{{.*}} [1] : vector<1x1x64xf32> to vector<1x64xf32>
// CHECK: vector.multi_reduction <maximumf>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK: math.exp %{{.*}} : vector<1x64xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}} [1] : vector<1x1x64xf32> to vector<1x64xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK: arith.divf %{{.*}} : vector<1x64xf32>
// CHECK: tensor.insert_slice %{{.*}}[%[[ROW]], 0] [32, 128] [1, 1]
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.empty() : tensor<64x128xf32>
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %ef = tensor.empty() : tensor<64x128xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%fmax : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<64x128xf32>, tensor<64xf32>) outs(%ef : tensor<64x128xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<64x128xf32>) outs(%fsum : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%ef : tensor<64x128xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// A full-size intermediate read again after the next full-size op: it cannot live in the
// output, so the kernel is not a row kernel (left to the memref-level passes).
// CHECK-LABEL: func.func @not_in_place
// CHECK-NOT: hexir.workgroup_range
// CHECK: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @not_in_place(%x: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %ef = tensor.empty() : tensor<4x32xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x32xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<4x32xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x32xf32>) outs(%fsum : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum, %t : tensor<4x32xf32>, tensor<4xf32>, tensor<4x32xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %s: f32, %tv: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    %a = arith.addf %q, %tv : f32
    linalg.yield %a : f32
  } -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// A QDQ softmax: int8 scores dequantized in the max and the exp, the probabilities requantized
// to int8. The f32 exponentials cannot live in the int8 output: they go to a stack buffer of
// the chunk's rows, and the last op writes int8 into the output's rows. That buffer counts
// against the stack budget: 4 workgroups of 16 rows (not 2 of 32, whose buffers would pass
// 32 KiB).
// CHECK-LABEL: func.func @softmax_int8
// CHECK-SAME: hexir.workgroups = 4
// CHECK-DAG: memref.alloca() : memref<16x128xf32>
// CHECK-DAG: memref.alloca() : memref<16x64xf32>
// CHECK: scf.for
// CHECK: %[[OUT:.*]] = tensor.extract_slice %{{.*}}[%[[ROW:.*]], 0] [16, 128] [1, 1] : tensor<64x128xi8> to tensor<16x128xi8>
// CHECK: math.exp %{{.*}} : vector<1x64xf32>
// CHECK: arith.fptosi %{{.*}} : vector<1x64xf32> to vector<1x64xi8>
// CHECK: tensor.insert_slice %{{.*}}[%[[ROW]], 0] [16, 128] [1, 1] : tensor<16x128xi8> into tensor<64x128xi8>
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.empty() : tensor<64x128xf32>
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @softmax_int8(%x: tensor<64x128xi8>) -> tensor<64x128xi8> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %s = arith.constant 0.0625 : f32
  %p = arith.constant 255.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %ef = tensor.empty() : tensor<64x128xf32>
  %eq = tensor.empty() : tensor<64x128xi8>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xi8>) outs(%fmax : tensor<64xf32>) {
  ^bb0(%in: i8, %acc: f32):
    %f = arith.sitofp %in : i8 to f32
    %d = arith.mulf %f, %s : f32
    %m = arith.maximumf %acc, %d : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<64x128xi8>, tensor<64xf32>) outs(%ef : tensor<64x128xf32>) {
  ^bb0(%in: i8, %m: f32, %o: f32):
    %f = arith.sitofp %in : i8 to f32
    %dq = arith.mulf %f, %s : f32
    %d = arith.subf %dq, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<64x128xf32>) outs(%fsum : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%eq : tensor<64x128xi8>) {
  ^bb0(%in: f32, %sm: f32, %o: i8):
    %q = arith.divf %in, %sm : f32
    %r = arith.mulf %q, %p : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<64x128xi8>
  return %y : tensor<64x128xi8>
}
