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
// may give them one buffer; it is loops at once (views of the output would keep register tiles
// from being hoisted). The row's copy into a slice is an ordinary linalg.copy.
// CHECK-LABEL: func.func @update
// CHECK: %[[FROM:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[TO:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[DIFFER:.*]] = arith.cmpi ne, %[[FROM]], %[[TO]]
// CHECK: scf.if %[[DIFFER]] {
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[V:.*]] = memref.load %arg0
// CHECK: memref.store %[[V]], %arg2
// CHECK: memref.subview %arg2
// CHECK: linalg.copy
func.func @update(%cache: memref<16x8xf32>, %row: memref<1x8xf32>, %out: memref<16x8xf32>) {
  memref.copy %cache, %out : memref<16x8xf32> to memref<16x8xf32>
  %s = memref.subview %out[5, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 40>>
  memref.copy %row, %s : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 40>>
  return
}

// The same region of two arguments (a slice writer's copy around its slice): guarded alike.
// CHECK-LABEL: func.func @around_slice
// CHECK: %[[FROM:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[TO:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[DIFFER:.*]] = arith.cmpi ne, %[[FROM]], %[[TO]]
// CHECK: scf.if %[[DIFFER]] {
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: linalg.copy
func.func @around_slice(%dest: memref<4x32xf32>, %out: memref<4x32xf32>) {
  %a = memref.subview %dest[0, 0] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1]>>
  %b = memref.subview %out[0, 0] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1]>>
  memref.copy %a, %b : memref<4x16xf32, strided<[32, 1]>> to memref<4x16xf32, strided<[32, 1]>>
  return
}

// Different regions are copied unconditionally.
// CHECK-LABEL: func.func @other_region
// CHECK-NOT: scf.if
// CHECK: linalg.copy
func.func @other_region(%dest: memref<4x32xf32>, %out: memref<4x32xf32>) {
  %a = memref.subview %dest[0, 0] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1]>>
  %b = memref.subview %out[0, 16] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1], offset: 16>>
  memref.copy %a, %b : memref<4x16xf32, strided<[32, 1]>> to memref<4x16xf32, strided<[32, 1], offset: 16>>
  return
}
