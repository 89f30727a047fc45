// RUN: %hexir-compile %s -o %t.hxb --print-dispatches | FileCheck %s
// RUN: %hexir-compile %s -o %t.cuda.hxb --target cuda-emulator --print-dispatches | FileCheck %s
// RUN: %hexir-compile %s -o %t.ptx.hxb --target cuda --print-dispatches | FileCheck %s

// Dispatch formation asks the target (TargetBackend::fusesIntoKernel) before it fuses an
// epilogue into a kernel; the host's and CUDA's answers agree on these two roots. A sum over
// the outer dimension (every input read along the output's innermost one) roots a kernel that
// takes its ReLU; a sum over the innermost dimension roots none (no kernel kind reads it so),
// so its ReLU stays a dispatch of its own.
// CHECK: dispatches of @main:
// CHECK-NEXT: 0 main_dispatch_0_generic -> tensor<16xf32> covers '{{(outer_sum', 'outer_relu|outer_relu', 'outer_sum)}}'
// CHECK-NEXT: 1 main_dispatch_1_generic -> tensor<8xf32> covers 'inner_sum'
// CHECK-NEXT: 2 main_dispatch_2_generic -> tensor<8xf32> covers 'inner_relu'
// CHECK-NEXT: 3 dispatches
#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>
#first = affine_map<(i, j) -> (i)>
#id = affine_map<(i) -> (i)>
func.func @main(%x: tensor<8x16xf32>) -> (tensor<16xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %outer = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%f16 : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32> loc("outer_sum")
  %r16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%outer : tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16xf32> loc("outer_relu")
  %e8 = tensor.empty() : tensor<8xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %inner = linalg.generic {indexing_maps = [#rows, #first], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%f8 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32> loc("inner_sum")
  %r8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%inner : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8xf32> loc("inner_relu")
  return %r16, %r8 : tensor<16xf32>, tensor<8xf32>
}
