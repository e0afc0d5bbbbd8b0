// RUN: %emulate --work %t %s | FileCheck %s
// A one-row product as tile-vector-mma leaves it: A's 1 x 64 chunk reshaped to
// a column and broadcast along B's 64 columns (each thread loads the element
// of A its row needs: a broadcast load across rows, no scratch), multiplied by
// B's 64 x 64 tile into a 64 x 64 accumulator, summed over its rows after the
// loop. K = 100 and N = 200 leave ragged tiles on both edges of B and the end
// of A's row.
// EMU: T=128 grid=1,4 args=f32[1x200]/200;bf16[1x100]/104;bf16[100x200]/200
// CHECK: arg0: 200 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 104 elements, 0 written, 0 differ
// CHECK: arg2: 20000 elements, 0 written, 0 differ
// CHECK: vector_mma: T=128 OK
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
!a = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @vector_mma(%o: !o, %A: !a, %B: !a) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %k = memref.dim %A, %c1 : !a
  %k1 = arith.addi %k, %c63 : index
  %c64 = arith.constant 64 : index
  %n = arith.divui %k1, %c64 : index
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) {
    %j = arith.index_cast %i : index to i32
    %a = tile.load %A[%p0, %j] : !a -> tensor<1x64xbf16>
    %b = tile.load %B[%j, %p1] : !a -> tensor<64x64xbf16>
    %col = tile.reshape %a : tensor<1x64xbf16> -> tensor<64x1xbf16>
    %spread = tile.broadcast %col : tensor<64x1xbf16> -> tensor<64x64xbf16>
    %af = arith.extf %spread : tensor<64x64xbf16> to tensor<64x64xf32>
    %bf = arith.extf %b : tensor<64x64xbf16> to tensor<64x64xf32>
    %p = arith.mulf %af, %bf : tensor<64x64xf32>
    %n2 = arith.addf %acc, %p : tensor<64x64xf32>
    scf.yield %n2 : tensor<64x64xf32>
  }
  %r = tile.reduce %s {kind = sum, axis = 0} : tensor<64x64xf32> -> tensor<1x64xf32>
  tile.store %r, %o[%p0, %p1] : tensor<1x64xf32>, !o
  return
}
