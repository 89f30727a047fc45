// RUN: %hexir-opt %s -hexir-outline-dispatches -verify-diagnostics

// Input verification refuses non-linear indexing maps; should a pass make one, dispatch
// formation stops with an error instead of kernels whose tiles read the wrong slices.
func.func @main(%x: tensor<1x8x6x6xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  // expected-error @+1 {{internal error: 'linalg.generic' has a non-linear indexing map, which kernel tiling would split wrongly}}
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
