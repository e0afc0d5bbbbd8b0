// RUN: tessera-tileir-translate %s --arch=sm_90 -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// RUN: tessera-tileir-translate %s --arch=sm_90 --num-worker-warps=4 -o %t.four.tileirbc
// RUN: %tileirdisasm %t.four.tileirbc | FileCheck %s --check-prefix=FOUR
// REQUIRES: tileirdisasm

// An mma accumulator of more than 128 x 128 elements asks tileiras for 8
// worker warps (over its default 4 a 128 x 256 f32 accumulator spills); the
// hint given overrides it (a 128 x 128 accumulator asks for nothing:
// Target/TileIR/hints.mlir's kernels carry only the hints given).
// CHECK-LABEL: entry @wide(
// CHECK-SAME: optimization_hints=<sm_90 = {num_worker_warps_per_cta = 8}>
// CHECK: mmaf
// FOUR: optimization_hints=<sm_90 = {num_worker_warps_per_cta = 4}>
module {
  func.func @wide(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>,
                  %b: memref<?x?xbf16, strided<[?, 1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %y = tile.program_id 1
    %z = arith.constant 0 : i32
    %ta = tile.load %a[%x, %z] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<128x64xbf16>
    %tb = tile.load %b[%z, %y] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<64x256xbf16>
    %c0 = arith.constant 0.0 : f32
    %acc = tile.splat %c0 : f32 -> tensor<128x256xf32>
    %r = tile.mma %ta, %tb, %acc : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    tile.store %r, %o[%x, %y] : tensor<128x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
    return
  }
}
