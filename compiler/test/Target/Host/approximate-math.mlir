// RUN: %hexir-opt %s -hexir-approximate-math | FileCheck %s

// Transcendentals become arithmetic: no math.exp / math.tanh remain to become libm calls.
// CHECK-LABEL: func.func @f
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @f(%x: f32) -> (f32, f32) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  return %e, %t : f32, f32
}
