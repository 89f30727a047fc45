// RUN: not %hexir-compile %s -o %t.hxb 2>&1 | FileCheck %s

// A loop body that runs itself: refused with a message when it is planned, not laid out
// forever.
// CHECK: error: body @self runs itself (directly or through the bodies it runs)
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = hexir.loop @self inits(%a) captures() {max_trips = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @self(%i: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  %r = hexir.loop @self inits(%a) captures() {max_trips = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %s = tosa.add %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
