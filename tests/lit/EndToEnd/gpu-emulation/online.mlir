// RUN: %emulate --work %t %s | FileCheck %s
// Row reductions inside a loop carrying tiles (online softmax statistics):
// the shared region and its trailing barrier.
// EMU: T=64 grid=5,1 args=f32[5x1000];f32[5x1];f32[5x1]
// CHECK: arg0: 5000 elements, 0 written, 0 differ
// CHECK: arg1: 5 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg2: 5 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: online: T=64 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @online(%a: !m {tile.align = 16 : i64}, %om: !m, %os: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %i0 = arith.constant 0 : i32
  %ninf = arith.constant dense<-1.0e30> : tensor<1x1xf32>
  %zero = arith.constant dense<0.0> : tensor<1x1xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %ninf, %s = %zero) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
    %ii = arith.index_cast %i : index to i32
    %x = tile.load %a[%p, %ii] padding = -inf : !m -> tensor<1x256xf32>
    %bm = tile.reduce %x {kind = max, axis = 1} : tensor<1x256xf32> -> tensor<1x1xf32>
    %nm = arith.maximumf %m, %bm : tensor<1x1xf32>
    %b = tile.broadcast %nm : tensor<1x1xf32> -> tensor<1x256xf32>
    %d = arith.subf %x, %b : tensor<1x256xf32>
    %e = math.exp %d : tensor<1x256xf32>
    %bs = tile.reduce %e {kind = sum, axis = 1} : tensor<1x256xf32> -> tensor<1x1xf32>
    %dm = arith.subf %m, %nm : tensor<1x1xf32>
    %sc = math.exp %dm : tensor<1x1xf32>
    %ss = arith.mulf %s, %sc : tensor<1x1xf32>
    %ns = arith.addf %ss, %bs : tensor<1x1xf32>
    scf.yield %nm, %ns : tensor<1x1xf32>, tensor<1x1xf32>
  }
  tile.store %r#0, %om[%p, %i0] : tensor<1x1xf32>, !m
  tile.store %r#1, %os[%p, %i0] : tensor<1x1xf32>, !m
  return
}
