// RUN: %hexir-compile %s -o %t.hxb --print-dispatches | FileCheck %s

// A residual block: a 3x3 convolution with a bias, its ReLU, a padded 3x3 convolution with a
// bias, the residual add and a ReLU. Two dispatches: the first convolution computes its bias,
// ReLU and the second convolution's padding (it writes straight into the padded tensor: the pad
// disappears into the convolution before it); the second computes its bias, the residual add
// and the ReLU as its epilogue. The input's own pad stays a dispatch (a function argument
// cannot be written in place). Filters are packed into three panels of 16 channels, so the
// kernels' results are [.., 3, 16], viewed as 48 channels by the graph.
// CHECK: dispatches of @main:
// CHECK-NEXT: 0 main_dispatch_0_pad -> tensor<1x10x10x48xf32> covers 'pad0'
// CHECK-NEXT: 1 main_dispatch_1_generic -> tensor<1x10x10x3x16xf32> covers 'conv1', 'bias1', 'relu1', 'pad1'
// CHECK-NEXT: 2 main_dispatch_2_generic -> tensor<1x8x8x3x16xf32> covers 'conv2', 'bias2', '{{(add', 'relu2|relu2', 'add)}}'
// CHECK-NEXT: 3 dispatches
#bias = affine_map<(n, h, w, c) -> (c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @main(%x: tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32> {
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant dense<0.01> : tensor<3x3x48x48xf32>
  %w2 = arith.constant dense<0.02> : tensor<3x3x48x48xf32>
  %b1 = arith.constant dense<0.5> : tensor<48xf32>
  %b2 = arith.constant dense<-0.25> : tensor<48xf32>
  %e = tensor.empty() : tensor<1x8x8x48xf32>
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x48xf32> to tensor<1x10x10x48xf32> loc("pad0")
  %acc1 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b1 : tensor<48xf32>) outs(%e : tensor<1x8x8x48xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x8x8x48xf32> loc("bias1")
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %w1 : tensor<1x10x10x48xf32>, tensor<3x3x48x48xf32>) outs(%acc1 : tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32> loc("conv1")
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x8x8x48xf32>) outs(%e : tensor<1x8x8x48xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x48xf32> loc("relu1")
  %rp = tensor.pad %r1 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x48xf32> to tensor<1x10x10x48xf32> loc("pad1")
  %acc2 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b2 : tensor<48xf32>) outs(%e : tensor<1x8x8x48xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x8x8x48xf32> loc("bias2")
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%rp, %w2 : tensor<1x10x10x48xf32>, tensor<3x3x48x48xf32>) outs(%acc2 : tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32> loc("conv2")
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %x : tensor<1x8x8x48xf32>, tensor<1x8x8x48xf32>) outs(%e : tensor<1x8x8x48xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<1x8x8x48xf32> loc("add")
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x8x48xf32>) outs(%e : tensor<1x8x8x48xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x48xf32> loc("relu2")
  return %r2 : tensor<1x8x8x48xf32>
}
