// RUN: %emulate --work %t %s | FileCheck %s
// A product y = W x (bf16 W settled, 16 rows per program, 512-column chunks)
// compiled for whole tiles, with tile-load-settled-before-wait steps=2: each
// program loads the weight tiles of chunks 0 and 1 before the grid
// dependency wait, runs those two iterations on them, and the loop the other
// four. 64 rows (4 programs), 3072 columns (6 chunks). (Sums that cancel to
// well below their terms may differ from the cpu reference's order by more
// than the f32 tolerance; these shapes have none.)
// EMU: T=256 E=2 grid=4,1 args=f32[64];bf16[64x3072];f32[3072]
// CHECK: arg0: 64 elements, 64 written, 0 differ
// CHECK: arg1: 196608 elements, 0 written, 0 differ
// CHECK: arg2: 3072 elements, 0 written, 0 differ
// CHECK: early: T=256 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @early(%o: !v, %w: !w {tile.settled}, %x: !v) attributes {tile.kernel, tile.whole_tiles} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %kd = memref.dim %w, %c1 : !w
  %n = arith.divui %kd, %c512 : index
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xt = tile.load %x[%j] : !v -> tensor<512xf32>
    %xr = tile.reshape %xt : tensor<512xf32> -> tensor<1x512xf32>
    %xb = tile.broadcast %xr : tensor<1x512xf32> -> tensor<16x512xf32>
    %m = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %rows = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %rows : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}
