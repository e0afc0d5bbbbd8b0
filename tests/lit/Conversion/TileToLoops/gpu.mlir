// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=4 vector-width=2 exp-range-test=false" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=4 vector-width=2 unroll-limit=1" | FileCheck %s --check-prefix=LOOPS
// (The exps here are lowered element by element: exp-range-test, which groups them, is
// tested in exp-range.mlir.)



// 16 elements over 4 threads: 4 per thread in 2 chunks of 2, thread t owns
// linear indices (c*4 + t)*2 + j; fully unrolled with constant private indices.
// The memref has no static unit stride: the whole tile is checked once (its
// last index against the bound), then loaded with unconditional scalar loads;
// a ragged tile goes element by element (index 0 and the padding value when
// out of bounds) in a loop over chunks, on a staged copy of the buffer that
// is then copied in with constant indices.
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: memref<?xf32, strided<[?], offset: ?>>)
// CHECK-SAME: attributes {tile.block_size = 4 : i32, tile.exchange_free, tile.kernel}
// CHECK-DAG: %[[PID:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-DAG: %[[TID32:.*]] = nvvm.read.ptx.sreg.tid.x range <i32, 0, 4> : i32
// CHECK-DAG: %[[TID:.*]] = arith.index_cast %[[TID32]] : i32 to index
// CHECK-DAG: %[[BUF:.*]] = memref.alloca() : memref<4xf32>
// CHECK-DAG: %[[STAGE:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[DIM:.*]] = memref.dim %[[A]]
// CHECK: %[[ORIGIN:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[TLAST:.*]] = arith.addi %[[ORIGIN]], %{{.*}} : index
// CHECK: %[[TOK:.*]] = arith.cmpi ult, %[[TLAST]], %[[DIM]] : index
// CHECK: scf.if %[[TOK]] {
// CHECK-NOT: scf.if
// CHECK: %[[T2:.*]] = arith.muli %[[TID]], %{{.*}} : index
// CHECK: %[[G0:.*]] = arith.addi %[[ORIGIN]], %[[T2]] : index
// CHECK-NEXT: %[[X0:.*]] = memref.load %[[A]][%[[G0]]]
// CHECK-NEXT: memref.store %[[X0]], %[[BUF]][%{{.*}}] : memref<4xf32>
// CHECK-COUNT-3: memref.load %[[A]]
// CHECK: } else {
// CHECK: scf.if %{{.*}} {
// CHECK: scf.for
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[G:.*]], %[[DIM]] : index
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[OK]], %[[G]], %{{.*}} : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[SAFE]]]
// CHECK-NEXT: %[[XP:.*]] = arith.select %[[OK]], %[[X]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[XP]], %[[STAGE]][%{{.*}}] : memref<4xf32>
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: %[[K3:.*]] = arith.constant 3 : index
// CHECK: %[[S3:.*]] = memref.load %[[STAGE]][%[[K3]]] : memref<4xf32>
// CHECK-NEXT: memref.store %[[S3]], %[[BUF]][%[[K3]]] : memref<4xf32>
// CHECK-NOT: scf.for
// CHECK-NOT: vector.
// CHECK: math.exp %{{.*}} : f32
// CHECK: return
// LOOPS-LABEL: func.func @add
// LOOPS: scf.for
func.func @add(%a: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] : memref<?xf32, strided<[?], offset: ?>> -> tensor<16xf32>
  %y = math.exp %x : tensor<16xf32>
  tile.store %y, %a[%pid] : tensor<16xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// Fewer elements than threads: thread t holds element t mod 2; only threads
// 0 and 1 store.
// CHECK-LABEL: func.func @replicated
// CHECK: %[[TID32:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[TID:.*]] = arith.index_cast %[[TID32]] : i32 to index
// CHECK: %[[L:.*]] = arith.andi %[[TID]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[TID]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %[[FIRST]], %[[IN]] : i1
// CHECK: scf.if %[[OK]] {
// CHECK: memref.store
func.func @replicated(%a: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %n = tile.num_programs 1
  %x = tile.load %a[%n] : memref<?xf32, strided<[?], offset: ?>> -> tensor<2xf32>
  tile.store %x, %a[%n] : tensor<2xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// Broadcasts whose elements come from other threads go through a
// shared-memory global between barriers: an 8x1 column over 4 threads holds
// rows 2t and 2t+1 in thread t, but result chunk c (row c) is needed by all.
// CHECK: memref.global "private" @__tile_scratch_bcast : memref<32xi8, 3> = uninitialized {alignment = 16 : i64}
// CHECK-LABEL: func.func @bcast
// CHECK: %[[G:.*]] = memref.get_global @__tile_scratch_bcast : memref<32xi8, 3>
// CHECK: %[[V:.*]] = memref.view %[[G]][%{{.*}}][] : memref<32xi8, 3> to memref<8xf32, 3>
// CHECK: memref.store %{{.*}}, %[[V]][%{{.*}}] : memref<8xf32, 3>
// CHECK: nvvm.barrier0
// CHECK: memref.load %[[V]][%{{.*}}] : memref<8xf32, 3>
// CHECK: nvvm.barrier0
func.func @bcast(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<8x1xf32>
  %b = tile.broadcast %x : tensor<8x1xf32> -> tensor<8x8xf32>
  tile.store %b, %a[%c0, %c0] : tensor<8x8xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

// A row broadcast whose source elements stay in their threads: a 1x8 row over
// 4 threads gives thread t columns 2t and 2t+1, which is all that its chunks
// of the 8x8 result need. Copied within the thread: no scratch, no barrier.
// CHECK-LABEL: func.func @bcast_local
// CHECK-DAG: %[[IN:.*]] = memref.alloca() : memref<2xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloca() : memref<16xf32>
// CHECK-COUNT-16: memref.load %[[IN]][%{{.*}}] : memref<2xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: memref.get_global
// CHECK: return
func.func @bcast_local(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<1x8xf32>
  %b = tile.broadcast %x : tensor<1x8xf32> -> tensor<8x8xf32>
  tile.store %b, %a[%c0, %c0] : tensor<8x8xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

// A row loaded from a read-only argument and broadcast over 16 rows: thread t
// holds column t of the 1x4 row, but its chunks of the 16x4 result need
// columns 2t mod 4 and 2t+1 mod 4. Each thread loads the elements of its eight
// result chunks itself (a vector of 2 each, after one in-bounds test of the
// row's tile), in place of the load, with no scratch and no barrier.
// CHECK-LABEL: func.func @bcast_load
// CHECK-NOT: memref.get_global
// CHECK: scf.if
// CHECK-COUNT-8: vector.load %arg1
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @bcast_load(%o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %r: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %r[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x4xf32>
  %b = tile.broadcast %x : tensor<1x4xf32> -> tensor<16x4xf32>
  tile.store %b, %o[%c0, %c0] : tensor<16x4xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
