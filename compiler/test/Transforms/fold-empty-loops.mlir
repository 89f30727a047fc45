// RUN: %hexir-opt %s -split-input-file -hexir-fold-empty-loops | FileCheck %s

// A sum over an empty axis is its zero fill; a matmul over K = 0 its accumulator. An op whose
// loops all have iterations stays.
// CHECK-LABEL: func.func @empty
// CHECK-DAG: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<3xf32>
// CHECK-DAG: %[[ACC:.*]] = linalg.fill {{.*}} -> tensor<3x4xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<3xf32>)
// CHECK: return %[[ZERO]], %[[ACC]], %[[R]]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#vec = affine_map<(i) -> (i)>
func.func @empty(%x: tensor<3x0xf32>, %b: tensor<0x4xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x4xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x0xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<3xf32>
  %e2 = tensor.empty() : tensor<3x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = linalg.matmul ins(%x, %b : tensor<3x0xf32>, tensor<0x4xf32>) outs(%f2 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%v : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  return %s, %m, %r : tensor<3xf32>, tensor<3x4xf32>, tensor<3xf32>
}
