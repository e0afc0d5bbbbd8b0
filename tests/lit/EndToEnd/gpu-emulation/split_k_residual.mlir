// RUN: %emulate --work %t %s | FileCheck %s
// Split-K with an epilogue that reads its output back, o += y * rsqrt(q / K +
// eps) + e (tile-split-k-loop ctas=2, 2 CTAs of 256 threads per program):
// three carried sums meet in one split_sum, the row sums y = W x and the
// squares q of x reduced first, e (16-element chunks of x) whole; rank 0
// alone loads o and stores it. Ragged: 40 rows, 1000 columns (the second
// 512-column chunk's 488).
// EMU: T=256 K=2 grid=3,1 args=f32[40];bf16[40x1000];f32[1000]
// CHECK: arg0: 40 elements, 40 written, 0 differ
// CHECK: arg1: 40000 elements, 0 written, 0 differ
// CHECK: arg2: 1000 elements, 0 written, 0 differ
// CHECK: split_k_residual: T=256 S=2 K=2 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @split_k_residual(%o: !v, %w: !w, %x: !v) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c511 = arith.constant 511 : index
  %c512 = arith.constant 512 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %zs = arith.constant dense<0.0> : tensor<512xf32>
  %z16 = arith.constant dense<0.0> : tensor<16xf32>
  %inv = arith.constant dense<1.0e-3> : tensor<1xf32>
  %eps = arith.constant dense<1.0e-6> : tensor<1xf32>
  %p = tile.program_id 0
  %kd = memref.dim %w, %c1 : !w
  %ks = arith.addi %kd, %c511 : index
  %n = arith.divui %ks, %c512 : index
  %acc:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %s = %zs, %e = %z16)
      -> (tensor<16x512xf32>, tensor<512xf32>, tensor<16xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xt = tile.load %x[%j] : !v -> tensor<512xf32>
    %sq = arith.mulf %xt, %xt : tensor<512xf32>
    %s2 = arith.addf %s, %sq : tensor<512xf32>
    %xr = tile.reshape %xt : tensor<512xf32> -> tensor<1x512xf32>
    %xb = tile.broadcast %xr : tensor<1x512xf32> -> tensor<16x512xf32>
    %m = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    %ev = tile.load %x[%j] : !v -> tensor<16xf32>
    %e2 = arith.addf %e, %ev : tensor<16xf32>
    scf.yield %a2, %s2, %e2 : tensor<16x512xf32>, tensor<512xf32>, tensor<16xf32>
  }
  %rows = tile.reduce %acc#0 {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %q = tile.reduce %acc#1 {kind = sum, axis = 0} : tensor<512xf32> -> tensor<1xf32>
  %y = tile.reshape %rows : tensor<16x1xf32> -> tensor<16xf32>
  %qm = arith.mulf %q, %inv : tensor<1xf32>
  %qe = arith.addf %qm, %eps : tensor<1xf32>
  %r = math.rsqrt %qe : tensor<1xf32>
  %rb = tile.broadcast %r : tensor<1xf32> -> tensor<16xf32>
  %old = tile.load %o[%p] : !v -> tensor<16xf32>
  %t = arith.mulf %y, %rb : tensor<16xf32>
  %t2 = arith.addf %t, %acc#2 : tensor<16xf32>
  %new = arith.addf %old, %t2 : tensor<16xf32>
  tile.store %new, %o[%p] : tensor<16xf32>, !v
  return
}
