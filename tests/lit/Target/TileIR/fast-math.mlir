// RUN: tessera-tileir-translate %s -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// REQUIRES: tileirdisasm

// Rounding modes: IEEE division and square root round to nearest even, exp and tanh take Tile IR's
// full precision; the same ops marked `afn` (the front end's fast_div, fast_sqrt, fast_exp,
// fast_tanh) its approximate forms, on bf16 too (computed in f32, where they exist).

// CHECK-LABEL: entry @rounding
// CHECK: divf %{{.*}} : tile<64xf32>
// CHECK-NOT: approx
// CHECK: sqrt %{{.*}} : tile<64xf32>
// CHECK: exp %{{.*}} : tile<64xf32>
// CHECK: tanh %{{.*}} : tile<64xf32>
// CHECK: divf %{{.*}} rounding<approx> : tile<64xf32>
// CHECK: sqrt %{{.*}} rounding<approx> : tile<64xf32>
// CHECK: exp %{{.*}} rounding<approx> : tile<64xf32>
// CHECK: ftof %{{.*}} : tile<64xbf16> -> tile<64xf32>
// CHECK: tanh %{{.*}} rounding<approx> : tile<64xf32>
// CHECK: ftof %{{.*}} : tile<64xf32> -> tile<64xbf16>
module {
  func.func @rounding(%out: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>,
                      %h: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %t = tile.load %a[%x] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
    %d = arith.divf %t, %t : tensor<64xf32>
    %s = math.sqrt %d : tensor<64xf32>
    %e = math.exp %s : tensor<64xf32>
    %th = math.tanh %e : tensor<64xf32>
    %fd = arith.divf %th, %t fastmath<afn> : tensor<64xf32>
    %fs = math.sqrt %fd fastmath<afn> : tensor<64xf32>
    %fe = math.exp %fs fastmath<afn> : tensor<64xf32>
    %b = tile.load %h[%x] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<64xbf16>
    %bt = math.tanh %b fastmath<afn> : tensor<64xbf16>
    %bw = arith.extf %bt : tensor<64xbf16> to tensor<64xf32>
    %r = arith.addf %fe, %bw : tensor<64xf32>
    tile.store %r, %out[%x] : tensor<64xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
