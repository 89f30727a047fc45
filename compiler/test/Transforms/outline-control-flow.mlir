// RUN: %hexir-opt %s --hexir-outline-control-flow -split-input-file -verify-diagnostics | FileCheck %s

// scf.if on a bool tensor: the branches become body functions; what they read from outside
// is captured, constants are copied in, and the scalar condition ops are gone.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<i8>
// CHECK-NOT: tensor.extract
// CHECK: %[[Y:.*]] = hexir.if %[[C]] then @main_then(%[[X]]) else @main_else(%[[X]])
// CHECK: return %[[Y]]
// CHECK: func.func private @main_then(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body}
// CHECK: arith.constant dense<2.0
// CHECK: tosa.add
// CHECK: func.func private @main_else(%[[V:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body}
// CHECK-NEXT: return %[[V]]
func.func @main(%x: tensor<4xf32>, %c: tensor<i8>) -> tensor<4xf32> {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %b = tensor.extract %c[] : tensor<i8>
  %p = arith.trunci %b : i8 to i1
  %y = scf.if %p -> tensor<4xf32> {
    %s = tosa.add %x, %two : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// scf.while: `before` once in the graph (the first condition), then a loop whose body runs
// `after` and `before` again, carrying the condition and the forwarded value.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A0:[^:]*]]: tensor<1xf32>, %[[D0:[^:]*]]: tensor<1xf32>
// CHECK: tosa.greater %[[A0]]
// CHECK: %[[C0:.*]] = tensor.collapse_shape
// CHECK-NOT: tensor.extract
// CHECK: %[[L:.*]]:2 = hexir.loop @main_loop inits(%[[C0]], %[[A0]]) captures(%[[D0]]) {has_condition, max_trips = 0 : i64}
// CHECK: return %[[L]]#1
// CHECK: func.func private @main_loop(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i8>, %[[A:.*]]: tensor<1xf32>, %[[D:.*]]: tensor<1xf32>) -> (tensor<i8>, tensor<1xf32>) attributes {hexir.body}
// CHECK: %[[N:.*]] = tosa.sub %[[A]], %[[D]]
// CHECK: tosa.greater %[[N]]
// CHECK: %[[C1:.*]] = tensor.collapse_shape
// CHECK: return %[[C1]], %[[N]]
func.func @main(%a: tensor<1xf32>, %d: tensor<1xf32>) -> tensor<1xf32> {
  %zero = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %r = scf.while (%v = %a) : (tensor<1xf32>) -> tensor<1xf32> {
    %g = tosa.greater %v, %zero : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %gb = tosa.cast %g : (tensor<1xi1>) -> tensor<1xi8>
    %s = tensor.collapse_shape %gb [] : tensor<1xi8> into tensor<i8>
    %e = tensor.extract %s[] : tensor<i8>
    %zb = arith.constant 0 : i8
    %go = arith.cmpi ne, %e, %zb : i8
    scf.condition(%go) %v : tensor<1xf32>
  } do {
  ^bb0(%v: tensor<1xf32>):
    %n = tosa.sub %v, %d : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    scf.yield %n : tensor<1xf32>
  }
  return %r : tensor<1xf32>
}

// -----

// A condition computed from a float: refused with the rule.
func.func @main(%x: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %i = arith.constant 0 : index
  %b = tensor.extract %c[%i] : tensor<4xf32>
  %p = arith.cmpf one, %b, %b : f32
  // expected-error @+1 {{the condition must be read from a one-element tensor<i8> (a bool) by tensor.extract}}
  %y = scf.if %p -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %c : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
