// RUN: %hexir-opt %s -split-input-file -hexir-distribute-workgroups="min-work=1 max-workgroups=4" | FileCheck %s

// A zero-filled matmul accumulator, out[32x16]: both the fill and the matmul write the output
// with output dimension 0 as a parallel loop, so both are tiled along it in chunks of 8 rows
// (4 workgroups) and each runs rows [begin * 8, min(end * 8, 32)).
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%{{.*}}: memref<32x8xf32>, %{{.*}}: memref<8x16xf32>, %[[OUT:.*]]: memref<32x16xf32>, %[[BEGIN:.*]]: i32, %[[END:.*]]: i32)
// CHECK-SAME: hexir.workgroups = 4
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i32 to index
// CHECK-DAG: %[[E:.*]] = arith.index_cast %[[END]] : i32 to index
// CHECK: %[[LO:.*]] = arith.muli %[[B]], %[[C8]]
// CHECK: %[[EC:.*]] = arith.muli %[[E]], %[[C8]]
// CHECK: %[[HI:.*]] = arith.minsi %[[EC]], %[[C32]]
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[C8]]
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[C8]]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x8xf32, strided<[8, 1], offset: ?>>, memref<8x16xf32>)
func.func @matmul(%a: memref<32x8xf32>, %b: memref<8x16xf32>, %out: memref<32x16xf32>) attributes {hexir.num_outputs = 1 : i64} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<32x16xf32>)
  linalg.matmul ins(%a, %b : memref<32x8xf32>, memref<8x16xf32>) outs(%out : memref<32x16xf32>)
  return
}

// -----

// An output written through a subview (a pad's interior) cannot be split by rows: one
// workgroup, the range arguments unused.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: %{{.*}}: i32, %{{.*}}: i32)
// CHECK-SAME: hexir.workgroups = 1
// CHECK-NOT: scf.for
func.func @pad(%a: memref<2x2xf32>, %out: memref<4x4xf32>) attributes {hexir.num_outputs = 1 : i64} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<4x4xf32>)
  %s = memref.subview %out[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  linalg.copy ins(%a : memref<2x2xf32>) outs(%s : memref<2x2xf32, strided<[4, 1], offset: 5>>)
  return
}

// -----

// A reduction along the only dimension of extent > 1 cannot be split: one workgroup.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: hexir.workgroups = 1
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @reduce(%a: memref<1x64xf32>, %out: memref<1xf32>) attributes {hexir.num_outputs = 1 : i64} {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<1x64xf32>) outs(%out : memref<1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
