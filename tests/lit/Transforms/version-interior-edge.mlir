// RUN: tessera-opt %s -split-input-file -tile-version-interior | FileCheck %s

// Kernels the pass leaves as they are: no load (nothing to gain), a
// loop, an index computed by an op that is not pure, an access to a memref
// that is not a kernel argument, a kernel returning a value, and a function
// that is not a tile kernel.
// CHECK-LABEL: func.func @no_load
// CHECK-NOT: scf.if
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @no_load(%o: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = arith.constant dense<1.0> : tensor<64xf32>
  tile.store %x, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @loop
// CHECK-NOT: tile.interior
// CHECK: scf.for
// CHECK-NOT: tile.interior
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @loop(%o: !f1, %a: !f1, %b: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<64xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<64xf32>) {
    %n = arith.addf %acc, %y : tensor<64xf32>
    scf.yield %n : tensor<64xf32>
  }
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @impure_index
// CHECK-NOT: tile.interior
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @impure_index(%o: !f1, %a: !f1, %b: !f1, %n: memref<1xi32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %p = memref.load %n[%c0] : memref<1xi32>
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @not_an_argument
// CHECK-NOT: tile.interior
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @not_an_argument(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %view = memref.subview %a[%c0] [%c64] [1] : !f1 to !f1
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %view[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @returns_value
// CHECK-NOT: tile.interior
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @returns_value(%o: !f1, %a: !f1, %b: !f1) -> i32 attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return %p : i32
}

// -----

// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: tile.interior
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @not_a_kernel(%o: !f1, %a: !f1, %b: !f1) {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}
