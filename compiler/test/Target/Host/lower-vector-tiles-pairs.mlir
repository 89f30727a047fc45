// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=256" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="pair-bits=256" | FileCheck %s
// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=128" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="pair-bits=128" | FileCheck %s --check-prefix=SSE
// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=512" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="pair-bits=512" | FileCheck %s --check-prefix=AVX512
// RUN: %hexir-opt %s -hexir-tile-and-vectorize="vector-bits=256" -one-shot-bufferize="bufferize-function-boundaries" -hexir-lower-vector-tiles="pair-bits=256 dot-bits=256" | FileCheck %s --check-prefix=VNNI

// An int8 contraction over weights packed in pairs (PackMatmulWeights and PackConvFilters with
// int8-group=2, a target without VNNI): each register-tile row and vector of 8 columns is one
// vpmaddwd on int16 values and an int32 add. The row's two unsigned bytes are broadcast as one
// int16 over 128 bits and zero-extended (vpbroadcastw, vpmovzxbw: no shuffle mask to hold in a
// register), the weights sign-extended: every product exact, never the saturating int16 sums
// of vpmaddubsw. AVX2: 6 rows x 2 vectors, 12 per reduction step, no widened int32 multiplies.
// With SSE2, vectors of 4 lanes; with AVX512BW (Skylake-X, without VNNI), of 16, the pair broadcast
// over 256 bits. With VNNI, pairs are not dot products of four: left alone.
// CHECK-LABEL: func.func @pairs
// CHECK: scf.for
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: %[[W:.*]] = vector.bitcast %{{.*}} : vector<2xi8> to vector<1xi16>
// CHECK: %[[E:.*]] = vector.extract %[[W]][0] : i16 from vector<1xi16>
// CHECK: %[[B:.*]] = vector.broadcast %[[E]] : i16 to vector<8xi16>
// CHECK: %[[BYTES:.*]] = vector.bitcast %[[B]] : vector<8xi16> to vector<16xi8>
// CHECK: %[[A:.*]] = arith.extui %[[BYTES]] : vector<16xi8> to vector<16xi16>
// CHECK: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[A]], %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.addi %{{.*}}, %[[P]] : vector<8xi32>
// CHECK-COUNT-11: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: arith.muli {{.*}} : vector
// CHECK: return
// SSE-LABEL: func.func @pairs
// SSE: llvm.call_intrinsic "llvm.x86.sse2.pmadd.wd"({{.*}}) : (vector<8xi16>, vector<8xi16>) -> vector<4xi32>
// SSE-NOT: arith.muli {{.*}} : vector
// SSE: return
// AVX512-LABEL: func.func @pairs
// AVX512: vector.broadcast %{{.*}} : i16 to vector<16xi16>
// AVX512: arith.extui %{{.*}} : vector<32xi8> to vector<32xi16>
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// AVX512-NOT: arith.muli {{.*}} : vector
// AVX512: return
// VNNI-LABEL: func.func @pairs
// VNNI-NOT: llvm.call_intrinsic
// VNNI: arith.muli {{.*}} : vector
func.func @pairs(%a: tensor<48x32x2xi8>, %b: tensor<2x32x16x2xi8>, %corr: tensor<2x16xi32>) -> tensor<48x2x16xi32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<48x2x16xi32>
  %init = linalg.generic {indexing_maps = [affine_map<(m, no, ni) -> (no, ni)>, affine_map<(m, no, ni) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%corr : tensor<2x16xi32>) outs(%e : tensor<48x2x16xi32>) {
  ^bb0(%c: i32, %o: i32):
    linalg.yield %c : i32
  } -> tensor<48x2x16xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, no, ni, kg, g) -> (m, kg, g)>, affine_map<(m, no, ni, kg, g) -> (no, kg, ni, g)>, affine_map<(m, no, ni, kg, g) -> (m, no, ni)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<48x32x2xi8>, tensor<2x32x16x2xi8>) outs(%init : tensor<48x2x16xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %xu = arith.extui %x : i8 to i32
    %ws = arith.extsi %w : i8 to i32
    %p = arith.muli %xu, %ws : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<48x2x16xi32>
  return %r : tensor<48x2x16xi32>
}
