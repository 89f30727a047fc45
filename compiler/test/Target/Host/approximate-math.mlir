// RUN: %hexir-opt %s -hexir-approximate-math | FileCheck %s
// RUN: %hexir-opt %s -hexir-approximate-math="bf16=true" | FileCheck %s --check-prefix=BF16

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

// A vector logistic, 1 / (1 + exp(-x)): exp capped at 1e30 and the division marked for the
// reciprocal estimate (arcp, ninf: the divisor is finite). A plain vector division, and a
// division by 1 + exp of something that is not a constant numerator's, stay exact.
// CHECK-LABEL: func.func @logistic
// CHECK: %[[CAP:.*]] = arith.minimumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[CAP]], %{{.*}} : vector<16xf32>
// CHECK: arith.divf %{{.*}}, %[[SUM]] fastmath<ninf,arcp> : vector<16xf32>
// CHECK: arith.divf %arg0, %arg1 : vector<16xf32>
// CHECK: arith.divf %arg0, %{{[0-9]+}} : vector<16xf32>
// CHECK: return
func.func @logistic(%x: vector<16xf32>, %y: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %one = arith.constant dense<1.0> : vector<16xf32>
  %n = arith.negf %x : vector<16xf32>
  %e = math.exp %n : vector<16xf32>
  %d = arith.addf %e, %one : vector<16xf32>
  %s = arith.divf %one, %d : vector<16xf32>
  %q = arith.divf %x, %y : vector<16xf32>
  %r = arith.divf %x, %d : vector<16xf32>
  return %s, %q, %r : vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// f32 <-> bf16 (--precision bf16): without AVX512-BF16 LLVM would call __truncsfbf2, so the
// conversions become integer arithmetic (rounding to nearest even); with it they stay.
// CHECK-LABEL: func.func @bf16_round_trip
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.shrui
// CHECK: return
// BF16-LABEL: func.func @bf16_round_trip
// BF16: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// BF16: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
func.func @bf16_round_trip(%x: vector<16xf32>) -> vector<16xf32> {
  %b = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %f = arith.extf %b : vector<16xbf16> to vector<16xf32>
  return %f : vector<16xf32>
}
