// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=512" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="bf16-dot-bits=512" | FileCheck %s
// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=512" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles | FileCheck %s --check-prefix=NOBF16

// A bf16 contraction over weights packed in pairs (--precision bf16): with AVX512-BF16 each
// register tile row takes one vdpbf16ps per vector of 16 columns, its pair of bf16 broadcast as
// one 32-bit lane, the weights read as one flat vector and sliced (not assembled pair by pair).
// The 64 rows run as 4 tiles of 14 and 8 more. Without, the products are extended to f32 and
// multiplied (a target without bf16 dot products keeps f32 operands: ReducePrecision).
// CHECK-LABEL: func.func @dot
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [32], strides = [1]} : vector<64xbf16> to vector<32xbf16>
// CHECK-NOT: vector.insert_strided_slice %{{.*}} : vector<2xbf16>
// CHECK-COUNT-28: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"({{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: return
// NOBF16-LABEL: func.func @dot
// NOBF16-NOT: llvm.call_intrinsic
// NOBF16: arith.extf {{.*}} : vector<{{.*}}xbf16> to vector<{{.*}}xf32>
func.func @dot(%a: tensor<64x16x2xbf16>, %b: tensor<2x16x32x2xbf16>, %bias: tensor<2x32xf32>) -> tensor<64x2x32xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x2x32xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, no, ni) -> (no, ni)>, affine_map<(m, no, ni) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<2x32xf32>) outs(%e : tensor<64x2x32xf32>) {
  ^bb0(%c: f32, %o: f32):
    linalg.yield %c : f32
  } -> tensor<64x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, no, ni, k2, g) -> (m, k2, g)>, affine_map<(m, no, ni, k2, g) -> (no, k2, ni, g)>, affine_map<(m, no, ni, k2, g) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<64x16x2xbf16>, tensor<2x16x32x2xbf16>) outs(%init : tensor<64x2x32xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x2x32xf32>
  return %r : tensor<64x2x32xf32>
}
