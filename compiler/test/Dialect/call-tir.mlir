// RUN: %hexir-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK: hexir.call_tir @k(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = hexir.call_tir @k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @k(%x: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  return %x : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{callee @missing is not a func.func in scope}}
  %y = hexir.call_tir @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result types do not match the results of @k}}
  %y = hexir.call_tir @k(%x) : (tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func private @k(%x: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  return %x : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{callee @k is not marked 'hexir.kernel'}}
  %y = hexir.call_tir @k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
