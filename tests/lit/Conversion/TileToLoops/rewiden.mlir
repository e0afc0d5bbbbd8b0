// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=4" | FileCheck %s
// RUN: tessera-opt %s -convert-tile-to-loops="target=cpu" | FileCheck %s --check-prefix=CPU

// A tile.rewiden extf (made by tile-rewiden-after-reduce) widens each element
// from its bf16 value passed through llvm.arithmetic.fence, so that CSE keeps
// it apart from the first widening (4 threads of 4 elements here: the sum is
// reduced by shuffles). On cpu it is a plain extf.
// CHECK-LABEL: func.func @rewiden
// CHECK-COUNT-4: arith.extf %{{.*}} : bf16 to f32
// CHECK: nvvm.shfl.sync
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.arithmetic.fence"
// CPU-LABEL: func.func @rewiden
// CPU-NOT: llvm.arithmetic.fence
!b1 = memref<?xbf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @rewiden(%o: !f1, %a: !b1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !b1 -> tensor<16xbf16>
  %t = arith.extf %x : tensor<16xbf16> to tensor<16xf32>
  %s = tile.reduce %t {kind = sum, axis = 0} : tensor<16xf32> -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<16xf32>
  %t2 = arith.extf %x {tile.rewiden} : tensor<16xbf16> to tensor<16xf32>
  %d = arith.mulf %t2, %b : tensor<16xf32>
  tile.store %d, %o[%p] {tile.interior} : tensor<16xf32>, !f1
  return
}
