// RUN: %hexir-opt %s -split-input-file -hexir-fuse-elementwise | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-fuse-elementwise="narrowing-epilogues=true" | FileCheck %s --check-prefix=NARROW

// tanh -> exp -> sum over rows: one generic op computing tanh and exp inside the reduction.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.tanh
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x2 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A scaled operand of a matmul stays its own op (the contraction's body must stay a
// multiply-add), and so does a producer read twice (fusing it would compute it twice).
// CHECK-LABEL: func.func @contraction
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[S]] :
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @contraction(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %half : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %s : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %r = arith.mulf %p, %q : f32
    %t = arith.addf %acc, %r : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// A bias add read twice by the same chain (GELU: x * (erf(x / sqrt 2) + 1)): once the erf
// chain is fused into the multiply, the add has one reader left and is fused into both of its
// reads. One op remains.
// CHECK-LABEL: func.func @read_twice
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: math.erf
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @read_twice(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %c = arith.constant 0.707106769 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %c : f32
    %f = math.erf %m : f32
    %s = arith.addf %f, %one : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %p : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A ReduceMean with keepdims: the scaling of the [4, 1] sum, between a view adding the unit
// dimension and one removing it, computes on [4]; the views are gone.
// CHECK-LABEL: func.func @unit_views
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.mulf
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @unit_views(%s: tensor<4xf32>) -> tensor<4xf32> {
  %k = arith.constant 0.125 : f32
  %x = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x1xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x1xf32>) outs(%e : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %k : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %y = tensor.collapse_shape %m [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A QDQ residual join: two int32 matmuls, each dequantized, requantized to int8 and dequantized
// again, added and requantized. Fused whole (the default), the add reads both int32 results;
// with narrowing-epilogues the second chain keeps its int8 tensor (its dequantization and
// requantization fused into one op, the second matmul's narrowing epilogue), and the add reads
// the first matmul's int32 and the second's int8.
// CHECK-LABEL: func.func @residual_join
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK: %[[B:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4x16xi32>, tensor<4x16xi32>)
// CHECK-NOT: linalg.generic
// NARROW-LABEL: func.func @residual_join
// NARROW: %[[A:.*]] = linalg.matmul
// NARROW: %[[B:.*]] = linalg.matmul
// NARROW: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x16xi32>) outs(%{{.*}} : tensor<4x16xi8>)
// NARROW: arith.fptosi {{.*}} : f32 to i8
// NARROW: linalg.generic {{.*}} ins(%[[A]], %[[QB]] : tensor<4x16xi32>, tensor<4x16xi8>)
// NARROW-NOT: linalg.generic
// NARROW-NOT: hexir.keep_narrow
#id = affine_map<(i, j) -> (i, j)>
func.func @residual_join(%x: tensor<4x8xi8>, %y: tensor<4x8xi8>) -> tensor<4x16xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %v = arith.constant dense<5> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x16xi32>
  %ef = tensor.empty() : tensor<4x16xf32>
  %o = tensor.empty() : tensor<4x16xi8>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  %b = linalg.matmul ins(%y, %v : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  // Each result dequantized, requantized to int8, dequantized again (a QDQ model's Conv -> Q -> DQ).
  %da = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xi32>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i32, %out: f32):
    %t = arith.sitofp %in : i32 to f32
    %m = arith.mulf %t, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %qa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%da : tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x16xi8>
  %fa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%qa : tensor<4x16xi8>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %t = arith.sitofp %in : i8 to f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  %db = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xi32>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i32, %out: f32):
    %t = arith.sitofp %in : i32 to f32
    %m = arith.mulf %t, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %qb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%db : tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x16xi8>
  %fb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%qb : tensor<4x16xi8>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %t = arith.sitofp %in : i8 to f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%fa, %fb : tensor<4x16xf32>, tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%p: f32, %q: f32, %out: i8):
    %t = arith.addf %p, %q : f32
    %r = arith.fptosi %t : f32 to i8
    linalg.yield %r : i8
  } -> tensor<4x16xi8>
  return %sum : tensor<4x16xi8>
}

// -----

// The same join reading the first matmul's result directly (the join is its epilogue): the
// second chain still keeps its int8 tensor.
// CHECK-LABEL: func.func @direct_root_join
// NARROW-LABEL: func.func @direct_root_join
// NARROW: %[[A:.*]] = linalg.matmul
// NARROW: %[[B:.*]] = linalg.matmul
// NARROW: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x16xi32>) outs(%{{.*}} : tensor<4x16xi8>)
// NARROW: linalg.generic {{.*}} ins(%[[A]], %[[QB]] : tensor<4x16xi32>, tensor<4x16xi8>)
#id = affine_map<(i, j) -> (i, j)>
func.func @direct_root_join(%x: tensor<4x8xi8>, %y: tensor<4x8xi8>) -> tensor<4x16xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %v = arith.constant dense<5> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x16xi32>
  %ef = tensor.empty() : tensor<4x16xf32>
  %o = tensor.empty() : tensor<4x16xi8>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  %b = linalg.matmul ins(%y, %v : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  // Each result dequantized, requantized to int8, dequantized again (a QDQ model's Conv -> Q -> DQ).
  %db = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xi32>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i32, %out: f32):
    %t = arith.sitofp %in : i32 to f32
    %m = arith.mulf %t, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %qb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%db : tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x16xi8>
  %fb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%qb : tensor<4x16xi8>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %t = arith.sitofp %in : i8 to f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %fb : tensor<4x16xi32>, tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%p: i32, %q: f32, %out: i8):
    %pf = arith.sitofp %p : i32 to f32
    %t = arith.addf %pf, %q : f32
    %r = arith.fptosi %t : f32 to i8
    linalg.yield %r : i8
  } -> tensor<4x16xi8>
  return %sum : tensor<4x16xi8>
}

// -----

// A dequantization (int8 -> f32, a widening op) read through views (a Slice of a packed Q, K, V
// and the reshape to heads) computes after them instead: the slices cut the int8 tensor, no f32
// tensor of the whole is written, and each copy fuses into the requantization that reads it.
// CHECK-LABEL: func.func @widening_below_views
// CHECK-NOT: tensor<4x1x48xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %arg0[0, 0, 0] [4, 1, 16] [1, 1, 1] : tensor<4x1x48xi8> to tensor<4x1x16xi8>
// CHECK: %[[S1:.*]] = tensor.extract_slice %arg0[0, 0, 16] [4, 1, 16] [1, 1, 1] : tensor<4x1x48xi8> to tensor<4x1x16xi8>
// CHECK-DAG: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x2x8xi8>) outs(%{{.*}} : tensor<4x2x8xi8>)
// CHECK-DAG: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x2x8xi8>) outs(%{{.*}} : tensor<4x2x8xi8>)
// CHECK-NOT: xf32>
// CHECK: return
#id3 = affine_map<(i, j, k) -> (i, j, k)>
func.func @widening_below_views(%q: tensor<4x1x48xi8>) -> (tensor<4x2x8xi8>, tensor<4x2x8xi8>) {
  %s = arith.constant 0.125 : f32
  %t = arith.constant 0.25 : f32
  %ef = tensor.empty() : tensor<4x1x48xf32>
  %d = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x1x48xi8>) outs(%ef : tensor<4x1x48xf32>) {
  ^bb0(%in: i8, %out: f32):
    %f = arith.sitofp %in : i8 to f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x1x48xf32>
  %s0 = tensor.extract_slice %d[0, 0, 0] [4, 1, 16] [1, 1, 1] : tensor<4x1x48xf32> to tensor<4x1x16xf32>
  %s1 = tensor.extract_slice %d[0, 0, 16] [4, 1, 16] [1, 1, 1] : tensor<4x1x48xf32> to tensor<4x1x16xf32>
  %c0 = tensor.collapse_shape %s0 [[0, 1, 2]] : tensor<4x1x16xf32> into tensor<64xf32>
  %h0 = tensor.expand_shape %c0 [[0, 1, 2]] output_shape [4, 2, 8] : tensor<64xf32> into tensor<4x2x8xf32>
  %c1 = tensor.collapse_shape %s1 [[0, 1, 2]] : tensor<4x1x16xf32> into tensor<64xf32>
  %h1 = tensor.expand_shape %c1 [[0, 1, 2]] output_shape [4, 2, 8] : tensor<64xf32> into tensor<4x2x8xf32>
  %o = tensor.empty() : tensor<4x2x8xi8>
  %q0 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h0 : tensor<4x2x8xf32>) outs(%o : tensor<4x2x8xi8>) {
  ^bb0(%in: f32, %out: i8):
    %m = arith.divf %in, %t : f32
    %r = arith.fptosi %m : f32 to i8
    linalg.yield %r : i8
  } -> tensor<4x2x8xi8>
  %q1 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h1 : tensor<4x2x8xf32>) outs(%o : tensor<4x2x8xi8>) {
  ^bb0(%in: f32, %out: i8):
    %m = arith.divf %in, %t : f32
    %r = arith.fptosi %m : f32 to i8
    linalg.yield %r : i8
  } -> tensor<4x2x8xi8>
  return %q0, %q1 : tensor<4x2x8xi8>, tensor<4x2x8xi8>
}

// -----

// A dequantization read by two ops (a softmax's max and its exp) is computed in each of them
// from the int8 tensor: no f32 copy of it is written.
// CHECK-LABEL: func.func @widening_into_readers
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x16xi8>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.sitofp
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<4x16xi8>, tensor<4xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: arith.sitofp
// CHECK: math.exp
// CHECK-NOT: linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @widening_into_readers(%x: tensor<4x16xi8>) -> tensor<4x16xf32> {
  %s = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ef = tensor.empty() : tensor<4x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xi8>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %f = arith.sitofp %in : i8 to f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%d : tensor<4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%d, %max : tensor<4x16xf32>, tensor<4xf32>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %t = arith.subf %in, %mx : f32
    %x2 = math.exp %t : f32
    linalg.yield %x2 : f32
  } -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

// -----

// An int32 matmul's requantization read transposed (attention's heads put back together, then
// requantized again): fused whole, the last op would read the int32 accumulators transposed
// (no epilogue); with narrowing-epilogues the requantization to int8 stays out of it (with the
// dequantization and its row sums: the matmul's narrowing epilogue) and the transposed read is
// of int8. The reshape between the transposed dequantization and its reader is folded by
// expanding the reader, so no f32 tensor is written either way.
// CHECK-LABEL: func.func @narrow_before_permuted_read
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<4x16xi32>, tensor<4xi32>) outs(%{{.*}} : tensor<16x4xi8>)
// CHECK-NOT: linalg.generic
// NARROW-LABEL: func.func @narrow_before_permuted_read
// NARROW: %[[A:.*]] = linalg.matmul
// NARROW: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<4x16xi32>, tensor<4xi32>) outs(%{{.*}} : tensor<4x16xi8>)
// NARROW: linalg.generic {indexing_maps = [#[[T:.*]], #{{.*}}], {{.*}} ins(%[[Q]] : tensor<4x16xi8>) outs(%{{.*}} : tensor<16x4xi8>)
// NARROW-NOT: linalg.generic
// NARROW-NOT: hexir.keep_narrow
#id2b = affine_map<(i, j) -> (i, j)>
#rowb = affine_map<(i, j) -> (i)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @narrow_before_permuted_read(%x: tensor<4x8xi8>, %rows: tensor<4xi32>) -> tensor<64xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  %ef = tensor.empty() : tensor<4x16xf32>
  %da = linalg.generic {indexing_maps = [#id2b, #rowb, #id2b], iterator_types = ["parallel", "parallel"]} ins(%a, %rows : tensor<4x16xi32>, tensor<4xi32>) outs(%ef : tensor<4x16xf32>) {
  ^bb0(%in: i32, %r: i32, %out: f32):
    %c = arith.subi %in, %r : i32
    %t = arith.sitofp %c : i32 to f32
    %m = arith.mulf %t, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %o = tensor.empty() : tensor<4x16xi8>
  %qa = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%da : tensor<4x16xf32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x16xi8>
  %et = tensor.empty() : tensor<16x4xf32>
  %fa = linalg.generic {indexing_maps = [#tr, #id2b], iterator_types = ["parallel", "parallel"]} ins(%qa : tensor<4x16xi8>) outs(%et : tensor<16x4xf32>) {
  ^bb0(%in: i8, %out: f32):
    %t = arith.sitofp %in : i8 to f32
    %m = arith.mulf %t, %s : f32
    linalg.yield %m : f32
  } -> tensor<16x4xf32>
  %flat = tensor.collapse_shape %fa [[0, 1]] : tensor<16x4xf32> into tensor<64xf32>
  %o2 = tensor.empty() : tensor<64xi8>
  %q2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%flat : tensor<64xf32>) outs(%o2 : tensor<64xi8>) {
  ^bb0(%in: f32, %out: i8):
    %m = arith.divf %in, %s : f32
    %t = arith.fptosi %m : f32 to i8
    linalg.yield %t : i8
  } -> tensor<64xi8>
  return %q2 : tensor<64xi8>
}
