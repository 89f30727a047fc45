// RUN: %hexir-opt %s -hexir-cuda-emulate-on-host | FileCheck %s
// RUN: %hexir-opt %s -hexir-cuda-emulate-on-host=reverse=true | FileCheck %s --check-prefix=REVERSE

// A CUDA kernel as a host kernel: its blocks are the host workgroups (the range the caller
// asks for), its threads a loop inside each block, the thread's frame allocated once.
// CHECK-NOT: gpu.module
// CHECK: func.func @k(%[[X:.*]]: memref<300xf32>, %[[Y:.*]]: memref<300xf32>) attributes {hexir.workgroups = 2 : i64}
// CHECK: %[[T:.*]] = memref.alloca() : memref<1xf32>
// CHECK: %[[BEGIN:.*]], %[[END:.*]] = hexir.workgroup_range
// CHECK: scf.for %[[BLOCK:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: scf.for %[[THREAD:.*]] = %{{.*}} to %c256
// CHECK: arith.muli %[[BLOCK]], %c256
// CHECK: arith.addi %{{.*}}, %[[THREAD]]
// CHECK-NOT: gpu.
// CHECK: return

// Reversed (cuda-emulator-reversed): block end - 1 - (i - begin), thread 255 - j.
// REVERSE: %[[BEGIN:.*]], %[[END:.*]] = hexir.workgroup_range
// REVERSE: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]]
// REVERSE: %[[SUM:.*]] = arith.addi %[[BEGIN]], %[[END]]
// REVERSE: %[[LAST:.*]] = arith.subi %[[SUM]], %c1
// REVERSE: %[[BLOCK:.*]] = arith.subi %[[LAST]], %[[I]]
// REVERSE: scf.for %[[J:.*]] = %c0 to %c256
// REVERSE: %[[T:.*]] = arith.subi %{{.*}}, %[[J]]
// REVERSE: arith.muli %[[BLOCK]]
// REVERSE: arith.addi %{{.*}}, %[[T]]
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @k(%x: memref<300xf32>, %y: memref<300xf32>) kernel
        attributes {hexir.workgroup_size = 256 : i64, hexir.workgroups = 2 : i64} {
      %t = memref.alloca() : memref<1xf32>
      %c256 = arith.constant 256 : index
      %c300 = arith.constant 300 : index
      %b = gpu.block_id x
      %th = gpu.thread_id x
      %0 = arith.muli %b, %c256 : index
      %i = arith.addi %0, %th : index
      %in = arith.cmpi ult, %i, %c300 : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<300xf32>
        %c0 = arith.constant 0 : index
        memref.store %v, %t[%c0] : memref<1xf32>
        %w = memref.load %t[%c0] : memref<1xf32>
        memref.store %w, %y[%i] : memref<300xf32>
      }
      gpu.return
    }
  }
}
