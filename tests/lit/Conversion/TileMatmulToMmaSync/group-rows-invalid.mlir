// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 group-rows=65" -verify-diagnostics

// Groups of 1 to 64 rows of programs, or 0 (the launch's order).
// expected-error @+1 {{convert-tile-matmul-to-mma-sync: group-rows is 65: expected 0 to 64}}
module {
  func.func @empty() attributes {tile.kernel} {
    return
  }
}
