// RUN: tessera-opt %s -split-input-file -tile-hoist-loads | FileCheck %s

// Loads from a memref that the kernel stores to never move, even when the
// store writes other elements (the invariant load of the read-only %a sinks
// to its user); loads of read-only arguments in an scf.for body move only
// within the body (a streaming load up, after the ops defining its indices;
// an invariant one down, to its user); functions without tile.kernel are left
// alone.
// CHECK-LABEL: func.func @inout
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK-NEXT: %[[R:.*]] = tile.load %arg1[%[[C0]]]
// CHECK-NEXT: tile.store %[[R]], %arg0[%[[P]]]
// CHECK-NEXT: %[[IO:.*]] = tile.load %arg0[%[[C0]]]
// CHECK-NEXT: tile.store %[[IO]], %arg0[%[[C0]]]
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @inout(%io: !f1, %a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %p = tile.program_id 0
  %x = tile.load %a[%c0] : !f1 -> tensor<128xf32>
  tile.store %x, %io[%p] : tensor<128xf32>, !f1
  %y = tile.load %io[%c0] : !f1 -> tensor<128xf32>
  tile.store %y, %io[%c0] : tensor<128xf32>, !f1
  return
}

// -----

!f1 = memref<?xf32, strided<[1], offset: ?>>
// CHECK-LABEL: func.func @loop
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT: %[[L1:.*]] = tile.load %arg1[%[[K]]]
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[ACC]], %[[ACC]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[L1]]
// CHECK-NEXT: %[[L0:.*]] = tile.load %arg2[%c0_i32]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[L0]]
// CHECK-NEXT: scf.yield %[[T]]
// CHECK: tile.store
func.func @loop(%o: !f1, %a: !f1, %b: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %st = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %lo to %hi step %st iter_args(%acc = %z) -> (tensor<64xf32>) {
    %k = arith.index_cast %i : index to i32
    %w = tile.load %b[%c0] : !f1 -> tensor<64xf32>
    %m = arith.mulf %acc, %acc : tensor<64xf32>
    %x = tile.load %a[%k] : !f1 -> tensor<64xf32>
    %s = arith.addf %m, %x : tensor<64xf32>
    %t = arith.addf %s, %w : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  tile.store %r, %o[%c0] : tensor<64xf32>, !f1
  return
}

// -----

!f1 = memref<?xf32, strided<[1], offset: ?>>
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK-NEXT: tile.load %arg0[%[[C0]]]
func.func @not_a_kernel(%a: !f1) {
  %c0 = arith.constant 0 : i32
  %p = tile.program_id 0
  %x = tile.load %a[%c0] : !f1 -> tensor<64xf32>
  return
}
