// RUN: %emulate --work %t %s | FileCheck %s
// Split-K over a cluster: y = W x (bf16 W, 16 rows per program, 512-column
// chunks) with tile-split-k-loop ctas=4, each program 4 CTAs of 256 threads
// run together; rank r takes chunks [6 r / 4, 6 (r + 1) / 4) (1, 2, 1, 2),
// ranks 1-3 leave their row sums in their shared memory and rank 0 adds
// them (cluster barriers, mapa + ld.shared::cluster) and stores. Ragged: 40
// rows (the last program's 8 rows), 2600 columns (the last chunk's 40).
// EMU: T=256 K=4 grid=3,1 args=f32[40];bf16[40x2600];f32[2600]
// CHECK: arg0: 40 elements, 40 written, 0 differ
// CHECK: arg1: 104000 elements, 0 written, 0 differ
// CHECK: arg2: 2600 elements, 0 written, 0 differ
// CHECK: split_k: T=256 S=4 K=4 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @split_k(%o: !v, %w: !w, %x: !v) attributes {tile.kernel} {
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
