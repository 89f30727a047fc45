// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="vector-bits=512 min-work=1024" | FileCheck %s

// A depthwise convolution reading a pad of its input computes the border itself: no padded
// tensor exists. Rows are workgroups: the first row (taps 1-2 of the window's rows) alone, the
// 110 interior rows in 55 chunks of 2, the last row alone: 57. In each, the columns are three
// regions reading the unpadded input: the first column (2 taps), 110 interior columns (11
// columns x 16 channels per register tile, all 3 taps), the last column. The zero fill and
// the ReLU6 epilogue run in each register tile: the tile is filled, accumulated and clipped
// before it is written.
// CHECK-LABEL: func.func @depthwise_borders
// CHECK-SAME: hexir.workgroups = 57
// CHECK-NOT: tensor.pad
// CHECK-NOT: 114x114
// CHECK: %[[FIRST:.*]] = arith.minui %end, %c1
// CHECK: scf.for %{{.*}} = %begin to %[[FIRST]]
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x112x112x32xf32>, vector<1x2x16xf32>
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x112x112x32xf32>, vector<1x13x16xf32>
// CHECK: vector.transfer_read %arg1{{.*}} : tensor<3x3x32xf32>, vector<3x16xf32>
// CHECK-COUNT-3: vector.fma {{.*}} : vector<1x11x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x1x11x16xf32>
// CHECK-NEXT: arith.minimumf {{.*}} : vector<1x1x11x16xf32>
// CHECK-NEXT: vector.transfer_write
// CHECK: vector.transfer_read %arg0[%c0, %{{.*}}, %c110, %{{.*}}]{{.*}} : tensor<1x112x112x32xf32>, vector<1x2x16xf32>
// CHECK: arith.minimumf
// CHECK: arith.maxui %begin, %c1
// CHECK: arith.minui %end, %c56
// CHECK: arith.maxui %begin, %c56
// CHECK: arith.minui %end, %c57
// CHECK-NOT: tensor.pad
func.func @depthwise_borders(%x: tensor<1x112x112x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x112x112x32xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x112x112x32xf32> to tensor<1x114x114x32xf32>
  %e = tensor.empty() : tensor<1x112x112x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x112x112x32xf32>) -> tensor<1x112x112x32xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x114x114x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x112x112x32xf32>) -> tensor<1x112x112x32xf32>
  %e2 = tensor.empty() : tensor<1x112x112x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : tensor<1x112x112x32xf32>) outs(%e2 : tensor<1x112x112x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    %n = arith.minimumf %m, %six : f32
    linalg.yield %n : f32
  } -> tensor<1x112x112x32xf32>
  return %r : tensor<1x112x112x32xf32>
}

// -----

// A max pooling over a pad by -inf, stride 2: only the first output row and column see the
// padding (the last windows end inside the input). 3x3 outputs of 256 channels: three rows
// would be three workgroups, 16 channel tiles make 16. The regions are the first row and
// column with 2 taps each way and the interior with 3, slices of the unpadded input.
// CHECK-LABEL: func.func @maxpool_borders
// CHECK-SAME: hexir.workgroups = 16
// CHECK-NOT: tensor.pad
// CHECK: scf.for %[[WG:.*]] = %begin to %{{.*}} step %c1
// CHECK: %[[C:.*]] = arith.muli %[[WG]], %c16
// CHECK: tensor.extract_slice %{{.*}}[0, %c0, 0, %[[C]]] [1, 3, 3, 16]
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x6x6x256xf32>, vector<1x2x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x1x16xf32>
// CHECK-NOT: tensor.pad
func.func @maxpool_borders(%x: tensor<1x6x6x256xf32>) -> tensor<1x3x3x256xf32> attributes {hexir.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x6x6x256xf32> to tensor<1x7x7x256xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x3x3x256xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x3x256xf32>) -> tensor<1x3x3x256xf32>
  %m = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<1x7x7x256xf32>, tensor<3x3xf32>) outs(%f : tensor<1x3x3x256xf32>) -> tensor<1x3x3x256xf32>
  return %m : tensor<1x3x3x256xf32>
}

// -----

// A 39-wide depthwise convolution: its interior columns (37, prime) would get 1-column register
// tiles; they are peeled into two 16-column tiles and the 5 columns left.
// CHECK-LABEL: func.func @depthwise_prime_interior
// CHECK-NOT: tensor.pad
// CHECK-DAG: vector.fma {{.*}} : vector<1x16x16xf32>
// CHECK-DAG: vector.fma {{.*}} : vector<1x5x16xf32>
// CHECK: return
func.func @depthwise_prime_interior(%x: tensor<1x4x39x16xf32>, %w: tensor<3x3x16xf32>) -> tensor<1x4x39x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x39x16xf32> to tensor<1x6x41x16xf32>
  %e = tensor.empty() : tensor<1x4x39x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x39x16xf32>) -> tensor<1x4x39x16xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x6x41x16xf32>, tensor<3x3x16xf32>) outs(%f : tensor<1x4x39x16xf32>) -> tensor<1x4x39x16xf32>
  return %d : tensor<1x4x39x16xf32>
}
