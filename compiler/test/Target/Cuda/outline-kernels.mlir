// RUN: %hexir-opt %s -split-input-file -hexir-cuda-outline-kernels -verify-diagnostics | FileCheck %s

// One loop nest: one gpu.func with every binding, iteration blockIdx.x * 256 + threadIdx.x
// delinearized (innermost loop fastest), threads past the last iteration idle, the launch shape
// recorded (8 x 32 = 256 iterations: one block of 256 threads). The thread's temporary is an
// alloca in the entry block and its linalg ops are sequential loops.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @hexir_kernels
// CHECK: gpu.func @k(%[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<8x32xf32>) kernel
// CHECK-SAME: hexir.workgroup_size = 256 : i64, hexir.workgroups = 1 : i64, known_block_size = array<i32: 256, 1, 1>
// CHECK: memref.alloca() : memref<1x1xf32>
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: arith.cmpi ult, %{{.*}}, %c256
// CHECK: scf.if
// CHECK: arith.remui %{{.*}}, %c32
// CHECK: arith.divui %{{.*}}, %c32
// CHECK: scf.for
// CHECK-NOT: linalg.
// CHECK: gpu.return
// CHECK-NOT: func.func
func.func @k(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (8, 32) {
    %sa = memref.subview %a[%i, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    %sb = memref.subview %b[0, %j] [16, 1] [1, 1] : memref<16x32xf32> to memref<16x1xf32, strided<[32, 1], offset: ?>>
    %t = memref.alloc() : memref<1x1xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<1x1xf32>)
    linalg.matmul ins(%sa, %sb : memref<1x16xf32, strided<[16, 1], offset: ?>>, memref<16x1xf32, strided<[32, 1], offset: ?>>)
                  outs(%t : memref<1x1xf32>)
    %sc = memref.subview %c[%i, %j] [1, 1] [1, 1] : memref<8x32xf32> to memref<1x1xf32, strided<[32, 1], offset: ?>>
    memref.copy %t, %sc : memref<1x1xf32> to memref<1x1xf32, strided<[32, 1], offset: ?>>
  }
  return
}

// -----

// A pad as bufferization leaves it when it is not tiled: a fill, then a copy of the source into
// the interior. Two nests, two launches in order: `pad` (1000 iterations: 4 blocks) and `pad__1`
// (a copy of 512 elements: 2 blocks).
// CHECK: gpu.func @pad({{.*}}) kernel attributes {{.*}}hexir.workgroup_size = 256 : i64, hexir.workgroups = 4 : i64
// CHECK: arith.cmpi ult, %{{.*}}, %c1000
// CHECK: gpu.func @pad__1({{.*}}) kernel attributes {{.*}}hexir.workgroup_size = 256 : i64, hexir.workgroups = 2 : i64
// CHECK: arith.cmpi ult, %{{.*}}, %c512
func.func @pad(%x: memref<8x8x8xf32>, %y: memref<10x10x10xf32>) attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<10x10x10xf32>)
  %interior = memref.subview %y[1, 1, 1] [8, 8, 8] [1, 1, 1]
      : memref<10x10x10xf32> to memref<8x8x8xf32, strided<[100, 10, 1], offset: 111>>
  memref.copy %x, %interior : memref<8x8x8xf32> to memref<8x8x8xf32, strided<[100, 10, 1], offset: 111>>
  return
}

// -----

// A small nest gets one block of whole warps: 20 iterations, 32 threads.
// CHECK: gpu.func @small({{.*}}) kernel attributes {{.*}}hexir.workgroup_size = 32 : i64, hexir.workgroups = 1 : i64, known_block_size = array<i32: 32, 1, 1>}
func.func @small(%x: memref<20xf32>, %y: memref<20xf32>) attributes {hexir.kernel} {
  linalg.copy ins(%x : memref<20xf32>) outs(%y : memref<20xf32>)
  return
}

// -----

// Nests passing a temporary buffer to each other: the kernel runs whole on one thread, the
// temporary in its local memory, the nests in order as sequential loops.
// CHECK: gpu.func @temporary({{.*}}) kernel attributes {{.*}}hexir.workgroup_size = 1 : i64, hexir.workgroups = 1 : i64, known_block_size = array<i32: 1, 1, 1>}
// CHECK: memref.alloca() : memref<16xf32>
// CHECK-NOT: gpu.thread_id
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.return
func.func @temporary(%x: memref<16xf32>, %y: memref<16xf32>) attributes {hexir.kernel} {
  %t = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%t : memref<16xf32>)
  linalg.copy ins(%t : memref<16xf32>) outs(%y : memref<16xf32>)
  return
}

// -----

// More temporary bytes than one thread's local memory: refused, with the numbers.
func.func @huge(%x: memref<100000xf32>, %y: memref<100000xf32>) attributes {hexir.kernel} {
  // expected-error @+1 {{kernel 'huge' needs 400000 bytes of temporary buffers between its loop nests, more than the 262144 bytes of local memory the CUDA target gives one thread}}
  %t = memref.alloc() : memref<100000xf32>
  linalg.copy ins(%x : memref<100000xf32>) outs(%t : memref<100000xf32>)
  linalg.copy ins(%t : memref<100000xf32>) outs(%y : memref<100000xf32>)
  return
}

// -----

// A rank-0 reduction has no parallel loop: it runs on thread 0 alone, inside the guard (every
// thread accumulating into the same element would add the input once per thread).
// CHECK: gpu.func @scalar({{.*}}) kernel attributes {{.*}}hexir.workgroup_size = 32 : i64, hexir.workgroups = 1 : i64
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[ID]], %c1
// CHECK-NEXT: scf.if
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
// CHECK: gpu.return
func.func @scalar(%x: memref<f32>, %y: memref<f32>) attributes {hexir.kernel} {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%x : memref<f32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Per-kernel scratch: a thread whose tile needs more local memory than a CUDA thread may have
// (a row of 200,000 floats) is refused, naming the kernel and both sizes.
// expected-error @+1 {{kernel 'wide' needs 800000 bytes of local memory per thread (the temporaries of one thread's tile, such as a row of a row kernel), over the 524288 bytes a CUDA thread may have}}
func.func @wide(%x: memref<4x200000xf32>, %y: memref<4xf32>) attributes {hexir.kernel} {
  scf.forall (%i) in (4) {
    %t = memref.alloc() : memref<200000xf32>
    %row = memref.subview %x[%i, 0] [1, 200000] [1, 1] : memref<4x200000xf32> to memref<200000xf32, strided<[1], offset: ?>>
    memref.copy %row, %t : memref<200000xf32, strided<[1], offset: ?>> to memref<200000xf32>
    %c0 = arith.constant 0 : index
    %v = memref.load %t[%c0] : memref<200000xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  return
}
