// RUN: tessera-opt %s -convert-tile-to-loops=target=cpu -verify-diagnostics

// A program of several CTAs needs the gpu target: on cpu a program is one
// thread, and its rank-0 share of the K loop would be all it ran.
!v = memref<?xf32, strided<[1], offset: ?>>
// expected-error @+1 {{carries 'tile.split_k': its programs run as several CTAs, which only the gpu target has}}
func.func @split_on_cpu(%o: !v) attributes {tile.kernel, tile.split_k = 2 : i32} {
  %c0i = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<16xf32>
  %s = tile.split_sum %z : tensor<16xf32> -> tensor<16xf32>
  tile.store %s, %o[%c0i] : tensor<16xf32>, !v
  return
}
