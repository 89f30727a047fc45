// RUN: %hexir-opt %s -split-input-file -hexir-prefetch-streams | FileCheck %s

// A register tile's reduction loop over one 256-step block of a packed weight panel
// (P[panel][k][32], 4 MiB): each step also prefetches the same vector of the next block. The
// next block's start, min(k0 + 256, 1024 - 256), is computed once, outside the loop. The
// activation operand (64 KiB) is not prefetched. The prefetches end the step, after its FMAs.
// CHECK-DAG: #[[NEXT:.*]] = affine_map<()[s0] -> (s0 + 256, 768)>
// CHECK-LABEL: func.func @matmul_tile
// CHECK: %[[N:.*]] = affine.min #[[NEXT]]()[%arg3]
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c1
// CHECK: %[[AT:.*]] = affine.apply #{{.*}}()[%[[N]], %[[K]]]
// CHECK: vector.load %arg1
// CHECK: vector.load %arg1
// CHECK: vector.fma
// CHECK: vector.fma
// CHECK-NEXT: memref.prefetch %arg1[%arg4, %[[AT]], %c0], read, locality<2>, data : memref<32x1024x32xf32>
// CHECK-NEXT: memref.prefetch %arg1[%arg4, %[[AT]], %c16], read, locality<2>, data
// CHECK-NEXT: scf.yield
// CHECK-NOT: memref.prefetch %arg0
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @matmul_tile(%a: memref<16x1024xf32>, %b: memref<32x1024x32xf32>, %c: memref<16x1024xf32>, %k0: index, %p: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %r:2 = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc0 = %zero, %acc1 = %zero) -> (vector<16xf32>, vector<16xf32>) {
    %kk = affine.apply #sum()[%k0, %k]
    %x = memref.load %a[%c0, %kk] : memref<16x1024xf32>
    %xb = vector.broadcast %x : f32 to vector<16xf32>
    %w0 = vector.load %b[%p, %kk, %c0] : memref<32x1024x32xf32>, vector<16xf32>
    %w1 = vector.load %b[%p, %kk, %c16] : memref<32x1024x32xf32>, vector<16xf32>
    %a0 = vector.fma %xb, %w0, %acc0 : vector<16xf32>
    %a1 = vector.fma %xb, %w1, %acc1 : vector<16xf32>
    scf.yield %a0, %a1 : vector<16xf32>, vector<16xf32>
  }
  vector.store %r#0, %c[%c0, %c0] : memref<16x1024xf32>, vector<16xf32>
  return
}

// -----

// Not prefetched: a small operand (a 3x3x64x32 filter block fits the caches), a loop that is
// not innermost, a loop whose extent is more than half the operand's (no next block).
// CHECK-LABEL: func.func @nothing
// CHECK-NOT: memref.prefetch
func.func @nothing(%f: memref<3x3x64x32xf32>, %big: memref<300000xf32>, %out: memref<32xf32>) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c200000 = arith.constant 200000 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %r = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (vector<16xf32>) {
    %w = vector.load %f[%c0, %c0, %c, %c0] : memref<3x3x64x32xf32>, vector<16xf32>
    %s = arith.addf %acc, %w : vector<16xf32>
    scf.yield %s : vector<16xf32>
  }
  %t = scf.for %i = %c0 to %c200000 step %c1 iter_args(%acc = %r) -> (vector<16xf32>) {
    %w = vector.load %big[%i] : memref<300000xf32>, vector<16xf32>
    %s = arith.addf %acc, %w : vector<16xf32>
    scf.yield %s : vector<16xf32>
  }
  vector.store %t, %out[%c0] : memref<32xf32>, vector<16xf32>
  return
}

// -----

// A row of the panel loaded as one vector<32xf32> (128 bytes, two cache lines, as LLVM later
// splits it into two AVX-512 loads): one prefetch per line, each inside what the load reads.
// CHECK-LABEL: func.func @wide_row
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c1
// CHECK: %[[AT:.*]] = affine.apply #{{.*}}()[%{{.*}}, %[[K]]]
// CHECK: vector.load %arg1{{.*}} : memref<32x1024x32xf32>, vector<32xf32>
// CHECK: vector.fma
// CHECK-NEXT: memref.prefetch %arg1[%arg4, %[[AT]], %c0], read, locality<2>, data : memref<32x1024x32xf32>
// CHECK-NEXT: %[[SECOND:.*]] = affine.apply #{{.*}}()[%c0]
// CHECK-NEXT: memref.prefetch %arg1[%arg4, %[[AT]], %[[SECOND]]], read, locality<2>, data : memref<32x1024x32xf32>
// CHECK-NEXT: scf.yield
// CHECK-NOT: memref.prefetch
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @wide_row(%a: memref<16x1024xf32>, %b: memref<32x1024x32xf32>, %c: memref<16x1024xf32>, %k0: index, %p: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (vector<32xf32>) {
    %kk = affine.apply #sum()[%k0, %k]
    %x = memref.load %a[%c0, %kk] : memref<16x1024xf32>
    %xb = vector.broadcast %x : f32 to vector<32xf32>
    %w = vector.load %b[%p, %kk, %c0] : memref<32x1024x32xf32>, vector<32xf32>
    %s = vector.fma %xb, %w, %acc : vector<32xf32>
    scf.yield %s : vector<32xf32>
  }
  vector.store %r, %c[%c0, %c0] : memref<16x1024xf32>, vector<32xf32>
  return
}

// -----

// A reduction kept whole (AVX-512 and K <= 1024: the loop walks all 768 steps of the panel
// P[p][k][32]) has no next block along k; the next in memory is the next panel: each step
// prefetches row k of panel min(p + 1, 31), computed once outside the loop.
// CHECK-DAG: #[[PANEL:.*]] = affine_map<()[s0] -> (s0 + 1, 31)>
// CHECK-LABEL: func.func @whole_reduction
// CHECK: %[[NEXT:.*]] = affine.min #[[PANEL]]()[%arg3]
// CHECK: scf.for %[[K:.*]] = %c0 to %c768 step %c1
// CHECK: vector.fma
// CHECK-NEXT: memref.prefetch %arg1[%[[NEXT]], %[[K]], %c0], read, locality<2>, data : memref<32x768x32xf32>
// CHECK-NEXT: %[[SECOND:.*]] = affine.apply #{{.*}}()[%c0]
// CHECK-NEXT: memref.prefetch %arg1[%[[NEXT]], %[[K]], %[[SECOND]]], read, locality<2>, data
// CHECK-NEXT: scf.yield
// CHECK-NOT: memref.prefetch
func.func @whole_reduction(%a: memref<16x768xf32>, %b: memref<32x768x32xf32>, %c: memref<16x1024xf32>, %p: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c768 = arith.constant 768 : index
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %r = scf.for %k = %c0 to %c768 step %c1 iter_args(%acc = %zero) -> (vector<32xf32>) {
    %x = memref.load %a[%c0, %k] : memref<16x768xf32>
    %xb = vector.broadcast %x : f32 to vector<32xf32>
    %w = vector.load %b[%p, %k, %c0] : memref<32x768x32xf32>, vector<32xf32>
    %s = vector.fma %xb, %w, %acc : vector<32xf32>
    scf.yield %s : vector<32xf32>
  }
  vector.store %r, %c[%c0, %c0] : memref<16x1024xf32>, vector<32xf32>
  return
}

// -----

// A convolution's block of 64 input channels, reused by the 7 output rows around the register
// tile (their index is not in the filter's): with 4 the largest power of two at most 7, pass
// r prefetches steps [16 r', 16 (r' + 1)) of the next block, r' = r mod 4, as (64 r' + c) >> 2,
// so the next block streams in over four passes, not in the first pass alone. The kh loop
// moves the address (not a pass); the channel-block loop moves the block (the end of the
// passes).
// CHECK-DAG: #[[NEXT:.*]] = affine_map<()[s0] -> (s0 + 64, 448)>
// CHECK-DAG: #[[PASS:.*]] = affine_map<(d0) -> ((d0 mod 4) * 64)>
// CHECK-LABEL: func.func @reused_block
// CHECK: scf.for %[[CB:.*]] = %c0 to %c512 step %c64
// CHECK: scf.for %[[OH:.*]] = %c0 to %c7 step %c1
// CHECK: scf.for %[[KH:.*]] = %c0 to %c3 step %c1
// CHECK: %[[N:.*]] = affine.min #[[NEXT]]()[%[[CB]]]
// CHECK: %[[R:.*]] = affine.apply #[[PASS]](%[[OH]])
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[C:.*]] = %c0 to %c64 step %c1
// CHECK: %[[SUM:.*]] = arith.addi %[[R]], %[[C]] : index
// CHECK: %[[S:.*]] = arith.shrui %[[SUM]], %[[C2]] : index
// CHECK: %[[AT:.*]] = affine.apply #{{.*}}()[%[[N]], %[[S]]]
// CHECK: vector.fma
// CHECK-NEXT: memref.prefetch %arg1[%arg3, %[[KH]], %[[AT]], %c0], read, locality<2>, data : memref<16x3x512x16xf32>
// CHECK-NEXT: scf.yield
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @reused_block(%x: memref<9x512xf32>, %f: memref<16x3x512x16xf32>, %out: memref<7x16xf32>, %p: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.for %cb = %c0 to %c512 step %c64 {
    scf.for %oh = %c0 to %c7 step %c1 {
      %acc0 = vector.load %out[%oh, %c0] : memref<7x16xf32>, vector<16xf32>
      %acc = scf.for %kh = %c0 to %c3 step %c1 iter_args(%a = %acc0) -> (vector<16xf32>) {
        %ih = affine.apply #sum()[%oh, %kh]
        %r = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc1 = %a) -> (vector<16xf32>) {
          %cc = affine.apply #sum()[%cb, %c]
          %v = memref.load %x[%ih, %cc] : memref<9x512xf32>
          %vb = vector.broadcast %v : f32 to vector<16xf32>
          %w = vector.load %f[%p, %kh, %cc, %c0] : memref<16x3x512x16xf32>, vector<16xf32>
          %s = vector.fma %vb, %w, %acc1 : vector<16xf32>
          scf.yield %s : vector<16xf32>
        }
        scf.yield %r : vector<16xf32>
      }
      vector.store %acc, %out[%oh, %c0] : memref<7x16xf32>, vector<16xf32>
    }
  }
  return
}

// -----

// A reduction kept whole, reused by two loops of row tiles (2 x 4 passes, the inner one
// fastest): pass r of 8 prefetches steps [96 r, 96 (r + 1)) of the next panel, (768 r + k) >> 3.
// CHECK-DAG: #[[PANEL:.*]] = affine_map<()[s0] -> (s0 + 1, 31)>
// CHECK-DAG: #[[PASS:.*]] = affine_map<(d0, d1) -> ((d0 + d1 * 4) * 768)>
// CHECK-LABEL: func.func @whole_reduction_reused
// CHECK: scf.for %[[P:.*]] = %c0 to %c32 step %c1
// CHECK: scf.for %[[RB:.*]] = %c0 to %c2 step %c1
// CHECK: scf.for %[[RT:.*]] = %c0 to %c4 step %c1
// CHECK: %[[NEXT:.*]] = affine.min #[[PANEL]]()[%[[P]]]
// CHECK: %[[R:.*]] = affine.apply #[[PASS]](%[[RT]], %[[RB]])
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[K:.*]] = %c0 to %c768 step %c1
// CHECK: %[[SUM:.*]] = arith.addi %[[R]], %[[K]] : index
// CHECK: %[[S:.*]] = arith.shrui %[[SUM]], %[[C3]] : index
// CHECK: vector.fma
// CHECK-NEXT: memref.prefetch %arg1[%[[NEXT]], %[[S]], %c0], read, locality<2>, data : memref<32x768x16xf32>
// CHECK-NEXT: scf.yield
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @whole_reduction_reused(%a: memref<8x768xf32>, %b: memref<32x768x16xf32>, %c: memref<8x512xf32>) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c768 = arith.constant 768 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.for %p = %c0 to %c32 step %c1 {
    scf.for %rb = %c0 to %c2 step %c1 {
      scf.for %rt = %c0 to %c4 step %c1 {
        %row = affine.apply #sum()[%rt, %rb]
        %r = scf.for %k = %c0 to %c768 step %c1 iter_args(%acc = %zero) -> (vector<16xf32>) {
          %x = memref.load %a[%row, %k] : memref<8x768xf32>
          %xb = vector.broadcast %x : f32 to vector<16xf32>
          %w = vector.load %b[%p, %k, %c0] : memref<32x768x16xf32>, vector<16xf32>
          %s = vector.fma %xb, %w, %acc : vector<16xf32>
          scf.yield %s : vector<16xf32>
        }
        vector.store %r, %c[%row, %c0] : memref<8x512xf32>, vector<16xf32>
      }
    }
  }
  return
}

// -----

// A block of B packed into panels in the matmul's kernel (four 16-wide panels of each of 192
// rows, into a stack buffer): each load prefetches its row of the next group of panels, the
// panel index plus four (the last panel, 31, itself), beside what it loads. A store into
// anything but a view of a stack buffer is no packing (@copy_rows).
// CHECK-DAG: #[[NEXT:.*]] = affine_map<()[s0] -> (s0 + 4, 31)>
// CHECK-LABEL: func.func @pack_panels
// CHECK: scf.for %[[G:.*]] = %c0 to %c4 step %c1
// CHECK: %[[P:.*]] = affine.apply #{{.*}}()[%arg1, %[[G]]]
// CHECK: %[[ROW:.*]] = vector.load %arg0[%[[K:.*]], %[[P]], %c0] : memref<768x32x16xf32>, vector<16xf32>
// CHECK: vector.store %[[ROW]], %{{.*}}[%[[G]]
// CHECK: %[[N:.*]] = affine.min #[[NEXT]]()[%[[P]]]
// CHECK-NEXT: memref.prefetch %arg0[%[[K]], %[[N]], %c0], read, locality<2>, data : memref<768x32x16xf32>
// CHECK-NEXT: }
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @pack_panels(%b: memref<768x32x16xf32>, %p0: index, %k0: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c192 = arith.constant 192 : index
  %stack = memref.alloca() {alignment = 64 : i64} : memref<49152xi8>
  %buffer = memref.view %stack[%c0][] : memref<49152xi8> to memref<4x192x16xf32>
  scf.for %k = %c0 to %c192 step %c1 {
    %kk = affine.apply #sum()[%k0, %k]
    scf.for %g = %c0 to %c4 step %c1 {
      %p = affine.apply #sum()[%p0, %g]
      %row = vector.load %b[%kk, %p, %c0] : memref<768x32x16xf32>, vector<16xf32>
      vector.store %row, %buffer[%g, %k, %c0] : memref<4x192x16xf32>, vector<16xf32>
    }
  }
  return
}

// -----

// A copy into an argument is no packing: the generic rule prefetches the next block of panels
// along the moving index, min(p0 + 4, 32 - 4) + g, computed once outside the inner loop.
// CHECK-DAG: #[[BLOCK:.*]] = affine_map<()[s0] -> (s0 + 4, 28)>
// CHECK-LABEL: func.func @copy_rows
// CHECK: %[[NB:.*]] = affine.min #[[BLOCK]]()[%arg2]
// CHECK: scf.for %[[G:.*]] = %c0 to %c4 step %c1
// CHECK: %[[NP:.*]] = affine.apply #{{.*}}()[%[[NB]], %[[G]]]
// CHECK: memref.prefetch %arg0[%{{.*}}, %[[NP]], %c0], read, locality<2>, data : memref<768x32x16xf32>
#sum = affine_map<()[s0, s1] -> (s0 + s1)>
func.func @copy_rows(%b: memref<768x32x16xf32>, %out: memref<4x192x16xf32>, %p0: index, %k0: index) attributes {hexir.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c192 = arith.constant 192 : index
  scf.for %k = %c0 to %c192 step %c1 {
    %kk = affine.apply #sum()[%k0, %k]
    scf.for %g = %c0 to %c4 step %c1 {
      %p = affine.apply #sum()[%p0, %g]
      %row = vector.load %b[%kk, %p, %c0] : memref<768x32x16xf32>, vector<16xf32>
      vector.store %row, %out[%g, %k, %c0] : memref<4x192x16xf32>, vector<16xf32>
    }
  }
  return
}
