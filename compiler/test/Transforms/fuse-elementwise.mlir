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
