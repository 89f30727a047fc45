// RUN: %hexir-opt %s -hexir-cuda-emulate-on-host | FileCheck %s

// The 16-byte alignment of a vectorized kernel's loads and stores holds for device memory, not
// for a host caller's tensor bound in place (aligned to its elements only): the emulator drops it.
// CHECK: func.func @v
// CHECK: vector.load %{{.*}} : memref<64xf32>, vector<4xf32>
// CHECK-NOT: alignment
// CHECK: vector.store %{{.*}} : memref<64xf32>, vector<4xf32>
// CHECK-NOT: alignment
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @v(%x: memref<64xf32>, %y: memref<64xf32>) kernel
        attributes {hexir.workgroup_size = 16 : i64, hexir.workgroups = 1 : i64} {
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %i = arith.muli %t, %c4 : index
      %v = vector.load %x[%i] {alignment = 16} : memref<64xf32>, vector<4xf32>
      vector.store %v, %y[%i] {alignment = 16} : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}
