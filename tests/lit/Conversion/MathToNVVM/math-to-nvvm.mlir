// RUN: tessera-opt %s -convert-math-to-nvvm | FileCheck %s

// exp(x) = ex2(t) * (1 + e), t = x*log2(e) rounded and e = x - t*ln2 from two
// fma with ln2's high and low float.
// CHECK-LABEL: func.func @exp
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%[[T]]) : (f32) -> f32
// CHECK: %[[NT:.*]] = arith.negf %[[T]] : f32
// CHECK: %[[LN2HI:.*]] = arith.constant 0.693147182 : f32
// CHECK: %[[E0:.*]] = math.fma %[[NT]], %[[LN2HI]], %[[X]] : f32
// CHECK: %[[LN2LO:.*]] = arith.constant -1.90465421E-9 : f32
// CHECK: %[[E:.*]] = math.fma %[[NT]], %[[LN2LO]], %[[E0]] : f32
// CHECK: %[[C:.*]] = math.fma %[[R]], %[[E]], %[[R]] : f32
// CHECK: %[[OK:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[RES:.*]] = arith.select %[[OK]], %[[C]], %[[R]] : f32
// CHECK: return %[[RES]]
func.func @exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// Marked tile.exp_in_range (|x| < 80, see convert-tile-to-loops): the same
// corrected value, from ex2.approx.ftz, with no range select.
// CHECK-LABEL: func.func @exp_in_range
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[T]]) : (f32) -> f32
// CHECK: %[[C:.*]] = math.fma %[[R]], %{{.*}}, %[[R]] : f32
// CHECK-NOT: arith.select
// CHECK: return %[[C]]
func.func @exp_in_range(%x: f32) -> f32 {
  %0 = math.exp %x {tile.exp_in_range} : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @exp2
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK-NOT: math.exp2
func.func @exp2(%x: f32) -> f32 {
  %0 = math.exp2 %x : f32
  return %0 : f32
}

// log: lg2.approx * ln2, except near 1 (0.6 < x < 1.6) where a series in
// s = (x - 1) / (x + 1) keeps the relative error small.
// CHECK-LABEL: func.func @log
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[NUM:.*]] = arith.subf %[[X]], %{{.*}} : f32
// CHECK: %[[DEN:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.divf %[[NUM]], %[[DEN]] : f32
// CHECK: arith.mulf %[[S]], %[[S]] : f32
// CHECK: %[[SERIES:.*]] = arith.mulf %[[S]], %{{.*}} : f32
// CHECK: %[[L:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[X]]) : (f32) -> f32
// CHECK: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK: %[[FAR:.*]] = arith.mulf %[[L]], %[[LN2]] : f32
// CHECK: %[[NEAR:.*]] = arith.andi
// CHECK: %[[R:.*]] = arith.select %[[NEAR]], %[[SERIES]], %[[FAR]] : f32
// CHECK: return %[[R]]
func.func @log(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @log2_log10
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: arith.constant 3.010300e-01 : f32
func.func @log2_log10(%x: f32) -> (f32, f32) {
  %0 = math.log2 %x : f32
  %1 = math.log10 %x : f32
  return %0, %1 : f32, f32
}

// sin uses a polynomial below |x| = 0.5, sin.approx above; tan = sin / cos.
// CHECK-LABEL: func.func @rsqrt_sin_cos_tan
// CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"
// CHECK: arith.select
// CHECK: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"
// CHECK: %[[S:.*]] = arith.select
// CHECK: %[[C:.*]] = llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
// CHECK: arith.divf %[[S]], %[[C]] : f32
func.func @rsqrt_sin_cos_tan(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.rsqrt %x : f32
  %1 = math.sin %x : f32
  %2 = math.cos %x : f32
  %3 = math.tan %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// tanh: odd polynomial for |x| < 0.55, 1 - 2/(exp(2|x|) + 1) above, where
// approximate exp and reciprocal suffice (their errors are damped).
// CHECK-LABEL: func.func @tanh
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[E1:.*]] = arith.addf %[[E]], %{{.*}} : f32
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"(%[[E1]])
// CHECK: math.fma %{{.*}}, %[[R]], %{{.*}} : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK: %[[BIG:.*]] = math.copysign %{{.*}}, %[[X]] : f32
// CHECK: %[[RES:.*]] = arith.select %[[SMALL]], %{{.*}}, %[[BIG]] : f32
// CHECK: return %[[RES]]
func.func @tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// 16-bit floats are computed in f32.
// CHECK-LABEL: func.func @exp_f16
// CHECK-SAME: (%[[X:.*]]: f16)
// CHECK: %[[E:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK: %[[R:.*]] = arith.select
// CHECK: %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK: return %[[T]]
func.func @exp_f16(%x: f16) -> f16 {
  %0 = math.exp %x : f16
  return %0 : f16
}

// CHECK-LABEL: func.func @pow_erf_misc
// CHECK-NOT: math.powf
// CHECK-NOT: math.erf
// CHECK-NOT: math.expm1
// CHECK-NOT: math.log1p
// CHECK-NOT: math.sinh
// CHECK-NOT: math.cosh
// CHECK-NOT: math.cbrt
// CHECK: return
func.func @pow_erf_misc(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %0 = math.powf %x, %y : f32
  %1 = math.erf %x : f32
  %2 = math.expm1 %x : f32
  %3 = math.log1p %x : f32
  %4 = math.sinh %x : f32
  %5 = math.cosh %x : f32
  %6 = math.cbrt %x : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f32, f32, f32, f32
}

// Ops NVPTX selects directly are left to convert-math-to-llvm, also on f64.
// CHECK-LABEL: func.func @kept
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: math.floor %{{.*}} : f32
// CHECK: math.fma %{{.*}} : f32
// CHECK: math.absf %{{.*}} : f64
func.func @kept(%x: f32, %d: f64) -> (f32, f64, f32, f32, f64) {
  %0 = math.sqrt %x : f32
  %1 = math.sqrt %d : f64
  %2 = math.floor %x : f32
  %3 = math.fma %x, %x, %x : f32
  %4 = math.absf %d : f64
  return %0, %1, %2, %3, %4 : f32, f64, f32, f32, f64
}
