// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 warps=2" -verify-diagnostics

// 4 or 8 warps a CTA, or 0 (the pass's choice).
// expected-error @+1 {{convert-tile-matmul-to-mma-sync: warps is 2: expected 0, 4 or 8}}
module {
  func.func @empty() attributes {tile.kernel} {
    return
  }
}
