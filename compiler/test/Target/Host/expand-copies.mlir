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
