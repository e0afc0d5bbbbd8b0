// RUN: tessera-opt %s -split-input-file -convert-math-to-nvvm -verify-diagnostics

func.func @exp_f64(%x: f64) -> f64 {
  // expected-error @+1 {{'math.exp' op on 'f64' is not supported by the gpu target: only scalar f32, f16 and bf16 have a lowering without libdevice}}
  %0 = math.exp %x : f64
  return %0 : f64
}

// -----

func.func @tanh_vector(%x: vector<4xf32>) -> vector<4xf32> {
  // expected-error @+1 {{'math.tanh' op on 'vector<4xf32>' is not supported by the gpu target}}
  %0 = math.tanh %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// -----

func.func @atan(%x: f32) -> f32 {
  // expected-error @+1 {{'math.atan' op has no lowering without libdevice on the gpu target}}
  %0 = math.atan %x : f32
  return %0 : f32
}

// -----

func.func @fast_exp_f64(%x: f64) -> f64 {
  // expected-error @+1 {{'math.exp' op on 'f64' is not supported by the gpu target}}
  %0 = math.exp %x fastmath<afn> : f64
  return %0 : f64
}
