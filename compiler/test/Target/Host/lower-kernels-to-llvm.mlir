// RUN: %hexir-opt %s -hexir-lower-kernels-to-llvm | FileCheck %s

// A kernel on tensors becomes an LLVM function over bare pointers, inputs then outputs, with
// no allocation, no libm call and no memrefCopy; the last two parameters are the workgroup range.
// CHECK-LABEL: llvm.func @k(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-NOT: llvm.call
// CHECK-NOT: malloc
// CHECK: llvm.return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @k(%x: tensor<4x4xf32> {bufferization.writable = false}, %p: tensor<2x2xf32> {bufferization.writable = false}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %i = tensor.insert_slice %p into %g[1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  return %i : tensor<4x4xf32>
}
