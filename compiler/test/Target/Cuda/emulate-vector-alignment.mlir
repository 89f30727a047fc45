// RUN: %hexir-opt %s -split-input-file -hexir-cuda-emulate-on-host -verify-diagnostics | FileCheck %s

// Every vector access of an emulated kernel is checked against the alignment the GPU needs:
// its byte offset from the start of its buffer (a binding, which starts 16-byte aligned on the
// GPU) must be a multiple of its `alignment`. A failing check writes the fault record
// @hexir_kernel_fault (kind last), which the host runtime reports after the dispatch. The
// emulated access itself keeps no alignment: a host caller's tensor may be bound where it is.
// CHECK: memref.global "public" @hexir_kernel_fault : memref<8xi64> = dense<0> {alignment = 8 : i64}
// CHECK: func.func @v
// CHECK: %[[T:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK: memref.extract_strided_metadata %arg0
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[ADDR:.*]] = arith.addi %[[PTR]]
// CHECK: %[[OFF:.*]] = arith.subi %[[ADDR]], %{{.*}} : index
// CHECK: %[[REM:.*]] = arith.remui %[[OFF]], %c16{{.*}} : index
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[REM]], %c0{{.*}} : index
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[REC:.*]] = memref.get_global @hexir_kernel_fault : memref<8xi64>
// CHECK: memref.store %{{.*}}, %[[REC]][%c3{{.*}}] : memref<8xi64>
// CHECK: memref.store %{{.*}}, %[[REC]][%c0{{.*}}] : memref<8xi64>
// CHECK-NEXT: }
// CHECK: vector.load %arg0[%[[T]]] : memref<64xf32>, vector<4xf32>
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %arg1[%[[T]]] : memref<64xf32>, vector<4xf32>
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

// -----

// A vector access that asks for no more than its element's alignment needs no check.
// CHECK-LABEL: func.func @unaligned_ok
// CHECK-NOT: scf.if
// CHECK: vector.load
// CHECK-NOT: scf.if
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @unaligned_ok(%x: memref<64xf32>, %y: memref<64xf32>) kernel
        attributes {hexir.workgroup_size = 16 : i64, hexir.workgroups = 1 : i64} {
      %t = gpu.thread_id x
      %v = vector.load %x[%t] : memref<64xf32>, vector<4xf32>
      vector.store %v, %y[%t] : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// A thread's local buffer aligned to 4 bytes cannot hold 16-byte aligned vectors anywhere.
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @local(%x: memref<64xf32>) kernel
        attributes {hexir.workgroup_size = 16 : i64, hexir.workgroups = 1 : i64} {
      %c0 = arith.constant 0 : index
      %a = memref.alloca() {alignment = 4 : i64} : memref<8xf32>
      // expected-error @+1 {{kernel 'local' accesses 16-byte aligned vectors of a buffer aligned to 4 bytes on the GPU}}
      %v = vector.load %a[%c0] {alignment = 16} : memref<8xf32>, vector<4xf32>
      vector.store %v, %x[%c0] : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}
