// RUN: %hexir-compile %s -o %t.hxb --print-plan --no-fusion | FileCheck %s
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=DUMP

// A chain x -> a = x*w (matmul) -> b = tanh(a) -> c = exp(b) -> y = c + c, each op its own
// kernel (--no-fusion: fused, the chain would have no intermediate to place).
// a dies at b, b dies at c: both elementwise, so each takes over the buffer it reads.
// Buffers are 4x16xf32 = 256 bytes; the whole chain lives in one 256-byte slot:
//
//   offset 0   256
//   step 0  [a  ]          a: matmul result (the splat weights are a filled constant)
//   step 1  [a=b]          b written over a
//   step 2  [b=c]          c written over b
//   step 3  (y -> the caller's output buffer)
//
// CHECK: memory plan for @main
// CHECK: main_dispatch_0_batch_matmul 256 0 0 1  -
// CHECK: main_dispatch_1_generic 256 0 1 2  main_dispatch_0_batch_matmul
// CHECK: main_dispatch_2_generic 256 0 2 3  main_dispatch_1_generic
// CHECK: arena 256 bytes; lower bound 256 bytes (before in-place 512)
// CHECK: constants 0 bytes stored, 512 bytes filled at load

// DUMP: FilledConstant[0, +512)
// DUMP: DISPATCH main_dispatch_1_generic
// DUMP-NEXT: in  Arena0[0, +256)
// DUMP-NEXT: out Arena0[0, +256) (in place of input 0)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = "tosa.const"() {values = dense<0.125> : tensor<1x8x16xf32>} : () -> tensor<1x8x16xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[1, 4, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s3 : (tensor<4x8xf32>, !tosa.shape<3>) -> tensor<1x4x8xf32>
  %a = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>
  %b = tosa.tanh %a : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %c = tosa.exp %b : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %y = tosa.add %c, %c : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %s2 = tosa.const_shape {values = dense<[4, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y2 = tosa.reshape %y, %s2 : (tensor<1x4x16xf32>, !tosa.shape<2>) -> tensor<4x16xf32>
  return %y2 : tensor<4x16xf32>
}
