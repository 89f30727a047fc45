// RUN: %hexir-compile %s -o %t.hxb --print-dispatches | FileCheck %s

// A softmax as the importer writes it (row max, exp of the difference, row sum, division) and a
// layer normalization as PyTorch exports it below opset 17 (ReduceMean with keepdims, Sub, Pow,
// ReduceMean, Add, Sqrt, Div, Mul, Add; the [rows, 1] steps computed between reshapes) of the
// softmax: one row kernel, one dispatch, for both (the softmax's result is read only by the
// normalization, in the same rows).
// CHECK: dispatches of @main:
// CHECK-NEXT: 0 main_dispatch_0_generic -> tensor<6x40xf32> covers 'max', 'exp', 'sum', 'div', 'mean', 'sub', 'scale', 'var', 'shift', 'sqrt'
// CHECK-NEXT: 1 dispatches
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 40.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %g = arith.constant dense<1.5> : tensor<40xf32>
  %b = arith.constant dense<0.25> : tensor<40xf32>
  %er = tensor.empty() : tensor<6xf32>
  %ef = tensor.empty() : tensor<6x40xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x40xf32>) outs(%fmax : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<6xf32> loc("max")
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<6x40xf32>, tensor<6xf32>) outs(%ef : tensor<6x40xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<6x40xf32> loc("exp")
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<6x40xf32>) outs(%fsum : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32> loc("sum")
  %sm = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<6x40xf32>, tensor<6xf32>) outs(%ef : tensor<6x40xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<6x40xf32> loc("div")
  // Layer normalization of the softmax.
  %msum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sm : tensor<6x40xf32>) outs(%fsum : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32> loc("mean")
  %mk = tensor.expand_shape %msum [[0, 1]] output_shape [6, 1] : tensor<6xf32> into tensor<6x1xf32>
  %e1 = tensor.empty() : tensor<6x1xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mk : tensor<6x1xf32>) outs(%e1 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %q = arith.divf %in, %n : f32
    linalg.yield %q : f32
  } -> tensor<6x1xf32> loc("scale")
  %mc = tensor.collapse_shape %mean [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sm, %mc : tensor<6x40xf32>, tensor<6xf32>) outs(%ef : tensor<6x40xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %s = arith.subf %in, %m : f32
    linalg.yield %s : f32
  } -> tensor<6x40xf32> loc("sub")
  %vsum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<6x40xf32>) outs(%fsum : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<6xf32> loc("var")
  %vk = tensor.expand_shape %vsum [[0, 1]] output_shape [6, 1] : tensor<6xf32> into tensor<6x1xf32>
  %sd = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%vk : tensor<6x1xf32>) outs(%e1 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %q = arith.divf %in, %n : f32
    %a = arith.addf %q, %eps : f32
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<6x1xf32> loc("sqrt")
  %sc = tensor.collapse_shape %sd [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %sc, %g, %b : tensor<6x40xf32>, tensor<6xf32>, tensor<40xf32>, tensor<40xf32>) outs(%ef : tensor<6x40xf32>) {
  ^bb0(%in: f32, %s: f32, %gi: f32, %bi: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    %m = arith.mulf %q, %gi : f32
    %a = arith.addf %m, %bi : f32
    linalg.yield %a : f32
  } -> tensor<6x40xf32> loc("shift")
  return %y : tensor<6x40xf32>
}
