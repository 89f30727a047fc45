// RUN: %hexir-opt %s -split-input-file -hexir-verify-input -verify-diagnostics | FileCheck %s

// A supported graph passes unchanged.
// CHECK-LABEL: func.func @main(
// CHECK: tosa.add
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = tosa.add %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// expected-error @+2 {{argument 0 of @main has type 'tensor<?x3xf32>' which has a dynamic dimension; Hexir compiles static shapes only}}
// expected-error @+1 {{result 0 of @main has type 'tensor<?x3xf32>' which has a dynamic dimension}}
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  return %x : tensor<?x3xf32>
}

// -----

// expected-error @+2 {{argument 0 of @main has type 'tensor<2x3xf16>' which has element type f16, which is not supported yet}}
// expected-error @+1 {{result 0 of @main has type 'tensor<2x3xf16>' which has element type f16}}
func.func @main(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  return %x : tensor<2x3xf16>
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{unsupported operation 'tosa.sin'; supported TOSA ops: const}}
  %y = tosa.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{unsupported operation 'tosa.cast'}}
  %y = tosa.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  // expected-error @-3 {{result 0 of @main has type 'tensor<2x3xf16>' which has element type f16}}
  return %y : tensor<2x3xf16>
}

// -----

// expected-error @+1 {{the input has no function to compile (only declarations: @other)}}
module {
  func.func private @other(%x: tensor<2xf32>) -> tensor<2xf32>
}

// -----

// Every function definition is compiled, and each is checked.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// expected-error @+2 {{argument 0 of @helper has type 'tensor<?xf32>' which has a dynamic dimension}}
// expected-error @+1 {{result 0 of @helper has type 'tensor<?xf32>' which has a dynamic dimension}}
func.func @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 0.0 : f16
  // expected-error @+1 {{result 0 of 'tensor.empty' has type 'tensor<4xf16>' which has element type f16}}
  %e = tensor.empty() : tensor<4xf16>
  // expected-error @+1 {{result 0 of 'linalg.fill' has type 'tensor<4xf16>' which has element type f16}}
  %z = linalg.fill ins(%c : f16) outs(%e : tensor<4xf16>) -> tensor<4xf16>
  return %x : tensor<4xf32>
}


// -----

// A grouped convolution written with the group as `oc floordiv 4`: tiles starting inside a group
// would read the wrong channels, so such maps are refused with the linear form to use instead.
func.func @main(%x: tensor<1x8x6x6xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  // expected-error @+1 {{'linalg.generic' has an indexing map with floordiv, ceildiv or mod; Hexir tiles kernels along linear maps only}}
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, h, w, c, kh, kw) -> (n, (o floordiv 4) * 4 + c, h + kh, w + kw)>,
                                        affine_map<(n, o, h, w, c, kh, kw) -> (o, c, kh, kw)>,
                                        affine_map<(n, o, h, w, c, kh, kw) -> (n, o, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x4x3x3xf32>) outs(%i : tensor<1x8x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}
