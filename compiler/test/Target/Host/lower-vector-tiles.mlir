// RUN: %hexir-opt %s -hexir-lower-vector-tiles | FileCheck %s

// A register tile of 4x16 accumulators over a reduction loop, as bufferization leaves it:
// the accumulator is read and written through a subview at every step. After the pass it is
// read once before the loop, carried in registers (iter_args) and written once after; the
// contraction is 4 FMAs of a broadcast A element by a row of B.
// CHECK-LABEL: func.func @tile
// CHECK: %[[INIT:.*]] = vector.transfer_read %arg2
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK-NOT: vector.transfer_write
// CHECK-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.contract
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.*}} %arg2
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @tile(%a: memref<4x64xf32>, %b: memref<64x16xf32>, %out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = ub.poison : f32
  scf.for %k = %c0 to %c64 step %c1 {
    %sub = memref.subview %out[0, 0] [4, 16] [1, 1] : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1]>>
    %va = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<4x64xf32>, vector<4x1xf32>
    %vb = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x16xf32>, vector<1x16xf32>
    %acc = vector.transfer_read %sub[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x16xf32, strided<[16, 1]>>, vector<4x16xf32>
    %r = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %acc : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
    vector.transfer_write %r, %sub[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<4x16xf32, strided<[16, 1]>>
  }
  return
}
