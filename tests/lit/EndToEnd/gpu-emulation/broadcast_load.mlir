// RUN: %emulate --work %t %s | FileCheck %s
// A matrix-vector product's K loop: the vector's chunk, loaded and reshaped to
// a row, is broadcast over the weight tile's 16 rows. Each thread reads the
// chunk's elements its rows need straight from memory (no scratch, no
// barrier); 70 rows and 300 columns (rows 304 apart, 16-byte aligned) leave ragged tiles on both edges, where
// the chunk reads the padding value (1.0) past its end.
// EMU: T=64 grid=5,1 args=f32[70];bf16[70x300]/304;f32[300]
// CHECK: arg0: 70 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 21280 elements, 0 written, 0 differ
// CHECK: arg2: 300 elements, 0 written, 0 differ
// CHECK: broadcast_load: T=64 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @broadcast_load(%o: !v {tile.align = 16 : i64}, %w: !w {tile.align = 16 : i64}, %x: !v {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c63 = arith.constant 63 : index
  %k = memref.dim %x, %c0 : !v
  %k1 = arith.addi %k, %c63 : index
  %n = arith.divui %k1, %c64 : index
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] padding = 1.0 : !v -> tensor<64xf32>
    %row = tile.reshape %xv : tensor<64xf32> -> tensor<1x64xf32>
    %b = tile.broadcast %row : tensor<1x64xf32> -> tensor<16x64xf32>
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x64xbf16>
    %wf = arith.extf %wt : tensor<16x64xbf16> to tensor<16x64xf32>
    %m = arith.mulf %wf, %b : tensor<16x64xf32>
    %a2 = arith.addf %a, %m : tensor<16x64xf32>
    scf.yield %a2 : tensor<16x64xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x64xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}
