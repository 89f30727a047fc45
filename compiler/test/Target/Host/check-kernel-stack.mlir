// RUN: %hexir-opt %s -split-input-file -verify-diagnostics -hexir-check-kernel-stack | FileCheck %s

// Static buffers in the entry block, and one released in every iteration of its loop (an
// alloca scope inside the loop): accepted, 64 + 4 x 16 bytes recorded.
// CHECK-LABEL: func.func @fine
// CHECK-SAME: hexir.stack_bytes = 128
func.func @fine(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloca() : memref<16xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.alloca_scope {
      %b = memref.alloca() : memref<vector<16xf32>>
    }
  }
  return
}

// -----

// expected-error @below {{kernel 'in_loop' allocates stack memory inside a loop without releasing it}}
func.func @in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %b = memref.alloca() : memref<vector<8x32xf32>>
  }
  return
}

// -----

// expected-error @below {{kernel 'heap' allocates heap memory}}
func.func @heap() {
  %a = memref.alloc() : memref<16xf32>
  return
}

// -----

// expected-error @below {{kernel 'big' needs 65540 bytes of stack buffers, more than 65536}}
func.func @big() {
  %a = memref.alloca() : memref<16385xf32>
  return
}
