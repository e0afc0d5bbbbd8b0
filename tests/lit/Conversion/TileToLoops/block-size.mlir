// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=0" | FileCheck %s

// With block-size=0 each kernel gets T = clamp(Pmax / 32, 32, 512) threads,
// Pmax the element count of its largest tile (four times that of a tile in a
// loop): about 32 elements per thread.

// A 1x8192 row: 256 threads (32 elements each).
// CHECK-LABEL: func.func @row8192
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x range <i32, 0, 256> : i32
// CHECK-DAG: memref.alloca() : memref<32xbf16>
func.func @row8192(%a: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x8192xbf16>
  tile.store %x, %a[%c0, %c0] : tensor<1x8192xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
  return
}

// A 2048-element tile: 64 threads. The largest tile counts, here the
// result of a broadcast.
// CHECK-LABEL: func.func @tile2048
// CHECK-SAME: tile.block_size = 64 : i32
func.func @tile2048(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x64xf32>
  %b = tile.broadcast %x : tensor<1x64xf32> -> tensor<32x64xf32>
  tile.store %b, %a[%c0, %c0] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// Small tiles: at least a warp.
// CHECK-LABEL: func.func @small
// CHECK-SAME: tile.block_size = 32 : i32
func.func @small(%a: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<16xf32>
  tile.store %x, %a[%c0] : tensor<16xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// Large tiles: at most 512 threads (64 elements each here).
// CHECK-LABEL: func.func @large
// CHECK-SAME: tile.block_size = 512 : i32
// CHECK: memref.alloca() : memref<64xf32>
func.func @large(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x256xf32>
  tile.store %x, %a[%c0, %c0] : tensor<128x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// A tile inside a loop counts four times: a 1x2048 chunk of a row read in a
// loop gets 256 threads (8 elements per iteration), not 64.
// CHECK-LABEL: func.func @chunk_loop
// CHECK-SAME: tile.block_size = 256 : i32
func.func @chunk_loop(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %init = arith.constant dense<0.0> : tensor<1x2048xf32>
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %init) -> (tensor<1x2048xf32>) {
    %j = arith.index_cast %i : index to i32
    %x = tile.load %a[%z, %j] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x2048xbf16>
    %w = arith.extf %x : tensor<1x2048xbf16> to tensor<1x2048xf32>
    %t = arith.addf %s, %w : tensor<1x2048xf32>
    scf.yield %t : tensor<1x2048xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<1x2048xf32> -> tensor<1x1xf32>
  tile.store %r, %o[%z, %z] : tensor<1x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
