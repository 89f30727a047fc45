// RUN: %hexir-opt %s -split-input-file -hexir-cuda-split-reductions -canonicalize -cse | FileCheck %s

// A global average pool's sum: 16 channels, each reducing 56x56 pixels. Its two reduction
// loops (rows and columns, consecutive in the input) are one loop of 3,136, split into 14
// steps of 224 threads (the largest divisor at most 256); 16 blocks of one channel, whose 224
// threads each sum every 224th pixel into a partial in shared memory from 0; then one thread
// adds the partials to the accumulator's initial value.
// CHECK-LABEL: func.func @pool
// CHECK-SAME: hexir.cuda_staged
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : tensor<1x56x56x16xf32> into tensor<1x3136x16xf32>
// CHECK: %[[X:.*]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2], [3]] output_shape [1, 14, 224, 16]
// CHECK: scf.forall (%{{.*}}, %[[CH:.*]]) in (1, 16) shared_outs
// CHECK: %[[P:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<224x1x1xf32>
// CHECK: %[[PARTIALS:.*]] = scf.forall (%[[S:.*]], %{{.*}}, %{{.*}}) in (224, 1, 1) shared_outs(%{{.*}} = %[[P]])
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %[[S]], 0] [1, 14, 1, 1]
// CHECK: linalg.fill ins(%cst : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: } {mapping = [#gpu.thread<linear_dim_0>, #gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_2>]}
// CHECK: scf.forall ({{.*}}) in (1, 1)
// CHECK: linalg.fill ins(%cst : f32)
// CHECK: linalg.generic {{.*}} ins(%[[PARTIALS]] : tensor<224x1x1xf32>)
// CHECK: arith.addf
// CHECK: } {mapping = [#gpu.block<linear_dim_0>, #gpu.block<linear_dim_1>]}
#in = affine_map<(n, c, h, w) -> (n, h, w, c)>
#out = affine_map<(n, c, h, w) -> (n, c)>
func.func @pool(%x: tensor<1x56x56x16xf32>) -> tensor<1x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
  %s = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<1x56x56x16xf32>) outs(%f : tensor<1x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  return %s : tensor<1x16xf32>
}

// -----

// A max along rows of 2,048 contiguous values, then a bias: 256 threads per row, thread s
// reading values s, s + 256, ... (adjacent threads, adjacent values) from -inf; one thread
// per row combines its 256 partials with the initial -inf and adds the bias.
// CHECK-LABEL: func.func @row_max_plus_bias
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [4, 8, 256]
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<1x256xf32>
// CHECK: scf.forall (%{{.*}}, %[[S:.*]]) in (1, 256)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %[[S]]] [1, 8, 1]
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: arith.maximumf
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.addf
#rin = affine_map<(i, k) -> (i, k)>
#rout = affine_map<(i, k) -> (i)>
#id = affine_map<(i) -> (i)>
func.func @row_max_plus_bias(%x: tensor<4x2048xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rin, #rout], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x2048xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A matrix times a vector, W[k][n] with n contiguous: 1,024 outputs in 128 blocks of 8 (8
// floats fill a 32-byte sector), 32 threads per output; the outputs are the fastest threads.
// CHECK-LABEL: func.func @gemv
// CHECK: tensor.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [40, 32, 1024]
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (8)
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x8xf32>
// CHECK: scf.forall (%[[S:.*]], %[[N:.*]]) in (32, 8)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[S]], %[[N]]] [40, 1, 1]
// CHECK: scf.forall (%{{.*}}) in (8)
#gin = affine_map<(n, k) -> (k)>
#gw = affine_map<(n, k) -> (k, n)>
#gout = affine_map<(n, k) -> (n)>
func.func @gemv(%v: tensor<1280xf32>, %w: tensor<1280x1024xf32>) -> tensor<1024xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#gin, #gw, #gout], iterator_types = ["parallel", "reduction"]}
      ins(%v, %w : tensor<1280xf32>, tensor<1280x1024xf32>) outs(%f : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}

// -----

// Left to one thread per output: enough outputs to fill the GPU (65,536 rows of 256), too
// little to reduce (64 values), a prime 131 values (no divisor to split by), an accumulator
// read twice in the body (no combiner to split by).
// CHECK-LABEL: func.func @many_outputs
// CHECK-NOT: hexir.cuda_staged
// CHECK-LABEL: func.func @short
// CHECK-NOT: hexir.cuda_staged
// CHECK-LABEL: func.func @prime
// CHECK-NOT: hexir.cuda_staged
// CHECK-LABEL: func.func @no_combiner
// CHECK-NOT: hexir.cuda_staged
#r2 = affine_map<(i, k) -> (i, k)>
#o1 = affine_map<(i, k) -> (i)>
func.func @many_outputs(%x: tensor<65536x256xf32>) -> tensor<65536xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<65536xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<65536xf32>) -> tensor<65536xf32>
  %s = linalg.generic {indexing_maps = [#r2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<65536x256xf32>) outs(%f : tensor<65536xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<65536xf32>
  return %s : tensor<65536xf32>
}
func.func @short(%x: tensor<4x64xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#r2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @prime(%x: tensor<4x131xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#r2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x131xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @no_combiner(%x: tensor<4x1024xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#r2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1024xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %acc, %acc : f32
    %r = arith.addf %m, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
