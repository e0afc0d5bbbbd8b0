// RUN: %emulate --work %t %s | FileCheck %s
// Split-K whose partials are whole tiles: column-block sums of 64-row chunks
// (tile-split-k-loop ctas=2), a 64x256 f32 accumulator, 64 elements per
// thread of 256: 64 KiB of partials, so the scratch is dynamic shared memory
// (one array per rank, defined by the harness). Program (p, q) sums column
// block 2 p + q; rank r takes chunks [5 r / 2, 5 (r + 1) / 2). Ragged: 300
// rows (the last chunk's 44), 1000 columns (the last block's 232).
// EMU: T=256 K=2 grid=2,2 args=f32[64x1000];f32[300x1000]
// CHECK: arg0: 64000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 300000 elements, 0 written, 0 differ
// CHECK: split_k_dynamic: T=256 S=2 K=2 dynamic shared 65536 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @split_k_dynamic(%o: !m, %a: !m) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c0i = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<64x256xf32>
  %p = tile.program_id 0
  %q = tile.program_id 1
  %nq = tile.num_programs 1
  %pq = arith.muli %p, %nq : i32
  %b = arith.addi %pq, %q : i32
  %rows = memref.dim %a, %c0 : !m
  %rs = arith.addi %rows, %c63 : index
  %n = arith.divui %rs, %c64 : index
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z) -> (tensor<64x256xf32>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %a[%j, %b] : !m -> tensor<64x256xf32>
    %s2 = arith.addf %s, %t : tensor<64x256xf32>
    scf.yield %s2 : tensor<64x256xf32>
  }
  tile.store %acc, %o[%c0i, %b] : tensor<64x256xf32>, !m
  return
}
