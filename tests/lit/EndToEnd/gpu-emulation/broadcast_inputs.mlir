// RUN: %emulate --work %t %s | FileCheck %s
// A matrix-vector product with a fused RMSNorm prologue: the normalized chunk
// x * inv * g (x f32, g bf16, inv a one-element tile computed before the K
// loop) is broadcast over the weight tile's 16 rows. The computation is done
// in the broadcast's shape instead: x and g are loaded by each thread for its
// own result elements and inv is splatted, with no scratch and no barrier in
// the loop. 70 rows and 300 columns (rows 304 apart) leave ragged tiles.
// EMU: T=64 grid=5,1 args=f32[70];bf16[70x300]/304;f32[300];bf16[300]
// CHECK: arg0: 70 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 21280 elements, 0 written, 0 differ
// CHECK: arg2: 300 elements, 0 written, 0 differ
// CHECK: arg3: 300 elements, 0 written, 0 differ
// CHECK: broadcast_inputs: T=64 OK
!v = memref<?xf32, strided<[1], offset: ?>>
!h = memref<?xbf16, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @broadcast_inputs(%o: !v {tile.align = 16 : i64}, %w: !w {tile.align = 16 : i64}, %x: !v {tile.align = 16 : i64}, %g: !h {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c63 = arith.constant 63 : index
  %k = memref.dim %x, %c0 : !v
  %k1 = arith.addi %k, %c63 : index
  %n = arith.divui %k1, %c64 : index
  %z1 = arith.constant dense<0.0> : tensor<64xf32>
  %sq = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z1) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %x2 = arith.mulf %xv, %xv : tensor<64xf32>
    %s2 = arith.addf %s, %x2 : tensor<64xf32>
    scf.yield %s2 : tensor<64xf32>
  }
  %t = tile.reduce %sq {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %eps = arith.constant dense<1.0> : tensor<1xf32>
  %te = arith.addf %t, %eps : tensor<1xf32>
  %inv = math.rsqrt %te : tensor<1xf32>
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x64xf32>) {
    %j = arith.index_cast %i : index to i32
    %bi = tile.broadcast %inv : tensor<1xf32> -> tensor<64xf32>
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %gv = tile.load %g[%j] : !h -> tensor<64xbf16>
    %gf = arith.extf %gv : tensor<64xbf16> to tensor<64xf32>
    %xn = arith.mulf %xv, %bi : tensor<64xf32>
    %nv = arith.mulf %xn, %gf : tensor<64xf32>
    %row = tile.reshape %nv : tensor<64xf32> -> tensor<1x64xf32>
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
