// RUN: %hexir-compile %s -o %t.hxb --no-fusion --print-plan | FileCheck %s --check-prefix=HOST
// RUN: %hexir-compile %s -o %t.hxb --no-fusion --machine edge --memory-budget sram=600 --print-plan | FileCheck %s
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=DUMP

// `a` (a matmul of the input) is produced first and read last; at dispatch 2 the matmul reads
// `b` and writes `c` while `a` waits: three 256-byte buffers, 768 bytes, over a 600-byte SRAM.
// On the edge machine `a` moves to the DRAM after dispatch 0 and comes back before dispatch 3:
// 512 bytes fit.
// HOST: arena 768 bytes
// CHECK: arena 512 bytes
// CHECK: capacity 600 bytes for the arena
// CHECK: to fit: 1 value(s) moved out and back, 512 bytes copied ({{.*}} ms of transfers); 0 bytes recomputed
// CHECK-NEXT: main_dispatch_0_matmul (256 B) to 'dram' after dispatch 0, back before dispatch 3
// DUMP: arena 0: 512 bytes, align 64, memory space sram
// DUMP: arena 1: 256 bytes, align 64, memory space dram
// DUMP: DISPATCH main_dispatch_0_matmul
// DUMP-NEXT: in Input0
// DUMP-NEXT: out Arena0[[[A:[0-9]+]], +256)
// DUMP-NEXT: COPY Arena0[[[A]], +256) -> Arena1[0, +256)
// DUMP: DISPATCH main_dispatch_0_matmul
// DUMP: COPY Arena1[0, +256) -> Arena0[[[BACK:[0-9]+]], +256)
// DUMP-NEXT: DISPATCH main_dispatch_3_generic
// DUMP-NEXT: in Arena0[[[BACK]], +256)
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = linalg.matmul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("a")
  %b = tosa.exp %x : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("b")
  %c = linalg.matmul ins(%b, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("c")
  %y = tosa.add %a, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("y")
  return %y : tensor<8x8xf32>
}
