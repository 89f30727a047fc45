// RUN: %hexir-opt %s -split-input-file -hexir-outline-dispatches | FileCheck %s
// RUN: %hexir-opt %s -split-input-file -hexir-outline-dispatches="fuse-producers=false" | FileCheck %s --check-prefix=NOFUSE
// RUN: %hexir-opt %s -split-input-file -hexir-outline-dispatches="pack-in-kernel-max-rows=0" | FileCheck %s --check-prefix=NOPACK

// A matmul with a zero-filled accumulator: the fill and tensor.empty are cloned into the
// kernel, the weights constant stays in the graph and becomes an operand.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[Y:.*]] = hexir.call_tir @main_dispatch_0_matmul(%[[X]], %[[W]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: return %[[Y]]
// CHECK: func.func @main_dispatch_0_matmul(%[[A:.*]]: tensor<4x8xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<8x16xf32> {bufferization.writable = false}) -> tensor<4x16xf32> attributes {hexir.kernel}
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F]] : tensor<4x16xf32>)
// CHECK: return %[[M]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A chain: pad then a generic using a captured scalar. Each compute op is its own dispatch;
// the reshape stays in the graph as a view; the scalar constant is cloned into the kernel.
// CHECK-LABEL: func.func @main(
// CHECK: %[[P:.*]] = hexir.call_tir @main_dispatch_0_pad(%arg0) : (tensor<2x2xf32>) -> tensor<4x4xf32>
// CHECK: %[[G:.*]] = hexir.call_tir @main_dispatch_1_generic(%[[P]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[G]]
// CHECK: return %[[V]]
// CHECK: func.func @main_dispatch_0_pad
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad
// CHECK: func.func @main_dispatch_1_generic
// CHECK: %[[C:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[C]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2x2xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0.0 : f32
  %c3 = arith.constant 3.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<2x2xf32> to tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c3 : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %v = tensor.collapse_shape %g [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %v : tensor<16xf32>
}

// -----

// A fill that is returned is a dispatch of its own, and a tensor operand used twice is
// passed once.
// CHECK-LABEL: func.func @main(
// CHECK: %[[F:.*]] = hexir.call_tir @main_dispatch_0_fill() : () -> tensor<3xf32>
// CHECK: %[[A:.*]] = hexir.call_tir @main_dispatch_1_add(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[F]], %[[A]]
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %a = linalg.add ins(%x, %x : tensor<3xf32>, tensor<3xf32>) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  return %f, %a : tensor<3xf32>, tensor<3xf32>
}

// -----

// A bias broadcast into a matmul's accumulator is cloned into the matmul's kernel: the kernel
// reads the 16-float bias, and no 4x16 broadcast tensor is written between two dispatches.
// CHECK-LABEL: func.func @main(
// CHECK: %[[BIAS:.*]] = arith.constant dense<{{.*}}> : tensor<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: hexir.call_tir @main_dispatch_0_matmul(%arg0, %{{.*}}, %[[BIAS]])
// CHECK: func.func @main_dispatch_0_matmul
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[B]] : tensor<4x16xf32>)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<8x16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]> : tensor<16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// An activation read only by a pad is computed inside the pad's kernel (which writes it into
// the padded tensor's interior); one read by the pad and by another op stays a dispatch.
// Without fusion, both activations are dispatches of their own.
// NOFUSE: hexir.call_tir @main_dispatch_3_pad
// CHECK-LABEL: func.func @main(
// CHECK: %[[P:.*]] = hexir.call_tir @main_dispatch_0_pad(%arg0)
// CHECK: %[[R:.*]] = hexir.call_tir @main_dispatch_1_generic(%arg1)
// CHECK: %[[Q:.*]] = hexir.call_tir @main_dispatch_2_pad(%[[R]])
// CHECK: return %[[P]], %[[Q]], %[[R]]
// CHECK-LABEL: func.func @main_dispatch_0_pad(
// CHECK: linalg.generic
// CHECK: tensor.pad
// CHECK-LABEL: func.func @main_dispatch_2_pad(
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad
func.func @main(%x: tensor<1x4x4x8xf32>, %y: tensor<1x4x4x8xf32>) -> (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>, tensor<1x4x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %p = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x8xf32> to tensor<1x6x6x8xf32>
  %e2 = tensor.empty() : tensor<1x4x4x8xf32>
  %relu2 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x4x4x8xf32>) outs(%e2 : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %q = tensor.pad %relu2 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x8xf32> to tensor<1x6x6x8xf32>
  return %p, %q, %relu2 : tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>, tensor<1x4x4x8xf32>
}

// -----

// An elementwise op reading a matmul's result, and nothing else reading it, is the matmul's
// epilogue: one kernel, named after the matmul. A matmul whose result is also returned keeps
// its own kernel. Without fusion (hexir-compile --no-fusion) every op is a kernel.
// NOFUSE: hexir.call_tir @main_dispatch_3_generic(%{{.*}}) : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-LABEL: func.func @main(
// CHECK: %[[Y:.*]] = hexir.call_tir @main_dispatch_0_matmul(%arg0, %{{.*}})
// CHECK: %[[M:.*]] = hexir.call_tir @main_dispatch_1_matmul(%arg0, %{{.*}})
// CHECK: %[[Z:.*]] = hexir.call_tir @main_dispatch_2_generic(%[[M]])
// CHECK: return %[[Y]], %[[Z]], %[[M]]
// CHECK-LABEL: func.func @main_dispatch_0_matmul(
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @main_dispatch_1_matmul(
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = arith.constant dense<0.125> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %b = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %y, %z, %b : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A softmax (row max, exp of the difference, row sum, division): the division's kernel takes
// in the ops before it that only it and they read, one row kernel. A second softmax whose exp
// is also returned is two: its exp must be stored, so it ends a row kernel (max, exp) and the
// sum and division read it in another.
// CHECK-LABEL: func.func @main(
// CHECK: %[[Y:.*]] = hexir.call_tir @main_dispatch_0_generic(%arg0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK: %[[E:.*]] = hexir.call_tir @main_dispatch_1_generic(%[[Y]])
// CHECK: %[[Y2:.*]] = hexir.call_tir @main_dispatch_2_generic(%[[E]])
// CHECK-NOT: hexir.call_tir
// CHECK: return %[[Y]], %[[Y2]], %[[E]]
// CHECK-LABEL: func.func @main_dispatch_0_generic(
// CHECK-COUNT-4: linalg.generic
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %ef = tensor.empty() : tensor<4x32xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x32xf32>) outs(%fmax : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x32xf32>, tensor<4xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x32xf32>) outs(%fsum : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x32xf32>, tensor<4xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x32xf32>
  %max2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x32xf32>) outs(%fmax : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %exp2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %max2 : tensor<4x32xf32>, tensor<4xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x32xf32>
  %sum2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp2 : tensor<4x32xf32>) outs(%fsum : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp2, %sum2 : tensor<4x32xf32>, tensor<4xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x32xf32>
  return %y, %y2, %exp2 : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// A depthwise convolution or pooling computes its border itself: the pad it reads (by zero,
// or by -inf for a max) joins its kernel, whose operand is the unpadded tensor. A pad by 1.0
// would change a depthwise result, so it stays a kernel of its own; without fusion every pad
// does.
// NOFUSE-COUNT-3: tensor.pad
// CHECK-LABEL: func.func @main(
// CHECK: %[[R:.*]] = hexir.call_tir @main_dispatch_0_generic(%arg0)
// CHECK: %[[D:.*]] = hexir.call_tir @main_dispatch_1_depthwise_conv_2d_nhwc_hwc(%[[R]], %{{.*}}) : (tensor<1x6x6x8xf32>, tensor<3x3x8xf32>)
// CHECK: %[[M:.*]] = hexir.call_tir @main_dispatch_2_pooling_nhwc_max(%[[R]]) : (tensor<1x6x6x8xf32>)
// CHECK: %[[P:.*]] = hexir.call_tir @main_dispatch_3_pad(%[[R]])
// CHECK: hexir.call_tir @main_dispatch_4_depthwise_conv_2d_nhwc_hwc(%[[P]], %{{.*}}) : (tensor<1x8x8x8xf32>, tensor<3x3x8xf32>)
// CHECK-LABEL: func.func @main_dispatch_1_depthwise_conv_2d_nhwc_hwc(
// CHECK: tensor.pad
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-LABEL: func.func @main_dispatch_2_pooling_nhwc_max(
// CHECK: tensor.pad
// CHECK: linalg.pooling_nhwc_max
// CHECK-LABEL: func.func @main_dispatch_4_depthwise_conv_2d_nhwc_hwc(
// CHECK-NOT: tensor.pad
// CHECK: return
func.func @main(%x: tensor<1x6x6x8xf32>) -> (tensor<1x6x6x8xf32>, tensor<1x3x3x8xf32>, tensor<1x6x6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w = arith.constant dense<0.5> : tensor<3x3x8xf32>
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x6x6x8xf32>) outs(%e : tensor<1x6x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x6x6x8xf32>
  %p0 = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x8xf32> to tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p0, %w : tensor<1x8x8x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %p1 = tensor.pad %relu low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x6x6x8xf32> to tensor<1x7x7x8xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e3 = tensor.empty() : tensor<1x3x3x8xf32>
  %f3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %mp = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p1, %win : tensor<1x7x7x8xf32>, tensor<3x3xf32>) outs(%f3 : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %p2 = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x6x6x8xf32> to tensor<1x8x8x8xf32>
  %d2 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p2, %w : tensor<1x8x8x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %d, %mp, %d2 : tensor<1x6x6x8xf32>, tensor<1x3x3x8xf32>, tensor<1x6x6x8xf32>
}

// -----

// A max pool padded with the lowest float computes its border itself only when its accumulator
// starts from that value too (tosa's pooling); over a -inf accumulator, a window of -inf inputs
// would give -inf instead of the lowest float, so that pad stays a kernel.
// CHECK-LABEL: func.func @main(
// CHECK: hexir.call_tir @main_dispatch_0_pooling_nhwc_max(%arg0)
// CHECK: %[[P:.*]] = hexir.call_tir @main_dispatch_1_pad(%arg0)
// CHECK: hexir.call_tir @main_dispatch_2_pooling_nhwc_max(%[[P]])
func.func @main(%x: tensor<1x6x6x8xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>) {
  %lowest = arith.constant -3.40282347E+38 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %lowest : f32
  } : tensor<1x6x6x8xf32> to tensor<1x7x7x8xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x3x3x8xf32>
  %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %a = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<1x7x7x8xf32>, tensor<3x3xf32>) outs(%f : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %q = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %lowest : f32
  } : tensor<1x6x6x8xf32> to tensor<1x7x7x8xf32>
  %g = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %b = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%q, %win : tensor<1x7x7x8xf32>, tensor<3x3xf32>) outs(%g : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  return %a, %b : tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>
}

// -----

// A concatenation of two ops computed for it alone becomes a chain of slice writers: the first
// kernel computes its operand into its slice of a new tensor, the second takes that tensor and
// writes its own slice (an update InPlaceAnalysis plans in place). A concatenation with a graph
// input among its operands, or returned (the caller's buffer is not the arena's), stays a
// concatenation kernel. Without fusion both stay.
// NOFUSE: hexir.call_tir @main_dispatch_3_concat
// NOFUSE: hexir.call_tir @main_dispatch_4_concat
// CHECK-LABEL: func.func @main
// CHECK: %[[T:.*]] = hexir.call_tir @main_dispatch_0_generic(%arg1)
// CHECK: %[[FIRST:.*]] = hexir.call_tir @main_dispatch_1_insert_slice(%arg0) : (tensor<4x16xf32>) -> tensor<4x32xf32>
// CHECK: %[[BOTH:.*]] = hexir.call_tir @main_dispatch_2_insert_slice(%arg1, %[[FIRST]]) : (tensor<4x16xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK: %[[KEPT:.*]] = hexir.call_tir @main_dispatch_3_concat(%arg0, %[[T]])
// CHECK: %[[NEG:.*]] = hexir.call_tir @main_dispatch_4_generic(%[[BOTH]])
// CHECK: return %[[NEG]], %[[KEPT]]
// CHECK-LABEL: func.func @main_dispatch_1_insert_slice(
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x32xf32>
// CHECK: tensor.insert_slice %[[R]] into %[[E]][0, 0] [4, 16] [1, 1]
// CHECK-LABEL: func.func @main_dispatch_2_insert_slice(
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: tensor.insert_slice %[[X]] into %arg1[0, 16] [4, 16] [1, 1]
// CHECK-LABEL: func.func @main_dispatch_3_concat(
// CHECK: tensor.concat
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = math.exp %in : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %b2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = math.tanh %in : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
  %d = tensor.concat dim(1) %x, %b2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x32xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4x32xf32>) outs(%e2 : tensor<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  return %n, %d : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// A residual block: %y (a convolution and its ReLU) is read padded by the next convolution and
// unpadded by the residual add. The add reads the interior of the padded tensor instead, so the
// pad takes %y's kernel in (it computes straight into the padded tensor) and no copy remains:
// the last kernel takes the padded tensor as the convolution's input and, sliced inside it, as
// the residual.
// CHECK-LABEL: func.func @main(
// CHECK: %[[XP:.*]] = hexir.call_tir @main_dispatch_0_pad(%arg0)
// CHECK: %[[YP:.*]] = hexir.call_tir @main_dispatch_1_conv_2d_nhwc_hwcf(%[[XP]], %arg1) : (tensor<1x10x10x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x10x10x8xf32>
// CHECK: %[[R:.*]] = hexir.call_tir @main_dispatch_2_conv_2d_nhwc_hwcf(%[[YP]], %arg2) : (tensor<1x10x10x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NOT: hexir.call_tir
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @main_dispatch_1_conv_2d_nhwc_hwcf(
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.generic
// CHECK: tensor.pad
// CHECK-LABEL: func.func @main_dispatch_2_conv_2d_nhwc_hwcf(
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %arg0[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] {hexir.interior_view}
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%arg0, %arg1 :
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[INTERIOR]] :
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @main(%x: tensor<1x8x8x8xf32>, %w1: tensor<3x3x8x8xf32>, %w2: tensor<3x3x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x8xf32> to tensor<1x10x10x8xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %w1 : tensor<1x10x10x8xf32>, tensor<3x3x8x8xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %yp = tensor.pad %y low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x8xf32> to tensor<1x10x10x8xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%yp, %w2 : tensor<1x10x10x8xf32>, tensor<3x3x8x8xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %y : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<1x8x8x8xf32>
  return %s : tensor<1x8x8x8xf32>
}

// -----

// A run-time B packed into panels (hexir-pack-matmul-weights) is packed inside the kernel of
// a matmul of at most 128 rows; one of more rows keeps a packing kernel of its own.
// CHECK-LABEL: func.func @runtime_panels(
// CHECK: %[[PACKED:.*]] = hexir.call_tir @runtime_panels_dispatch_0_generic(%{{.*}}) : (tensor<64x2x16xf32>) -> tensor<2x64x16xf32>
// CHECK-NEXT: hexir.call_tir @runtime_panels_dispatch_1_generic(%arg0, %{{.*}}) : (tensor<128x64xf32>, tensor<64x2x16xf32>)
// CHECK-NEXT: hexir.call_tir @runtime_panels_dispatch_2_generic(%arg2, %[[PACKED]]) : (tensor<192x64xf32>, tensor<2x64x16xf32>)
// CHECK-LABEL: func.func @runtime_panels_dispatch_0_generic(
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<64x2x16xf32>) outs(%{{.*}} : tensor<2x64x16xf32>)
// CHECK-NOT: reduction
// CHECK-LABEL: func.func @runtime_panels_dispatch_1_generic(
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<64x2x16xf32>) outs(%{{.*}} : tensor<2x64x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[P]] : tensor<128x64xf32>, tensor<2x64x16xf32>)
// CHECK-LABEL: func.func @runtime_panels_dispatch_2_generic(
// CHECK-SAME: %arg1: tensor<2x64x16xf32>
// NOPACK-LABEL: func.func @runtime_panels(
// NOPACK-COUNT-4: hexir.call_tir
// NOFUSE-LABEL: func.func @runtime_panels(
// NOFUSE-COUNT-4: hexir.call_tir
#pa = affine_map<(m, no, ni, k) -> (m, k)>
#pb = affine_map<(m, no, ni, k) -> (no, k, ni)>
#pc = affine_map<(m, no, ni, k) -> (m, no, ni)>
#view = affine_map<(k, no, ni) -> (k, no, ni)>
#panels = affine_map<(k, no, ni) -> (no, k, ni)>
func.func @runtime_panels(%a: tensor<128x64xf32>, %b: tensor<64x32xf32>, %c: tensor<192x64xf32>, %d: tensor<64x32xf32>)
    -> (tensor<128x2x16xf32>, tensor<192x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %bv = tensor.expand_shape %b [[0], [1, 2]] output_shape [64, 2, 16] : tensor<64x32xf32> into tensor<64x2x16xf32>
  %dv = tensor.expand_shape %d [[0], [1, 2]] output_shape [64, 2, 16] : tensor<64x32xf32> into tensor<64x2x16xf32>
  %pe = tensor.empty() : tensor<2x64x16xf32>
  %pb = linalg.generic {indexing_maps = [#view, #panels], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bv : tensor<64x2x16xf32>) outs(%pe : tensor<2x64x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x16xf32>
  %pd = linalg.generic {indexing_maps = [#view, #panels], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dv : tensor<64x2x16xf32>) outs(%pe : tensor<2x64x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x16xf32>
  %e1 = tensor.empty() : tensor<128x2x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x2x16xf32>) -> tensor<128x2x16xf32>
  %y1 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %pb : tensor<128x64xf32>, tensor<2x64x16xf32>) outs(%z1 : tensor<128x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<128x2x16xf32>
  %e2 = tensor.empty() : tensor<192x2x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<192x2x16xf32>) -> tensor<192x2x16xf32>
  %y2 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%c, %pd : tensor<192x64xf32>, tensor<2x64x16xf32>) outs(%z2 : tensor<192x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<192x2x16xf32>
  return %y1, %y2 : tensor<128x2x16xf32>, tensor<192x2x16xf32>
}

// -----

// A QDQ softmax (int8 scores in, int8 probabilities out, f32 in between) is one row kernel too:
// its exponentials live in a stack buffer of the kernel (Target/Host/RowKernelTiling.cpp).
// CHECK-LABEL: func.func @main(
// CHECK: hexir.call_tir @main_dispatch_0_generic(%arg0) : (tensor<4x32xi8>) -> tensor<4x32xi8>
// CHECK-NOT: hexir.call_tir
// CHECK-LABEL: func.func @main_dispatch_0_generic(
// CHECK-COUNT-4: linalg.generic
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<4x32xi8>) -> tensor<4x32xi8> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %s = arith.constant 0.0625 : f32
  %er = tensor.empty() : tensor<4xf32>
  %ef = tensor.empty() : tensor<4x32xf32>
  %eq = tensor.empty() : tensor<4x32xi8>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x32xi8>) outs(%fmax : tensor<4xf32>) {
  ^bb0(%in: i8, %acc: f32):
    %f = arith.sitofp %in : i8 to f32
    %m = arith.maximumf %acc, %f : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x32xi8>, tensor<4xf32>) outs(%ef : tensor<4x32xf32>) {
  ^bb0(%in: i8, %m: f32, %o: f32):
    %f = arith.sitofp %in : i8 to f32
    %d = arith.subf %f, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x32xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x32xf32>) outs(%fsum : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x32xf32>, tensor<4xf32>) outs(%eq : tensor<4x32xi8>) {
  ^bb0(%in: f32, %sm: f32, %o: i8):
    %q = arith.divf %in, %sm : f32
    %r = arith.divf %q, %s : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x32xi8>
  return %y : tensor<4x32xi8>
}
