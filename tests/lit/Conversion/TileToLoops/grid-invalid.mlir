// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=32" -verify-diagnostics

// tile.grid must be three positive program counts that fit in i32.
!m = memref<6x32xf32, strided<[32, 1]>>
// expected-error @+1 {{'tile.grid' must be three positive i32-sized program counts}}
func.func @two_dims(%o: !m) attributes {tile.kernel, tile.grid = array<i64: 6, 1>} {
  %x = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %t = tile.load %o[%x, %c0] : !m -> tensor<1x32xf32>
  tile.store %t, %o[%x, %c0] : tensor<1x32xf32>, !m
  return
}

// -----

!m = memref<6x32xf32, strided<[32, 1]>>
// expected-error @+1 {{'tile.grid' must be three positive i32-sized program counts}}
func.func @zero(%o: !m) attributes {tile.kernel, tile.grid = array<i64: 6, 0, 1>} {
  %x = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %t = tile.load %o[%x, %c0] : !m -> tensor<1x32xf32>
  tile.store %t, %o[%x, %c0] : tensor<1x32xf32>, !m
  return
}

// -----

!m = memref<6x32xf32, strided<[32, 1]>>
// expected-error @+1 {{'tile.grid' must be three positive i32-sized program counts}}
func.func @huge(%o: !m) attributes {tile.kernel, tile.grid = array<i64: 4294967296, 1, 1>} {
  %x = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %t = tile.load %o[%x, %c0] : !m -> tensor<1x32xf32>
  tile.store %t, %o[%x, %c0] : tensor<1x32xf32>, !m
  return
}

// -----

!m = memref<6x32xf32, strided<[32, 1]>>
// expected-error @+1 {{'tile.grid' must be three positive i32-sized program counts}}
func.func @not_an_array(%o: !m) attributes {tile.kernel, tile.grid = 6 : i64} {
  %x = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %t = tile.load %o[%x, %c0] : !m -> tensor<1x32xf32>
  tile.store %t, %o[%x, %c0] : tensor<1x32xf32>, !m
  return
}
