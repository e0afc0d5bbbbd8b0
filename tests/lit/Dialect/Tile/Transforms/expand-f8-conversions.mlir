// RUN: tessera-opt %s -tile-expand-f8-conversions | FileCheck %s

// Widening an f8E4M3FN: the sign moves to bit 31; a normal code's exponent and
// mantissa shift up 20 bits and are rebiased by 120 << 23; a subnormal code
// (below 8) is its mantissa times 2^-9; the code 0x7f is NaN.
// CHECK-LABEL: func.func @widen_e4m3
// CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: %[[C:.*]] = arith.extui %[[B]] : i8 to i32
// CHECK: %[[S:.*]] = arith.andi %[[C]], %{{.*}} : i32
// CHECK: %[[M:.*]] = arith.andi %[[C]], %{{.*}} : i32
// CHECK: arith.constant 1006632960 : i32
// CHECK: arith.constant 0.001953125 : f32
// CHECK: %[[F:.*]] = arith.uitofp %[[M]] : i32 to f32
// CHECK: arith.cmpi ult, %[[M]], %{{.*}} : i32
// CHECK: arith.cmpi eq, %[[M]], %{{.*}} : i32
// CHECK: arith.constant 2143289344 : i32
// CHECK: %[[W:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: arith.extf
// CHECK: return %[[W]]
func.func @widen_e4m3(%x: f8E4M3FN) -> f32 {
  %w = arith.extf %x : f8E4M3FN to f32
  return %w : f32
}

// Widening an f8E5M2: exponent and mantissa shift up 21 bits, rebiased by
// 112 << 23; subnormal codes (below 4) are their mantissa times 2^-16; codes
// from 0x7c are infinity (0x7c) or NaN.
// CHECK-LABEL: func.func @widen_e5m2
// CHECK: arith.constant 21 : i32
// CHECK: arith.constant 939524096 : i32
// CHECK: arith.constant 1.52587891E-5 : f32
// CHECK: arith.constant 2139095040 : i32
// CHECK: arith.cmpi uge
// CHECK-NOT: arith.extf
func.func @widen_e5m2(%x: f8E5M2) -> f32 {
  %w = arith.extf %x : f8E5M2 to f32
  return %w : f32
}

// Narrowing to f8E4M3FN: the normal path rounds at bit 20 (bias 2^19 - 1
// plus the lowest kept bit) and rebiases by -960 (120 << 3); the subnormal
// path adds 2^14 (2^23 steps of 2^-9) to |x| and subtracts its bits; the
// result is at most 126 (448), 127 for NaN, with the sign or-ed in.
// CHECK-LABEL: func.func @narrow_e4m3
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.constant 524287 : i32
// CHECK: arith.constant -960 : i32
// CHECK: %[[CF:.*]] = arith.constant 1.638400e+04 : f32
// CHECK: %[[ABS:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ABS]], %[[CF]] : f32
// CHECK: arith.constant 1182793728 : i32
// CHECK: arith.constant 1015021568 : i32
// CHECK: %[[SAT:.*]] = arith.minui %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ugt
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[N:.*]] = arith.bitcast %[[T]] : i8 to f8E4M3FN
// CHECK-NOT: arith.truncf
// CHECK: return %[[N]]
func.func @narrow_e4m3(%y: f32) -> f8E4M3FN {
  %n = arith.truncf %y : f32 to f8E4M3FN
  return %n : f8E4M3FN
}

// Vectors take the same ops on vectors, with splat constants; f8E5M2
// saturates at 123 (57344).
// CHECK-LABEL: func.func @narrow_e5m2_vector
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.constant dense<123> : vector<4xi32>
// CHECK: arith.trunci %{{.*}} : vector<4xi32> to vector<4xi8>
// CHECK: arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E5M2>
// CHECK-NOT: arith.truncf
func.func @narrow_e5m2_vector(%v: vector<4xf32>) -> vector<4xf8E5M2> {
  %t = arith.truncf %v : vector<4xf32> to vector<4xf8E5M2>
  return %t : vector<4xf8E5M2>
}

// Constants become their bits (1.5 is 0x3c in E4M3, -2 is 0xc0 in E5M2), bitcast;
// other conversions, selects and f8 bitcasts stay.
// CHECK-LABEL: func.func @constants_and_others
// CHECK: %[[C1:.*]] = arith.constant 60 : i8
// CHECK: %[[F1:.*]] = arith.bitcast %[[C1]] : i8 to f8E4M3FN
// CHECK: %[[C2:.*]] = arith.constant dense<-64> : vector<2xi8>
// CHECK: %[[F2:.*]] = arith.bitcast %[[C2]] : vector<2xi8> to vector<2xf8E5M2>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.select %{{.*}}, %[[F1]], %{{.*}} : f8E4M3FN
func.func @constants_and_others(%h: f16, %c: i1, %x: f8E4M3FN) -> (f8E4M3FN, vector<2xf8E5M2>, f32, f8E4M3FN) {
  %a = arith.constant 1.5 : f8E4M3FN
  %b = arith.constant dense<-2.0> : vector<2xf8E5M2>
  %w = arith.extf %h : f16 to f32
  %s = arith.select %c, %a, %x : f8E4M3FN
  return %a, %b, %w, %s : f8E4M3FN, vector<2xf8E5M2>, f32, f8E4M3FN
}

// Conversions that canonicalization makes of the front end's chains through
// f32 go through f32 again: f16 -> f8 (from truncf(extf)), i32 -> f8 (from
// truncf(sitofp)), f8 -> bf16, f8 -> i32 and a comparison of f8 values.
// CHECK-LABEL: func.func @through_f32
// CHECK: %[[H:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.bitcast %[[H]] : f32 to i32
// CHECK: %[[I:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.bitcast %[[I]] : f32 to i32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: : f16 to f8
// CHECK-NOT: to f8E5M2
func.func @through_f32(%h: f16, %i: i32, %x: f8E5M2, %y: f8E5M2) -> (f8E5M2, f8E5M2, bf16, i32, i1) {
  %a = arith.truncf %h : f16 to f8E5M2
  %b = arith.sitofp %i : i32 to f8E5M2
  %c = arith.extf %x : f8E5M2 to bf16
  %d = arith.fptosi %x : f8E5M2 to i32
  %e = arith.cmpf olt, %x, %y : f8E5M2
  return %a, %b, %c, %d, %e : f8E5M2, f8E5M2, bf16, i32, i1
}

// To f16 without f32: an E5M2 code shifted up 8 bits; an E4M3 code's bits
// shifted up 7 and scaled by 256, its code 0x7f NaN (0x7e00).
// CHECK-LABEL: func.func @to_f16
// CHECK: %[[E:.*]] = arith.extui %{{.*}} : i8 to i16
// CHECK: %[[S:.*]] = arith.shli %[[E]], %{{.*}} : i16
// CHECK: arith.bitcast %[[S]] : i16 to f16
// CHECK: arith.constant 2.560000e+02 : f16
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK: arith.constant 32256 : i16
// CHECK: arith.select
// CHECK-NOT: f32
// CHECK: return
func.func @to_f16(%x: f8E5M2, %y: f8E4M3FN) -> (f16, f16) {
  %a = arith.extf %x : f8E5M2 to f16
  %b = arith.extf %y : f8E4M3FN to f16
  return %a, %b : f16, f16
}
