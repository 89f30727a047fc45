// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels -canonicalize -cse | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels -canonicalize -cse -hexir-cuda-emulate-on-host -cse | FileCheck %s --check-prefix=EMULATE
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="capacity=3000" -canonicalize -cse | FileCheck %s --check-prefix=SMALL
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse | FileCheck %s --check-prefix=SMALL

// A staged matmul (16x16 tiles of A and B per step of K = 16, two steps) double-buffered on
// sm_80 and newer (PipelineCopies.h): each tile gets two slots; step 0's tiles are requested
// (cp.async, 16 bytes a copy) before the steps' loop; each step requests the next step's into
// the other slot, if there is one, commits the group, waits for all but the newest (its own),
// and only then meets the barrier before the accumulation reads its slot.
// CHECK-LABEL: gpu.func @pipelined
// CHECK-SAME: workgroup(%[[TA:.*]] : memref<2x16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[TB:.*]] : memref<2x16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: memref.subview %[[TA]][0, 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}[%c0], %{{.*}}[%c0], 4 {bypassL1} : memref<4xf32, {{.*}}> to memref<4xf32, {{.*}}#gpu.address_space<workgroup>>
// CHECK: } {hexir.cuda_async_copy, hexir.cuda_thread_loop}
// CHECK: memref.subview %[[TB]][0, 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: nvgpu.device_async_copy
// CHECK: } {hexir.cuda_async_copy, hexir.cuda_thread_loop}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %c32 step %c16 {
// CHECK: %[[STEP:.*]] = arith.divui %{{.*}}, %c16
// CHECK: %[[CUR:.*]] = arith.remui %[[STEP]], %c2
// CHECK: %[[NEXTSTEP:.*]] = arith.addi %[[STEP]], %c1
// CHECK: %[[NEXT:.*]] = arith.remui %[[NEXTSTEP]], %c2
// CHECK: %[[FOLLOWING:.*]] = arith.addi %[[K]], %c16
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[FOLLOWING]], %c32
// CHECK: scf.if %[[MORE]] {
// CHECK: memref.subview %[[TA]][%[[NEXT]], 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: nvgpu.device_async_copy
// CHECK: memref.subview %[[TB]][%[[NEXT]], 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: nvgpu.device_async_copy
// CHECK: } {hexir.cuda_async_copy, hexir.cuda_thread_loop}
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: memref.subview %[[TA]][%[[CUR]], 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: memref.subview %[[TB]][%[[CUR]], 0, 0] [1, 16, 16] [1, 1, 1]
// CHECK: } {hexir.cuda_thread_loop}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }

// On the host the requests are the copies they make (a block's threads run loop by loop, so a
// copy is done when waited for), 16-byte aligned vectors whose alignment is checked as the
// GPU's cp.async needs it; the groups and waits are gone.
// EMULATE-LABEL: func.func @pipelined
// EMULATE-NOT: nvgpu.
// EMULATE-NOT: nvvm.
// EMULATE: vector.load %{{.*}}[%c0] : memref<4xf32, {{.*}}>, vector<4xf32>
// EMULATE: vector.store %{{.*}}, %{{.*}}[%c0] : memref<4xf32, {{.*}}>, vector<4xf32>
// EMULATE-NOT: nvgpu.
// EMULATE-NOT: nvvm.

// Where two slots of each tile would not fit (a block's shared memory of 3,000 bytes here),
// or before sm_80 (no cp.async), each tile keeps one slot, copied synchronously.
// SMALL-LABEL: gpu.func @pipelined
// SMALL-SAME: workgroup(%{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// SMALL-NOT: nvgpu.
// SMALL-NOT: nvvm.cp.async
// SMALL: vector.store
// SMALL-NOT: nvgpu.
// SMALL-NOT: nvvm.cp.async
func.func @pipelined(%a: tensor<32x32xf32>, %b: tensor<32x64xf32>) -> tensor<32x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %m : tensor<32x64xf32>
}
