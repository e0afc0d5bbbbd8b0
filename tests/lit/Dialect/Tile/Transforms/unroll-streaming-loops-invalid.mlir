// RUN: tessera-opt %s -tile-unroll-streaming-loops=max-factor=3 -verify-diagnostics
// RUN: tessera-opt %s -tile-unroll-streaming-loops=bytes-in-flight=0 -verify-diagnostics

// The factor must be a power of two and the byte budget positive: anything
// else is an error rather than a guess.
// expected-error @+1 {{tile-unroll-streaming-loops: bytes-in-flight must be positive and max-factor a positive power of two}}
module {
  func.func @k() attributes {tile.kernel} {
    return
  }
}
