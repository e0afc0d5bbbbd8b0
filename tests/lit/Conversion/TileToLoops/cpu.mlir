// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops=vector-width=2 | FileCheck %s

!g1i32 = memref<?xi32, strided<[?], offset: ?>>

// Program ids become six trailing i32 arguments; a splat fills the private
// buffer; the store is masked by the memref bound.
// CHECK-LABEL: func.func @ids
// CHECK-SAME: (%[[DST:.*]]: memref<?xi32, strided<[?], offset: ?>>, %[[P0:.*]]: i32, %[[P1:.*]]: i32, %[[P2:.*]]: i32, %[[N0:.*]]: i32, %[[N1:.*]]: i32, %[[N2:.*]]: i32)
// CHECK-SAME: attributes {tile.kernel}
// CHECK: %[[BUF:.*]] = memref.alloca() : memref<2xi32>
// CHECK: %[[S:.*]] = arith.addi %[[P1]], %[[N2]] : i32
// CHECK: memref.store %[[S]], %[[BUF]][%{{.*}}] : memref<2xi32>
// CHECK: memref.store %[[S]], %[[BUF]][%{{.*}}] : memref<2xi32>
// CHECK: %[[DIM:.*]] = memref.dim %[[DST]], %{{.*}}
// CHECK: %[[T:.*]] = arith.index_cast %[[P1]] : i32 to index
// CHECK: %[[BASE:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[BASE]], %[[DIM]] : index
// CHECK: %[[V:.*]] = memref.load %[[BUF]]
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: memref.store %[[V]], %[[DST]][%[[BASE]]]
// CHECK-NOT: tile.
// CHECK: return
func.func @ids(%dst: !g1i32) attributes {tile.kernel} {
  %p = tile.program_id 1
  %n = tile.num_programs 2
  %s = arith.addi %p, %n : i32
  %t = tile.splat %s : i32 -> tensor<2xi32>
  tile.store %t, %dst[%p] : tensor<2xi32>, !g1i32
  return
}

// -----

// A tile wholly in bounds loads unconditionally; on a ragged tile each
// element is read from its index, or from index 0 when out of bounds, and
// replaced by the padding value then (no branch per element; an empty tensor
// gives all padding). f16 arithmetic runs in f32.
// CHECK-LABEL: func.func @load_f16
// CHECK-DAG: %[[IN:.*]] = memref.alloca() : memref<2xf16>
// CHECK-DAG: %[[OUT:.*]] = memref.alloca() : memref<2xf16>
// CHECK: %[[PAD:.*]] = arith.constant 0xFC00 : f16
// CHECK: scf.if %{{.*}} {
// CHECK: memref.load %arg0
// CHECK: } else {
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: scf.if %[[NONEMPTY]] {
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I:.*]], %{{.*}} : index
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[OK]], %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[G:.*]] = memref.load %arg0[%[[SAFE]]]
// CHECK-NEXT: %[[L:.*]] = arith.select %[[OK]], %[[G]], %[[PAD]] : f16
// CHECK-NEXT: memref.store %[[L]], %[[IN]]
// CHECK: } else {
// CHECK: memref.store %[[PAD]], %[[IN]]
// CHECK: %[[X:.*]] = memref.load %[[IN]]
// CHECK-NEXT: %[[XE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[XE]], %[[XE]] : f32
// CHECK-NEXT: %[[YT:.*]] = arith.truncf %[[Y]] : f32 to f16
// CHECK-NEXT: memref.store %[[YT]], %[[OUT]]
func.func @load_f16(%a: memref<?xf16, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0] padding = -inf : memref<?xf16, strided<[?], offset: ?>> -> tensor<2xf16>
  %y = arith.mulf %x, %x : tensor<2xf16>
  tile.store %y, %a[%c0] : tensor<2xf16>, memref<?xf16, strided<[?], offset: ?>>
  return
}

// -----

// More than one chunk: the cpu target loops over chunks of vector-width
// elements; compares keep their i1 result, selects work per element.
// CHECK-LABEL: func.func @chunks
// CHECK-DAG: %[[C:.*]] = memref.alloca() : memref<8xi1>
// CHECK-DAG: %[[R:.*]] = memref.alloca() : memref<8xf32>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C4]] step %{{.*}} {
// CHECK: %[[K:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%[[K]]] : memref<8xf32>
// CHECK: %[[B:.*]] = memref.load %{{.*}}[%[[K]]] : memref<8xf32>
// CHECK: %[[CMP:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK: memref.store %[[CMP]], %[[C]][%[[K]]] : memref<8xi1>
// CHECK: scf.for
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %[[R]]
func.func @chunks(%a: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0] : memref<?xf32, strided<[?], offset: ?>> -> tensor<8xf32>
  %y = arith.constant dense<0.5> : tensor<8xf32>
  %c = arith.cmpf olt, %x, %y : tensor<8xf32>
  %r = arith.select %c, %x, %y : tensor<8xi1>, tensor<8xf32>
  tile.store %r, %a[%c0] : tensor<8xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// With one thread, a row reduction combines each row in registers (a tree
// per row, f16 accumulated in f32) into per-row totals, and a broadcast reads
// the private buffer of its input: no scratch buffer.
// CHECK-LABEL: func.func @reduce_broadcast
// CHECK-NOT: alignment = 16
// CHECK-DAG: %[[IN:.*]] = memref.alloca() : memref<8xf16>
// CHECK-DAG: %[[RED:.*]] = memref.alloca() : memref<2xf16>
// CHECK-DAG: %[[TOT:.*]] = memref.alloca() : memref<2xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloca() : memref<8xf16>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[K:.*]] = arith.muli %[[ROW]], %{{.*}} : index
// CHECK: %[[X0:.*]] = memref.load %[[IN]][%[[K]]] : memref<8xf16>
// CHECK: arith.extf %[[X0]] : f16 to f32
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: %[[M:.*]] = arith.maximumf
// CHECK: memref.store %[[M]], %[[TOT]][%[[ROW]]] : memref<2xf32>
// CHECK: %[[T0:.*]] = memref.load %[[TOT]]
// CHECK: %[[R0:.*]] = arith.truncf %[[T0]] : f32 to f16
// CHECK: memref.store %[[R0]], %[[RED]]
// CHECK: scf.for
// CHECK: %[[B:.*]] = memref.load %[[RED]][%{{.*}}] : memref<2xf16>
// CHECK: memref.store %[[B]], %[[OUT]]
// CHECK-NOT: memref.view
// CHECK: return
func.func @reduce_broadcast(%a: memref<?x?xf16, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, ?], offset: ?>> -> tensor<2x4xf16>
  %r = tile.reduce %x {kind = max, axis = 1} : tensor<2x4xf16> -> tensor<2x1xf16>
  %b = tile.broadcast %r : tensor<2x1xf16> -> tensor<2x4xf16>
  tile.store %b, %a[%c0, %c0] : tensor<2x4xf16>, memref<?x?xf16, strided<[?, ?], offset: ?>>
  return
}

// -----

// Loop-carried tiles live in a carried buffer: copied in before the loop and
// from the yielded buffer at the end of the body; scalar iter_args stay.
// CHECK-LABEL: func.func @loop
// CHECK: %[[INIT:.*]] = memref.alloca() : memref<2xf32>
// CHECK-NEXT: %[[CARRIED:.*]] = memref.alloca() : memref<2xf32>
// CHECK: %[[I0:.*]] = memref.load %[[INIT]]
// CHECK-NEXT: memref.store %[[I0]], %[[CARRIED]]
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CNT:.*]] = %{{.*}}) -> (index) {
// CHECK: %[[ACC:.*]] = memref.load %[[CARRIED]]
// CHECK-NEXT: %[[X:.*]] = memref.load
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[SUM:alloca_[0-9]+]][
// CHECK: %[[Y0:.*]] = memref.load %[[SUM]]
// CHECK-NEXT: memref.store %[[Y0]], %[[CARRIED]]
// CHECK: scf.yield %{{.*}} : index
// CHECK: memref.load %[[CARRIED]]
// CHECK: return %[[R]] : index
func.func @loop(%a: memref<?xf32, strided<[?], offset: ?>>, %n: index) -> index attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<2xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %cnt = %c0) -> (tensor<2xf32>, index) {
    %ii = arith.index_cast %i : index to i32
    %x = tile.load %a[%ii] : memref<?xf32, strided<[?], offset: ?>> -> tensor<2xf32>
    %y = arith.addf %acc, %x : tensor<2xf32>
    %c = arith.addi %cnt, %c1 : index
    scf.yield %y, %c : tensor<2xf32>, index
  }
  %i0 = arith.constant 0 : i32
  tile.store %r#0, %a[%i0] : tensor<2xf32>, memref<?xf32, strided<[?], offset: ?>>
  return %r#1 : index
}

// -----

// scf.if results get a buffer written by both branches.
// CHECK-LABEL: func.func @if_iota
// CHECK: %[[RES:.*]] = memref.alloca() : memref<2xi32>
// CHECK-NEXT: %[[SPLAT:.*]] = memref.alloca() : memref<2xi32>
// CHECK-NEXT: %[[IOTA:.*]] = memref.alloca() : memref<2xi32>
// CHECK: scf.if %arg1 {
// CHECK: memref.store %{{.*}}, %[[SPLAT]]
// CHECK: memref.store %{{.*}}, %[[RES]]
// CHECK: } else {
// CHECK: %[[L:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: memref.store %[[L]], %[[IOTA]]
// CHECK: %[[V:.*]] = memref.load %[[IOTA]]
// CHECK: memref.store %[[V]], %[[RES]]
// CHECK: }
// CHECK: memref.load %[[RES]]
func.func @if_iota(%a: memref<?xi32, strided<[?], offset: ?>>, %c: i1) attributes {tile.kernel} {
  %i0 = arith.constant 0 : i32
  %r = scf.if %c -> tensor<2xi32> {
    %s = tile.splat %i0 : i32 -> tensor<2xi32>
    scf.yield %s : tensor<2xi32>
  } else {
    %i = tile.iota : tensor<2xi32>
    scf.yield %i : tensor<2xi32>
  }
  tile.store %r, %a[%i0] : tensor<2xi32>, memref<?xi32, strided<[?], offset: ?>>
  return
}

// -----

// Transpose reads the scratch copy at the swapped linear index; mma loops
// over K in f32 from the accumulator's private value; reshape reuses the
// buffer.
// CHECK-LABEL: func.func @transpose_mma
// CHECK: %[[TV:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<16xi8> to memref<4xf16>
// CHECK: memref.load %[[TV]]
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<16xi8> to memref<4xf16>
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<16xi8> to memref<4xf16>
// CHECK: %[[INIT:.*]] = memref.load %{{.*}} : memref<4xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %[[INIT]]) -> (f32) {
// CHECK: %[[AV:.*]] = memref.load %[[A]]
// CHECK: %[[BV:.*]] = memref.load %[[B]]
// CHECK: %[[AE:.*]] = arith.extf %[[AV]] : f16 to f32
// CHECK: %[[BE:.*]] = arith.extf %[[BV]] : f16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[AE]], %[[BE]] : f32
// CHECK: %[[N:.*]] = arith.addf %[[S]], %[[P]] : f32
// CHECK: scf.yield %[[N]] : f32
func.func @transpose_mma(%a: memref<?x?xf16, strided<[?, ?], offset: ?>>,
                         %c: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %i0 = arith.constant 0 : i32
  %x = tile.load %a[%i0, %i0] : memref<?x?xf16, strided<[?, ?], offset: ?>> -> tensor<2x2xf16>
  %t = tile.transpose %x : tensor<2x2xf16> -> tensor<2x2xf16>
  %acc = arith.constant dense<1.0> : tensor<2x2xf32>
  %m = tile.mma %t, %x, %acc : tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf32> -> tensor<2x2xf32>
  %r = tile.reshape %m : tensor<2x2xf32> -> tensor<4xf32>
  tile.store %r, %c[%i0] : tensor<4xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// On cpu every private buffer is an entry-block alloca, large ones (here
// 64x128 f32, 32 KiB) too: tile-cpu-workspace moves those that a host
// thread's stack cannot hold (Dialect/Tile/Transforms/cpu-workspace.mlir). Nothing is heap-allocated.
// CHECK-LABEL: func.func @large_buffers
// CHECK-DAG: memref.alloca() : memref<8192xf32>
// CHECK-DAG: memref.alloca() : memref<2xf32>
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @large_buffers(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x128xf32>
  tile.store %x, %a[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  %y = tile.load %b[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<2xf32>
  tile.store %y, %b[%c0] : tensor<2xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}
