// RUN: not %hexir-compile %s -o %t.hxb 2>&1 | FileCheck %s

// Two loops running one body function: its values are planned for one op's steps, so the
// second is refused rather than planned over the first's buffers.
// CHECK: error: body @body is run by two loops or ifs of this function; each needs its own
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = hexir.loop @body inits(%a) captures() {max_trips = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %s = hexir.loop @body inits(%r) captures() {max_trips = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %s : tensor<4xf32>, tensor<4xf32>
}
func.func private @body(%i: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.body} {
  %s = tosa.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
