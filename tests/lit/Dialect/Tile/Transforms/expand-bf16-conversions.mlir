// RUN: tessera-opt %s -tile-expand-bf16-conversions | FileCheck %s

// Widening a bf16 is a shift of its bits; narrowing an f32 adds the rounding
// bias (0x7fff plus the lowest kept bit) and makes a NaN the quiet NaN 0x7fc0.
// Other conversions stay.
// CHECK-LABEL: func.func @convert
// CHECK-SAME: (%[[X:.*]]: bf16, %[[Y:.*]]: f32, %[[H:.*]]: f16)
// CHECK-DAG: %[[QNAN:.*]] = arith.constant 32704 : i16
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 32767 : i32
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[XB:.*]] = arith.bitcast %[[X]] : bf16 to i16
// CHECK-NEXT: %[[XE:.*]] = arith.extui %[[XB]] : i16 to i32
// CHECK-NEXT: %[[XS:.*]] = arith.shli %[[XE]], %[[C16]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.bitcast %[[XS]] : i32 to f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf une, %[[Y]], %[[Y]] : f32
// CHECK-NEXT: %[[YB:.*]] = arith.bitcast %[[Y]] : f32 to i32
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrui %[[YB]], %[[C16]] : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.andi %[[HIGH]], %{{.*}} : i32
// CHECK-NEXT: %[[B:.*]] = arith.addi %[[LOW]], %[[BIAS]] : i32
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[YB]], %[[B]] : i32
// CHECK-NEXT: %[[R:.*]] = arith.shrui %[[SUM]], %[[C16]] : i32
// CHECK-NEXT: %[[T:.*]] = arith.trunci %[[R]] : i32 to i16
// CHECK-NEXT: %[[S:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[T]] : i16
// CHECK-NEXT: %[[N:.*]] = arith.bitcast %[[S]] : i16 to bf16
// CHECK-NEXT: %[[HW:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: return %[[W]], %[[N]], %[[HW]]
func.func @convert(%x: bf16, %y: f32, %h: f16) -> (f32, bf16, f32) {
  %w = arith.extf %x : bf16 to f32
  %n = arith.truncf %y : f32 to bf16
  %hw = arith.extf %h : f16 to f32
  return %w, %n, %hw : f32, bf16, f32
}
