// RUN: %emulate --work %t %s | FileCheck %s
// Split-K with idle ranks: y = W x over 8 CTAs of 128 threads per program
// (tile-split-k-loop ctas=8), but 300 columns are one 512-column chunk:
// rank r takes chunks [r / 8, (r + 1) / 8), so rank 7 alone multiplies and
// ranks 0-6 add zeros (rank 0 still gathers all seven peers' sums). Ragged:
// 20 rows, 300 columns.
// EMU: T=128 K=8 grid=2,1 args=f32[20];bf16[20x300];f32[300]
// CHECK: arg0: 20 elements, 20 written, 0 differ
// CHECK: arg1: 6000 elements, 0 written, 0 differ
// CHECK: arg2: 300 elements, 0 written, 0 differ
// CHECK: split_k_idle: T=128 S=8 K=8 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @split_k_idle(%o: !v, %w: !w, %x: !v) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c511 = arith.constant 511 : index
  %c512 = arith.constant 512 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %kd = memref.dim %w, %c1 : !w
  %ks = arith.addi %kd, %c511 : index
  %n = arith.divui %ks, %c512 : index
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
