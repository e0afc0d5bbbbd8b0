// RUN: tessera-opt %s -split-input-file -tile-hoist-invariants | FileCheck %s

// A fused RMSNorm prologue: the sum of squares (a loop), its reduction and the
// scalars computed from it leave the K loop; the broadcast to a whole tile and
// the loads that depend on the loop variable stay.
!f1 = memref<?xf32, strided<[1], offset: ?>>
// CHECK-LABEL: func.func @norm_prologue
// CHECK: %[[SQ:.*]] = scf.for
// CHECK: tile.load %arg1
// CHECK: scf.yield
// CHECK: %[[T:.*]] = tile.reduce %[[SQ]]
// CHECK-NEXT: %[[INV:.*]] = math.rsqrt %[[T]]
// CHECK-NEXT: scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]]
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[INV]]
// CHECK-NEXT: %[[X:.*]] = tile.load %arg1[%[[KI]]]
// CHECK-NEXT: arith.mulf %[[X]], %[[B]]
func.func @norm_prologue(%o: !f1, %x: !f1) attributes {tile.kernel} {
  %lo = arith.constant 0 : index
  %n = arith.constant 4 : index
  %st = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %k = %lo to %n step %st iter_args(%acc = %z) -> (tensor<64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %sq = scf.for %j = %lo to %n step %st iter_args(%s = %z) -> (tensor<64xf32>) {
      %ji = arith.index_cast %j : index to i32
      %v = tile.load %x[%ji] : !f1 -> tensor<64xf32>
      %v2 = arith.mulf %v, %v : tensor<64xf32>
      %s2 = arith.addf %s, %v2 : tensor<64xf32>
      scf.yield %s2 : tensor<64xf32>
    }
    %t = tile.reduce %sq {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
    %inv = math.rsqrt %t : tensor<1xf32>
    %b = tile.broadcast %inv : tensor<1xf32> -> tensor<64xf32>
    %xk = tile.load %x[%ki] : !f1 -> tensor<64xf32>
    %y = arith.mulf %xk, %b : tensor<64xf32>
    %a2 = arith.addf %acc, %y : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// Nothing that depends on the loop, reads a memref the kernel writes, or has
// another effect moves; an invariant load of a whole tile stays in the loop
// (re-read from the caches), and so do ops on whole tiles; functions without
// tile.kernel are left alone.
!f1 = memref<?xf32, strided<[1], offset: ?>>
// CHECK-LABEL: func.func @stays
// CHECK: scf.for
// CHECK-NEXT: tile.load %arg0[%c0_i32]
// CHECK-NEXT: tile.reduce
// CHECK-NEXT: tile.load %arg1[%c0_i32]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: tile.store
// CHECK-NEXT: arith.addf
// CHECK-NEXT: scf.yield
func.func @stays(%io: !f1, %w: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %lo = arith.constant 0 : index
  %n = arith.constant 4 : index
  %st = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %k = %lo to %n step %st iter_args(%acc = %z) -> (tensor<64xf32>) {
    %io0 = tile.load %io[%c0] : !f1 -> tensor<64xf32>
    %t = tile.reduce %io0 {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
    %wv = tile.load %w[%c0] : !f1 -> tensor<64xf32>
    %s = arith.addf %wv, %wv : tensor<64xf32>
    tile.store %s, %io[%c0] : tensor<64xf32>, !f1
    %a2 = arith.addf %acc, %s : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %io[%p] : tensor<64xf32>, !f1
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK: scf.for
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.reduce
func.func @not_a_kernel(%o: !f1, %w: !f1) {
  %c0 = arith.constant 0 : i32
  %lo = arith.constant 0 : index
  %n = arith.constant 4 : index
  %st = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<1xf32>
  %r = scf.for %k = %lo to %n step %st iter_args(%acc = %z) -> (tensor<1xf32>) {
    %wv = tile.load %w[%c0] : !f1 -> tensor<64xf32>
    %t = tile.reduce %wv {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
    scf.yield %t : tensor<1xf32>
  }
  return
}
