// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=0" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=cpu" | FileCheck %s --check-prefix=CPU

// On gpu a kernel whose programs store an eighth of the bytes they load or
// less is marked tile.reduction (read by llvm-load-cache-hints), counting the
// tiles of its loads and stores, those inside a loop four times. The cpu
// target marks nothing.
// CPU-NOT: tile.reduction

// A row sum: 16 KiB loaded, 4 bytes stored.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: tile.reduction
func.func @row_sum(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %z = arith.constant 0 : i32
  %x = tile.load %a[%z, %z] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x8192xbf16>
  %w = arith.extf %x : tensor<1x8192xbf16> to tensor<1x8192xf32>
  %r = tile.reduce %w {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
  tile.store %r, %o[%z, %z] : tensor<1x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A copy stores what it loads: not marked (its threads exchange no data:
// tile.exchange_free).
// CHECK-LABEL: func.func @copy
// CHECK-SAME: tile.exchange_free
// CHECK-NOT: tile.reduction
// CHECK: return
func.func @copy(%o: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %z = arith.constant 0 : i32
  %x = tile.load %a[%z, %z] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x8192xbf16>
  tile.store %x, %o[%z, %z] : tensor<1x8192xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
  return
}

// -----

// A loop's load counts four times: 1 KiB per iteration, 4 KiB in all, against
// 512 bytes stored after the loop, is a reduction (counted once, it would not
// be).
// CHECK-LABEL: func.func @loop_load
// CHECK-SAME: tile.reduction
func.func @loop_load(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %init = arith.constant dense<0.0> : tensor<1x256xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %init) -> (tensor<1x256xf32>) {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%z, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x256xf32>
    %t = arith.addf %s, %x : tensor<1x256xf32>
    scf.yield %t : tensor<1x256xf32>
  }
  %h = tile.reshape %acc : tensor<1x256xf32> -> tensor<2x128xf32>
  %r = tile.reduce %h {kind = sum, axis = 0} : tensor<2x128xf32> -> tensor<1x128xf32>
  tile.store %r, %o[%z, %z] : tensor<1x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A loop that stores what it loads in every iteration: not marked.
// CHECK-LABEL: func.func @loop_copy
// CHECK-NOT: tile.reduction
// CHECK: return
func.func @loop_copy(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%z, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x256xf32>
    tile.store %x, %o[%z, %j] : tensor<1x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  }
  return
}
