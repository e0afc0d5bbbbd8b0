// RUN: tessera-opt %s -convert-tile-to-loops=target=gpu -tile-guard-tile-indices -verify-diagnostics

// tile-guard-tile-indices runs on tile IR: a kernel convert-tile-to-loops
// already lowered is a pipeline error, reported on the kernel.
!f1 = memref<?xf32, strided<[1], offset: ?>>
// expected-error @+1 {{tile-guard-tile-indices runs on tile IR, but kernel 'lowered' was already lowered by convert-tile-to-loops}}
func.func @lowered(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<128xf32>
  tile.store %x, %o[%p] : tensor<128xf32>, !f1
  return
}
