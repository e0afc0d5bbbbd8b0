// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops=target=gpu -verify-diagnostics

// tile.rewiden marks a widening of bf16 to f32 only (what
// tile-rewiden-after-reduce makes); convert-tile-to-loops rejects it elsewhere
// rather than guess a conversion.
!h1 = memref<?xf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @f16(%o: !f1, %a: !h1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !h1 -> tensor<16xf16>
  // expected-error @+1 {{carries 'tile.rewiden', an attribute of arith.extf from a bf16 to an f32 tile only}}
  %t = arith.extf %x {tile.rewiden} : tensor<16xf16> to tensor<16xf32>
  tile.store %t, %o[%p] : tensor<16xf32>, !f1
  return
}

// -----

!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @not_an_extf(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<16xf32>
  // expected-error @+1 {{carries 'tile.rewiden', an attribute of arith.extf from a bf16 to an f32 tile only}}
  %t = arith.addf %x, %x {tile.rewiden} : tensor<16xf32>
  tile.store %t, %o[%p] : tensor<16xf32>, !f1
  return
}
