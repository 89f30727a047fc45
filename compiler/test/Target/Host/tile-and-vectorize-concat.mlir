// RUN: %hexir-opt %s -split-input-file -hexir-tile-and-vectorize="min-work=1024" | FileCheck %s

// A kernel that only concatenates (channels of two NHWC tensors, as squeezenet's fire modules)
// is split into workgroups of rows: 12 rows of 12x24 floats (3456, over min-work 1024: 3
// wanted) in 3 chunks of 4 rows; each copies its rows of both operands into place.
// CHECK-LABEL: func.func @channels
// CHECK-SAME: hexir.workgroups = 3
// CHECK: %begin, %end = hexir.workgroup_range
// CHECK: scf.for %[[WG:.*]] = %begin to %end
// CHECK: %[[R:.*]] = arith.muli %[[WG]], %c4
// CHECK: %[[A:.*]] = tensor.extract_slice %arg0[0, %[[R]], 0, 0] [1, 4, 12, 16]
// CHECK: tensor.insert_slice %[[A]] into %{{.*}}[0, %[[R]], 0, 0] [1, 4, 12, 16]
// CHECK: %[[B:.*]] = tensor.extract_slice %arg1[0, %[[R]], 0, 0] [1, 4, 12, 8]
// CHECK: tensor.insert_slice %[[B]] into %{{.*}}[0, %[[R]], 0, 16] [1, 4, 12, 8]
// CHECK-NOT: tensor.concat
func.func @channels(%a: tensor<1x12x12x16xf32>, %b: tensor<1x12x12x8xf32>) -> tensor<1x12x12x24xf32> attributes {hexir.kernel} {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x12x12x16xf32>, tensor<1x12x12x8xf32>) -> tensor<1x12x12x24xf32>
  return %c : tensor<1x12x12x24xf32>
}

// -----

// Under min-work: one workgroup, the concatenation unchanged.
// CHECK-LABEL: func.func @small
// CHECK-NOT: hexir.workgroups
// CHECK: tensor.concat
func.func @small(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<4x4xf32> attributes {hexir.kernel} {
  %c = tensor.concat dim(0) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// A slice writer of a concatenation (OutlineDispatches' concatsInPlace): its activation is
// computed in workgroups straight into its slice [0, 256) x [256, 512) of the output; workgroup
// 0 copies the destination around the slice (a copy ExpandCopies skips when the plan gives the
// destination and the output one buffer). No operand tensor, no concatenation.
// CHECK-LABEL: func.func @slice_writer
// CHECK-SAME: hexir.workgroups = 16
// CHECK: %[[BEGIN:.*]], %{{.*}} = hexir.workgroup_range
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x512xf32>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[BEGIN]], %c0
// CHECK: %[[B:.*]] = scf.if %[[FIRST]] -> (tensor<64x512xf32>)
// CHECK: %[[AROUND:.*]] = tensor.extract_slice %arg1[0, 0] [64, 256] [1, 1]
// CHECK: tensor.insert_slice %[[AROUND]] into %[[E]][0, 0] [64, 256] [1, 1]
// CHECK: else
// CHECK-NEXT: scf.yield %[[E]]
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[B]][0, 256] [64, 256] [1, 1]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[SLICE]])
// CHECK: arith.maximumf {{.*}} : vector<1x{{[0-9]+}}xf32>
// CHECK: %[[OUT:.*]] = tensor.insert_slice %[[R]] into %[[B]][0, 256] [64, 256] [1, 1]
// CHECK-NOT: tensor.concat
// CHECK: return %[[OUT]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slice_writer(%x: tensor<64x256xf32>, %dest: tensor<64x512xf32>) -> tensor<64x512xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64x256xf32>
  %i = tensor.insert_slice %r into %dest[0, 256] [64, 256] [1, 1] : tensor<64x256xf32> into tensor<64x512xf32>
  return %i : tensor<64x512xf32>
}
