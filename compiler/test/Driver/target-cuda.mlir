// RUN: %hexir-compile %s --target cuda -o %t.hxb
// RUN: %hexir-dump --ptx %t.hxb | FileCheck %s
// RUN: %hexir-compile %s --target cuda --cuda-arch sm_80 -o %t80.hxb
// RUN: %hexir-dump --ptx %t80.hxb | FileCheck %s --check-prefix=SM80
// RUN: %hexir-compile %s --target cuda --cuda-arch sm_75 -o %t75.hxb
// RUN: %hexir-dump --ptx %t75.hxb | FileCheck %s --check-prefix=SM75
// RUN: not %hexir-compile %s --target cuda --cuda-arch sm_9 -o %tbad.hxb 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %hexir-compile %s --target cuda --machine h200 --print-plan -o %th200.hxb | FileCheck %s --check-prefix=H200
// RUN: %hexir-compile %s --target cuda --print-plan -o %tplain.hxb | FileCheck %s --check-prefix=PLAIN

// `--target cuda`: the kernels are PTX, intermediates and constants live in the device's
// memory space. The concatenation is one kernel of two loop nests (one copy per operand),
// launched as two dispatches with the same bindings; the matmul with its ReLU is one block
// staging its tiles through shared memory (4 x 48 outputs; 6,656 bytes: a 4x16 and a 16x48
// tile of the inputs per step of K, copied 4 floats a thread, each in two slots: the next
// step's tiles arrive by cp.async during this one; 192 threads, one per output, each
// accumulating in a register, not in shared memory or local memory).
// CHECK: target: cuda; memory spaces: 0 device; constants in device
// CHECK: kernel library 0 (CudaPtx, section #0): 3 entries; needs compute capability 9.0
// CHECK-DAG: main_dispatch_{{[0-9]+}}_batch_matmul (arity 3, 1 workgroups of 192x1x1, shared memory 6656 bytes, local memory 0 bytes per thread)
// CHECK-DAG: [[CONCAT:main_dispatch_[0-9]+_concat]] (arity 3, 1 workgroups of 96x1x1
// CHECK-DAG: [[CONCAT]]__1 (arity 3, 1 workgroups of 32x1x1
// CHECK: PTX (
// CHECK: .target sm_90
// CHECK-NOT: .extern
// CHECK: .entry main_dispatch_{{[0-9]+}}_
// CHECK: arena 0: {{[0-9]+}} bytes, align 256, memory space device
// CHECK: DISPATCH [[CONCAT]] (library 0)
// CHECK-NEXT: in
// CHECK-NEXT: in
// CHECK-NEXT: out Arena0
// CHECK-NEXT: DISPATCH [[CONCAT]]__1 (library 0)
// CHECK-NEXT: in
// CHECK-NEXT: in
// CHECK-NEXT: out Arena0
// SM80: needs compute capability 8.0
// SM80: .target sm_80
// SM80: cp.async.cg.shared.global
// Before sm_80 there is no cp.async: one slot per tile, copied 16 bytes a thread through
// registers (ld.global.v4, st.shared.v4), a barrier before the accumulation reads them.
// SM75: batch_matmul (arity 3, 1 workgroups of 192x1x1, shared memory 3328 bytes
// SM75: .target sm_75
// SM75-NOT: cp.async
// SM75: ld.global.v4.b32
// SM75: st.shared.v4.b32
// The host cannot address the device's memory: the runtime's copies, by the machine's PCIe
// rate (55 GB/s, 10 us latency in the h200 preset): 512 bytes in and 768 out per run.
// H200: host <-> 'device': 0 bytes of constants uploaded once at load (0.000 ms); per run 512 bytes in, 768 bytes out (0.020 ms)
// PLAIN: host <-> 'device': 0 bytes of constants uploaded once at load (0.000 ms); per run 512 bytes in, 768 bytes out (no transfer rate: see --machine)
// BAD: error: unknown CUDA architecture 'sm_9' (--cuda-arch takes names such as sm_80 or sm_90)
func.func @main(%x: tensor<3x32xf32>, %y: tensor<1x32xf32>) -> tensor<4x48xf32> {
  %c = tensor.concat dim(0) %x, %y : (tensor<3x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  %w = "tosa.const"() {values = dense<0.5> : tensor<1x32x48xf32>} : () -> tensor<1x32x48xf32>
  %s = tosa.const_shape {values = dense<[1, 4, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %c3 = tosa.reshape %c, %s : (tensor<4x32xf32>, !tosa.shape<3>) -> tensor<1x4x32xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %m = tosa.matmul %c3, %w, %zp, %zp : (tensor<1x4x32xf32>, tensor<1x32x48xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x48xf32>
  %r = tosa.clamp %m {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x4x48xf32>) -> tensor<1x4x48xf32>
  %s2 = tosa.const_shape {values = dense<[4, 48]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %o = tosa.reshape %r, %s2 : (tensor<1x4x48xf32>, !tosa.shape<2>) -> tensor<4x48xf32>
  return %o : tensor<4x48xf32>
}
