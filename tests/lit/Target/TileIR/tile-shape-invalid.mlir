// RUN: not tessera-tileir-translate %s -o %t.tileirbc 2>&1 | FileCheck %s

// Tile IR tiles have power-of-two dimensions: a tile of 3 elements is an error naming the kernel.

// CHECK: error: tileir: kernel 'three': tile 'tensor<3xf32>' has a dimension that is not a power of two
module {
  func.func @three(%out: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %c = arith.constant dense<1.0> : tensor<3xf32>
    %d = arith.addf %c, %c : tensor<3xf32>
    return
  }
}
