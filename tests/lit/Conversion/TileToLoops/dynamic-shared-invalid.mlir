// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=256 max-shared-bytes=49152" -verify-diagnostics

// On a GPU whose CTAs may use 48 KiB of shared memory (max-shared-bytes), a
// scratch of 64 KiB is an error on its largest user (with the default 227 KiB
// the same kernels compile: dynamic-shared.mlir).
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns_128(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x128xf32>
  // expected-error @+1 {{'tile.reduce' op needs 65536 bytes of shared memory scratch, more than the 49152 bytes (48 KiB) of shared memory a CTA can use on this target; use smaller tiles}}
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x128xf32> -> tensor<1x128xf32>
  tile.store %r, %o[%p, %q] : tensor<1x128xf32>, !m
  return
}

// -----

// The first of two users of the 64 KiB region; the row sum's own region would
// not fit either.
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns_512x32(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<512x32xf32>
  // expected-error @+1 {{'tile.reduce' op needs 65536 bytes of shared memory scratch, more than the 49152 bytes (48 KiB)}}
  %s = tile.reduce %x {kind = sum, axis = 0} : tensor<512x32xf32> -> tensor<1x32xf32>
  %m = tile.reduce %x {kind = max, axis = 0} : tensor<512x32xf32> -> tensor<1x32xf32>
  %d = arith.subf %s, %m : tensor<1x32xf32>
  %y = tile.load %a[%p, %q] : !m -> tensor<1x2048xf32>
  %t = tile.reduce %y {kind = sum, axis = 1} : tensor<1x2048xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %t : tensor<1x1xf32> -> tensor<1x32xf32>
  %e = arith.addf %d, %b : tensor<1x32xf32>
  tile.store %e, %o[%p, %q] : tensor<1x32xf32>, !m
  return
}

// -----

// 32 KiB of scratch fits the 48 KiB: no error.
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @fits(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x64xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x64xf32> -> tensor<1x64xf32>
  tile.store %r, %o[%p, %q] : tensor<1x64xf32>, !m
  return
}
