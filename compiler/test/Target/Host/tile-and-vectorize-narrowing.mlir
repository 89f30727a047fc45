// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="vector-bits=512" | FileCheck %s

// A narrowing epilogue: an int32 contraction (a QDQ 1x1 convolution's accumulators, from a bias)
// whose epilogue requantizes to int8. The chain's root computes each register tile (14 columns
// x one 32-channel panel) in a wide tile of its own, a stack buffer of 14 x 32 int32 (1792
// bytes) allocated once at the kernel's entry; the epilogue reads that tile back and writes
// int8 into the output. No int32 tensor of the chunk's or the output's size is left.
// CHECK-LABEL: func.func @narrowing_matmul
// CHECK-SAME: -> tensor<1x14x14x2x32xi8>
// CHECK: %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64, hexir.wide_tile} : memref<1792xi8>
// CHECK-NOT: memref.alloca
// CHECK: scf.for %{{.*}} = %begin to %end step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: %[[VIEW:.*]] = memref.view %[[TILE]][%c0][] : memref<1792xi8> to memref<1x1x14x1x32xi32>
// CHECK: %[[WIDE:.*]] = bufferization.to_tensor %[[VIEW]] restrict writable
// CHECK: vector.broadcast %{{.*}} : vector<1x32xi32> to vector<1x1x14x1x32xi32>
// CHECK-NEXT: %[[INIT:.*]] = vector.transfer_write %{{.*}}, %[[WIDE]]
// CHECK-NEXT: %[[ACC:.*]] = scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %[[INIT]])
// CHECK: vector.contract {{.*}} : vector<1x1x14x1xi32>, vector<1x1x32xi32> into vector<1x1x14x1x32xi32>
// CHECK: vector.transfer_read %[[ACC]]
// CHECK: arith.sitofp {{.*}} : vector<1x1x14x1x32xi32> to vector<1x1x14x1x32xf32>
// CHECK: arith.trunci {{.*}} : vector<1x1x14x1x32xi32> to vector<1x1x14x1x32xi8>
// CHECK-NEXT: vector.transfer_write {{.*}} : vector<1x1x14x1x32xi8>, tensor<1x1x14x2x32xi8>
// CHECK-NOT: tensor.empty() : tensor<{{.*}}xi32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @narrowing_matmul(%x: tensor<1x14x14x64xi8>, %w: tensor<2x64x32xi8>, %bias: tensor<2x32xi32>, %scale: tensor<2x32xf32>) -> tensor<1x14x14x2x32xi8> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<1x14x14x2x32xi32>
  %o = tensor.empty() : tensor<1x14x14x2x32xi8>
  %b = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<2x32xi32>) outs(%e : tensor<1x14x14x2x32xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x14x14x2x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, k) -> (n, h, w, k)>,
                                        affine_map<(n, h, w, p, f, k) -> (p, k, f)>,
                                        affine_map<(n, h, w, p, f, k) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x14x14x64xi8>, tensor<2x64x32xi8>) outs(%b : tensor<1x14x14x2x32xi32>) {
  ^bb0(%a: i8, %c: i8, %acc: i32):
    %a32 = arith.extsi %a : i8 to i32
    %c32 = arith.extsi %c : i8 to i32
    %p = arith.muli %a32, %c32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<1x14x14x2x32xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>, affine_map<(n, h, w, p, f) -> (p, f)>,
                                        affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %scale : tensor<1x14x14x2x32xi32>, tensor<2x32xf32>) outs(%o : tensor<1x14x14x2x32xi8>) {
  ^bb0(%a: i32, %s: f32, %out: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %s : f32
    %i = arith.fptosi %m : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x14x14x2x32xi8>
  return %y : tensor<1x14x14x2x32xi8>
}

// -----

// The same on a 7x7 image: the rows and columns collapse into 49 pixels (3 tiles of 14 and 7
// more) with the epilogue, whose result takes the collapsed int8 type; each part of the rows
// has a wide tile of its own size.
// CHECK-LABEL: func.func @narrowing_collapsed
// CHECK-SAME: -> tensor<1x49x2x32xi8>
// CHECK-DAG: memref.alloca() {alignment = 64 : i64, hexir.wide_tile} : memref<896xi8>
// CHECK-DAG: memref.alloca() {alignment = 64 : i64, hexir.wide_tile} : memref<1792xi8>
// CHECK: vector.contract {{.*}} into vector<1x14x1x32xi32>
// CHECK: arith.trunci {{.*}} : vector<1x14x1x32xi32> to vector<1x14x1x32xi8>
// CHECK: vector.contract {{.*}} into vector<1x7x1x32xi32>
// CHECK: arith.trunci {{.*}} : vector<1x7x1x32xi32> to vector<1x7x1x32xi8>
// CHECK-NOT: expand_shape
// CHECK: return %{{.*}} : tensor<1x49x2x32xi8>
func.func @narrowing_collapsed(%x: tensor<1x7x7x64xi8>, %w: tensor<2x64x32xi8>, %bias: tensor<2x32xi32>, %scale: tensor<2x32xf32>) -> tensor<1x7x7x2x32xi8> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<1x7x7x2x32xi32>
  %o = tensor.empty() : tensor<1x7x7x2x32xi8>
  %b = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<2x32xi32>) outs(%e : tensor<1x7x7x2x32xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x7x7x2x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, k) -> (n, h, w, k)>,
                                        affine_map<(n, h, w, p, f, k) -> (p, k, f)>,
                                        affine_map<(n, h, w, p, f, k) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x7x7x64xi8>, tensor<2x64x32xi8>) outs(%b : tensor<1x7x7x2x32xi32>) {
  ^bb0(%a: i8, %c: i8, %acc: i32):
    %a32 = arith.extsi %a : i8 to i32
    %c32 = arith.extsi %c : i8 to i32
    %p = arith.muli %a32, %c32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<1x7x7x2x32xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>, affine_map<(n, h, w, p, f) -> (p, f)>,
                                        affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %scale : tensor<1x7x7x2x32xi32>, tensor<2x32xf32>) outs(%o : tensor<1x7x7x2x32xi8>) {
  ^bb0(%a: i32, %s: f32, %out: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %s : f32
    %i = arith.fptosi %m : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x7x7x2x32xi8>
  return %y : tensor<1x7x7x2x32xi8>
}
