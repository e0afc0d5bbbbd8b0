// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=0 ctas-per-program=0" -cse | FileCheck %s
// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=0 ctas-per-program=0 split-chunks=1" -cse | FileCheck %s --check-prefix=ONE

// With block-size=0 and ctas-per-program=0, a kernel whose threads never
// exchange data and whose largest tile has Pmax >= 512 C V elements runs each
// program as S CTAs of 256 / C threads with C chunks of V each (C =
// split-chunks, default 2), T = Pmax / (C V) threads in all: a CTA moves
// 4 KiB of contiguous elements of each tile.

// bf16 add of 4096-element tiles (V = 8): T = 256, S = 2 CTAs of 128. The
// thread's index in the program is t = (ctaid.x mod 2) * 128 + tid.x, the
// program id ctaid.x / 2; thread t's first element is t * 8 + (t / 128) * 1024
// (CTA s owns elements [2048 s, 2048 s + 2048)), its second 1024 further.
// CHECK-LABEL: func.func @add4096
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.ctas_per_program = 2 : i32
// CHECK-DAG: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-DAG: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
// CHECK-DAG: %[[PID:.*]] = arith.shrui %[[CTA]], %c1_i32
// CHECK-DAG: %[[SUB:.*]] = arith.andi %[[CTA]], %c1_i32
// CHECK-DAG: %[[FIRST:.*]] = arith.shli %[[SUB]], %c7_i32
// CHECK-DAG: %[[T32:.*]] = arith.ori %[[FIRST]], %[[TID]]
// CHECK-DAG: memref.alloca() : memref<16xbf16>
// CHECK: %[[T:.*]] = arith.index_cast %[[T32]] : i32 to index
// CHECK: scf.if
// CHECK: %[[TV:.*]] = arith.muli %[[T]], %c8
// CHECK: %[[S:.*]] = arith.shrui %[[T]], %c7
// CHECK: %[[SB:.*]] = arith.muli %[[S]], %c1024
// CHECK: arith.addi %[[TV]], %[[SB]]
// With split-chunks=1: 2 CTAs of 256 threads, one chunk each.
// ONE-LABEL: func.func @add4096
// ONE-SAME: tile.block_size = 256 : i32
// ONE-SAME: tile.ctas_per_program = 2 : i32
// ONE: memref.alloca() : memref<8xbf16>
!m = memref<?xbf16, strided<[1], offset: ?>>
func.func @add4096(%o: !m, %a: !m, %b: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !m -> tensor<4096xbf16>
  %y = tile.load %b[%p] : !m -> tensor<4096xbf16>
  %z = arith.addf %x, %y : tensor<4096xbf16>
  tile.store %z, %o[%p] : tensor<4096xbf16>, !m
  return
}

// A row copy of 1x8192 bf16: 4 CTAs of 128 threads; num_programs 0 is
// nctaid.x / 4.
// CHECK-LABEL: func.func @row_copy
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.ctas_per_program = 4 : i32
// CHECK-DAG: %[[N:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-DAG: arith.shrui %[[N]], %c2_i32
!r = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @row_copy(%o: !r, %a: !r) attributes {tile.kernel} {
  %p = tile.num_programs 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !r -> tensor<1x8192xbf16>
  tile.store %x, %o[%p, %c0] : tensor<1x8192xbf16>, !r
  return
}

// A row reduction exchanges data: one CTA per program, as before.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-NOT: tile.ctas_per_program
// CHECK: return
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @row_sum(%o: !f, %a: !r) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !r -> tensor<1x8192xbf16>
  %s = tile.reduce %x {kind = sum, axis = 1} : tensor<1x8192xbf16> -> tensor<1x1xbf16>
  %f = arith.extf %s : tensor<1x1xbf16> to tensor<1x1xf32>
  tile.store %f, %o[%p, %c0] : tensor<1x1xf32>, !f
  return
}

// A tile too small to split (1024 f32, V = 4: 128 threads of two chunks would
// make one CTA): the usual 32 elements per thread, 32 threads; eight such
// programs share a CTA (see programs-per-cta.mlir).
// CHECK-LABEL: func.func @small
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-SAME: tile.programs_per_cta = 8 : i32
// CHECK-NOT: tile.ctas_per_program
// CHECK: return
!s = memref<?xf32, strided<[1], offset: ?>>
func.func @small(%o: !s, %a: !s) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !s -> tensor<1024xf32>
  tile.store %x, %o[%p] : tensor<1024xf32>, !s
  return
}
