// RUN: %hexir-opt %s -hexir-cuda-stage-contractions -canonicalize -cse | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-stage-contractions=capacity=8192 -canonicalize -cse | FileCheck %s --check-prefix=SMALL

// A matmul with its bias and ReLU: 128 x 96 outputs make 48 blocks of 16x16 (a block's share
// of 128 multiprocessors is under 256 outputs: the squarest tile of 256 reuses each input
// element 16 times), K in steps of 16. The bias initializes the accumulator in shared memory;
// each step copies a 16x16 tile of A and of B to shared memory, 4 elements a thread (every
// row of A and B is a multiple of 4 floats long and the tiles start at multiples of 16, so
// each 4 are one 16-byte load: copiesVectors); 256 threads accumulate one
// output each; the ReLU reads the accumulator and writes the output, one element an iteration.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: hexir.cuda_staged
// CHECK: scf.forall ({{.*}}) = (0, 0) to (128, 96) step (16, 16)
// CHECK: %[[ACC:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x16xf32>
// CHECK: %[[INIT:.*]] = scf.forall {{.*}} in (16, 16) shared_outs({{.*}} = %[[ACC]])
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: mapping = [#gpu.thread<linear_dim_0>, #gpu.thread<linear_dim_1>]
// CHECK: %[[STEPS:.*]] = scf.for {{.*}} to %c64 step %c16 iter_args(%[[A:.*]] = %[[INIT]])
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x16xf32>
// CHECK: scf.forall ({{.*}}) = (0, 0) to (16, 16) step (1, 4)
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x4xf32>)
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x16xf32>
// CHECK: scf.forall ({{.*}}) = (0, 0) to (16, 16) step (1, 4)
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x4xf32>)
// CHECK: scf.forall {{.*}} in (16, 16) shared_outs({{.*}} = %[[A]])
// CHECK: linalg.matmul ins({{.*}} : tensor<1x16xf32>, tensor<16x1xf32>) outs({{.*}} : tensor<1x1xf32>)
// CHECK: scf.forall {{.*}} in (16, 16)
// CHECK: tensor.extract_slice %[[STEPS]]
// CHECK: arith.maximumf
// CHECK: mapping = [#gpu.block<linear_dim_0>, #gpu.block<linear_dim_1>]
// CHECK-NOT: linalg.matmul
// CHECK: return

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @epilogue(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<128x96xf32>
    attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %init = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<96xf32>) outs(%e : tensor<128x96xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<128x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<128x96xf32>) outs(%e : tensor<128x96xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

// A larger matmul: 64x64 tiles, each of 256 threads accumulating a 4x4 sub-tile. With 8 KiB
// of shared memory (a machine file's), 32x32 tiles: 4 KiB of accumulator, 2 KiB per input.
// SMALL-LABEL: func.func @large
// SMALL: scf.forall ({{.*}}) = (0, 0) to (1024, 512) step (32, 32)
// SMALL: scf.forall {{.*}} = (0, 0) to (32, 32) step (2, 2)
// CHECK-LABEL: func.func @large
// CHECK: scf.forall ({{.*}}) = (0, 0) to (1024, 512) step (64, 64)
// CHECK: scf.for {{.*}} step %c16
// CHECK: scf.forall {{.*}} = (0, 0) to (64, 64) step (4, 4)
// CHECK: linalg.matmul ins({{.*}} : tensor<4x16xf32>, tensor<16x4xf32>) outs({{.*}} : tensor<4x4xf32>)
func.func @large(%a: tensor<1024x256xf32>, %b: tensor<256x512xf32>) -> tensor<1024x512xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x512xf32>) outs(%f : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %m : tensor<1024x512xf32>
}

// A convolution without an epilogue: its accumulator is copied to the output by the threads.
// A block takes a row of 14 columns of 16 channels (28 blocks); all 16 input channels are one
// step, so the steps' loop folds away: a 1x3x16x16 input tile (3 rows, 14 + 2 columns) and a
// 3x3x16x16 filter tile.
// CHECK-LABEL: func.func @conv
// CHECK: scf.forall ({{.*}}) = (0, 0, 0, 0) to (1, 14, 14, 32) step (1, 1, 14, 16)
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<1x1x14x16xf32>
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<1x3x16x16xf32>
// CHECK: bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<3x3x16x16xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins({{.*}} : tensor<1x3x3x16xf32>, tensor<3x3x16x1xf32>) outs({{.*}} : tensor<1x1x1x1xf32>)
// CHECK: scf.forall {{.*}} in (1, 1, 14, 16)
// CHECK: linalg.copy
// CHECK: mapping = [#gpu.block<linear_dim_0>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_3>]
func.func @conv(%x: tensor<1x16x16x16xf32>, %w: tensor<3x3x16x32xf32>, %b: tensor<32xf32>) -> tensor<1x14x14x32xf32>
    attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<1x14x14x32xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<32xf32>) outs(%e : tensor<1x14x14x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x14x14x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x16x16x16xf32>, tensor<3x3x16x32xf32>) outs(%init : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %c : tensor<1x14x14x32xf32>
}

// A GELU epilogue reads the matmul twice; the reads become one, and the kernel is staged.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: hexir.cuda_staged
// CHECK: scf.for
// CHECK: linalg.matmul
// CHECK: math.erf
// CHECK-NOT: linalg.matmul
func.func @gelu(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %m : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = math.erf %x : f32
    %s = arith.mulf %t, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Left to one thread per element: a matrix times a vector (a batch-1 linear layer reuses
// nothing of the matrix), too short a reduction, an extent no tile of at most 64 divides (131
// rows: one row a block reuses nothing of B), an input computed in the kernel, and a pooling
// (a window, no product).
// CHECK-LABEL: func.func @vector_times_matrix
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
// CHECK: linalg.matmul {{.*}} tensor<1x512xf32>
func.func @vector_times_matrix(%a: tensor<1x512xf32>, %b: tensor<512x64xf32>) -> tensor<1x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1x512xf32>, tensor<512x64xf32>) outs(%f : tensor<1x64xf32>) -> tensor<1x64xf32>
  return %m : tensor<1x64xf32>
}
// CHECK-LABEL: func.func @short_reduction
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
func.func @short_reduction(%a: tensor<128x8xf32>, %b: tensor<8x128xf32>) -> tensor<128x128xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x8xf32>, tensor<8x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %m : tensor<128x128xf32>
}
// CHECK-LABEL: func.func @prime_extents
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
func.func @prime_extents(%a: tensor<131x64xf32>, %b: tensor<64x29xf32>) -> tensor<131x29xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<131x29xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<131x29xf32>) -> tensor<131x29xf32>
  %m = linalg.matmul ins(%a, %b : tensor<131x64xf32>, tensor<64x29xf32>) outs(%f : tensor<131x29xf32>) -> tensor<131x29xf32>
  return %m : tensor<131x29xf32>
}
// CHECK-LABEL: func.func @computed_input
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
func.func @computed_input(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.tanh %x : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%t, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}
// CHECK-LABEL: func.func @pooling
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
func.func @pooling(%x: tensor<1x34x34x64xf32>) -> tensor<1x32x32x64xf32> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x32x32x64xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x34x34x64xf32>, tensor<3x3xf32>) outs(%f : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  return %p : tensor<1x32x32x64xf32>
}

// An initializer that reads its output (beta * C): it keeps reading C, one element per thread
// iteration, and its result is copied into the shared accumulator.
// CHECK-LABEL: func.func @beta
// CHECK-SAME: hexir.cuda_staged
// CHECK: %[[ACC:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x16xf32>
// CHECK: scf.forall {{.*}} in (16, 16) shared_outs({{.*}} = %[[ACC]])
// CHECK: arith.mulf
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x1xf32>)
// CHECK: scf.for
func.func @beta(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %beta = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%c : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %y = arith.mulf %o, %beta : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}

// A matmul accumulating onto a binding (a Gemm's C): the accumulator starts as a copy of the
// block's tile of C; the blocks write a new tensor, never the read-only binding.
// CHECK-LABEL: func.func @onto_binding
// CHECK-SAME: hexir.cuda_staged
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK: scf.forall ({{.*}}) = (0, 0) to (64, 64) step (16, 16) shared_outs({{.*}} = %[[E]])
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x1xf32>)
func.func @onto_binding(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}

// An epilogue that writes over the matmul's result (a bias added in place) is left alone: it
// would write into the shared accumulator instead of the output.
// CHECK-LABEL: func.func @epilogue_in_place
// CHECK-NOT: hexir.cuda_staged
// CHECK-NOT: gpu.
func.func @epilogue_in_place(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<64xf32>) outs(%m : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %o : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
