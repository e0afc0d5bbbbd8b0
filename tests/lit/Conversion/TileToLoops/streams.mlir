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
