// RUN: %hexir-opt %s -split-input-file -hexir-check-bucket-rows | FileCheck %s

// A sum over the batch axis combines rows: the 4-row bucket is marked, the 1-row one (a single
// row cannot interact) is not.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @main_batch1
// CHECK-NOT: hexir.rows_mixed_by
// CHECK-LABEL: func.func @main_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': node 'sum' combines rows (a reduction or contraction over them)"
func.func @main_batch1(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "main"} {
  return %x : tensor<1x8xf32>
}
func.func @main_batch4(%x: tensor<4x8xf32>) -> tensor<1x8xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "main"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32> loc("sum")
  %r = tensor.expand_shape %sum [[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// Rows kept apart: a matmul by constant weights, a bias from a splat, and PyTorch's attention
// reshape (S x B x E -> S x B*H x D, merged through one axis and split again), then back.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @main_batch2
// CHECK-NOT: hexir.rows_mixed_by
// CHECK-LABEL: func.func @main_batch4
// CHECK-NOT: hexir.rows_mixed_by
// CHECK: return
func.func @main_batch2(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 2>, hexir.bucket_of = "main"} {
  return %x : tensor<2x8xf32>
}
func.func @main_batch4(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "main"} {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  // As sequence-first attention: 1 x B x 8 -> 8 values merged -> 1 x B*2 x 4 -> back.
  %s = tensor.expand_shape %m [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
  %flat = tensor.collapse_shape %s [[0, 1, 2]] : tensor<1x4x8xf32> into tensor<32xf32>
  %heads = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 8, 4] : tensor<32xf32> into tensor<1x8x4xf32>
  %back = tensor.collapse_shape %heads [[0, 1, 2]] : tensor<1x8x4xf32> into tensor<32xf32>
  %y = tensor.expand_shape %back [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A constant that differs from row to row makes an answer depend on where its row sits in a
// batch; a slice of some rows, and an output without the batch axis, are not row-wise either.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @pos_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': node 'add' depends on a row's position in the batch (it reads a tensor that varies along the rows)"
// CHECK-LABEL: func.func @slice_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': node 'first' takes some rows only"
// CHECK-LABEL: func.func @flat_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': output 'y' has no 'batch' axis but is computed from the rows"
func.func @pos_batch1(%x: tensor<1x2xf32>) -> tensor<1x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "pos"} {
  return %x : tensor<1x2xf32>
}
func.func @pos_batch4(%x: tensor<4x2xf32>) -> tensor<4x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "pos"} {
  %pos = arith.constant dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %pos : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32> loc("add")
  return %y : tensor<4x2xf32>
}
func.func @slice_batch1(%x: tensor<1x2xf32>) -> tensor<1x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "slice"} {
  return %x : tensor<1x2xf32>
}
func.func @slice_batch4(%x: tensor<4x2xf32>) -> tensor<4x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "slice"} {
  %first = tensor.extract_slice %x[0, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<1x2xf32> loc("first")
  %e = tensor.empty() : tensor<4x2xf32>
  %y = tensor.insert_slice %first into %e[0, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
func.func @flat_batch1(%x: tensor<1x2xf32>) -> (tensor<2xf32> {hexir.name = "y"}) attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "flat"} {
  %y = tensor.collapse_shape %x [[0, 1]] : tensor<1x2xf32> into tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @flat_batch4(%x: tensor<4x2xf32>) -> (tensor<8xf32> {hexir.name = "y"}) attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "flat"} {
  %y = tensor.collapse_shape %x [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// The model at the smallest size padded into a bucket (a probe the driver imports) must be the
// bucket's graph scaled: a constant derived from the batch size (x / Shape(x)[0]: 4 in the
// bucket, 2 in the probe) differs, so the bucket is marked; the probe is erased either way.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @main_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': node 'div' depends on the size of 'batch' (the model differs between 4 and 2 rows)"
// CHECK-NOT: probe
func.func @main_batch1(%x: tensor<1x2xf32>) -> tensor<1x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "main"} {
  return %x : tensor<1x2xf32>
}
func.func @main_batch4(%x: tensor<4x2xf32>) -> tensor<4x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "main"} {
  %n = arith.constant dense<4.0> : tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %n : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x2xf32> loc("div")
  return %y : tensor<4x2xf32>
}
func.func @main_batch4_probe_batch2(%x: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 2>, hexir.bucket_of = "main", hexir.bucket_probe = "main_batch4", hexir.bucket_probe_dim = 0 : i64} {
  %n = arith.constant dense<2.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %n : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<2x2xf32> loc("div")
  return %y : tensor<2x2xf32>
}

// -----

// The same graph scaled (a splat of one value in both) passes, and the probe is erased. A row
// loop that also indexes another axis of the rows (a diagonal) is marked.
#id = affine_map<(d0, d1) -> (d0, d1)>
#diag = affine_map<(d0, d1) -> (d0, d1, d0)>
// CHECK-LABEL: func.func @scaled_batch4
// CHECK-NOT: hexir.rows_mixed_by
// CHECK: return
// CHECK-NOT: probe
// CHECK-LABEL: func.func @diag_batch4
// CHECK-SAME: hexir.rows_mixed_by = "dimension 'batch': node 'diagonal' moves data between rows"
func.func @scaled_batch1(%x: tensor<1x2xf32>) -> tensor<1x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "scaled"} {
  return %x : tensor<1x2xf32>
}
func.func @scaled_batch4(%x: tensor<4x2xf32>) -> tensor<4x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "scaled"} {
  %n = arith.constant dense<3.0> : tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %n : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
func.func @scaled_batch4_probe_batch2(%x: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 2>, hexir.bucket_of = "scaled", hexir.bucket_probe = "scaled_batch4", hexir.bucket_probe_dim = 0 : i64} {
  %n = arith.constant dense<3.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %n : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
func.func @diag_batch1(%x: tensor<1x2x4xf32>) -> tensor<1x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 1>, hexir.bucket_of = "diag"} {
  %y = tensor.extract_slice %x[0, 0, 0] [1, 2, 1] [1, 1, 1] : tensor<1x2x4xf32> to tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}
func.func @diag_batch4(%x: tensor<4x2x4xf32>) -> tensor<4x2xf32> attributes {hexir.bucket_dim_names = ["batch"], hexir.bucket_dim_values = array<i64: 4>, hexir.bucket_of = "diag"} {
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#diag, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x2x4xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x2xf32> loc("diagonal")
  return %y : tensor<4x2xf32>
}
