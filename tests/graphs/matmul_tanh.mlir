// y = tanh(x @ w + 1) for a 4x8 input (w: 0.125 everywhere): a small graph the Python and
// hexir-serve tests compile from text.
func.func @main(%x: tensor<4x8xf32> {hexir.name = "x"}) -> (tensor<4x16xf32> {hexir.name = "y"}) {
  %w = arith.constant dense<0.125> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %a, %one : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
