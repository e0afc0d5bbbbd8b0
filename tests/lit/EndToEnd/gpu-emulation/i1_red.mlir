// RUN: %emulate --work %t %s | FileCheck %s
// i1 reductions (sum = xor, max = or, min = and) across two warps.
// EMU: T=64 grid=2,1 args=f32[2x300];i1[2x1];i1[2x1];i1[2x1]
// CHECK: arg0: 600 elements, 0 written, 0 differ
// CHECK: arg1: 2 elements, {{[0-9]+}} written, 0 differ
// CHECK: arg2: 2 elements, {{[0-9]+}} written, 0 differ
// CHECK: arg3: 2 elements, {{[0-9]+}} written, 0 differ
// CHECK: i1_red: T=64 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
!b = memref<?x?xi1, strided<[?, 1], offset: ?>>
func.func @i1_red(%a: !m, %o1: !b, %o2: !b, %o3: !b) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<1x256xf32>
  %z = arith.constant dense<3.9> : tensor<1x256xf32>
  %g = arith.cmpf ogt, %x, %z : tensor<1x256xf32>
  %r1 = tile.reduce %g {kind = sum, axis = 1} : tensor<1x256xi1> -> tensor<1x1xi1>
  %r2 = tile.reduce %g {kind = max, axis = 1} : tensor<1x256xi1> -> tensor<1x1xi1>
  %r3 = tile.reduce %g {kind = min, axis = 1} : tensor<1x256xi1> -> tensor<1x1xi1>
  tile.store %r1, %o1[%p, %c0] : tensor<1x1xi1>, !b
  tile.store %r2, %o2[%p, %c0] : tensor<1x1xi1>, !b
  tile.store %r3, %o3[%p, %c0] : tensor<1x1xi1>, !b
  return
}
