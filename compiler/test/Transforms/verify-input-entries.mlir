// RUN: %hexir-opt %s -split-input-file -hexir-verify-input="entries=second,first" -verify-diagnostics | FileCheck %s

// The functions named are kept (and checked); the others go, checked or not.
// CHECK-NOT: @dropped
// CHECK: func.func @first
// CHECK: func.func @second
// CHECK-NOT: @dropped
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @dropped(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{no function @second in the input (it has @first, @other); name the functions to compile with --entry NAME}}
module {
  func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
  func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
