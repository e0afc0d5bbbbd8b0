// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=512" -canonicalize -cse | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=cpu" -canonicalize -cse | FileCheck %s --check-prefix=CPU

// A ring of 4 slots of 16x512 bf16 tiles at 512 threads (16 elements each, two
// chunks of 8): 64 KiB after the other scratch, dynamic shared memory. A copy
// is, under its `valid` test, one 16-byte cp.async.cg per chunk whose source
// size counts only the bytes within the tensor; commit and wait are
// cp.async's; a take reads each chunk back with one vector load. On the cpu
// target the copy is a load and a store per element and commit and wait emit
// nothing.
// CHECK-LABEL: func.func @ring
// CHECK-SAME: tile.dynamic_shared_bytes = 65536 : i32
// CHECK: scf.if
// CHECK-COUNT-2: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 3
// CHECK-COUNT-2: vector.load %{{.*}} : memref<32768xbf16, 3>, vector<8xbf16>
// CPU-LABEL: func.func @ring
// CPU-NOT: nvvm.
// CPU: memref.store
// CPU: return
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!v = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @ring(%w: !w {tile.align = 16 : i64}, %o: !v {tile.align = 16 : i64}, %s: index, %v: i1)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %ring = tile.stream_buffer : memref<4x16x512xbf16>
  tile.stream_copy %w[%p, %p] to %ring[%s] if %v : !w, memref<4x16x512xbf16>
  tile.stream_commit
  tile.stream_wait 3
  %t = tile.stream_take %ring[%s] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
  tile.store %t, %o[%p, %p] : tensor<16x512xbf16>, !v
  return
}

// -----

// A bulk ring of 4 slots at 512 threads: 64 KiB of row-major slots and 64
// bytes of barriers after them. Before its use thread 0 initializes a full
// (one arrival) and an empty barrier (16 arrivals: one per warp) per slot,
// then all threads meet. A copy in bounds is warp 0's: for round > 0 a wait
// on the empty barrier, thread 0's arrival expecting 16384 bytes, a warp
// sync, and a cp.async.bulk of 1024 bytes per row, lane r copying row r;
// else every thread stores its elements between two barriers, fenced for
// the async proxy, and thread 0 arrives. Ready waits on the full barrier; a
// take reads each chunk with one vector load; release is a warp sync and one
// arrival per warp. On the cpu target only the element path remains.
// CHECK-LABEL: func.func @bulk
// CHECK-SAME: tile.dynamic_shared_bytes = 65600 : i32
// CHECK-COUNT-4: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}" %{{.*}}, %c1_i32
// CHECK: fence.mbarrier_init
// CHECK: nvvm.barrier0
// CHECK: arith.cmpi ult, %{{.*}}, %c32
// CHECK: mbarrier.try_wait.parity
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}" %{{.*}}, %c16384_i32
// CHECK: bar.warp.sync
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: nvvm.barrier0
// CHECK: fence.proxy.async.shared::cta
// CHECK: nvvm.barrier0
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: mbarrier.try_wait.parity
// CHECK-COUNT-2: vector.load %{{.*}} : memref<32768xbf16, 3>, vector<8xbf16>
// CHECK: bar.warp.sync
// CHECK: mbarrier.arrive.shared::cta.b64
// The wait for the grids the kernel depends on: griddepcontrol.wait as inline
// asm on gpu, nothing on the cpu target.
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CPU-LABEL: func.func @bulk
// CPU-NOT: inline_asm
// CPU-NOT: nvvm.
// CPU: return
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!v = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @bulk(%w: !w {tile.align = 16 : i64, tile.settled}, %o: !v {tile.align = 16 : i64}, %s: index, %r: index, %v: i1)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %ring = tile.stream_buffer bulk : memref<4x16x512xbf16>
  tile.stream_copy %w[%p, %p] to %ring[%s] if %v round %r : !w, memref<4x16x512xbf16>
  tile.stream_ready %ring[%s] round %r : memref<4x16x512xbf16>
  %t = tile.stream_take %ring[%s] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
  tile.stream_release %ring[%s] : memref<4x16x512xbf16>
  tile.grid_dependency_wait
  tile.store %t, %o[%p, %p] : tensor<16x512xbf16>, !v
  return
}

// -----

// A copy marked tile.interior (the launcher's whole tiles) is only warp 0's
// bulk copies: no bounds test and no element path.
// CHECK-LABEL: func.func @bulk_interior
// CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: fence.proxy.async.shared::cta
// CHECK-NOT: nvvm.barrier0
// CHECK: mbarrier.try_wait.parity
// CPU-LABEL: func.func @bulk_interior
// CPU: memref.store
// CPU: return
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!v = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @bulk_interior(%w: !w {tile.align = 16 : i64}, %o: !v {tile.align = 16 : i64}, %s: index, %r: index, %v: i1)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %ring = tile.stream_buffer bulk : memref<4x16x512xbf16>
  tile.stream_copy %w[%p, %p] to %ring[%s] if %v round %r {tile.interior} : !w, memref<4x16x512xbf16>
  tile.stream_ready %ring[%s] round %r : memref<4x16x512xbf16>
  %t = tile.stream_take %ring[%s] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
  tile.stream_release %ring[%s] : memref<4x16x512xbf16>
  tile.store %t, %o[%p, %p] : tensor<16x512xbf16>, !v
  return
}
