// RUN: tessera-opt %s -split-input-file -tile-stream-loads=bulk=true | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-stream-loads=bulk=true | FileCheck %s --check-prefix=SETTLED

// With bulk rings the vector chunk, which a broadcast reads, is streamed too:
// each load gets a bulk ring of 4 slots (16 KiB + 2 KiB per slot, 72 KiB in
// all, within max-bytes=65536 only at 3 slots: 54 KiB). The first two
// iterations' tiles are copied before the loop (round 0); each iteration
// copies those of k + 2 (round (i + 2) / 3), waits where the first load was
// for its own slot's round, takes both tiles and releases both slots at the
// end of the body. No commit or wait: bulk rings complete on barriers.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[W:.*]] = tile.stream_buffer bulk : memref<3x16x512xbf16>
// CHECK: %[[X:.*]] = tile.stream_buffer bulk : memref<3x512xf32>
// CHECK-COUNT-2: tile.stream_copy %arg1[{{.*}}] to %[[W]][{{.*}}] if {{.*}} round
// CHECK-NOT: tile.stream_commit
// CHECK: scf.for
// CHECK: %[[SLOT:.*]] = arith.remui
// CHECK: tile.stream_copy %arg1[{{.*}}] to %[[W]][{{.*}}] if {{.*}} round
// CHECK-NEXT: tile.stream_copy %arg2[{{.*}}] to %[[X]][{{.*}}] if {{.*}} round
// CHECK-NOT: tile.stream_commit
// CHECK: tile.stream_ready %[[W]][%[[SLOT]]] round
// CHECK-NEXT: tile.stream_ready %[[X]][%[[SLOT]]] round
// CHECK-NEXT: tile.stream_take %[[W]][%[[SLOT]]] : memref<3x16x512xbf16> -> tensor<16x512xbf16>
// CHECK: tile.stream_take %[[X]][%[[SLOT]]] : memref<3x512xf32> -> tensor<512xf32>
// CHECK-NOT: tile.load
// CHECK: tile.stream_release %[[W]][%[[SLOT]]]
// CHECK-NEXT: tile.stream_release %[[X]][%[[SLOT]]]
// CHECK-NEXT: scf.yield
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @matvec(%o: !v, %w: !w {tile.align = 16 : i64}, %x: !v {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xv = tile.load %x[%j] : !v -> tensor<512xf32>
    %xr = tile.reshape %xv : tensor<512xf32> -> tensor<1x512xf32>
    %xb = tile.broadcast %xr : tensor<1x512xf32> -> tensor<16x512xf32>
    %m = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// The weight is settled (a frozen tensor): its ring, its copies of
// iterations 0 and 1 and the scalar ops they need move to the top of the
// kernel, and the wait for the grids the kernel depends on follows them; the
// vector's ring and copies (a tensor an earlier kernel may write) come after
// the wait.
// SETTLED-LABEL: func.func @settled
// SETTLED: tile.program_id
// SETTLED-NEXT: %[[W:.*]] = tile.stream_buffer bulk : memref<3x16x512xbf16>
// SETTLED-COUNT-2: tile.stream_copy %arg1
// SETTLED: tile.grid_dependency_wait
// SETTLED: %[[X:.*]] = tile.stream_buffer bulk : memref<3x512xf32>
// SETTLED-COUNT-2: tile.stream_copy %arg2
// SETTLED: scf.for
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @settled(%o: !v, %w: !w {tile.align = 16 : i64, tile.settled}, %x: !v {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xv = tile.load %x[%j] : !v -> tensor<512xf32>
    %xr = tile.reshape %xv : tensor<512xf32> -> tensor<1x512xf32>
    %xb = tile.broadcast %xr : tensor<1x512xf32> -> tensor<16x512xf32>
    %m = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}
