// RUN: %hexir-compile %s -o %t.hxb --print-plan | FileCheck %s
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=DUMP

// t = tanh(x); y = t * w + t (a matmul with a residual add as its epilogue); z = y * w.
// t dies at y's dispatch and has y's type, but y may not be written over it: the kernel writes
// the matmul's result into y's buffer before its epilogue reads t. y gets a slot of its own.
// CHECK: memory plan for @main
// CHECK: main_dispatch_0_generic 256 0 0 1  -
// CHECK: main_dispatch_1_matmul 256 256 1 2  -
// Each kernel's entry lists its stack buffers (none here: every tile stays in registers).
// DUMP: [1] main_dispatch_1_matmul (arity 3, 1 workgroups of 1x1x1, stack buffers 0 bytes, workspace 0 bytes)
// DUMP: DISPATCH main_dispatch_1_matmul
// DUMP-NEXT: in  Arena0[0, +256)
// DUMP-NEXT: in  {{.*}}
// DUMP-NEXT: out Arena0[256, +256){{$}}
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.125> : tensor<16x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = math.tanh %in : f32
    linalg.yield %h : f32
  } -> tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%t, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %t : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %z = linalg.matmul ins(%y, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}
