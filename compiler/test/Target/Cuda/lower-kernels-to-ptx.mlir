// RUN: %hexir-opt %s -hexir-cuda-lower-kernels | FileCheck %s

// The whole CUDA kernel pipeline: a kernel on tensors with an exp and a tanh becomes PTX for
// sm_90 in a gpu.binary: one entry taking the two bindings as pointers, the block shape as
// .maxntid, exp and tanh as polynomials, sqrt and floor as PTX instructions (no libdevice:
// nothing imported), no shared memory. Its innermost extent, 40, is a multiple of 4: each thread
// loads and stores 4 elements as one 128-bit access.
// CHECK: gpu.binary @hexir_kernels
// CHECK-SAME: .target sm_90
// CHECK-SAME: .visible .entry k(
// CHECK-SAME: .param .u64 .ptr .align 1 k_param_0,
// CHECK-SAME: .param .u64 .ptr .align 1 k_param_1
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: fma.rn.f32
// CHECK-SAME: sqrt.rn.f32
// CHECK-SAME: cvt.rmi.f32.f32
// CHECK-SAME: st.global.v4.b32
// CHECK-NOT: .extern
// CHECK-NOT: .shared
// CHECK-NOT: __nv_
#id = affine_map<(i, j) -> (i, j)>
func.func @k(%x: tensor<64x40xf32>) -> tensor<64x40xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<64x40xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x40xf32>) outs(%e : tensor<64x40xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    %u = math.tanh %t : f32
    %s = math.sqrt %u : f32
    %f = math.floor %s : f32
    linalg.yield %f : f32
  } -> tensor<64x40xf32>
  return %r : tensor<64x40xf32>
}
