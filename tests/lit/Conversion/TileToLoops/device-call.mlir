// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=32" -canonicalize | FileCheck %s

// tile.device_call becomes one call per element of a private declaration of
// the scalar function (32 threads, 4 elements each).
// CHECK: func.func private @twice_plus(f32, i32) -> f32
// CHECK-LABEL: func.func @calls
// CHECK-COUNT-4: call @twice_plus(%{{.*}}, %{{.*}}) : (f32, i32) -> f32
// CHECK-NOT: call @
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
!i1 = memref<?xi32, strided<[1], offset: ?>>
func.func @calls(%o: !f1, %a: !f1, %n: !i1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<128xf32>
  %k = tile.load %n[%p] : !i1 -> tensor<128xi32>
  %y = tile.device_call @twice_plus(%x, %k) : (tensor<128xf32>, tensor<128xi32>) -> tensor<128xf32>
  tile.store %y, %o[%p] : tensor<128xf32>, !f1
  return
}

// -----

// An existing external declaration of the right type is used as is.
// CHECK: func.func private @g(f32) -> f32
// CHECK-NOT: func.func private @g
// CHECK-LABEL: func.func @declared
// CHECK: call @g(%{{.*}}) : (f32) -> f32
func.func private @g(f32) -> f32
func.func @declared(%o: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %o[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<32xf32>
  %y = tile.device_call @g(%x) : (tensor<32xf32>) -> tensor<32xf32>
  tile.store %y, %o[%p] : tensor<32xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}
