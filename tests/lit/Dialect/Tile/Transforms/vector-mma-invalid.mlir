// RUN: tessera-opt %s -tile-vector-mma -verify-diagnostics

// The pass runs on tile IR: a kernel that convert-tile-to-loops already
// lowered (it carries tile.block_size) is a pipeline error, not an input.
// expected-error @+1 {{tile-vector-mma runs on tile IR, but kernel 'lowered' was already lowered by convert-tile-to-loops (it carries 'tile.block_size')}}
func.func @lowered() attributes {tile.kernel, tile.block_size = 128 : i32} {
  return
}
