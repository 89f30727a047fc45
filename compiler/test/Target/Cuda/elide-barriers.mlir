// RUN: %hexir-opt %s -split-input-file -hexir-cuda-split-reductions -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse | FileCheck %s

// The outliner keeps a barrier after a thread loop only where the next loop reads or writes
// what it did from other threads (ElideBarriers.h). A split sum: the partials written to
// shared memory, then read by the thread combining them: one barrier between, none at the end.
// CHECK-LABEL: gpu.func @pool
// CHECK: scf.for %{{.*}} = %{{.*}} to %c224 step %c224 {
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<{{.*}}#gpu.address_space<workgroup>>
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1 step %c224 {
// CHECK: memref.load %{{.*}} : memref<{{.*}}#gpu.address_space<workgroup>>
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.return
#in = affine_map<(n, c, h, w) -> (n, h, w, c)>
#out = affine_map<(n, c, h, w) -> (n, c)>
func.func @pool(%x: tensor<1x56x56x16xf32>) -> tensor<1x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
  %s = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<1x56x56x16xf32>) outs(%f : tensor<1x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  return %s : tensor<1x16xf32>
}

// -----

// A staged matmul whose C is a binding (a Gemm with beta): the initializer reads C from global
// memory into each thread's accumulator, so the barrier after it stays (the next loops are in
// the steps' loop, which this does not look into). In each step: the two tile copies write
// different shared buffers (no barrier between), the accumulation reads both (a barrier
// before it), and the next step's copies overwrite them (a barrier at the end of the step).
// The epilogue writes global memory, last: no barrier after it.
// CHECK-LABEL: gpu.func @gemm_with_c
// CHECK: memref.alloca() {hexir.cuda_thread_private}
// CHECK: scf.for %{{.*}} = %{{.*}} to %c256 step %c256 {
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16 {
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NOT: gpu.barrier
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.barrier
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.return
func.func @gemm_with_c(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %m = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}
