// RUN: tessera-opt %s -split-input-file -tile-version-interior | FileCheck %s

// Kernels the pass leaves as they are: no load (nothing to gain), loops it
// cannot bound (below), an index computed by an op that is not pure, an access to a memref
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

// Loops whose tiles the test cannot bound: an index that falls as the
// induction variable grows (3 - i), one times a negative constant, a step
// that is not a constant, bounds compared unsigned, an index read from a
// value the loop carries, a loop with a region inside, and a while loop.
// CHECK-LABEL: func.func @falling_index
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @falling_index(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %c3 = arith.constant 3 : i32
    %k = arith.subi %c3, %j : i32
    %x = tile.load %a[%k] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @negative_multiplier
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @negative_multiplier(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %m = arith.constant -1 : i32
    %k = arith.muli %j, %m : i32
    %x = tile.load %a[%k] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @dynamic_step
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @dynamic_step(%o: !f1, %a: !f1, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %step = arith.index_cast %n : i32 to index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %c4 step %step iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%j] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @unsigned_bounds
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @unsigned_bounds(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for unsigned %i = %c0 to %c4 step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%j] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @carried_index
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @carried_index(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %init, %k = %z) -> (tensor<64xf32>, i32) {
    %x = tile.load %a[%k] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    %c2 = arith.constant 2 : i32
    %k2 = arith.addi %k, %c2 : i32
    scf.yield %t, %k2 : tensor<64xf32>, i32
  }
  %p = tile.program_id 0
  tile.store %r#0, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @region_in_loop
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @region_in_loop(%o: !f1, %a: !f1, %b: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%j] : !f1 -> tensor<64xf32>
    %t = scf.if %b -> (tensor<64xf32>) {
      %u = arith.addf %s, %x : tensor<64xf32>
      scf.yield %u : tensor<64xf32>
    } else {
      scf.yield %s : tensor<64xf32>
    }
    scf.yield %t : tensor<64xf32>
  }
  %p = tile.program_id 0
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @while_loop
// CHECK-NOT: tile.interior
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @while_loop(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %n = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %c4 : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%i2: i32):
    %c1 = arith.constant 1 : i32
    %next = arith.addi %i2, %c1 : i32
    scf.yield %next : i32
  }
  tile.store %x, %o[%p] : tensor<64xf32>, !f1
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
