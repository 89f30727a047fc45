// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse | FileCheck %s --check-prefix=OUTLINE
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse -hexir-cuda-emulate-on-host -cse | FileCheck %s --check-prefix=EMULATE
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -hexir-cuda-outline-kernels="chip=sm_75" -canonicalize -cse -hexir-cuda-emulate-on-host=reverse=true -cse | FileCheck %s --check-prefix=REVERSE
// RUN: %hexir-opt %s -hexir-cuda-lower-kernels | FileCheck %s --check-prefix=PTX

// A staged matmul (StageContractions) after bufferization and outlining: 32x64 outputs in 8
// blocks of 16x16, K = 32 in two steps of 16. The two input tiles of a step are workgroup
// attributions (2 KiB); the accumulator, of which each thread only touches its own element,
// is the thread's private alloca (registers). Each thread forall is a loop from the thread
// index in steps of the block size; the block index gives the tile. A barrier follows a loop
// only where the next one touches what it did from other threads (ElideBarriers.h): none after
// the initializer (it writes only the thread's own accumulator), none between the two copies
// (each writes its own tile), one after the copies (the accumulation reads them), one at the
// end of each step (the next step's copies overwrite what it read), none at the end.
// OUTLINE-LABEL: gpu.func @staged
// OUTLINE-SAME: workgroup(%[[TA:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[TB:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// OUTLINE-SAME: hexir.cuda_staged
// OUTLINE-SAME: hexir.workgroup_size = 256 : i64, hexir.workgroups = 8 : i64
// OUTLINE: %[[T:.*]] = gpu.thread_id x
// OUTLINE: %[[ACC:.*]] = memref.alloca() {hexir.cuda_thread_private} : memref<1x1xf32>
// OUTLINE: gpu.block_id x
// OUTLINE: scf.for %{{.*}} = %[[T]] to %c256 step %c256 {
// OUTLINE: memref.store %{{.*}}, %[[ACC]][%c0, %c0] : memref<1x1xf32>
// OUTLINE: } {hexir.cuda_thread_loop}
// OUTLINE-NOT: gpu.barrier
// Each step's two tile copies move 4 floats a thread (64 iterations), as one 16-byte aligned
// vector load from the binding and one store to shared memory.
// OUTLINE: scf.for %{{.*}} = %c0 to %c32 step %c16 {
// OUTLINE: scf.for %{{.*}} = %[[T]] to %c64 step %c256 {
// OUTLINE: vector.load %{{.*}} {alignment = 16 : i64} : memref<4xf32, {{.*}}>, vector<4xf32>
// OUTLINE: vector.store %{{.*}} {alignment = 16 : i64} : memref<4xf32, {{.*}}#gpu.address_space<workgroup>>, vector<4xf32>
// OUTLINE: } {hexir.cuda_thread_loop}
// OUTLINE-NOT: gpu.barrier
// OUTLINE: scf.for %{{.*}} = %[[T]] to %c64 step %c256 {
// OUTLINE: vector.load
// OUTLINE: } {hexir.cuda_thread_loop}
// OUTLINE-NEXT: gpu.barrier
// OUTLINE: scf.for %{{.*}} = %[[T]] to %c256 step %c256 {
// OUTLINE: memref.load %[[ACC]][%c0, %c0]
// OUTLINE: arith.mulf
// OUTLINE: arith.addf
// OUTLINE: memref.store %{{.*}}, %[[ACC]][%c0, %c0]
// OUTLINE: } {hexir.cuda_thread_loop}
// OUTLINE-NEXT: gpu.barrier
// OUTLINE: }
// OUTLINE: scf.for %{{.*}} = %[[T]] to %c256 step %c256 {
// OUTLINE: memref.load %[[ACC]][%c0, %c0]
// OUTLINE: llvm.call_intrinsic "llvm.fma.f32"
// OUTLINE: memref.store %{{.*}}, %{{.*}} : memref<1x1xf32, strided<[64, 1], offset: ?>>
// OUTLINE: } {hexir.cuda_thread_loop}
// OUTLINE-NEXT: gpu.return

// On the host, a block's shared memory is two allocas of the call, aligned as on the GPU;
// each thread loop runs every iteration in turn (the barrier is the end of the loop), the
// steps' loop around them. The private accumulator is one frame every emulated thread
// shares, loaded from and saved to that thread's place in an array of all 256 around each
// iteration that uses it.
// EMULATE-LABEL: func.func @staged
// EMULATE-DAG: memref.alloca() {alignment = 16 : i64} : memref<16x16xf32>
// EMULATE-DAG: %[[ALL:.*]] = memref.alloca() : memref<256x1x1xf32>
// EMULATE-DAG: %[[FRAME:.*]] = memref.alloca() {hexir.cuda_thread_private} : memref<1x1xf32>
// EMULATE: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %c1 {
// EMULATE: scf.for %[[I:.*]] = %c0 to %c256 step %c1 {
// EMULATE: memref.load %[[ALL]][%[[I]], %{{.*}}, %{{.*}}] : memref<256x1x1xf32>
// EMULATE: memref.store %{{.*}}, %[[FRAME]]
// EMULATE: memref.store %{{.*}}, %[[FRAME]][%c0, %c0]
// EMULATE: memref.load %[[FRAME]]
// EMULATE: memref.store %{{.*}}, %[[ALL]][%[[I]], %{{.*}}, %{{.*}}] : memref<256x1x1xf32>
// EMULATE: scf.for %{{.*}} = %c0 to %c32 step %c16 {
// EMULATE: scf.for %{{.*}} = %c0 to %c64 step %c1 {
// EMULATE: scf.for %{{.*}} = %c0 to %c64 step %c1 {
// EMULATE: scf.for %{{.*}} = %c0 to %c256 step %c1 {
// EMULATE-NOT: gpu.
// EMULATE-NOT: #gpu.address_space
// EMULATE-NOT: hexir.cuda_thread_loop
// REVERSE-LABEL: func.func @staged
// REVERSE: scf.for %[[I:.*]] = %c0 to %c256 step %c1 {
// REVERSE-NEXT: %[[END:.*]] = arith.addi %c0, %c256
// REVERSE-NEXT: %[[LAST:.*]] = arith.subi %[[END]], %c1
// REVERSE-NEXT: arith.subi %[[LAST]], %[[I]]

// The PTX (sm_90) has two .shared arrays, each declared 16-byte aligned (LLVM vectorizes their
// accesses by that) and double-buffered (PipelineCopies.h: two slots of 1 KiB); nothing
// imported, nothing in local memory (the accumulator is a register). The tiles move 16 bytes
// a copy, asynchronously, each step waiting for its own.
// PTX: .shared .align 16 .b8 __wg_staged_0[2048];
// PTX: .shared .align 16 .b8 __wg_staged_1[2048];
// PTX-NOT: .shared .align
// PTX-NOT: .extern
// PTX-NOT: .local
// PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// PTX: cp.async.commit_group;
// PTX: cp.async.wait_group \091;
// PTX: bar.sync \090;
// The accumulation's multiply-adds contract into fma (as cuBLAS does for f32): no explicitly
// rounded mul.rn / add.rn pair, which ptxas would have to keep apart.
// PTX: fma.rn.f32
// PTX-NOT: mul.rn.f32
// PTX-NOT: add.rn.f32
func.func @staged(%a: tensor<32x32xf32>, %b: tensor<32x64xf32>) -> tensor<32x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} ins(%m : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.tanh %x : f32
    linalg.yield %y : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}
