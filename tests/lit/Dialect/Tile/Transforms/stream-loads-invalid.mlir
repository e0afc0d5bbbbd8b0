// RUN: tessera-opt %s -tile-stream-loads=stages=1 -verify-diagnostics
// RUN: tessera-opt %s -tile-stream-loads=max-bytes=0 -verify-diagnostics
// RUN: tessera-opt %s -tile-stream-loads=min-bytes=-1 -verify-diagnostics

// A ring needs two slots, the byte budget must be positive and the floor not
// negative: anything else is an error rather than a guess.
// expected-error @+1 {{tile-stream-loads: stages must be within 2..8, max-bytes positive and min-bytes not negative}}
module {
  func.func @k() attributes {tile.kernel} {
    return
  }
}
