// RUN: %hexir-opt %s -hexir-cuda-tile-to-threads -canonicalize -cse | FileCheck %s

// A matmul with its bias and ReLU (an epilogue kernel): one thread per output element, the
// initializer, the matmul (a reduction over K inside the thread) and the ReLU fused into it.
// CHECK-LABEL: func.func @epilogue
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (8, 32)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: linalg.matmul {{.*}} tensor<1x16xf32>, tensor<16x1xf32>
// CHECK: arith.maximumf
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.matmul
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @epilogue(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %bias: tensor<32xf32>) -> tensor<8x32xf32>
    attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<8x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// A pad computing the result: an elementwise op over the padded tensor that reads the source
// at the clamped index and selects the padding value outside it; no padded temporary.
// CHECK-LABEL: func.func @pad
// CHECK-NOT: tensor.pad
// CHECK: scf.forall {{.*}} in (6, 6, 4)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: tensor.extract %{{.*}} : tensor<1x4x4x4xf32>
// CHECK: arith.select
// CHECK-NOT: tensor.pad
func.func @pad(%x: tensor<1x4x4x4xf32>) -> tensor<1x6x6x4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4xf32> to tensor<1x6x6x4xf32>
  return %p : tensor<1x6x6x4xf32>
}

// A softmax (row max, exp, row sum, division): one thread per row, each row reduced once.
// CHECK-LABEL: func.func @softmax
// CHECK: scf.forall (%{{.*}}) in (6)
// CHECK-NOT: scf.forall (
// CHECK: return
#row = affine_map<(i, j) -> (i)>
func.func @softmax(%x: tensor<6x40xf32>) -> tensor<6x40xf32> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<6xf32>
  %e = tensor.empty() : tensor<6x40xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x40xf32>) outs(%fm : tensor<6xf32>) {
  ^bb0(%a: f32, %m: f32):
    %y = arith.maximumf %a, %m : f32
    linalg.yield %y : f32
  } -> tensor<6xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<6x40xf32>, tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<6x40xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<6x40xf32>) outs(%fs : tensor<6xf32>) {
  ^bb0(%a: f32, %s: f32):
    %y = arith.addf %a, %s : f32
    linalg.yield %y : f32
  } -> tensor<6xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<6x40xf32>, tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %y = arith.divf %a, %s : f32
    linalg.yield %y : f32
  } -> tensor<6x40xf32>
  return %r : tensor<6x40xf32>
}

// An elementwise kernel over 32-bit elements whose innermost extent is a multiple of 4, every
// operand contiguous along it (x) or broadcast across it (the per-row scale): each thread takes
// 4 elements, which the outliner reads and writes as 128-bit vectors.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: hexir.cuda_vector_width = 4
// CHECK: scf.forall (%{{.*}}, %[[J:.*]]) = (0, 0) to (64, 40) step (1, 4)
// CHECK: tensor<1x4xf32>
#ew_id = affine_map<(i, j) -> (i, j)>
#ew_row = affine_map<(i, j) -> (i)>
func.func @elementwise(%x: tensor<64x40xf32>, %s: tensor<64xf32>) -> tensor<64x40xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x40xf32>
  %r = linalg.generic {indexing_maps = [#ew_id, #ew_row, #ew_id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x40xf32>, tensor<64xf32>) outs(%e : tensor<64x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x40xf32>
  return %r : tensor<64x40xf32>
}

// Not when an operand runs across the innermost loop (a transpose: x[j, i]), nor when the
// innermost extent is not a multiple of 4: one element per thread.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: hexir.cuda_vector_width
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (64, 40)
// CHECK-LABEL: func.func @odd
// CHECK-NOT: hexir.cuda_vector_width
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (64, 42)
#ew_t = affine_map<(i, j) -> (j, i)>
func.func @transposed(%x: tensor<40x64xf32>) -> tensor<64x40xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x40xf32>
  %r = linalg.generic {indexing_maps = [#ew_t, #ew_id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<40x64xf32>) outs(%e : tensor<64x40xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x40xf32>
  return %r : tensor<64x40xf32>
}
func.func @odd(%x: tensor<64x42xf32>) -> tensor<64x42xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x42xf32>
  %r = linalg.generic {indexing_maps = [#ew_id, #ew_id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x42xf32>) outs(%e : tensor<64x42xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x42xf32>
  return %r : tensor<64x42xf32>
}
