// RUN: %hexir-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(hexir-cuda-lower-warp-mma))' | FileCheck %s

// One lane's share of a warp's 16x8x8 TF32 multiply-accumulate, in the fragment layout of
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (what the CUDA emulator cannot check: it
// computes each lane's outputs as dot products). With g = lane / 4 and t = lane % 4:
// a0 = A(g, t), a1 = A(g + 8, t), a2 = A(g, t + 4), a3 = A(g + 8, t + 4); b0 = B(t, g),
// b1 = B(t + 4, g); each rounded with cvt.rna.tf32.f32; C and D row-major [[c0, c1], [c2, c3]].
// CHECK-LABEL: gpu.func @one_lane
// CHECK-SAME: (%[[A:.*]]: memref<16x8xf32, 3>, %[[B:.*]]: memref<8x8xf32, 3>, %[[LANE:.*]]: index, %[[C0:.*]]: f32, %[[C1:.*]]: f32, %[[C2:.*]]: f32, %[[C3:.*]]: f32)
// CHECK-DAG: %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK-DAG: %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK-DAG: %[[G8:.*]] = arith.addi %[[G]], %c8
// CHECK-DAG: %[[T4:.*]] = arith.addi %[[T]], %c4
// CHECK: %[[A0:.*]] = memref.load %[[A]][%[[G]], %[[T]]]
// CHECK: nvvm.convert.float.to.tf32 %[[A0]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[A1:.*]] = memref.load %[[A]][%[[G8]], %[[T]]]
// CHECK: nvvm.convert.float.to.tf32 %[[A1]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[A2:.*]] = memref.load %[[A]][%[[G]], %[[T4]]]
// CHECK: %[[A3:.*]] = memref.load %[[A]][%[[G8]], %[[T4]]]
// CHECK: %[[B0:.*]] = memref.load %[[B]][%[[T]], %[[G]]]
// CHECK: %[[B1:.*]] = memref.load %[[B]][%[[T4]], %[[G]]]
// CHECK: %[[VC:.*]] = vector.from_elements %[[C0]], %[[C1]], %[[C2]], %[[C3]] : vector<2x2xf32>
// CHECK: %[[D:.*]] = nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[VC]]) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: vector.extract %[[D]][0, 0]
// CHECK: vector.extract %[[D]][0, 1]
// CHECK: vector.extract %[[D]][1, 0]
// CHECK: vector.extract %[[D]][1, 1]
// CHECK-NOT: hexir.warp_mma
gpu.module @kernels {
  gpu.func @one_lane(%a: memref<16x8xf32, 3>, %b: memref<8x8xf32, 3>, %lane: index, %c0: f32, %c1: f32, %c2: f32, %c3: f32) -> f32 {
    %d:4 = hexir.warp_mma lane(%lane) acc(%c0, %c1, %c2, %c3) a {
    ^bb0(%m: index, %k: index):
      %v = memref.load %a[%m, %k] : memref<16x8xf32, 3>
      hexir.yield %v : f32
    } b {
    ^bb0(%k: index, %n: index):
      %v = memref.load %b[%k, %n] : memref<8x8xf32, 3>
      hexir.yield %v : f32
    } : f32, f32, f32, f32
    %s0 = arith.addf %d#0, %d#1 : f32
    %s1 = arith.addf %d#2, %d#3 : f32
    %s = arith.addf %s0, %s1 : f32
    gpu.return %s : f32
  }
}

// -----

gpu.module @kernels {
  gpu.func @three_accumulators(%lane: index, %c: f32) {
    // expected-error @below {{takes and gives a lane's 4 accumulators}}
    %d:3 = hexir.warp_mma lane(%lane) acc(%c, %c, %c) a {
    ^bb0(%m: index, %k: index):
      hexir.yield %c : f32
    } b {
    ^bb0(%k: index, %n: index):
      hexir.yield %c : f32
    } : f32, f32, f32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @yields_an_index(%lane: index, %c: f32) {
    // expected-error @below {{regions yield an f32 element}}
    %d:4 = hexir.warp_mma lane(%lane) acc(%c, %c, %c, %c) a {
    ^bb0(%m: index, %k: index):
      hexir.yield %m : index
    } b {
    ^bb0(%k: index, %n: index):
      hexir.yield %c : f32
    } : f32, f32, f32, f32
    gpu.return
  }
}
