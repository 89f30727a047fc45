// RUN: not %hexir-compile %s -o %t.hxb --no-fusion --memory-budget host=400 2>&1 | FileCheck %s
// RUN: %hexir-compile %s -o %t.hxb --no-fusion --memory-budget host=512 --print-plan | FileCheck %s --check-prefix=FITS
// RUN: not %hexir-compile %s -o %t.hxb --memory-budget sram=512 2>&1 | FileCheck %s --check-prefix=SPACE

// a = tanh(x) and b = exp(x) (256 bytes each) are both live until c = a * b, which is written
// over a; y = tanh(c) is the output. The live bytes peak at 512 from dispatch 1 to 2. Over a
// budget of 400, a (elementwise, of the input) is recomputed before dispatch 2 instead of
// waiting through dispatch 1, but c still needs a and b: the compiler says where, what is live
// there, why nothing more can move, and the smallest plan.
// CHECK: error: the arena in memory space 'host' peaks at 512 bytes at dispatch 2 ('c'), over its capacity of 400 bytes;
// CHECK-SAME: live there: the output of dispatch 1 ('b'), 256 B, last used by dispatch 2;
// CHECK-SAME: the output of dispatch 0 ('a'), recomputed before dispatch 2, 256 B, last used by dispatch 2
// CHECK-SAME: (after moving or recomputing 1 value); each of them is read or written by that dispatch, so none can be moved out or recomputed;
// CHECK-SAME: the smallest plan found needs 512 bytes: raise the budget of 'host' to at least 512 bytes (--memory-budget host=512)

// FITS: arena 512 bytes; lower bound 512 bytes
// FITS: capacity 512 bytes for the arena: 100.0% used

// SPACE: error: --memory-budget names memory space 'sram', which target 'host' does not have (it has 'host')
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = tosa.tanh %x : (tensor<64xf32>) -> tensor<64xf32> loc("a")
  %b = tosa.exp %x : (tensor<64xf32>) -> tensor<64xf32> loc("b")
  %zero = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c = tosa.mul %a, %b, %zero : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32> loc("c")
  %y = tosa.tanh %c : (tensor<64xf32>) -> tensor<64xf32> loc("y")
  return %y : tensor<64xf32>
}
