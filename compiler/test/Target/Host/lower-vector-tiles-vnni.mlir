// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=512" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="dot-bits=512" | FileCheck %s
// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=512" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles | FileCheck %s --check-prefix=NOVNNI

// An int8 contraction over weights packed in groups of four (PackMatmulWeights' dot groups):
// with AVX512-VNNI each register tile row takes one vpdpbusd per vector of 16 columns, its
// four bytes broadcast as one int32. The 64 rows run as 4 tiles of 14 (in the workgroup loop)
// and 8 more: 14 x 2 and 8 x 2 dot products per reduction step, no widening multiplies.
// Without VNNI the same contraction is widened and multiplied (a target without VNNI packs its
// weights in pairs instead, lower-vector-tiles-pairs.mlir).
// CHECK-LABEL: func.func @dot
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-28: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"({{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: arith.muli {{.*}} : vector
// CHECK: return
// NOVNNI-LABEL: func.func @dot
// NOVNNI-NOT: llvm.call_intrinsic
// NOVNNI: arith.muli {{.*}} : vector<4xi32>
func.func @dot(%a: tensor<64x16x4xi8>, %b: tensor<2x16x32x4xi8>, %corr: tensor<2x32xi32>) -> tensor<64x2x32xi32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x2x32xi32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, no, ni) -> (no, ni)>, affine_map<(m, no, ni) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%corr : tensor<2x32xi32>) outs(%e : tensor<64x2x32xi32>) {
  ^bb0(%c: i32, %o: i32):
    linalg.yield %c : i32
  } -> tensor<64x2x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, no, ni, k4, g) -> (m, k4, g)>, affine_map<(m, no, ni, k4, g) -> (no, k4, ni, g)>, affine_map<(m, no, ni, k4, g) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<64x16x4xi8>, tensor<2x16x32x4xi8>) outs(%init : tensor<64x2x32xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xz = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xz, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<64x2x32xi32>
  return %r : tensor<64x2x32xi32>
}

// A batched contraction over panels packed at run time (a QDQ attention's Q x K^T: the
// panels have the batch loop too): the same vpdpbusd register tiles inside the batch loop,
// 8 rows x 2 vectors per reduction step.
// CHECK-LABEL: func.func @batched_dot
// CHECK: scf.for
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: arith.muli {{.*}} : vector
// CHECK: return
// NOVNNI-LABEL: func.func @batched_dot
// NOVNNI-NOT: llvm.call_intrinsic
// NOVNNI: arith.muli {{.*}} : vector<4xi32>
func.func @batched_dot(%a: tensor<3x8x16x4xi8>, %b: tensor<3x2x16x32x4xi8>) -> tensor<3x8x2x32xi32> attributes {hexir.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x8x2x32xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<3x8x2x32xi32>) -> tensor<3x8x2x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, no, ni, k4, g) -> (b, m, k4, g)>, affine_map<(b, m, no, ni, k4, g) -> (b, no, k4, ni, g)>, affine_map<(b, m, no, ni, k4, g) -> (b, m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<3x8x16x4xi8>, tensor<3x2x16x32x4xi8>) outs(%init : tensor<3x8x2x32xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xz = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xz, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x8x2x32xi32>
  return %r : tensor<3x8x2x32xi32>
}
