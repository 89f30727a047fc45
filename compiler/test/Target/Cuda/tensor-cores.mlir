// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_90 allow-tf32=true" -canonicalize -cse | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75 allow-tf32=true" -canonicalize -cse | FileCheck %s --check-prefix=SM75
// RUN: %hexir-opt %s -hexir-cuda-lower-kernels="allow-tf32=1" | FileCheck %s --check-prefix=PTX
// RUN: %hexir-opt %s -hexir-cuda-lower-kernels | FileCheck %s --check-prefix=NOTF32

// --allow-tf32 (TensorCoreTiles.h): the staged 1024x512 matmul's 64x64 block is 32 tiles of
// 16x8 over 8 warps, each warp a 2x2 grid of tiles (a 32x16 corner). A lane keeps its 4
// elements of each of its 4 tiles in a private 2x2x4 array; they are loaded from the shared
// accumulator after the initializer, stored back before the epilogue, and each step of 16 of
// K is 2 x 4 hexir.warp_mma reading the step's shared tiles.
// The input tiles' rows are padded against bank conflicts (a lane group's fragment loads: rows
// g and g + 2 of a 16-float row share banks, 20 floats do not; B's 64-float rows read by 4 lanes
// each need 72), still 16-byte aligned, each in two cp.async slots.
// CHECK-LABEL: gpu.func @tensor_cores
// CHECK-SAME: workgroup(%[[ACC:[^ ]*]] : memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<2x64x20xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<2x16x72xf32, #gpu.address_space<workgroup>>
// CHECK: %[[FRAG:.*]] = memref.alloca() {hexir.cuda_thread_private} : memref<2x2x4xf32>
// The lane's accumulators from the shared accumulator: 16 loads, 16 stores.
// CHECK: scf.for
// CHECK-COUNT-16: memref.store %{{.*}}, %[[FRAG]]
// CHECK: } {hexir.cuda_thread_loop}
// CHECK: scf.for %[[STEP:.*]] = %c0 to %c256 step %c16 {
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8 {
// CHECK-COUNT-4: hexir.warp_mma lane
// CHECK-NOT: arith.mulf
// CHECK: } {hexir.cuda_thread_loop}
// And back, for the epilogue.
// CHECK: scf.for
// CHECK-COUNT-16: memref.load %[[FRAG]]
// CHECK: } {hexir.cuda_thread_loop}

// Before sm_80 there is no mma.sync of TF32: the FMA path, its accumulator in registers.
// SM75-LABEL: gpu.func @tensor_cores
// SM75-NOT: hexir.warp_mma
// SM75: memref.alloca() {hexir.cuda_thread_private} : memref<4x4xf32>
// SM75-NOT: hexir.warp_mma

// In the assembly, per step of 16 of K: 8 mma.sync of TF32 whose 12 distinct fragment elements per 8
// of K are rounded with cvt.rna; no f32 FMA in the step.
// PTX: cvt.rna.tf32.f32
// PTX-COUNT-8: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-NOT: mma.sync
// Without the flag: no tensor cores.
// NOTF32-NOT: mma.sync
// NOTF32-NOT: tf32
// NOTF32: fma.rn.f32
func.func @tensor_cores(%a: tensor<1024x256xf32>, %b: tensor<256x512xf32>) -> tensor<1024x512xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x512xf32>) outs(%f : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %m : tensor<1024x512xf32>
}
