// RUN: tessera-opt %s -split-input-file -verify-diagnostics -tile-expand-f8-conversions
// RUN: tessera-opt %s -split-input-file -verify-diagnostics -tile-expand-f8-conversions="hardware-conversions=true"

// 8-bit floats take no arithmetic: the front end computes in f32.
func.func @negate(%x: f8E4M3FN) -> f8E4M3FN {
  // expected-error @+1 {{'arith.negf' op computes on 8-bit floats: they take no arithmetic (tile-expand-f8-conversions)}}
  %n = arith.negf %x : f8E4M3FN
  return %n : f8E4M3FN
}

// -----

// Arithmetic on 8-bit floats has no lowering.
func.func @add(%x: f8E5M2, %y: f8E5M2) -> f8E5M2 {
  // expected-error @+1 {{'arith.addf' op computes on 8-bit floats}}
  %s = arith.addf %x, %y : f8E5M2
  return %s : f8E5M2
}

// -----

func.func @exp(%x: f8E4M3FN) -> f8E4M3FN {
  // expected-error @+1 {{'math.exp' op computes on 8-bit floats}}
  %e = math.exp %x : f8E4M3FN
  return %e : f8E4M3FN
}
