// RUN: tessera-opt %s -split-input-file -tile-vector-mma | FileCheck %s

// A batch-1 product written as a matmul: the one-row mma of the K loop
// becomes a 64 x 64 f32 accumulator of A's row (reshaped to a column and
// broadcast along B's columns) times B, summed over its rows after the loop
// and added to the initial accumulator.
// CHECK-LABEL: func.func @row_times_matrix
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// CHECK: %[[S:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<64x64xf32>)
// CHECK: %[[A:.*]] = tile.load %arg1
// CHECK: %[[B:.*]] = tile.load %arg2
// CHECK-NOT: tile.mma
// CHECK: %[[COL:.*]] = tile.reshape %[[A]] : tensor<1x64xbf16> -> tensor<64x1xbf16>
// CHECK: %[[SP:.*]] = tile.broadcast %[[COL]] : tensor<64x1xbf16> -> tensor<64x64xbf16>
// CHECK: %[[AF:.*]] = arith.extf %[[SP]]
// CHECK: %[[BF:.*]] = arith.extf %[[B]]
// CHECK: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : tensor<64x64xf32>
// CHECK: %[[N:.*]] = arith.addf %[[ACC]], %[[P]] : tensor<64x64xf32>
// CHECK: scf.yield %[[N]] : tensor<64x64xf32>
// CHECK: %[[R:.*]] = tile.reduce %[[S]] {kind = sum, axis = 0} : tensor<64x64xf32> -> tensor<1x64xf32>
// CHECK: %[[T:.*]] = arith.addf %[[INIT:.*]], %[[R]] : tensor<1x64xf32>
// CHECK: arith.truncf %[[T]]
!a = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!o = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @row_times_matrix(%o: !o, %A: !a, %B: !a, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<1x64xf32>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<1x64xf32>) {
    %k32 = arith.index_cast %k : index to i32
    %a = tile.load %A[%p0, %k32] : !a -> tensor<1x64xbf16>
    %b = tile.load %B[%k32, %p1] : !a -> tensor<64x64xbf16>
    %m = tile.mma %a, %b, %acc : tensor<1x64xbf16>, tensor<64x64xbf16>, tensor<1x64xf32> -> tensor<1x64xf32>
    scf.yield %m : tensor<1x64xf32>
  }
  %y = arith.truncf %r : tensor<1x64xf32> to tensor<1x64xbf16>
  tile.store %y, %o[%p0, %p1] : tensor<1x64xbf16>, !o
  return
}

// -----

// Left alone: an mma of more than one row (tensor cores or the warp-level
// lowering take it), and a one-row mma whose accumulator is also used for
// something else in the loop.
// CHECK-LABEL: func.func @not_vector
// CHECK: tile.mma {{.*}} : tensor<16x64xbf16>
// CHECK: tile.mma {{.*}} : tensor<1x64xbf16>
// CHECK-NOT: tile.reduce
!a = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @not_vector(%o: !f, %o2: !f, %A: !a, %B: !a, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %z1 = arith.constant dense<0.0> : tensor<1x64xf32>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z, %acc1 = %z1) -> (tensor<16x64xf32>, tensor<1x64xf32>) {
    %k32 = arith.index_cast %k : index to i32
    %a = tile.load %A[%p0, %k32] : !a -> tensor<16x64xbf16>
    %b = tile.load %B[%k32, %p1] : !a -> tensor<64x64xbf16>
    %m = tile.mma %a, %b, %acc : tensor<16x64xbf16>, tensor<64x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    %a1 = tile.load %A[%p0, %k32] : !a -> tensor<1x64xbf16>
    %m1 = tile.mma %a1, %b, %acc1 : tensor<1x64xbf16>, tensor<64x64xbf16>, tensor<1x64xf32> -> tensor<1x64xf32>
    %twice = arith.addf %m1, %acc1 : tensor<1x64xf32>
    scf.yield %m, %twice : tensor<16x64xf32>, tensor<1x64xf32>
  }
  tile.store %r#0, %o[%p0, %p1] : tensor<16x64xf32>, !f
  tile.store %r#1, %o2[%p0, %p1] : tensor<1x64xf32>, !f
  return
}

// -----

// B loaded from a view whose columns are contiguous (strides [1, s]: the
// transposed view of an N x K weight): its tile is loaded as 64 x 64 rows of
// K from the transposed argument instead, A's row is broadcast over those
// rows, and the sum after the loop runs along axis 1.
// CHECK-LABEL: func.func @row_times_weight
// CHECK: %[[T:.*]] = memref.transpose %arg2 (d0, d1) -> (d1, d0)
// CHECK: %[[S:.*]] = scf.for {{.*}} -> (tensor<64x64xf32>)
// CHECK: %[[A:.*]] = tile.load %arg1
// CHECK-NOT: tile.load %arg2
// CHECK: %[[BT:.*]] = tile.load %[[T]][%{{.*}}, %{{.*}}] : {{.*}} -> tensor<64x64xbf16>
// CHECK: %[[SP:.*]] = tile.broadcast %[[A]] : tensor<1x64xbf16> -> tensor<64x64xbf16>
// CHECK: arith.mulf
// CHECK: %[[R:.*]] = tile.reduce %[[S]] {kind = sum, axis = 1} : tensor<64x64xf32> -> tensor<64x1xf32>
// CHECK: %[[ROW:.*]] = tile.reshape %[[R]] : tensor<64x1xf32> -> tensor<1x64xf32>
// CHECK: arith.addf %{{.*}}, %[[ROW]] : tensor<1x64xf32>
!a = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xbf16, strided<[1, ?], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @row_times_weight(%o: !f, %A: !a, %W: !w, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<1x64xf32>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<1x64xf32>) {
    %k32 = arith.index_cast %k : index to i32
    %a = tile.load %A[%p0, %k32] : !a -> tensor<1x64xbf16>
    %b = tile.load %W[%k32, %p1] : !w -> tensor<64x64xbf16>
    %m = tile.mma %a, %b, %acc : tensor<1x64xbf16>, tensor<64x64xbf16>, tensor<1x64xf32> -> tensor<1x64xf32>
    scf.yield %m : tensor<1x64xf32>
  }
  tile.store %r, %o[%p0, %p1] : tensor<1x64xf32>, !f
  return
}
