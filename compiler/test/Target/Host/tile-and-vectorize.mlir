// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="vector-bits=512" | FileCheck %s

// A zero-filled matmul, 16x64 = 16x64 * 64x64, with AVX-512 vectors (16 lanes). Register tile:
// 8 rows x 32 columns (two vectors), reduction step 1. 65,536 iterations at 32,768 per
// workgroup make 2 workgroups: both dimensions start as one chunk (their cache blocks, 64 rows
// and 256 columns, cover them), then the columns are split in two chunks of 32 (8-row chunks
// would be below the 14 rows of the best register tile). One loop over the chunks, in each one
// over its register tiles (the reduction fits one cache block): the fill writes the tile's
// accumulators, then the reduction runs on them, one step at a time.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: hexir.workgroups = 2
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[BEGIN:.*]], %[[END:.*]] = hexir.workgroup_range
// CHECK: scf.for %[[W:.*]] = %[[BEGIN]] to %[[END]] step %c1
// CHECK: %[[COL:.*]] = arith.muli %[[W]], %[[C32]]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[COL]]] [16, 32] [1, 1]
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK: vector.transfer_write %cst, {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<16x64xf32>, vector<8x1xf32>
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<64x64xf32>, vector<1x32xf32>
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, %[[COL]]] [16, 32] [1, 1]
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>) -> tensor<16x64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// A Gemm whose accumulator starts at a read-only argument (a broadcast bias): the argument is
// copied into the output explicitly, inside the same workgroups as the matmul. 5 rows (prime):
// the register tile takes all 5 rows (the largest divisor up to 8); N = 48 takes 16-wide
// vectors (32 does not divide it), the copy too. Too little work for more than one workgroup.
// CHECK-LABEL: func.func @bias
// CHECK-SAME: hexir.workgroups = 1
// CHECK: vector.transfer_read %arg2{{.*}} : tensor<5x48xf32>, vector<5x16xf32>
// CHECK: vector.contract {{.*}} : vector<5x1xf32>, vector<1x16xf32> into vector<5x16xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @bias(%a: tensor<5x8xf32>, %b: tensor<8x48xf32>, %c: tensor<5x48xf32>) -> tensor<5x48xf32> attributes {hexir.kernel} {
  %r = linalg.matmul ins(%a, %b : tensor<5x8xf32>, tensor<8x48xf32>) outs(%c : tensor<5x48xf32>) -> tensor<5x48xf32>
  return %r : tensor<5x48xf32>
}

// -----

// An elementwise kernel: rows of up to four vectors (here all 64 elements, one vector op), one
// workgroup (too little work to split).
// CHECK-LABEL: func.func @relu
// CHECK-SAME: hexir.workgroups = 1
// CHECK: vector.transfer_read {{.*}} : tensor<64xf32>, vector<64xf32>
// CHECK: arith.maximumf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_write {{.*}} : vector<64xf32>, tensor<64xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0) -> (d0)>
func.func @relu(%x: tensor<64xf32>) -> tensor<64xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// A 112x256 output (K = 64) in 2-D workgroups: 8 row tiles of 14 and 8 column tiles of 32,
// 1,835,008 iterations allow 56 workgroups; chunks start at the cache blocks (56 rows = 4 row
// tiles, 256 columns = all 8 column tiles): 2 workgroups, fewer than 8, so the larger chunk
// shrinks until there are 8: 4 x 2 workgroups of 28 rows x 128 columns, one loop over both.
// Rows vary fastest: the four row chunks reading one 64x128 block of B follow each other
// (A read twice and B once move fewer bytes than A once and B four times).
// CHECK-LABEL: func.func @two_d
// CHECK-SAME: hexir.workgroups = 8
// CHECK: %[[BEGIN:.*]], %[[END:.*]] = hexir.workgroup_range
// CHECK: scf.for %[[W:.*]] = %[[BEGIN]] to %[[END]] step %c1
// CHECK: %[[ROW:.*]] = arith.remui %[[W]], %c4
// CHECK: %[[COL:.*]] = arith.divui %[[W]], %c4
// CHECK: %[[R0:.*]] = arith.muli %[[ROW]], %c28
// CHECK: %[[C0:.*]] = arith.muli %[[COL]], %c128
// CHECK: tensor.extract_slice %{{.*}}[%[[R0]], %[[C0]]] [28, 128] [1, 1] : tensor<112x256xf32> to tensor<28x128xf32>
// CHECK: vector.contract {{.*}} : vector<14x1xf32>, vector<1x32xf32> into vector<14x32xf32>
func.func @two_d(%a: tensor<112x64xf32>, %b: tensor<64x256xf32>) -> tensor<112x256xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<112x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<112x256xf32>) -> tensor<112x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<112x64xf32>, tensor<64x256xf32>) outs(%f : tensor<112x256xf32>) -> tensor<112x256xf32>
  return %r : tensor<112x256xf32>
}

// -----

// A channels-last 3x3 convolution, output 1x13x13x32: 13 columns (prime) x two vectors of 16
// channels (26 of AVX-512's 32 registers as accumulators; the inputs are broadcast from memory
// into the FMAs), not 1 column x 2 vectors or 13 x 1; decomposed to a 1-D convolution per
// output row and filter tap, vectorized into outer products.
// CHECK-LABEL: func.func @conv
// CHECK: vector.contract {{.*}} : vector<1x13x1xf32>, vector<1x32xf32> into vector<1x13x32xf32>
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv(%x: tensor<1x15x15x8xf32>, %w: tensor<3x3x8x32xf32>) -> tensor<1x13x13x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x13x13x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x13x13x32xf32>) -> tensor<1x13x13x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x15x15x8xf32>, tensor<3x3x8x32xf32>) outs(%f : tensor<1x13x13x32xf32>) -> tensor<1x13x13x32xf32>
  return %r : tensor<1x13x13x32xf32>
}

// -----

// 27 columns: 27 x one vector would load a broadcast per FMA; two vectors of channels load
// 11 per 18 FMAs in 9-column tiles, and the columns are peeled into 14 and 13 (28 and 26
// accumulators).
// CHECK-LABEL: func.func @conv_27_columns
// CHECK: vector.contract {{.*}} : vector<1x14x1xf32>, vector<1x32xf32> into vector<1x14x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x13x1xf32>, vector<1x32xf32> into vector<1x13x32xf32>
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv_27_columns(%x: tensor<1x29x29x8xf32>, %w: tensor<3x3x8x32xf32>) -> tensor<1x27x27x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x27x27x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x27x27x32xf32>) -> tensor<1x27x27x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x29x29x8xf32>, tensor<3x3x8x32xf32>) outs(%f : tensor<1x27x27x32xf32>) -> tensor<1x27x27x32xf32>
  return %r : tensor<1x27x27x32xf32>
}

// -----

// A convolution with a packed filter (PackConvFilters: two panels of 32 output channels):
// one register tile is one panel, 7 columns x 32 channels, treated as the named convolution it
// is (so it decomposes into 1-D convolutions and vectorizes into outer products). The filter
// panel is read contiguously, 32 floats per tap; input channels in blocks of 64. Workgroups:
// 7 rows x 2 panels, the only split into at least 8.
// CHECK-LABEL: func.func @packed_conv
// CHECK-SAME: hexir.workgroups = 14
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c64
// CHECK: vector.transfer_read %arg1{{.*}} : tensor<2x3x3x128x32xf32>, vector<1x1x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x7x1xf32>, vector<1x32xf32> into vector<1x7x32xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @packed_conv(%x: tensor<1x9x9x128xf32>, %w: tensor<2x3x3x128x32xf32>) -> tensor<1x7x7x2x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x2x32xf32>) -> tensor<1x7x7x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h + kh, w + kw, c)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (p, kh, kw, c, f)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x9x9x128xf32>, tensor<2x3x3x128x32xf32>) outs(%f : tensor<1x7x7x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x7x7x2x32xf32>
  return %r : tensor<1x7x7x2x32xf32>
}

// -----

// A deep layer (14x14, 256 -> 256 channels): 8 workgroups of one 32-channel panel each over
// all rows, rather than 14 rows that would each read the whole 2.4 MB filter. Consecutive
// workgroups are consecutive panels.
// CHECK-LABEL: func.func @deep_conv_panels
// CHECK-SAME: hexir.workgroups = 8
// CHECK: scf.for %[[WG:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, %{{.*}}, 0] [1, 14, 14, 1, 32]
func.func @deep_conv_panels(%x: tensor<1x16x16x256xf32>, %w: tensor<8x3x3x256x32xf32>) -> tensor<1x14x14x8x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x8x32xf32>) -> tensor<1x14x14x8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h + kh, w + kw, c)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (p, kh, kw, c, f)>,
                                        affine_map<(n, h, w, p, f, kh, kw, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x16x16x256xf32>, tensor<8x3x3x256x32xf32>) outs(%f : tensor<1x14x14x8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x14x14x8x32xf32>
  return %r : tensor<1x14x14x8x32xf32>
}

// -----

// A 1x1 convolution as a packed contraction over a 7x7 image: its rows are the 49 pixels of
// two loops (oh, ow; the register tile takes 7 of ow), one block of 64 rows, so the workgroups
// are 8 chunks of the 64 panels over all rows, not 7 rows x 8 (each of the 7 row chunks would
// read all 4 MB of weights).
// CHECK-LABEL: func.func @pointwise_7x7
// CHECK-SAME: hexir.workgroups = 8
func.func @pointwise_7x7(%x: tensor<1x7x7x512xf32>, %w: tensor<64x512x32xf32>) -> tensor<1x7x7x64x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64x32xf32>) -> tensor<1x7x7x64x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, c) -> (n, h, w, c)>,
                                        affine_map<(n, h, w, p, f, c) -> (p, c, f)>,
                                        affine_map<(n, h, w, p, f, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x7x7x512xf32>, tensor<64x512x32xf32>) outs(%f : tensor<1x7x7x64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x7x7x64x32xf32>
  return %r : tensor<1x7x7x64x32xf32>
}

// -----

// The same 1x1 convolution reading the interior of a padded 9x9 image (a view its kernel takes
// in, see padsShareProducers): the view's rows are 9 pixels apart, so they are not collapsed
// into one row loop; the register tile stays 7 columns of one output row.
// CHECK-LABEL: func.func @pointwise_7x7_of_view
// CHECK-NOT: tensor.collapse_shape
// CHECK: vector.contract {{.*}} : vector<1x1x7x1xf32>, vector<1x1x32xf32> into vector<1x1x7x1x32xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @pointwise_7x7_of_view(%xp: tensor<1x9x9x512xf32>, %w: tensor<64x512x32xf32>) -> tensor<1x7x7x64x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = tensor.extract_slice %xp[0, 1, 1, 0] [1, 7, 7, 512] [1, 1, 1, 1] : tensor<1x9x9x512xf32> to tensor<1x7x7x512xf32>
  %e = tensor.empty() : tensor<1x7x7x64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64x32xf32>) -> tensor<1x7x7x64x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, c) -> (n, h, w, c)>,
                                        affine_map<(n, h, w, p, f, c) -> (p, c, f)>,
                                        affine_map<(n, h, w, p, f, c) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x7x7x512xf32>, tensor<64x512x32xf32>) outs(%f : tensor<1x7x7x64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x7x7x64x32xf32>
  return %r : tensor<1x7x7x64x32xf32>
}

// -----

// The same over few panels (a 1x1 convolution 2048 -> 512 on a 7x7 image, its 49 pixels
// already one row loop): 8 workgroups need smaller chunks, and they come from the panels (8
// chunks of 2, each reading the 392 KiB of input) rather than the rows (7 chunks of 7 rows,
// each reading the 4 MiB of weights in 7-row register tiles). So all 49 rows stay in one
// chunk: 14-row tiles over the first 42, then a 7-row one.
// CHECK-LABEL: func.func @pointwise_7x7_few_panels
// CHECK-SAME: hexir.workgroups = 8
// CHECK: vector.contract {{.*}} into vector<1x14x1x32xf32>
// CHECK: vector.contract {{.*}} into vector<1x7x1x32xf32>
func.func @pointwise_7x7_few_panels(%x: tensor<1x49x2048xf32>, %w: tensor<16x2048x32xf32>) -> tensor<1x49x16x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x49x16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x49x16x32xf32>) -> tensor<1x49x16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, m, p, f, c) -> (n, m, c)>,
                                        affine_map<(n, m, p, f, c) -> (p, c, f)>,
                                        affine_map<(n, m, p, f, c) -> (n, m, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x49x2048xf32>, tensor<16x2048x32xf32>) outs(%f : tensor<1x49x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x49x16x32xf32>
  return %r : tensor<1x49x16x32xf32>
}

// -----

// A global average pool's sum over NHWC (96 channels, 7x7): the 96 output channels (six
// 16-lane vectors) accumulate in registers while the H and W loops run one pixel at a time, so
// the input is read once, row by row (the reduction over unit dimensions folds into adds).
// CHECK-LABEL: func.func @global_pool
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x7x7x96xf32>, vector<1x1x1x96xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [2, 3] : vector<1x96x1x1xf32> to vector<1x96xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @global_pool(%x: tensor<1x7x7x96xf32>) -> tensor<1x96xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x96xf32>) -> tensor<1x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<1x7x7x96xf32>) outs(%f : tensor<1x96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x96xf32>
  return %r : tensor<1x96xf32>
}

// -----

// A reduction along the innermost dimension (a row sum) is left alone (for now: it would need a
// horizontal sum per row).
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: hexir.workgroups
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @row_sum(%x: tensor<4x64xf32>) -> tensor<4xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A matmul with packed weights (PackMatmulWeights: four panels of 32 columns), 112 rows in
// 4 x 2 workgroups of 28 rows x 2 panels. Inside a workgroup the cache loops nest as BLIS's
// around its microkernel: one panel at a time (outermost), its blocks of 256 reduction steps,
// then the row tiles of 14, so each 32 KiB block of the panel stays in L1 while every row
// tile passes over it. The zero fill runs on each panel's block of 28 rows (in L1) just
// before its reduction.
// CHECK-LABEL: func.func @packed_matmul
// CHECK-SAME: hexir.workgroups = 8
// CHECK: scf.for %[[WG:.*]] = %begin to %end step %c1
// CHECK: scf.for %[[PANEL:.*]] = %c0 to %c2 step %c1
// CHECK-NEXT: tensor.extract_slice %{{.*}}[0, %[[PANEL]], 0] [28, 1, 32]
// CHECK: vector.transfer_write %cst, {{.*}} : vector<1x1x32xf32>, tensor<28x1x32xf32>
// CHECK: scf.for %[[K0:.*]] = %c0 to %c2048 step %c256
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c28 step %c14
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c256 step %c1
// CHECK: vector.transfer_read %arg1[%{{.*}}, %{{.*}}, %c0]{{.*}} : tensor<4x2048x32xf32>, vector<1x1x32xf32>
// CHECK: vector.contract {{.*}} : vector<14x1xf32>, vector<1x1x32xf32> into vector<14x1x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @packed_matmul(%a: tensor<112x2048xf32>, %w: tensor<4x2048x32xf32>) -> tensor<112x4x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<112x4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<112x4x32xf32>) -> tensor<112x4x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, p, f, k) -> (m, k)>,
                                        affine_map<(m, p, f, k) -> (p, k, f)>,
                                        affine_map<(m, p, f, k) -> (m, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<112x2048xf32>, tensor<4x2048x32xf32>) outs(%f : tensor<112x4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<112x4x32xf32>
  return %r : tensor<112x4x32xf32>
}

// -----

// 29 rows (prime): the divisors allow 1-row register tiles (2 of 32 registers as
// accumulators). The kernel's writers are split into rows [0, 28) in 14-row tiles, workgroups
// 0-3, and row 28, workgroup 4; each part clamps the invocation's range to its workgroups.
// CHECK-LABEL: func.func @prime_rows
// CHECK-SAME: hexir.workgroups = 5
// CHECK: %[[MAIN:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [28, 2, 32]
// CHECK: %[[END0:.*]] = arith.minui %end, %c4
// CHECK: scf.for %{{.*}} = %begin to %[[END0]] step %c1 iter_args(%{{.*}} = %[[MAIN]])
// CHECK: vector.contract {{.*}} : vector<14x1xf32>, vector<1x1x32xf32> into vector<14x1x32xf32>
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [28, 2, 32]
// CHECK: %[[REST:.*]] = tensor.extract_slice %[[FIRST]][28, 0, 0] [1, 2, 32]
// CHECK: %[[BEGIN1:.*]] = arith.maxui %begin, %c4
// CHECK: %[[END1:.*]] = arith.minui %end, %c5
// CHECK: scf.for %{{.*}} = %[[BEGIN1]] to %[[END1]] step %c1 iter_args(%{{.*}} = %[[REST]])
// CHECK: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x32xf32> into vector<1x1x32xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[FIRST]][28, 0, 0] [1, 2, 32]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @prime_rows(%a: tensor<29x64xf32>, %w: tensor<2x64x32xf32>) -> tensor<29x2x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<29x2x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<29x2x32xf32>) -> tensor<29x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, p, f, k) -> (m, k)>,
                                        affine_map<(m, p, f, k) -> (p, k, f)>,
                                        affine_map<(m, p, f, k) -> (m, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<29x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<29x2x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<29x2x32xf32>
  return %r : tensor<29x2x32xf32>
}

// -----

// 128 rows over 8 MiB of packed weights: the kernel is not split (each part would stream the
// weights once), but each 64-row cache block is: 56 rows in 14-row tiles, then 8 rows, both
// inside the same panel and reduction block, so the block of weights is read once for both.
// CHECK-LABEL: func.func @block_rows
// CHECK-SAME: hexir.workgroups = 8
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [64, 1, 32]
// CHECK: scf.for %{{.*}} = %c0 to %c2048 step %c256 iter_args(%[[BLOCK:.*]] = %{{.*}})
// CHECK: %[[MAIN:.*]] = tensor.extract_slice %[[BLOCK]][0, 0, 0] [56, 1, 32]
// CHECK: scf.for %{{.*}} = %c0 to %c56 step %c14 iter_args(%{{.*}} = %[[MAIN]])
// CHECK: vector.contract {{.*}} : vector<14x1xf32>, vector<1x1x32xf32> into vector<14x1x32xf32>
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %{{.*}} into %[[BLOCK]][0, 0, 0] [56, 1, 32]
// CHECK: tensor.extract_slice %[[FIRST]][56, 0, 0] [8, 1, 32]
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x1x32xf32> into vector<8x1x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @block_rows(%a: tensor<128x2048xf32>, %w: tensor<32x2048x32xf32>) -> tensor<128x32x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x32x32xf32>) -> tensor<128x32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, p, f, k) -> (m, k)>,
                                        affine_map<(m, p, f, k) -> (p, k, f)>,
                                        affine_map<(m, p, f, k) -> (m, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<128x2048xf32>, tensor<32x2048x32xf32>) outs(%f : tensor<128x32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<128x32x32xf32>
  return %r : tensor<128x32x32xf32>
}

// -----

// With AVX-512 a reduction over which one 32-wide panel is at most 128 KiB (K = 1024) is not
// split into blocks: each register tile starts from the zero fill in registers (one vector
// write of the whole tile, which becomes the accumulators' initial value) and runs all 1024
// steps, so the output is written once instead of filled and re-read per block.
// CHECK-LABEL: func.func @whole_reduction
// CHECK-NOT: step %c256
// CHECK: scf.for %{{.*}} = %c0 to %c28 step %c14
// CHECK: vector.transfer_write %cst, {{.*}} : vector<14x1x32xf32>, tensor<14x1x32xf32>
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c1024 step %c1
// CHECK: vector.contract {{.*}} : vector<14x1xf32>, vector<1x1x32xf32> into vector<14x1x32xf32>
// CHECK: return
func.func @whole_reduction(%a: tensor<112x1024xf32>, %w: tensor<4x1024x32xf32>) -> tensor<112x4x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<112x4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<112x4x32xf32>) -> tensor<112x4x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, p, f, k) -> (m, k)>,
                                        affine_map<(m, p, f, k) -> (p, k, f)>,
                                        affine_map<(m, p, f, k) -> (m, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<112x1024xf32>, tensor<4x1024x32xf32>) outs(%f : tensor<112x4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<112x4x32xf32>
  return %r : tensor<112x4x32xf32>
}

// -----

// A 1x1 convolution (a contraction over 64 input channels, packed weights) with a bias and a
// residual add + ReLU: the reduction fits one cache block, so the bias, the reduction and the
// epilogue run register tile by register tile (14 columns x one 32-channel panel). The bias
// is written to the tile, the reduction accumulates onto it, the epilogue reads it back and
// writes the result, all in one loop over the tiles: no pass over the whole chunk.
// CHECK-LABEL: func.func @fused_epilogue
// CHECK: scf.for %{{.*}} = %begin to %end step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK-NEXT: tensor.extract_slice %{{.*}} [1, 1, 14, 1, 32]
// CHECK: vector.broadcast %{{.*}} : vector<1x32xf32> to vector<1x1x14x1x32xf32>
// CHECK-NEXT: vector.transfer_write
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK: vector.contract {{.*}} : vector<1x1x14x1xf32>, vector<1x1x32xf32> into vector<1x1x14x1x32xf32>
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK: arith.addf {{.*}} : vector<1x1x14x1x32xf32>
// CHECK-NEXT: arith.maximumf {{.*}} : vector<1x1x14x1x32xf32>
// CHECK-NEXT: vector.transfer_write
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @fused_epilogue(%x: tensor<1x14x14x64xf32>, %w: tensor<2x64x32xf32>, %bias: tensor<2x32xf32>, %skip: tensor<1x14x14x2x32xf32>) -> tensor<1x14x14x2x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x2x32xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<2x32xf32>) outs(%e : tensor<1x14x14x2x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x14x14x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, k) -> (n, h, w, k)>,
                                        affine_map<(n, h, w, p, f, k) -> (p, k, f)>,
                                        affine_map<(n, h, w, p, f, k) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x14x14x64xf32>, tensor<2x64x32xf32>) outs(%b : tensor<1x14x14x2x32xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x14x14x2x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>,
                                        affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %skip : tensor<1x14x14x2x32xf32>, tensor<1x14x14x2x32xf32>) outs(%e : tensor<1x14x14x2x32xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x14x14x2x32xf32>
  return %y : tensor<1x14x14x2x32xf32>
}

// -----

// The same on a 7x7 image: 7 columns would make 7 x 2-vector register tiles (14 of the 28
// accumulators), so the image's rows and columns are collapsed into 49 pixels, 3 tiles of 14
// and 7 more. Kernels take bare pointers: the arguments and the result take the collapsed
// types, no view is left.
// CHECK-LABEL: func.func @collapsed_rows
// CHECK-SAME: (%{{.*}}: tensor<1x49x64xf32>, %{{.*}}: tensor<2x64x32xf32>, %{{.*}}: tensor<2x32xf32>) -> tensor<1x49x2x32xf32>
// CHECK-NOT: collapse_shape
// CHECK: vector.contract {{.*}} : vector<1x14x1xf32>, vector<1x1x32xf32> into vector<1x14x1x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x7x1xf32>, vector<1x1x32xf32> into vector<1x7x1x32xf32>
// CHECK-NOT: expand_shape
// CHECK: return %{{.*}} : tensor<1x49x2x32xf32>
func.func @collapsed_rows(%x: tensor<1x7x7x64xf32>, %w: tensor<2x64x32xf32>, %bias: tensor<2x32xf32>) -> tensor<1x7x7x2x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2x32xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<2x32xf32>) outs(%e : tensor<1x7x7x2x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x7x7x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f, k) -> (n, h, w, k)>,
                                        affine_map<(n, h, w, p, f, k) -> (p, k, f)>,
                                        affine_map<(n, h, w, p, f, k) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x7x7x64xf32>, tensor<2x64x32xf32>) outs(%b : tensor<1x7x7x2x32xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x7x7x2x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>, affine_map<(n, h, w, p, f) -> (n, h, w, p, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x7x7x2x32xf32>) outs(%e : tensor<1x7x7x2x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x7x7x2x32xf32>
  return %y : tensor<1x7x7x2x32xf32>
}

// -----

// A run-time B packed into panels, looping in B's order (k, no, ni) and writing P[no][k][ni]:
// an elementwise kernel whose output is permuted but keeps its innermost dimension, so each
// row of 16 is one vector load and one vector store (no scalar loop).
// CHECK-LABEL: func.func @pack_panels
// CHECK: scf.for %[[K:.*]] = %c0 to %c64
// CHECK: scf.for %[[NO:.*]] = %c0 to %c4
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%[[K]], %[[NO]], %c0], %{{.*}} : tensor<64x4x16xf32>, vector<1x1x16xf32>
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%[[NO]], %[[K]], %c0] {{.*}} : vector<1x1x16xf32>, tensor<4x64x16xf32>
// CHECK-NOT: linalg.generic
func.func @pack_panels(%b: tensor<64x4x16xf32>) -> tensor<4x64x16xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<4x64x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(k, no, ni) -> (k, no, ni)>, affine_map<(k, no, ni) -> (no, k, ni)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<64x4x16xf32>) outs(%e : tensor<4x64x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x64x16xf32>
  return %p : tensor<4x64x16xf32>
}
