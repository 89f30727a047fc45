// RUN: %hexir-compile %s -o %t.hxb --no-fusion --memory-budget host=600 --print-plan | FileCheck %s --check-prefix=REMAT
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=REMAT-DUMP
// RUN: %hexir-compile %s -o %t.hxb --no-fusion --print-plan | FileCheck %s --check-prefix=NOBUDGET

// NOBUDGET: arena 768 bytes
// NOBUDGET-NOT: recomputed

// As machine-moves.mlir, with `a = tanh(x)`: elementwise, of the input alone, so it is recomputed before
// dispatch 3 instead of kept (no other memory space is needed): 512 bytes fit 600.
// REMAT: arena 512 bytes
// REMAT: to fit: 0 value(s) moved out and back, 0 bytes copied (0.000 ms of transfers); 256 bytes recomputed
// REMAT-NEXT: main_dispatch_0_generic (256 B) dropped after dispatch 0, recomputed before dispatch 3
// REMAT-DUMP: DISPATCH [[TANH:main_dispatch_0_generic]]
// REMAT-DUMP: DISPATCH main_dispatch_2_matmul
// REMAT-DUMP: DISPATCH [[TANH]]
// REMAT-DUMP-NEXT: in Input0
// REMAT-DUMP-NEXT: out Arena0[[[AGAIN:[0-9]+]], +256)
// REMAT-DUMP-NEXT: DISPATCH main_dispatch_3_generic
// REMAT-DUMP-NEXT: in Arena0[[[AGAIN]], +256)
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = tosa.tanh %x : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("a")
  %b = tosa.exp %x : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("b")
  %c = linalg.matmul ins(%b, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("c")
  %y = tosa.add %a, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("y")
  return %y : tensor<8x8xf32>
}
