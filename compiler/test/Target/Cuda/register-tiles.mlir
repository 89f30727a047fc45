// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-lower-kernels | FileCheck %s --check-prefix=PTX

// A staged matmul whose threads each accumulate a 4x4 sub-tile (64x64 outputs a block of 256
// threads; K = 256 in steps of 16). The accumulator is each thread's own: a private 4x4
// alloca, not shared memory; every loop over it is unrolled, so its indices are constants
// (LLVM keeps it in 16 registers). The accumulation is the outer product of a column of the
// A tile and a row of the B tile: per step of K, the K loop outside and one multiply-add
// for each of the 16 accumulators inside it.
// CHECK-LABEL: gpu.func @register_tile
// CHECK-SAME: workgroup(%{{.*}} : memref<64x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: %[[ACC:.*]] = memref.alloca() {hexir.cuda_thread_private} : memref<4x4xf32>
// CHECK: scf.for
// CHECK-COUNT-16: memref.store %{{.*}}, %[[ACC]][%c{{[0-3]}}, %c{{[0-3]}}] : memref<4x4xf32>
// CHECK: } {hexir.cuda_thread_loop}
// The steps of K: both tiles copied, then each thread's K loop of 16 over its 16 accumulators.
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c16 {
// CHECK: } {hexir.cuda_thread_loop}
// CHECK: } {hexir.cuda_thread_loop}
// CHECK: scf.for %{{.*}} = %{{.*}} to %c256 step %c256 {
// CHECK-NEXT: arith.remui
// CHECK-NEXT: arith.divui
// CHECK: scf.for %[[K:.*]] = %c0 to %c16 step %c1 {
// CHECK-COUNT-16: memref.load %[[ACC]][%c{{[0-3]}}, %c{{[0-3]}}] : memref<4x4xf32>
// CHECK-NOT: memref.load %[[ACC]]
// CHECK: } {hexir.cuda_thread_loop}
// The epilogue writes each thread's 16 outputs from its accumulators.
// CHECK: scf.for
// CHECK-COUNT-16: memref.load %[[ACC]][%c{{[0-3]}}, %c{{[0-3]}}] : memref<4x4xf32>
// CHECK: } {hexir.cuda_thread_loop}

// In the PTX (sm_90) the two input tiles, each in two slots of 4 KiB (PipelineCopies.h), are
// the only shared memory, nothing is in local memory (no stack frame: the accumulators are
// registers), and the K loop is 16 fma.
// PTX: .shared .align 16 .b8 __wg_register_tile_0[8192];
// PTX: .shared .align 16 .b8 __wg_register_tile_1[8192];
// PTX-NOT: .shared .align
// PTX-NOT: .local
// PTX-NOT: ld.local
// PTX-NOT: st.local
// PTX-COUNT-16: fma.rn.f32
// PTX-NOT: fma.rn.f32
// PTX-NOT: mul.rn.f32
func.func @register_tile(%a: tensor<1024x256xf32>, %b: tensor<256x512xf32>) -> tensor<1024x512xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x512xf32>) outs(%f : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %m : tensor<1024x512xf32>
}
