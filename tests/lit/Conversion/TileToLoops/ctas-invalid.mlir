// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=256 ctas-per-program=2" -verify-diagnostics
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=32 ctas-per-program=64" 2>&1 | FileCheck %s --check-prefix=MANY

// MANY: cannot split a program of 32 threads over 64 CTAs (ctas-per-program)

// A program whose threads exchange data cannot be split over CTAs.
!r = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
// expected-error @+1 {{cannot run a program as 2 CTAs (ctas-per-program): its threads exchange data}}
func.func @row_sum(%o: !f, %a: !r) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !r -> tensor<1x8192xbf16>
  %s = tile.reduce %x {kind = sum, axis = 1} : tensor<1x8192xbf16> -> tensor<1x1xbf16>
  %f = arith.extf %s : tensor<1x1xbf16> to tensor<1x1xf32>
  tile.store %f, %o[%p, %c0] : tensor<1x1xf32>, !f
  return
}

// -----

// A broadcast across threads (a computed column over the rows' threads) goes
// through shared memory: no split either. (A loaded column is read by each
// thread itself: that one would split.)
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
// expected-error @+1 {{its threads exchange data}}
func.func @column_broadcast(%o: !m, %c: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %col = tile.load %c[%p, %c0] : !m -> tensor<32x1xf32>
  %sq = arith.mulf %col, %col : tensor<32x1xf32>
  %b = tile.broadcast %sq : tensor<32x1xf32> -> tensor<32x64xf32>
  tile.store %b, %o[%p, %c0] : tensor<32x64xf32>, !m
  return
}
