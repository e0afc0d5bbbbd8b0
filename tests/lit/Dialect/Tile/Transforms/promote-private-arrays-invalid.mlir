// RUN: tessera-opt %s -split-input-file -tile-promote-private-arrays | FileCheck %s

// Arrays the pass must leave as they are, every access kept: an element read
// before anything is stored to it (its value is undefined), a constant index
// out of bounds, accesses in two blocks, an array passed to another op, and a
// dynamically shaped array.

// CHECK-LABEL: func.func @read_before_write
// CHECK: memref.alloca
// CHECK: memref.store
// CHECK: memref.load
func.func @read_before_write(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloca() : memref<2xf32>
  memref.store %x, %a[%c0] : memref<2xf32>
  %v = memref.load %a[%c1] : memref<2xf32>
  return %v : f32
}

// -----

// CHECK-LABEL: func.func @out_of_bounds
// CHECK: memref.alloca
// CHECK: memref.store %arg0, %{{.*}}[%c7]
// CHECK: memref.load %{{.*}}[%c7]
func.func @out_of_bounds(%x: f32) -> f32 {
  %c7 = arith.constant 7 : index
  %a = memref.alloca() : memref<2xf32>
  memref.store %x, %a[%c7] : memref<2xf32>
  %v = memref.load %a[%c7] : memref<2xf32>
  return %v : f32
}

// -----

// CHECK-LABEL: func.func @two_blocks
// CHECK: memref.alloca
// CHECK: scf.if
// CHECK-NEXT: memref.store
// CHECK: memref.load
func.func @two_blocks(%c: i1, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<2xf32>
  memref.store %x, %a[%c0] : memref<2xf32>
  scf.if %c {
    memref.store %x, %a[%c0] : memref<2xf32>
  }
  %v = memref.load %a[%c0] : memref<2xf32>
  return %v : f32
}

// -----

// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloca
// CHECK: memref.store
// CHECK: memref.copy
// CHECK: memref.load
func.func @escapes(%x: f32, %o: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<2xf32>
  memref.store %x, %a[%c0] : memref<2xf32>
  memref.copy %a, %o : memref<2xf32> to memref<2xf32>
  %v = memref.load %a[%c0] : memref<2xf32>
  return %v : f32
}

// -----

// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloca(%arg1)
// CHECK: memref.store
// CHECK: memref.load
func.func @dynamic(%x: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca(%n) : memref<?xf32>
  memref.store %x, %a[%c0] : memref<?xf32>
  %v = memref.load %a[%c0] : memref<?xf32>
  return %v : f32
}
