// RUN: tessera-opt %s -tile-version-interior -verify-diagnostics

// tile.whole_tiles is a unit attribute (the launcher's promise); any other
// value is an error, not a promise.
!f1 = memref<?xf32, strided<[1], offset: ?>>
// expected-error @+1 {{'tile.whole_tiles' must be a unit attribute, got 1 : i64}}
func.func @add(%o: !f1, %a: !f1) attributes {tile.kernel, tile.whole_tiles = 1 : i64} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  tile.store %x, %o[%p] : tensor<64xf32>, !f1
  return
}
