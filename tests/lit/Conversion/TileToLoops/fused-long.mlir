// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16 fuse-above=3" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=cpu fuse-above=3" | FileCheck %s --check-prefix=CPU
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s --check-prefix=SHORT

// A purely elementwise block of more than fuse-above tile ops is one rolled
// loop over the thread's elements, in the interior copy too: its loads and
// stores, marked tile.interior, are not bounds-checked, and nothing is staged
// in private buffers. (Here 5 tile ops: two loads, two adds, a store.)
// CHECK-LABEL: func.func @chain
// CHECK: scf.if
// CHECK-NOT: vector.load
// CHECK-NOT: %alloca
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: %[[X:.*]] = memref.load %arg1[%{{.*}}]
// CHECK: %[[Y:.*]] = memref.load %arg2[%{{.*}}]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[Y]] : f32
// CHECK: memref.store %[[T]], %arg0[%{{.*}}]
// The edge copy, as always, checks each access.
// CHECK: } else {
// CHECK: scf.for
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: return
// On cpu (one thread owning the whole tile) the interior is one loop, not a
// loop per op.
// CPU-LABEL: func.func @chain
// CPU: scf.if
// CPU-NOT: %alloca
// CPU: scf.for
// CPU: memref.load %arg1
// CPU: arith.addf
// CPU: arith.addf
// CPU: memref.store
// CPU: } else {
// With the default fuse-above, the interior of so short a block is lowered op
// by op (vector accesses, each op unrolled over the thread's elements).
// SHORT-LABEL: func.func @chain
// SHORT: scf.if
// SHORT: vector.load
// SHORT: } else {
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @chain(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64},
                 %b: !f1 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<128xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<128xf32>
  %s = arith.addf %x, %y : tensor<128xf32>
  %t = arith.addf %s, %y : tensor<128xf32>
  tile.store %t, %o[%p] : tensor<128xf32>, !f1
  return
}

// -----

// A kernel promised whole tiles (no versions; every access tile.interior) is
// one unchecked loop as well.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: memref.load %arg1
// CHECK: arith.mulf
// CHECK: memref.store
// CPU-LABEL: func.func @whole
// CPU-NOT: scf.if
// CPU: scf.for
// CPU: memref.store
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @whole(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64})
    attributes {tile.kernel, tile.whole_tiles} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<128xf32>
  %s = arith.mulf %x, %x : tensor<128xf32>
  %t = arith.mulf %s, %x : tensor<128xf32>
  %u = arith.mulf %t, %x : tensor<128xf32>
  tile.store %u, %o[%p] : tensor<128xf32>, !f1
  return
}

// -----

// A long block with a reduction keeps the op-by-op lowering.
// CHECK-LABEL: func.func @with_sum
// CHECK: scf.if
// CHECK: vector.load
// CHECK: nvvm.shfl.sync
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @with_sum(%o: !f2 {tile.align = 16 : i64}, %a: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !f2 -> tensor<1x64xf32>
  %s = arith.mulf %x, %x : tensor<1x64xf32>
  %t = arith.mulf %s, %x : tensor<1x64xf32>
  %r = tile.reduce %t {kind = sum, axis = 1} : tensor<1x64xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %r : tensor<1x1xf32> -> tensor<1x64xf32>
  tile.store %b, %o[%p, %c0] : tensor<1x64xf32>, !f2
  return
}
