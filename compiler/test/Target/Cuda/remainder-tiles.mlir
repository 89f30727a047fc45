// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse | FileCheck %s

// 197 rows (a ViT's tokens): nothing from 8 to 64 divides it, so the blocks take 16 rows and the
// 13th block, which would run past the end, starts at 181 instead (affine.min): every block is
// a whole static tile, and rows 181-191 are computed by two blocks, which write the same values.
// CHECK-DAG: #[[SHIFT:.*]] = affine_map<(d0) -> (181, d0)>
// CHECK-LABEL: func.func @tokens
// CHECK-SAME: hexir.cuda_staged
// CHECK: scf.forall (%[[I:.*]], %{{.*}}) = (0, 0) to (197, 96) step (16, 16)
// CHECK: %[[ROW:.*]] = affine.min #[[SHIFT]](%[[I]])
// CHECK: tensor.extract_slice %arg0[%[[ROW]], 0] [16, 64] [1, 1] : tensor<197x64xf32> to tensor<16x64xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[ROW]], %{{.*}}] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<197x96xf32>
func.func @tokens(%a: tensor<197x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<197x96xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<197x96xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<96xf32>) outs(%e : tensor<197x96xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<197x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<197x64xf32>, tensor<64x96xf32>) outs(%f : tensor<197x96xf32>) -> tensor<197x96xf32>
  return %m : tensor<197x96xf32>
}

// A Gemm accumulating onto its binding C, which the planner may let the output overwrite (an
// update in place): two blocks reading C where one of them already wrote would be wrong, so
// no tile is shifted, and 197 rows take no tile but 1 (not staged).
// CHECK-LABEL: func.func @accumulate_onto_c
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: affine.min
// CHECK: return
func.func @accumulate_onto_c(%a: tensor<197x64xf32>, %b: tensor<64x96xf32>, %c: tensor<197x96xf32>) -> tensor<197x96xf32> attributes {hexir.kernel} {
  %m = linalg.matmul ins(%a, %b : tensor<197x64xf32>, tensor<64x96xf32>) outs(%c : tensor<197x96xf32>) -> tensor<197x96xf32>
  return %m : tensor<197x96xf32>
}
