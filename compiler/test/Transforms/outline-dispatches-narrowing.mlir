// RUN: %hexir-opt %s -split-input-file -hexir-outline-dispatches="narrowing-epilogues=true" | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-outline-dispatches | FileCheck %s --check-prefix=APART

// An int8 matmul accumulating in int32, requantized to int8 by its epilogue: with
// narrowing-epilogues (the host target's kernels narrow each register tile) the epilogue joins
// the matmul's kernel, which returns int8, and no int32 tensor is left in the graph. Without it
// (targets whose kernels do not), the int32 result is a kernel's output of its own.
// CHECK-LABEL: func.func @main(
// CHECK: %[[Y:.*]] = hexir.call_tir @main_dispatch_0_matmul(%arg0, %{{.*}}) : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi8>
// CHECK-NOT: hexir.call_tir
// CHECK: return %[[Y]]
// CHECK-LABEL: func.func @main_dispatch_0_matmul(
// CHECK: linalg.matmul {{.*}} -> tensor<4x16xi32>
// CHECK: linalg.generic
// CHECK: arith.trunci
// CHECK: return {{.*}} : tensor<4x16xi8>
// APART-LABEL: func.func @main(
// APART: %[[A:.*]] = hexir.call_tir @main_dispatch_0_matmul(%arg0, %{{.*}}) : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi32>
// APART: hexir.call_tir @main_dispatch_1_generic(%[[A]]) : (tensor<4x16xi32>) -> tensor<4x16xi8>
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xi8>) -> tensor<4x16xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x16xi32>
  %o = tensor.empty() : tensor<4x16xi8>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xi32>) outs(%o : tensor<4x16xi8>) {
  ^bb0(%in: i32, %out: i8):
    %v = arith.sitofp %in : i32 to f32
    %s = arith.mulf %v, %scale : f32
    %i = arith.fptosi %s : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<4x16xi8>
  return %y : tensor<4x16xi8>
}

// -----

// A pooling's epilogue of another type joins its kernel where the pooling reads its input
// whole; over a pad of -inf, which the pooling's kernel computes itself (its window borders),
// it stays a kernel of its own.
// CHECK-LABEL: func.func @main(
// CHECK: %[[P:.*]] = hexir.call_tir @main_dispatch_0_pooling_nhwc_max(%arg0) : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xi8>
// CHECK: %[[B:.*]] = hexir.call_tir @main_dispatch_1_pooling_nhwc_max(%arg0) : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: hexir.call_tir @main_dispatch_2_generic(%[[B]]) : (tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xi8>
// CHECK-LABEL: func.func @main_dispatch_1_pooling_nhwc_max(
// CHECK: tensor.pad
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @main(%x: tensor<1x8x8x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>) {
  %ninf = arith.constant 0xFF800000 : f32
  %window = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %o = tensor.empty() : tensor<1x4x4x16xi8>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %window : tensor<1x8x8x16xf32>, tensor<2x2xf32>) outs(%f : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x4x16xf32>) outs(%o : tensor<1x4x4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x4x16xi8>
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x8x16xf32> to tensor<1x9x9x16xf32>
  %w3 = tensor.empty() : tensor<3x3xf32>
  %b = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %w3 : tensor<1x9x9x16xf32>, tensor<3x3xf32>) outs(%f : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %z = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<1x4x4x16xf32>) outs(%o : tensor<1x4x4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %t = arith.fptosi %in : f32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x4x16xi8>
  return %y, %z : tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>
}
