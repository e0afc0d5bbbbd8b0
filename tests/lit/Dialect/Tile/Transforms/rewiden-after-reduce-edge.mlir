// RUN: tessera-opt %s -split-input-file -tile-rewiden-after-reduce | FileCheck %s

// Left alone: f16 tiles (both widenings would be the same cvt.f32.f16), an
// extf with no reduce between it and its users, and functions that are not
// tile kernels. Nothing is marked tile.rewidened.
// CHECK-LABEL: func.func @f16_row
// CHECK-NOT: tile.rewiden
// CHECK: return
!h1 = memref<?xf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @f16_row(%o: !f1, %a: !h1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !h1 -> tensor<64xf16>
  %t = arith.extf %x : tensor<64xf16> to tensor<64xf32>
  %s = tile.reduce %t {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<64xf32>
  %d = arith.mulf %t, %b : tensor<64xf32>
  tile.store %d, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @no_reduce_between
// CHECK-NOT: tile.rewiden
// CHECK: return
!b1 = memref<?xbf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @no_reduce_between(%o: !f1, %a: !b1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !b1 -> tensor<64xbf16>
  %t = arith.extf %x : tensor<64xbf16> to tensor<64xf32>
  %d = arith.mulf %t, %t : tensor<64xf32>
  %s = tile.reduce %d {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<64xf32>
  tile.store %b, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: tile.rewiden
// CHECK: return
func.func @not_a_kernel(%x: tensor<64xbf16>) -> tensor<64xf32> {
  %t = arith.extf %x : tensor<64xbf16> to tensor<64xf32>
  %s = tile.reduce %t {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<64xf32>
  %d = arith.mulf %t, %b : tensor<64xf32>
  return %d : tensor<64xf32>
}
