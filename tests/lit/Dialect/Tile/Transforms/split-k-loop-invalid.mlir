// RUN: tessera-opt %s -tile-split-k-loop=ctas=3 -verify-diagnostics
// RUN: tessera-opt %s -tile-split-k-loop=ctas=16 -verify-diagnostics

// A cluster of 3 CTAs (not a power of two) or of 16 (more than a portable
// cluster) is an error rather than a guess.
// expected-error @+1 {{tile-split-k-loop: ctas must be 1, 2, 4 or 8, got}}
module {
  func.func @k() attributes {tile.kernel} {
    return
  }
}
