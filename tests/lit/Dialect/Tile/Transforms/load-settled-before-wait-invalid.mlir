// RUN: tessera-opt %s -tile-load-settled-before-wait=steps=0 -verify-diagnostics
// RUN: tessera-opt %s -tile-load-settled-before-wait=steps=5 -verify-diagnostics

// No iteration, or more than four (whose tiles would hold more registers than
// the wait saves), is an error rather than a guess.
// expected-error @+1 {{tile-load-settled-before-wait: steps must be 1 to 4, got}}
module {
  func.func @k() attributes {tile.kernel} {
    return
  }
}
