// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=4" -canonicalize -cse | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops -canonicalize -cse | FileCheck %s --check-prefix=CPU

// Global accesses, chunk by chunk. 64 f32 over 4 threads: V = 16 bytes / 4 =
// 4, so each thread owns 4 chunks of 4 contiguous elements. A memref with a
// static unit stride and tile.align = 16 gets one aligned vector<4xf32> load
// (store) per chunk when the whole tile is in bounds (its last index is
// checked once per program): all chunks unconditionally. A ragged tile goes
// element by element, in a loop over chunks (not unrolled) on a staged copy
// of the private buffer: loads read index 0 when out of bounds and select the
// padding value, stores are masked.
// CHECK-LABEL: func.func @vec_f32
// CHECK-SAME: (%[[A:.*]]: memref<?xf32, strided<[1], offset: ?>> {tile.align = 16 : i64}, %[[B:.*]]: memref<?xf32, strided<[1], offset: ?>> {tile.align = 16 : i64})
// CHECK: %[[DIM:.*]] = memref.dim %[[A]]
// CHECK: %[[ORIGIN:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK-NEXT: %[[TLAST:.*]] = arith.addi %[[ORIGIN]], %c63 : index
// CHECK-NEXT: %[[TILEOK:.*]] = arith.cmpi ult, %[[TLAST]], %[[DIM]] : index
// CHECK-NEXT: scf.if %[[TILEOK]] {
// CHECK-NOT: scf.if
// CHECK: %[[V:.*]] = vector.load %[[A]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[E0]], %[[BUF:.*]][%c0] : memref<16xf32>
// CHECK-COUNT-3: vector.load %[[A]]
// CHECK-NOT: scf.if
// CHECK: } else {
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[DIM]], %c0 : index
// CHECK-NEXT: scf.if %[[NE]] {
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[G:.*]], %[[DIM]] : index
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[OK]], %[[G]], %c0 : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[SAFE]]]
// CHECK-NEXT: %[[XP:.*]] = arith.select %[[OK]], %[[X]], %cst : f32
// CHECK-NEXT: memref.store %[[XP]], %[[STAGE:.*]][%{{.*}}] : memref<16xf32>
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: } else {
// CHECK: memref.store %cst, %[[STAGE]]
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: %[[S0:.*]] = memref.load %[[STAGE]][%c0] : memref<16xf32>
// CHECK-NEXT: memref.store %[[S0]], %[[BUF]][%c0] : memref<16xf32>
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-4: vector.store %{{.*}}, %[[B]]
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[OSTAGE:.*]][%c0] : memref<16xf32>
// CHECK: scf.for
// CHECK: %[[W:.*]] = memref.load %[[OSTAGE]][%{{.*}}] : memref<16xf32>
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %[[W]], %[[B]][%{{.*}}]
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: return

// On cpu (one thread, 16 chunks of 4): when the tile is in bounds, a loop
// over chunks, each a vector access.
// CPU-LABEL: func.func @vec_f32
// CPU: scf.if %{{.*}} {
// CPU-NEXT: scf.for %[[C:.*]] = %c0 to %c16 step %c1 {
// CPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CPU: scf.for
// CPU: vector.store %{{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
!f32a = memref<?xf32, strided<[1], offset: ?>>
func.func @vec_f32(%a: !f32a {tile.align = 16 : i64}, %b: !f32a {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] : !f32a -> tensor<64xf32>
  %y = arith.addf %x, %x : tensor<64xf32>
  tile.store %y, %b[%pid] : tensor<64xf32>, !f32a
  return
}

// -----

// bf16 load, f32 math, bf16 and f32 stores: the narrowest element type (bf16)
// sets V = 8, for every value of the shape. A bf16 chunk is one 16-byte
// vector<8xbf16>; an f32 chunk is two aligned vector<4xf32> stores.
// CHECK-LABEL: func.func @mixed
// CHECK: memref.alloca() : memref<16xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK: vector.from_elements
// CHECK-NEXT: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
!bf2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f32x2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mixed(%a: !bf2 {tile.align = 16 : i64}, %b: !bf2 {tile.align = 16 : i64}, %c: !f32x2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%pid, %c0] : !bf2 -> tensor<1x64xbf16>
  %f = arith.extf %x : tensor<1x64xbf16> to tensor<1x64xf32>
  %y = math.exp %f : tensor<1x64xf32>
  %z = arith.truncf %y : tensor<1x64xf32> to tensor<1x64xbf16>
  tile.store %z, %b[%pid, %c0] : tensor<1x64xbf16>, !bf2
  tile.store %y, %c[%pid, %c0] : tensor<1x64xf32>, !f32x2
  return
}

// -----

// Without tile.align, or without a static unit inner stride, or for i1, the
// accesses stay scalar, but the tile and each chunk are still checked once:
// the fast path has unconditional scalar loads.
// CHECK-LABEL: func.func @scalar_fast_path
// CHECK-NOT: vector.
// CHECK: %[[OK:.*]] = arith.cmpi ult
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK: %[[X:.*]] = memref.load %arg0[%{{.*}}] : memref<?xf32, strided<[1], offset: ?>>
// CHECK-NEXT: memref.store %[[X]]
// CHECK-NEXT: %[[I1:.*]] = arith.addi
// CHECK-NEXT: memref.load %arg0[%[[I1]]] : memref<?xf32, strided<[1], offset: ?>>
// CHECK-NOT: vector.
// CHECK: return
func.func @scalar_fast_path(%a: memref<?xf32, strided<[1], offset: ?>>,
                            %b: memref<?xf32, strided<[?], offset: ?>> {tile.align = 16 : i64},
                            %m: memref<?xi1, strided<[1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
  tile.store %x, %b[%pid] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %p = arith.cmpf ogt, %x, %z : tensor<64xf32>
  tile.store %p, %m[%pid] : tensor<64xi1>, memref<?xi1, strided<[1], offset: ?>>
  return
}

// -----

// Rows narrower than a chunk: 8x2 f32 over 4 threads gives chunks of 4
// elements spanning two rows, accessed as two aligned vector<2xf32> (8 bytes);
// the tile check covers its 8 rows and 2 columns. On a ragged tile each
// element checks its row and column.
// CHECK-LABEL: func.func @narrow_rows
// CHECK: %[[TR:.*]] = arith.cmpi ult, %{{.*}}, %[[DIM0:.*]] : index
// CHECK: %[[TC:.*]] = arith.cmpi ugt, %[[DIM1:.*]], %c1 : index
// CHECK: %[[TOK:.*]] = arith.andi %[[TR]], %[[TC]] : i1
// CHECK: scf.if %[[TOK]] {
// CHECK: vector.load %{{.*}}[%[[ROW0:.*]], %{{.*}}] {alignment = 8 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK: vector.load %{{.*}}[%[[ROW1:.*]], %{{.*}}] {alignment = 8 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK: } else {
// CHECK: %[[R0:.*]] = arith.cmpi ult, %{{.*}}, %[[DIM0]] : index
// CHECK: %[[C0:.*]] = arith.cmpi ult, %{{.*}}, %[[DIM1]] : index
// CHECK: %[[OK0:.*]] = arith.andi %[[R0]], %[[C0]] : i1
// CHECK: memref.load
// CHECK: arith.select %[[OK0]]
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @narrow_rows(%a: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%pid, %c0] : !f2 -> tensor<8x2xf32>
  tile.store %x, %a[%pid, %c0] : tensor<8x2xf32>, !f2
  return
}

// -----

// A smaller tile.align caps the access width: 8 bytes, vector<2xf32>.
// CHECK-LABEL: func.func @align8
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 8 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<2xf32>
func.func @align8(%a: memref<?xf32, strided<[1], offset: ?>> {tile.align = 8 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] : memref<?xf32, strided<[1], offset: ?>> -> tensor<16xf32>
  tile.store %x, %a[%pid] : tensor<16xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A load and a store marked tile.interior (tile-version-interior proved their
// tiles in bounds): the vector accesses alone, with no in-bounds test and no
// ragged path.
// CHECK-LABEL: func.func @interior
// CHECK-NOT: scf.if
// CHECK-COUNT-4: vector.load
// CHECK-NOT: scf.if
// CHECK-COUNT-4: vector.store
// CHECK-NOT: scf.if
// CHECK: return
!f32i = memref<?xf32, strided<[1], offset: ?>>
func.func @interior(%a: !f32i {tile.align = 16 : i64}, %b: !f32i {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] {tile.interior} : !f32i -> tensor<64xf32>
  tile.store %x, %b[%pid] {tile.interior} : tensor<64xf32>, !f32i
  return
}
