// RUN: tessera-opt %s -split-input-file -tile-expand-f8-conversions="hardware-conversions=true" | FileCheck %s

// With hardware-conversions (sm_89 and newer), f32 -> f8 and f8 -> f16 of
// scalars and 1-d vectors are sm_89's paired cvt instructions; f8 -> f32 goes
// through f16; other sources go through f32 as without the option.

// A scalar: one cvt.rn.satfinite with 0 as the pair's other (high) element.
// CHECK-LABEL: func.func @narrow_scalar
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %[[ZERO]], %arg0 {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: %[[C:.*]] = vector.extract %[[P]][0] : i8 from vector<2xi8>
// CHECK: arith.bitcast %[[C]] : i8 to f8E4M3FN
// CHECK-NOT: arith.shrui
func.func @narrow_scalar(%x: f32) -> f8E4M3FN {
  %n = arith.truncf %x : f32 to f8E4M3FN
  return %n : f8E4M3FN
}

// -----

// A vector of three bf16: widened to f32, then elements (1, 0) in one cvt and
// (0, 2) in another, gathered in order.
// CHECK-LABEL: func.func @narrow_vector
// CHECK: %[[W:.*]] = arith.extf %arg0 : vector<3xbf16> to vector<3xf32>
// CHECK-DAG: %[[E0:.*]] = vector.extract %[[W]][0]
// CHECK-DAG: %[[E1:.*]] = vector.extract %[[W]][1]
// CHECK-DAG: %[[E2:.*]] = vector.extract %[[W]][2]
// CHECK: %[[P0:.*]] = nvvm.convert.f32x2.to.f8x2 %[[E1]], %[[E0]] {{.*}} : vector<2xi8>(f8E5M2)
// CHECK: %[[C0:.*]] = vector.extract %[[P0]][0]
// CHECK: %[[C1:.*]] = vector.extract %[[P0]][1]
// CHECK: %[[P1:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[E2]] {{.*}} : vector<2xi8>(f8E5M2)
// CHECK: %[[C2:.*]] = vector.extract %[[P1]][0]
// CHECK: %[[V:.*]] = vector.from_elements %[[C0]], %[[C1]], %[[C2]] : vector<3xi8>
// CHECK: arith.bitcast %[[V]] : vector<3xi8> to vector<3xf8E5M2>
func.func @narrow_vector(%x: vector<3xbf16>) -> vector<3xf8E5M2> {
  %n = arith.truncf %x : vector<3xbf16> to vector<3xf8E5M2>
  return %n : vector<3xf8E5M2>
}

// -----

// f8 -> f32: pairs of codes to f16 pairs, then one extf.
// CHECK-LABEL: func.func @widen_vector
// CHECK: %[[B:.*]] = arith.bitcast %arg0 : vector<4xf8E4M3FN> to vector<4xi8>
// CHECK-COUNT-2: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: %[[H:.*]] = vector.from_elements %{{.*}} : vector<4xf16>
// CHECK: arith.extf %[[H]] : vector<4xf16> to vector<4xf32>
// CHECK-NOT: arith.shli
func.func @widen_vector(%x: vector<4xf8E4M3FN>) -> vector<4xf32> {
  %w = arith.extf %x : vector<4xf8E4M3FN> to vector<4xf32>
  return %w : vector<4xf32>
}

// -----

// f8 -> f16 of a scalar, and a comparison of two f8 values (as f32s).
// CHECK-LABEL: func.func @widen_scalar_and_compare
// CHECK: %[[P:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xi8>
// CHECK: nvvm.convert.f8x2.to.f16x2 %[[P]] : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK-COUNT-2: nvvm.convert.f8x2.to.f16x2
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
func.func @widen_scalar_and_compare(%x: f8E5M2, %y: f8E5M2) -> (f16, i1) {
  %w = arith.extf %x : f8E5M2 to f16
  %c = arith.cmpf olt, %x, %y : f8E5M2
  return %w, %c : f16, i1
}

// -----

// Tensors keep the integer arithmetic.
// CHECK-LABEL: func.func @tensor_integer
// CHECK-NOT: nvvm.convert
// CHECK: arith.minui
// CHECK: arith.trunci %{{.*}} : tensor<4xi32> to tensor<4xi8>
func.func @tensor_integer(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %n = arith.truncf %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %n : tensor<4xf8E4M3FN>
}

// -----

// Scalars of one block (as the loops lowering converts a tile element by
// element) are paired two to a cvt: the second value in the high byte (lane
// 1); an odd third keeps its 0. A value computed after the first conversion
// cannot join it (the joined cvt takes the first one's place), nor can a
// conversion to the other format.
// CHECK-LABEL: func.func @pair_scalars
// CHECK: %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %arg1, %arg0 {{.*}} : vector<2xi8>(f8E4M3FN)
// CHECK-DAG: %[[A:.*]] = vector.extract %[[P]][0]
// CHECK-DAG: %[[B:.*]] = vector.extract %[[P]][1]
// CHECK: %[[Q:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %arg2 {{.*}} : vector<2xi8>(f8E4M3FN)
// CHECK: %[[S:.*]] = arith.addf %arg2, %arg3 : f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[S]] {{.*}} : vector<2xi8>(f8E4M3FN)
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %arg3 {{.*}} : vector<2xi8>(f8E5M2)
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// CHECK: return
func.func @pair_scalars(%x: f32, %y: f32, %z: f32, %w: f32) -> (f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E5M2) {
  %a = arith.truncf %x : f32 to f8E4M3FN
  %b = arith.truncf %y : f32 to f8E4M3FN
  %c = arith.truncf %z : f32 to f8E4M3FN
  %s = arith.addf %z, %w : f32
  %d = arith.truncf %s : f32 to f8E4M3FN
  %e = arith.truncf %w : f32 to f8E5M2
  return %a, %b, %c, %d, %e : f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E5M2
}
