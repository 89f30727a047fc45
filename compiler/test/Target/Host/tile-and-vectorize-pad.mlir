// RUN: %hexir-opt %s -hexir-tile-and-vectorize="min-work=1024" | FileCheck %s

// Pad kernels are split into workgroups of result rows when there is enough work. This one
// (1x6x4x8 -> 1x8x6x8, 384 elements, under min-work) stays one unchanged workgroup.
// CHECK-LABEL: func.func @small
// CHECK-NOT: hexir.workgroup_range
// CHECK: tensor.pad
func.func @small(%x: tensor<1x6x4x8xf32>) -> tensor<1x8x6x8xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x6x4x8xf32> to tensor<1x8x6x8xf32>
  return %p : tensor<1x8x6x8xf32>
}

// 1x30x30x8 -> 1x32x32x8: 8,192 elements make 8 workgroups of 4 result rows. Each fills its
// rows, then copies the source rows that land in them: rows [4w - 1, 4w + 3) of the source
// clamped to [0, 30), at row (s0 + 1 - 4w) of the chunk and column 1.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: hexir.workgroups = 8
// CHECK: %[[B:.*]], %[[E:.*]] = hexir.workgroup_range
// CHECK: scf.for %[[W:.*]] = %[[B]] to %[[E]] step %c1 iter_args(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[R0:.*]] = arith.muli %[[W]], %c4
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][0, %[[R0]], 0, 0] [1, 4, 32, 8]
// CHECK: %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[TILE]] : tensor<1x4x32x8xf32>)
// CHECK: %[[SRC:.*]] = tensor.extract_slice %arg0[0, %[[S0:.*]], 0, 0] [1, %[[N:.*]], 30, 8]
// CHECK: %[[T:.*]] = tensor.insert_slice %[[SRC]] into %[[FILLED]][0, %{{.*}}, 1, 0] [1, %[[N]], 30, 8]
// CHECK: tensor.insert_slice %[[T]] into %[[OUT]][0, %[[R0]], 0, 0] [1, 4, 32, 8]
// CHECK-NOT: tensor.pad
func.func @rows(%x: tensor<1x30x30x8xf32>) -> tensor<1x32x32x8xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x30x30x8xf32> to tensor<1x32x32x8xf32>
  return %p : tensor<1x32x32x8xf32>
}

// An activation padded in its own kernel (dispatch formation fused it into the pad): the
// padded tensor is allocated once; workgroup 0 fills its border (top and bottom rows, then the
// left and right columns of the interior rows, one vector at a time); the activation is split
// into workgroups of rows and writes, vectorized, straight into the interior. No tensor.pad,
// no copy remains.
// CHECK-LABEL: func.func @activation_then_pad
// CHECK-SAME: hexir.workgroups = 4
// CHECK: %[[BEGIN:.*]], %{{.*}} = hexir.workgroup_range
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x18x18x16xf32>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[BEGIN]], %c0
// CHECK: %[[B:.*]] = scf.if %[[FIRST]] -> (tensor<1x18x18x16xf32>)
// CHECK-COUNT-4: vector.transfer_write %{{.*}} : vector<1x1x1x16xf32>
// CHECK: else
// CHECK-NEXT: scf.yield %[[E]]
// CHECK: %[[I:.*]] = tensor.extract_slice %[[B]][0, 1, 1, 0] [1, 16, 16, 16] [1, 1, 1, 1]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[I]])
// CHECK: arith.maximumf {{.*}} : vector<1x1x1x16xf32>
// CHECK: %[[OUT:.*]] = tensor.insert_slice %[[R]] into %[[B]][0, 1, 1, 0] [1, 16, 16, 16] [1, 1, 1, 1]
// CHECK-NOT: tensor.pad
// CHECK: return %[[OUT]]
func.func @activation_then_pad(%x: tensor<1x16x16x16xf32>) -> tensor<1x18x18x16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x16x16x16xf32>) outs(%e : tensor<1x16x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x16xf32>
  %p = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x16x16x16xf32> to tensor<1x18x18x16xf32>
  return %p : tensor<1x18x18x16xf32>
}
