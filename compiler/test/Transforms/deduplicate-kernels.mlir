// RUN: %hexir-opt %s -split-input-file -hexir-deduplicate-kernels | FileCheck %s

// Two kernels with one body (locations differ) become one: the second call takes the first
// kernel and keeps its own name and source ops. A kernel of another shape, one with another
// constant, and one whose argument attributes differ stay.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = hexir.call_tir @k0(%arg0)
// CHECK-NOT: hexir.dispatch_name
// CHECK-SAME: -> tensor<4xf32>
// CHECK: %[[B:.*]] = hexir.call_tir @k0(%[[A]]) {hexir.dispatch_name = "k1", hexir.sources = ["second_relu"]}
// CHECK: hexir.call_tir @k2(%arg1)
// CHECK: hexir.call_tir @k3(%[[B]])
// CHECK: hexir.call_tir @k4(%[[B]])
// CHECK: %[[C:.*]] = hexir.call_tir @k0(%[[B]]) {hexir.dispatch_name = "k5", hexir.sources = ["third_relu"]}
// CHECK: func.func @k0
// CHECK-NOT: func.func @k1(
// CHECK: func.func @k2
// CHECK: func.func @k3
// CHECK: func.func @k4
// CHECK-NOT: func.func @k5(
#id = affine_map<(i) -> (i)>
func.func @main(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = hexir.call_tir @k0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = hexir.call_tir @k1(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = hexir.call_tir @k2(%y) : (tensor<8xf32>) -> tensor<8xf32>
  %d = hexir.call_tir @k3(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %e = hexir.call_tir @k4(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %f = hexir.call_tir @k5(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %f, %c, %d, %e : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}
func.func @k0(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4xf32> loc("first_relu")
  return %r : tensor<4xf32>
}
func.func @k1(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4xf32> loc("second_relu")
  return %r : tensor<4xf32>
}
func.func @k2(%arg0: tensor<8xf32> {bufferization.writable = false}) -> tensor<8xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @k3(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {hexir.kernel} {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %one : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @k4(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @k5(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4xf32> loc("third_relu")
  return %r : tensor<4xf32>
}
