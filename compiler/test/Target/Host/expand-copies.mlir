// RUN: %hexir-opt %s -hexir-expand-copies | FileCheck %s

// A strided copy would need the memrefCopy runtime function; it becomes linalg.copy.
// CHECK-LABEL: func.func @f
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<2x2xf32>) outs(%{{.*}} : memref<2x2xf32, strided<[4, 1], offset: 5>>)
func.func @f(%a: memref<2x2xf32>, %b: memref<4x4xf32>) {
  %s = memref.subview %b[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  memref.copy %a, %s : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  return
}

// A whole input copied into a whole output (bufferization's start of an update in place: a
// KV cache, then its new row): the copy runs only when the two buffers differ, since the plan
// may give them one buffer.
// CHECK-LABEL: func.func @update
// CHECK: %[[FROM:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[TO:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[DIFFER:.*]] = arith.cmpi ne, %[[FROM]], %[[TO]]
// CHECK: scf.if %[[DIFFER]] {
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<16x8xf32>) outs(%arg2 : memref<16x8xf32>)
// CHECK-NEXT: }
// CHECK: memref.subview %arg2
func.func @update(%cache: memref<16x8xf32>, %row: memref<1x8xf32>, %out: memref<16x8xf32>) {
  memref.copy %cache, %out : memref<16x8xf32> to memref<16x8xf32>
  %s = memref.subview %out[5, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 40>>
  memref.copy %row, %s : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 40>>
  return
}
