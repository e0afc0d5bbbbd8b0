// RUN: %emulate --work %t %s | FileCheck %s
// Shuffles of 64-bit (two halves) and 8-bit (widened) accumulators.
// EMU: T=32 grid=2,1 args=f64[2x100];f64[2x1];i8[2x100];i8[2x1]
// CHECK: arg0: 200 elements, 0 written, 0 differ
// CHECK: arg1: 2 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg2: 200 elements, 0 written, 0 differ
// CHECK: arg3: 2 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: f64_i8: T=32 OK
func.func @f64_i8(%a: memref<?x?xf64, strided<[?, 1], offset: ?>>, %o: memref<?x?xf64, strided<[?, 1], offset: ?>>,
                  %b: memref<?x?xi8, strided<[?, 1], offset: ?>>, %q: memref<?x?xi8, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : memref<?x?xf64, strided<[?, 1], offset: ?>> -> tensor<1x128xf64>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x128xf64> -> tensor<1x1xf64>
  tile.store %r, %o[%p, %c0] : tensor<1x1xf64>, memref<?x?xf64, strided<[?, 1], offset: ?>>
  %y = tile.load %b[%p, %c0] : memref<?x?xi8, strided<[?, 1], offset: ?>> -> tensor<1x128xi8>
  %s = tile.reduce %y {kind = min, axis = 1} : tensor<1x128xi8> -> tensor<1x1xi8>
  tile.store %s, %q[%p, %c0] : tensor<1x1xi8>, memref<?x?xi8, strided<[?, 1], offset: ?>>
  return
}
