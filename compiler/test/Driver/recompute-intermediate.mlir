// RUN: %hexir-compile %s -o %t.hxb --no-fusion --print-plan | FileCheck %s --check-prefix=NOBUDGET
// RUN: %hexir-compile %s -o %t.hxb --no-fusion --memory-budget host=800 --print-plan | FileCheck %s --check-prefix=REMAT
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=REMAT-DUMP

// NOBUDGET: arena 1024 bytes
// NOBUDGET-NOT: recomputed

// At the second matmul, t = x @ x, a = tanh(t), exp(x) and the product are live (1024 bytes).
// a is idle there and elementwise of t, which the last add still reads: tanh(t) runs again
// before the first add, reading t where it is, and 768 bytes fit 800. (t itself is a matmul's
// result: not cheap to recompute.)
// REMAT: arena 768 bytes
// REMAT: 256 bytes recomputed
// REMAT-NEXT: main_dispatch_1_generic (256 B) dropped after dispatch 1, recomputed before dispatch 4
// REMAT-DUMP: DISPATCH main_dispatch_0_matmul
// REMAT-DUMP-NEXT: in Input0
// REMAT-DUMP-NEXT: out Arena0[[[T:[0-9]+]], +256)
// REMAT-DUMP: DISPATCH [[TANH:main_dispatch_1_generic]]
// The second matmul is the first one's kernel (identical: hexir-deduplicate-kernels).
// REMAT-DUMP: DISPATCH main_dispatch_0_matmul
// REMAT-DUMP: DISPATCH [[TANH]]
// REMAT-DUMP-NEXT: in Arena0[[[T]], +256)
// REMAT-DUMP-NEXT: out Arena0[[[AGAIN:[0-9]+]], +256)
// REMAT-DUMP-NEXT: DISPATCH main_dispatch_4_generic
// REMAT-DUMP-NEXT: in Arena0[[[AGAIN]], +256)
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = linalg.matmul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("t")
  %a = tosa.tanh %t : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("a")
  %b = tosa.exp %x : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("b")
  %c = linalg.matmul ins(%b, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("c")
  %d = tosa.add %a, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("d")
  %y = tosa.add %d, %t : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("y")
  return %y : tensor<8x8xf32>
}
