// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=4" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=cpu" | FileCheck %s --check-prefix=CPU

// An accurate exp over 8 elements per thread (unrolled): one test that every
// element lies within +-69 (inside exp's range of +-80, so that the results lie
// within 2^+-99.6), then the exps marked tile.exp_in_range, else the plain
// ones; the bf16 elements are computed in f32.
// CHECK-LABEL: func.func @exp_rows
// CHECK: %[[LIMIT:.*]] = arith.constant 6.900000e+01 : f32
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

// -----

// f32 exps divided by a tile broadcast from one element: per group that passed
// its range test, and a divisor within [2^-24, 2^24], the quotients from one
// correctly rounded reciprocal and two fma each; the plain divisions otherwise.
// CHECK-LABEL: func.func @exp_division
// CHECK: %[[T:.*]]:8 = scf.if %[[TEST:.*]] -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[Y:.*]] = arith.divf %{{.*}}, %[[B:.*]] : f32
// CHECK: %[[OK:.*]] = arith.andi %[[TEST]], %{{.*}} : i1
// CHECK: scf.if %[[OK]] -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[Q:.*]] = arith.mulf %{{.*}}, %[[Y]] : f32
// CHECK: %[[NQ:.*]] = arith.negf %[[Q]] : f32
// CHECK: %[[R:.*]] = math.fma %[[NQ]], %[[B]], %{{.*}} : f32
// CHECK: math.fma %[[R]], %[[Y]], %[[Q]] : f32
// CHECK: } else {
// CHECK-COUNT-8: arith.divf %{{.*}}, %[[B]] : f32
// A division by a tile that is not a broadcast of one element is left to the
// generic lowering.
// CHECK-LABEL: func.func @exp_division_by_tile
// CHECK-NOT: math.fma
// CHECK: return
!f2 = memref<?xf32, strided<[1], offset: ?>>
func.func @exp_division(%o: !f2, %a: !f2, %d: !f2) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !f2 -> tensor<32xf32>
  %e = math.exp %x : tensor<32xf32>
  %s = tile.load %d[%p] {tile.interior} : !f2 -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<32xf32>
  %q = arith.divf %e, %b : tensor<32xf32>
  tile.store %q, %o[%p] {tile.interior} : tensor<32xf32>, !f2
  return
}
func.func @exp_division_by_tile(%o: !f2, %a: !f2, %d: !f2) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !f2 -> tensor<32xf32>
  %e = math.exp %x : tensor<32xf32>
  %y = tile.load %d[%p] {tile.interior} : !f2 -> tensor<32xf32>
  %q = arith.divf %e, %y : tensor<32xf32>
  tile.store %q, %o[%p] {tile.interior} : tensor<32xf32>, !f2
  return
}

// -----

// Softmax's shift, exp(x - broadcast(max(x))) with x a widened bf16 tile: the
// max of a thread's elements is taken on bf16 pairs (exact, two per op); each
// argument then lies in [fl(x_min - max), 0], so the group's one test is
// fl(x_min - max) > -69, x_min also from bf16 pairs, instead of one compare
// per element.
// CHECK-LABEL: func.func @softmax_shift
// CHECK-COUNT-3: arith.maximumf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: %[[LIMIT:.*]] = arith.constant 6.900000e+01 : f32
// CHECK-COUNT-3: arith.minimumf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: %[[LO:.*]] = arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[LEAST:.*]] = arith.subf %[[LO]], %{{.*}} : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[LIMIT]] : f32
// CHECK: %[[TEST:.*]] = arith.cmpf ogt, %[[LEAST]], %[[NEG]] : f32
// CHECK-NOT: arith.cmpf olt
// CHECK: scf.if %[[TEST]] -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8: math.exp %{{.*}} {tile.exp_in_range} : f32
// The same shift by another tile's max keeps one compare per element.
// CHECK-LABEL: func.func @other_shift
// CHECK-COUNT-8: arith.cmpf olt
// CHECK: scf.if
!b3 = memref<?xbf16, strided<[1], offset: ?>>
!f3 = memref<?xf32, strided<[1], offset: ?>>
func.func @softmax_shift(%o: !f3, %a: !b3) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !b3 -> tensor<32xbf16>
  %t = arith.extf %x : tensor<32xbf16> to tensor<32xf32>
  %m = tile.reduce %t {kind = max, axis = 0} : tensor<32xf32> -> tensor<1xf32>
  %b = tile.broadcast %m : tensor<1xf32> -> tensor<32xf32>
  %d = arith.subf %t, %b : tensor<32xf32>
  %e = math.exp %d : tensor<32xf32>
  tile.store %e, %o[%p] {tile.interior} : tensor<32xf32>, !f3
  return
}
func.func @other_shift(%o: !f3, %a: !b3, %c: !b3) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !b3 -> tensor<32xbf16>
  %t = arith.extf %x : tensor<32xbf16> to tensor<32xf32>
  %y = tile.load %c[%p] {tile.interior} : !b3 -> tensor<32xbf16>
  %u = arith.extf %y : tensor<32xbf16> to tensor<32xf32>
  %m = tile.reduce %u {kind = max, axis = 0} : tensor<32xf32> -> tensor<1xf32>
  %b = tile.broadcast %m : tensor<1xf32> -> tensor<32xf32>
  %d = arith.subf %t, %b : tensor<32xf32>
  %e = math.exp %d : tensor<32xf32>
  tile.store %e, %o[%p] {tile.interior} : tensor<32xf32>, !f3
  return
}
