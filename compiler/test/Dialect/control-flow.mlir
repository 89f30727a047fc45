// RUN: %hexir-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// hexir.loop and hexir.if round-trip; their verifiers check the bodies' signatures, bounds,
// scan outputs and bool conditions.

// CHECK-LABEL: func.func @main(
// CHECK: hexir.loop @body count(%{{.*}}) inits(%{{.*}}) captures(%{{.*}}) {max_trips = 0 : i64}
// CHECK: hexir.if %{{.*}} then @then(%{{.*}}) else @else()
func.func @main(%n: tensor<i64>, %a: tensor<4xf32>, %x: tensor<4xf32>, %c: tensor<1xi8>) -> tensor<4xf32> {
  %r = hexir.loop @body count(%n) inits(%a) captures(%x) {max_trips = 0 : i64}
      : (tensor<i64>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = hexir.if %c then @then(%r) else @else() : (tensor<1xi8>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  return %x : tensor<4xf32>
}
func.func private @then(%v: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  return %v : tensor<4xf32>
}
func.func private @else() -> tensor<4xf32> attributes {hexir.body} {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no bound: no max_trips, trip count or condition}}
  %r = hexir.loop @body inits(%a) captures() {max_trips = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  return %a : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand types do not match the inputs of @body}}
  %r = hexir.loop @body inits(%a) captures() {max_trips = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  return %a : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body @body is not marked 'hexir.body'}}
  %r = hexir.loop @body inits(%a) captures() {max_trips = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

func.func @main(%n: tensor<i64>, %a: tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  // expected-error @+1 {{has scan outputs but no static trip count}}
  %r:2 = hexir.loop @body count(%n) inits(%a) captures() {max_trips = 3 : i64}
      : (tensor<i64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<3x4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {hexir.body} {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  // expected-error @+1 {{scan output type 'tensor<2x4xf32>' does not stack 3 trips}}
  %r:2 = hexir.loop @body inits(%a) captures() {max_trips = 3 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<2x4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {hexir.body} {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @main(%c: tensor<f32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition must be a bool (tensor<i8> of one element)}}
  %y = hexir.if %c then @b(%a) else @b(%a) : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @b(%v: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  return %v : tensor<4xf32>
}

