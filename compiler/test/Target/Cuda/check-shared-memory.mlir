// RUN: %hexir-opt %s -split-input-file -hexir-cuda-check-shared-memory -verify-diagnostics | FileCheck %s
// RUN: not %hexir-opt %s -split-input-file -hexir-cuda-check-shared-memory="capacity=16384" 2>&1 | FileCheck %s --check-prefix=SMALL

// 8 KiB of workgroup attributions and 16 KiB of a shared alloca: 24 KiB, recorded, under the
// 48 KiB a block may declare statically; over a machine's 16 KiB (the second run).
// CHECK: gpu.func @tile
// CHECK-SAME: hexir.shared_bytes = 24576 : i64
// SMALL: error: kernel 'tile' needs 24576 bytes of shared memory per block, over the 16384 bytes of the machine's shared memory space
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @tile(%a: memref<64xf32>) workgroup(%t: memref<2048xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel {
      %s = memref.alloca() {alignment = 16 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// 64 KiB of shared memory: over the static limit, whatever the machine has.
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    // expected-error @+1 {{kernel 'big' needs 65536 bytes of shared memory per block, over the 49152 bytes a CUDA block may declare statically}}
    gpu.func @big(%a: memref<64xf32>) workgroup(%t: memref<16384xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel {
      gpu.return
    }
  }
}

// -----

// A shared buffer must say its alignment: LLVM vectorizes the accesses of a large shared array
// as if it were 16-byte aligned, and PTX would declare the element's 4 bytes (a misaligned
// ld.shared.v2 on the GPU). Neither a bare attribution nor an 8-byte alloca passes.
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    // expected-error @+1 {{internal error: kernel 'unaligned' declares shared memory without a 16-byte alignment}}
    gpu.func @unaligned(%a: memref<64xf32>) workgroup(%t: memref<2048xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    // expected-error @+1 {{internal error: kernel 'alloca8' declares shared memory without a 16-byte alignment}}
    gpu.func @alloca8(%a: memref<64xf32>) kernel {
      %s = memref.alloca() {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
