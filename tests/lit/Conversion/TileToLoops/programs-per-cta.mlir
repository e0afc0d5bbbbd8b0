// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=0 ctas-per-program=0" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=32" | FileCheck %s --check-prefix=GIVEN

// With block-size=0 and ctas-per-program=0, programs of T < 256 threads that
// need no scratch (no exchange through shared memory, so no barrier) and
// make no device call share a CTA: up to G = 256 / T programs, program
// ctaid.x * (ntid.x / T) + tid.x / T on threads tid.x mod T (the launcher
// gives a grid of fewer than G programs a smaller CTA); the number of
// programs along x comes as a trailing i32 argument. A block size given by
// the caller keeps one program per CTA.
// GIVEN-NOT: tile.programs_per_cta

// A row sum over 1024-wide bf16 rows: 32 threads, one warp, reduced by
// shuffles alone. Eight programs share a CTA of 256 threads.
// CHECK-LABEL: func.func @short_row_sum
// CHECK-SAME: %{{.*}}: i32) attributes
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-SAME: tile.programs_per_cta = 8 : i32
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i32
// CHECK-DAG: %[[C31:.*]] = arith.constant 31 : i32
// CHECK-DAG: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x range <i32, 0, 256> : i32
// CHECK-DAG: %[[GROUP:.*]] = arith.shrui %[[TID]], %[[C5]] : i32
// CHECK-DAG: %[[NTID:.*]] = nvvm.read.ptx.sreg.ntid.x range <i32, 32, 257> : i32
// CHECK-DAG: %[[PERCTA:.*]] = arith.shrui %[[NTID]], %[[C5]] : i32
// CHECK-DAG: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-DAG: %[[FIRST:.*]] = arith.muli %[[CTA]], %[[PERCTA]] : i32
// CHECK-DAG: arith.addi %[[FIRST]], %[[GROUP]] : i32
// CHECK-DAG: arith.andi %{{.*}}, %[[C31]] : i32
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @short_row_sum(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %z = arith.constant 0 : i32
  %x = tile.load %a[%p, %z] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x1024xbf16>
  %w = arith.extf %x : tensor<1x1024xbf16> to tensor<1x1024xf32>
  %r = tile.reduce %w {kind = sum, axis = 1} : tensor<1x1024xf32> -> tensor<1x1xf32>
  tile.store %r, %o[%p, %z] : tensor<1x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A row of 2048 f32: 64 threads, two warps, which combine their partials
// through shared memory between barriers. One program per CTA.
// CHECK-LABEL: func.func @two_warp_row_sum
// CHECK-SAME: tile.block_size = 64 : i32
// CHECK-NOT: tile.programs_per_cta
// CHECK: nvvm.barrier0
func.func @two_warp_row_sum(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %z = arith.constant 0 : i32
  %x = tile.load %a[%p, %z] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x2048xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x2048xf32> -> tensor<1x1xf32>
  tile.store %r, %o[%p, %z] : tensor<1x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A kernel that reads the number of programs along x: the grid counts CTAs,
// so the count comes as a trailing i32 argument. Along y it is the grid's.
// CHECK-LABEL: func.func @reads_num_programs
// CHECK-SAME: %[[COUNT:[a-z0-9]+]]: i32)
// CHECK-SAME: tile.programs_per_cta = 8 : i32
// CHECK: nvvm.read.ptx.sreg.nctaid.y
// CHECK: arith.addi %[[COUNT]]
// CHECK: return
func.func @reads_num_programs(%o: memref<?xi32, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %n = tile.num_programs 0
  %m = tile.num_programs 1
  %s = arith.addi %n, %m : i32
  %t = tile.splat %s : i32 -> tensor<64xi32>
  tile.store %t, %o[%p] : tensor<64xi32>, memref<?xi32, strided<[1], offset: ?>>
  return
}

// -----

// Tiles of 2048 bf16 without exchange (too small to split over CTAs): 64
// threads, four programs per CTA.
// CHECK-LABEL: func.func @copy2048
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-SAME: tile.programs_per_cta = 4 : i32
// CHECK-DAG: arith.constant 6 : i32
// CHECK-DAG: nvvm.read.ptx.sreg.ntid.x range <i32, 64, 257>
// CHECK-DAG: arith.constant 63 : i32
// CHECK: return
func.func @copy2048(%o: memref<?xbf16, strided<[1], offset: ?>>, %a: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<2048xbf16>
  tile.store %x, %o[%p] : tensor<2048xbf16>, memref<?xbf16, strided<[1], offset: ?>>
  return
}
