// RUN: not tessera-tileir-translate %s -o %t.tileirbc 2>&1 | FileCheck %s

// A partition view pads with 0, -0, nan, inf or -inf only: another padding is an error.

// CHECK: error: tileir: kernel 'padded': tile.load padding 2.5 has no CUDA Tile IR form
module {
  func.func @padded(%out: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %t = tile.load %a[%x] padding = 2.5 : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    tile.store %t, %out[%x] : tensor<128xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
