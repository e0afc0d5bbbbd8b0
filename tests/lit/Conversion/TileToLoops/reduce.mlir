// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=128" -canonicalize -cse | FileCheck %s

// Row reductions by warp shuffles. A 1x4096 f32 row over 128 threads: each
// thread owns 32 elements of the row (8 chunks of 4), combines them as a tree
// in registers, then the warp combines by xor shuffles 16..1; one lane per
// warp writes its partial to a 4-slot shared array, and after one barrier
// every thread combines the 4 partials (the result is replicated). The row
// reduction runs once, so its scratch region is its own: no trailing
// barrier. The broadcast of the single result element stays in the thread.
// CHECK-LABEL: memref.global "private" @__tile_scratch_row_block : memref<16xi8, 3>
// CHECK-LABEL: func.func @row_block
// CHECK: %[[TID32:.*]] = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
// CHECK: %[[TID:.*]] = arith.index_cast %[[TID32]] : i32 to index
// CHECK: vector.load
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}}[%c0][] : memref<16xi8, 3> to memref<4xf32, 3>
// CHECK-COUNT-31: arith.maximumf
// CHECK: %[[S16:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[P:.*]], %c16_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[M16:.*]] = arith.maximumf %[[P]], %[[S16]] : f32
// CHECK-NEXT: nvvm.shfl.sync bfly %c-1_i32, %[[M16]], %c8_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c4_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.maximumf
// CHECK: %[[INROW:.*]] = arith.andi %[[TID]], %c127 : index
// CHECK-NEXT: %[[WARP:.*]] = arith.shrui %[[INROW]], %c5 : index
// CHECK: %[[SLOT:.*]] = arith.addi %{{.*}}, %[[WARP]] : index
// CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %c31 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[TOTAL]], %[[VIEW]][%[[SLOT]]] : memref<4xf32, 3>
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[Q0:.*]] = memref.load %[[VIEW]][%c0] : memref<4xf32, 3>
// CHECK-NEXT: %[[Q1:.*]] = memref.load %[[VIEW]][%c1] : memref<4xf32, 3>
// CHECK-NEXT: %[[Q2:.*]] = memref.load %[[VIEW]][%c2] : memref<4xf32, 3>
// CHECK-NEXT: %[[Q3:.*]] = memref.load %[[VIEW]][%c3] : memref<4xf32, 3>
// CHECK-NEXT: %[[Q01:.*]] = arith.maximumf %[[Q0]], %[[Q1]] : f32
// CHECK-NEXT: %[[Q23:.*]] = arith.maximumf %[[Q2]], %[[Q3]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[Q01]], %[[Q23]] : f32
// CHECK-NEXT: memref.store %[[R]], %[[RES:.*]][%c0] : memref<1xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK: %[[B:.*]] = memref.load %[[RES]][%c0] : memref<1xf32>
// CHECK-NEXT: memref.store %[[B]], %{{.*}}[%c0] : memref<32xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK: return
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @row_block(%a: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !f2 -> tensor<1x4096xf32>
  %r = tile.reduce %x {kind = max, axis = 1} : tensor<1x4096xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %r : tensor<1x1xf32> -> tensor<1x4096xf32>
  %d = arith.subf %x, %b : tensor<1x4096xf32>
  tile.store %d, %a[%c0, %c0] : tensor<1x4096xf32>, !f2
  return
}

// -----

// Rows shorter than a warp: 16x32 f32 over 128 threads, 4 per thread, so a
// row is owned by 8 aligned threads (shuffles 4, 2, 1). The 16 results are
// replicated over the threads (thread t holds row t mod 16), which are not
// the row's owners: the group's first lane writes the row total to scratch,
// and after a barrier each thread reads its row. bf16 accumulates in f32.
// CHECK-LABEL: func.func @short_rows
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}} to memref<16xf32, 3>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c8_i32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c4_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.addf
// CHECK: %[[LANE:.*]] = arith.andi %{{.*}}, %c7 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[TOTAL]], %[[VIEW]][%{{.*}}] : memref<16xf32, 3>
// CHECK: nvvm.barrier0
// CHECK-NEXT: %[[ROW:.*]] = arith.andi %{{.*}}, %c15 : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[VIEW]][%[[ROW]]] : memref<16xf32, 3>
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NOT: nvvm.barrier0
// CHECK: return
!b2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @short_rows(%a: !b2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !b2 -> tensor<16x32xbf16>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<16x32xbf16> -> tensor<16x1xbf16>
  tile.store %r, %a[%c0, %c0] : tensor<16x1xbf16>, !b2
  return
}

// -----

// A row that fits one warp and a result every thread needs: after the
// shuffles every thread holds the total, so no scratch and no barrier. (32
// elements over 128 threads: replicated, thread t holds element t mod 32.)
// CHECK-LABEL: func.func @exchange_free
// CHECK-NOT: memref.global
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c16_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[T:.*]] = arith.minimumf
// CHECK-NEXT: memref.store %[[T]]
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @exchange_free(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x32xf32>
  %r = tile.reduce %x {kind = min, axis = 1} : tensor<1x32xf32> -> tensor<1x1xf32>
  tile.store %r, %a[%c0, %c0] : tensor<1x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// 64-bit values are shuffled as two 32-bit halves.
// CHECK-LABEL: func.func @i64_sum
// CHECK: %[[LO:.*]] = arith.trunci %[[X:.*]] : i64 to i32
// CHECK-NEXT: %[[HI64:.*]] = arith.shrui %[[X]], %c32_i64 : i64
// CHECK-NEXT: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK-NEXT: %[[SLO:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[LO]], %c16_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[ELO:.*]] = arith.extui %[[SLO]] : i32 to i64
// CHECK-NEXT: %[[SHI:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[HI]], %c16_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[EHI:.*]] = arith.extui %[[SHI]] : i32 to i64
// CHECK-NEXT: %[[UP:.*]] = arith.shli %[[EHI]], %c32_i64 : i64
// CHECK-NEXT: %[[Y:.*]] = arith.ori %[[ELO]], %[[UP]] : i64
// CHECK-NEXT: arith.addi %[[X]], %[[Y]] : i64
!i2 = memref<?x?xi64, strided<[?, 1], offset: ?>>
func.func @i64_sum(%a: !i2) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !i2 -> tensor<1x64xi64>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x64xi64> -> tensor<1x1xi64>
  tile.store %r, %a[%c0, %c0] : tensor<1x1xi64>, !i2
  return
}

// -----

// Inside a loop the partials share the scratch region with the other ops, so
// the reduction ends with a barrier before the next iteration may write it.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK: nvvm.shfl.sync
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK: }
// CHECK-NOT: nvvm.barrier0
// CHECK: return
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @in_loop(%a: !f2, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i0 = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<1x1xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<1x1xf32>) {
    %ii = arith.index_cast %i : index to i32
    %x = tile.load %a[%ii, %i0] : !f2 -> tensor<1x1024xf32>
    %s = tile.reduce %x {kind = sum, axis = 1} : tensor<1x1024xf32> -> tensor<1x1xf32>
    %y = arith.addf %acc, %s : tensor<1x1xf32>
    scf.yield %y : tensor<1x1xf32>
  }
  tile.store %r, %a[%i0, %i0] : tensor<1x1xf32>, !f2
  return
}

// -----

// Other axes keep the scratch path: the whole input goes to shared memory
// and each result element loops over its column, between two barriers.
// CHECK-LABEL: func.func @columns
// CHECK-NOT: nvvm.shfl.sync
// CHECK: memref.view %{{.*}} to memref<4096xf32, 3>
// CHECK: nvvm.barrier0
// CHECK: scf.for
// CHECK: nvvm.barrier0
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns(%a: !f2) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !f2 -> tensor<32x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<32x128xf32> -> tensor<1x128xf32>
  tile.store %r, %a[%c0, %c0] : tensor<1x128xf32>, !f2
  return
}

// -----

// Rows no longer than a chunk: 512x4 f32 over 128 threads, each chunk of 4 is
// a whole row (g = 1): no shuffles, every thread writes its rows' totals
// (unconditionally) and, after a barrier, reads those of its result elements
// (thread t owns rows 4t..4t+3 of the result).
// CHECK-LABEL: func.func @whole_rows
// CHECK-NOT: nvvm.shfl.sync
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}} to memref<512xf32, 3>
// CHECK: arith.addf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[T0:.*]] = arith.addf
// CHECK: memref.store %[[T0]], %[[VIEW]][%{{.*}}] : memref<512xf32, 3>
// CHECK-NOT: scf.if
// CHECK-COUNT-3: memref.store %{{.*}}, %[[VIEW]][%{{.*}}] : memref<512xf32, 3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: memref.load %[[VIEW]][%{{.*}}] : memref<512xf32, 3>
// CHECK-NOT: nvvm.shfl.sync
// CHECK: return
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @whole_rows(%a: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !f2 -> tensor<512x4xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<512x4xf32> -> tensor<512x1xf32>
  tile.store %r, %a[%c0, %c0] : tensor<512x1xf32>, !f2
  return
}

// -----

// The min (or max) of a widened 16-bit row: each thread combines its f16
// elements two per op (exact), then the two lanes in f32, and shuffles in f32.
// A sum of the same row accumulates in f32 element by element.
// CHECK-LABEL: func.func @widened_min
// CHECK-COUNT-3: arith.minimumf %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK: nvvm.shfl.sync bfly
// CHECK-NOT: vector<2xf16>
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: return
!h1 = memref<?x?xf16, strided<[?, 1], offset: ?>>
!f3 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @widened_min(%o: !f3 {tile.align = 16 : i64}, %a: !h1 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !h1 -> tensor<1x1024xf16>
  %t = arith.extf %x : tensor<1x1024xf16> to tensor<1x1024xf32>
  %m = tile.reduce %t {kind = min, axis = 1} : tensor<1x1024xf32> -> tensor<1x1xf32>
  tile.store %m, %o[%c0, %c0] : tensor<1x1xf32>, !f3
  %s = tile.reduce %t {kind = sum, axis = 1} : tensor<1x1024xf32> -> tensor<1x1xf32>
  tile.store %s, %o[%c0, %c0] : tensor<1x1xf32>, !f3
  return
}
