// RUN: tessera-opt %s -split-input-file -tile-hoist-loads | FileCheck %s

// A normalization as the front end emits it: the weight load (the same in
// every program) and its cast and reshape come first. The row load, which
// depends on the program id, moves up to just after the id; the weight chain
// sinks to just before the multiply that uses it, after the row reduction, so
// its values take no registers across the reduction.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK-NEXT: %[[X:.*]] = tile.load %arg1[%[[P]], %[[C0]]]
// CHECK-NEXT: arith.extf %[[X]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: tile.reduce
// CHECK-NEXT: math.rsqrt
// CHECK-NEXT: tile.broadcast
// CHECK-NEXT: %[[N:.*]] = arith.mulf
// CHECK-NEXT: %[[W:.*]] = tile.load %arg2[%[[C0]]]
// CHECK-NEXT: %[[WF:.*]] = arith.extf %[[W]]
// CHECK-NEXT: %[[WR:.*]] = tile.reshape %[[WF]]
// CHECK-NEXT: arith.mulf %[[N]], %[[WR]]
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: tile.store
!b2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!b1 = memref<?xbf16, strided<[1], offset: ?>>
func.func @rmsnorm(%o: !b2, %a: !b2, %w: !b1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %wl = tile.load %w[%c0] : !b1 -> tensor<8192xbf16>
  %wf = arith.extf %wl : tensor<8192xbf16> to tensor<8192xf32>
  %wr = tile.reshape %wf : tensor<8192xf32> -> tensor<1x8192xf32>
  %p = tile.program_id 0
  %x = tile.load %a[%p, %c0] : !b2 -> tensor<1x8192xbf16>
  %t = arith.extf %x : tensor<1x8192xbf16> to tensor<1x8192xf32>
  %sq = arith.mulf %t, %t : tensor<1x8192xf32>
  %s = tile.reduce %sq {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
  %inv = math.rsqrt %s : tensor<1x1xf32>
  %ib = tile.broadcast %inv : tensor<1x1xf32> -> tensor<1x8192xf32>
  %n = arith.mulf %t, %ib : tensor<1x8192xf32>
  %y = arith.mulf %n, %wr : tensor<1x8192xf32>
  %yb = arith.truncf %y : tensor<1x8192xf32> to tensor<1x8192xbf16>
  tile.store %yb, %o[%p, %c0] : tensor<1x8192xbf16>, !b2
  return
}

// -----

// A streaming load goes right after the last op of its block that defines
// one of its indices, not above it. Invariant loads, and the pure ops computed
// from them alone (here the add and even the reduction), sink to just before
// their first user.
// CHECK-LABEL: func.func @order
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK-NEXT: %[[Q:.*]] = arith.addi %[[P]], %[[C0]]
// CHECK-NEXT: %[[D:.*]] = tile.load %arg1[%[[Q]]]
// CHECK-NEXT: %[[A:.*]] = tile.load %arg1[%[[C0]]]
// CHECK-NEXT: %[[B:.*]] = tile.load %arg2[%[[C0]]]
// CHECK-NEXT: arith.addf %[[A]], %[[B]]
// CHECK-NEXT: tile.reduce
// CHECK-NEXT: tile.broadcast
// CHECK-NEXT: arith.addf %[[D]]
// CHECK-NEXT: tile.store
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @order(%o: !f1, %a: !f1, %b: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %p = tile.program_id 0
  %q = arith.addi %p, %c0 : i32
  %x = tile.load %b[%c0] : !f1 -> tensor<256xf32>
  %y = tile.load %a[%c0] : !f1 -> tensor<256xf32>
  %s = arith.addf %y, %x : tensor<256xf32>
  %r = tile.reduce %s {kind = sum, axis = 0} : tensor<256xf32> -> tensor<1xf32>
  %rb = tile.broadcast %r : tensor<1xf32> -> tensor<256xf32>
  %z = tile.load %a[%q] : !f1 -> tensor<256xf32>
  %t = arith.addf %z, %rb : tensor<256xf32>
  tile.store %t, %o[%p] : tensor<256xf32>, !f1
  return
}

// -----

// A matrix-vector loop as the front end emits it: the program id that indexes
// the matrix load is written after the vector's broadcast. The id moves to the
// function's start, so the matrix load moves up to the top of the loop body,
// above the broadcast (which exchanges the vector through shared memory on
// gpu).
// CHECK-LABEL: func.func @matvec_loop
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]]
// CHECK-NEXT: tile.load %arg2[%[[KI]]]
// CHECK-NEXT: tile.load %arg1[%[[P]], %[[KI]]]
// CHECK-NEXT: tile.reshape
// CHECK-NEXT: tile.broadcast
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!v = memref<?xf32, strided<[1], offset: ?>>
func.func @matvec_loop(%o: !v, %w: !w, %v: !v) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<16x512xf32>
  %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
    %ki = arith.index_cast %k : index to i32
    %vl = tile.load %v[%ki] : !v -> tensor<512xf32>
    %vr = tile.reshape %vl : tensor<512xf32> -> tensor<1x512xf32>
    %vb = tile.broadcast %vr : tensor<1x512xf32> -> tensor<16x512xf32>
    %p = tile.program_id 0
    %wl = tile.load %w[%p, %ki] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wl : tensor<16x512xbf16> to tensor<16x512xf32>
    %m = arith.mulf %wf, %vb : tensor<16x512xf32>
    %s = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %s : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  %p0 = tile.program_id 0
  tile.store %y, %o[%p0] : tensor<16xf32>, !v
  return
}

// -----

// A body that waits for streamed tiles (tile-stream-loads), unrolled by 2: the
// second copy's index computation moves up with its load, so that both vector
// loads are issued before the first wait.
// CHECK-LABEL: func.func @streamed
// CHECK: scf.for
// CHECK: tile.load %arg1
// CHECK: tile.load %arg1
// CHECK: tile.stream_wait 1
// CHECK: tile.stream_take
// CHECK: tile.stream_wait 1
!v = memref<?xf32, strided<[1], offset: ?>>
func.func @streamed(%o: !v, %x: !v, %n: index, %ring: memref<2x512xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant dense<0.0> : tensor<512xf32>
  %r = scf.for %i = %c0 to %n step %c2 iter_args(%a = %z) -> (tensor<512xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<512xf32>
    tile.stream_wait 1
    %t = tile.stream_take %ring[%c0] : memref<2x512xf32> -> tensor<512xf32>
    %p = arith.mulf %xv, %t : tensor<512xf32>
    %i1 = arith.addi %i, %c1 : index
    %j1 = arith.index_cast %i1 : index to i32
    %xv1 = tile.load %x[%j1] : !v -> tensor<512xf32>
    tile.stream_wait 1
    %t1 = tile.stream_take %ring[%c1] : memref<2x512xf32> -> tensor<512xf32>
    %p1 = arith.mulf %xv1, %t1 : tensor<512xf32>
    %s = arith.addf %a, %p : tensor<512xf32>
    %s1 = arith.addf %s, %p1 : tensor<512xf32>
    scf.yield %s1 : tensor<512xf32>
  }
  %c0i = arith.constant 0 : i32
  tile.store %r, %o[%c0i] : tensor<512xf32>, !v
  return
}
