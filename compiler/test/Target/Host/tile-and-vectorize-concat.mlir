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
