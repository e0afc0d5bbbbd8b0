// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 group-rows=8" | FileCheck %s
// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 group-rows=4" | FileCheck %s --check-prefix=FOUR
// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s --check-prefix=LAUNCH

// The CTAs walk the programs in groups of 8 rows (group-rows=8): the linear
// launch-order id x + y nctaid.x, its group (linear / (8 nctaid.y)), the
// group's first row and row count (min(nctaid.x - first, 8)); program id 0
// is first + within mod rows, program id 1 within / rows.
// CHECK-LABEL: func.func @mm(
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[Y:.*]] = nvvm.read.ptx.sreg.ctaid.y
// CHECK: %[[NX:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[NY:.*]] = nvvm.read.ptx.sreg.nctaid.y
// CHECK: %[[YN:.*]] = arith.muli %[[Y]], %[[NX]]
// CHECK: %[[LIN:.*]] = arith.addi %[[X]], %[[YN]]
// CHECK: %[[PER:.*]] = arith.muli %[[NY]], %c8_i32
// CHECK: %[[G:.*]] = arith.divui %[[LIN]], %[[PER]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[G]], %c8_i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[NX]], %[[FIRST]]
// CHECK: %[[ROWS:.*]] = arith.minui %[[LEFT]], %c8_i32
// CHECK: %[[GP:.*]] = arith.muli %[[G]], %[[PER]]
// CHECK: %[[IN:.*]] = arith.subi %[[LIN]], %[[GP]]
// CHECK: %[[R:.*]] = arith.remui %[[IN]], %[[ROWS]]
// CHECK: %[[P0:.*]] = arith.addi %[[FIRST]], %[[R]]
// CHECK: %[[P1:.*]] = arith.divui %[[IN]], %[[ROWS]]
// CHECK: scf.for
// FOUR: %[[PER:.*]] = arith.muli %{{.*}}, %c4_i32
// FOUR: arith.divui %{{.*}}, %[[PER]]
// The launch's order (the default, group-rows=0): program ids are the CTA's ids.
// LAUNCH-NOT: nctaid
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<64x64xbf16>, !m
  return
}
