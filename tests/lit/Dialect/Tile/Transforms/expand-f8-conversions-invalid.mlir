// RUN: tessera-opt %s -split-input-file -verify-diagnostics -tile-expand-f8-conversions

// An 8-bit float converts to and from f32 only: the front end routes the
// others through f32.
func.func @widen_to_f16(%x: f8E4M3FN) -> f16 {
  // expected-error @+1 {{'arith.extf' op computes on 8-bit floats: they convert to and from f32 only and take no arithmetic (tile-expand-f8-conversions)}}
  %w = arith.extf %x : f8E4M3FN to f16
  return %w : f16
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
