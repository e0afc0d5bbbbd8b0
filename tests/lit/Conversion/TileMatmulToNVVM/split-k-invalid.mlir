// RUN: tessera-opt %s -convert-tile-matmul-to-nvvm="arch=sm_90a split-k=3" -verify-diagnostics

// A cluster's CTAs split a program's k-tiles in 1, 2, 4 or 8 parts.
// expected-error @+1 {{convert-tile-matmul-to-nvvm: split-k is 3: expected 1, 2, 4 or 8}}
module {
  func.func @empty() attributes {tile.kernel} {
    return
  }
}
