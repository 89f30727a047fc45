// RUN: %hexir-compile %s -o %t.hxb --print-dispatches | FileCheck %s

// A matmul, then tanh and exp: the two elementwise ops are fused into one op, which becomes
// the matmul's epilogue: one dispatch covering all three source ops.
// CHECK: dispatches of @main:
// CHECK-NEXT: 0 main_dispatch_0_matmul -> tensor<4x16xf32> covers 'mm', '{{(exp', 'tanh|tanh', 'exp)}}'
// CHECK-NEXT: 1 dispatches
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.125> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("mm")
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32> loc("tanh")
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32> loc("exp")
  return %c : tensor<4x16xf32>
}
