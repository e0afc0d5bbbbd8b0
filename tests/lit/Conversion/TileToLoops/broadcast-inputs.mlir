// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=64" | FileCheck %s

// A matrix-vector product with its RMSNorm folded in: the x chunk is one load
// with two users, the squares summed beside the products and the chunk x * g
// broadcast over the weight tile's rows. The broadcast is computed in its own
// shape from a copy of the load (each thread loads the x elements of its rows'
// columns itself), so the K loop has no barrier: the only two are the
// reductions' after it. (Results on the emulated gpu:
// EndToEnd/gpu-emulation/broadcast_inputs_shared_load.mlir.)
// CHECK-LABEL: func.func @folded_norm
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier0
// CHECK: vector.load %arg2
// CHECK-NOT: nvvm.barrier0
// CHECK: vector.load %arg1
// CHECK-COUNT-2: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: return
!v = memref<?xf32, strided<[1], offset: ?>>
!h = memref<?xbf16, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @folded_norm(%o: !v {tile.align = 16 : i64}, %w: !w {tile.align = 16 : i64}, %x: !v {tile.align = 16 : i64}, %g: !h {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %k = memref.dim %x, %c0 : !v
  %k1 = arith.addi %k, %c63 : index
  %n = arith.divui %k1, %c64 : index
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %z1 = arith.constant dense<0.0> : tensor<64xf32>
  %p = tile.program_id 0
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %s = %z1) -> (tensor<16x64xf32>, tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %gv = tile.load %g[%j] : !h -> tensor<64xbf16>
    %gf = arith.extf %gv : tensor<64xbf16> to tensor<64xf32>
    %nv = arith.mulf %xv, %gf : tensor<64xf32>
    %row = tile.reshape %nv : tensor<64xf32> -> tensor<1x64xf32>
    %b = tile.broadcast %row : tensor<1x64xf32> -> tensor<16x64xf32>
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x64xbf16>
    %wf = arith.extf %wt : tensor<16x64xbf16> to tensor<16x64xf32>
    %m = arith.mulf %wf, %b : tensor<16x64xf32>
    %a2 = arith.addf %a, %m : tensor<16x64xf32>
    %x2 = arith.mulf %xv, %xv : tensor<64xf32>
    %s2 = arith.addf %s, %x2 : tensor<64xf32>
    scf.yield %a2, %s2 : tensor<16x64xf32>, tensor<64xf32>
  }
  %t = tile.reduce %r#1 {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %eps = arith.constant dense<1.0> : tensor<1xf32>
  %te = arith.addf %t, %eps : tensor<1xf32>
  %inv = math.rsqrt %te : tensor<1xf32>
  %rows = tile.reduce %r#0 {kind = sum, axis = 1} : tensor<16x64xf32> -> tensor<16x1xf32>
  %y = tile.reshape %rows : tensor<16x1xf32> -> tensor<16xf32>
  %bi = tile.broadcast %inv : tensor<1xf32> -> tensor<16xf32>
  %yn = arith.mulf %y, %bi : tensor<16xf32>
  tile.store %yn, %o[%p] : tensor<16xf32>, !v
  return
}
