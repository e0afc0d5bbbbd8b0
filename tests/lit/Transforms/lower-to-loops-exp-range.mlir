// RUN: tessera-opt %s -split-input-file -tile-lower-to-loops="target=gpu block-size=4" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-lower-to-loops="target=cpu" | FileCheck %s --check-prefix=CPU

// An accurate exp over 8 elements per thread (unrolled): one test that every
// element lies within +-80, then the exps marked tile.exp_in_range, else the
// plain ones; the bf16 elements are computed in f32.
// CHECK-LABEL: func.func @exp_rows
// CHECK: %[[LIMIT:.*]] = arith.constant 8.000000e+01 : f32
// CHECK-COUNT-8: arith.cmpf olt
// CHECK: %[[R:.*]]:8 = scf.if %{{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8: math.exp %{{.*}} {tile.exp_in_range} : f32
// CHECK: } else {
// CHECK-NOT: tile.exp_in_range
// CHECK-COUNT-8: math.exp %{{.*}} : f32
// CHECK: }
// CHECK: arith.truncf %[[R]]#0 : f32 to bf16
// No test on cpu, where exp is libm's.
// CPU-LABEL: func.func @exp_rows
// CPU-NOT: tile.exp_in_range
!b1 = memref<?xbf16, strided<[1], offset: ?>>
func.func @exp_rows(%o: !b1, %a: !b1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !b1 -> tensor<32xbf16>
  %e = math.exp %x : tensor<32xbf16>
  tile.store %e, %o[%p] {tile.interior} : tensor<32xbf16>, !b1
  return
}

// -----

// The approximate exp (afn) and an exp over fewer than 4 elements per thread
// are lowered element by element as before.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tile.exp_in_range
// CHECK: math.exp %{{.*}} fastmath<afn> : f32
// CHECK-NOT: tile.exp_in_range
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @left_alone(%o: !f1, %p2: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !f1 -> tensor<32xf32>
  %e = math.exp %x fastmath<afn> : tensor<32xf32>
  tile.store %e, %o[%p] {tile.interior} : tensor<32xf32>, !f1
  %y = tile.load %a[%p] {tile.interior} : !f1 -> tensor<8xf32>
  %f = math.exp %y : tensor<8xf32>
  tile.store %f, %p2[%p] {tile.interior} : tensor<8xf32>, !f1
  return
}
