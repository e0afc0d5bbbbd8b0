// RUN: not tessera-tileir-translate %s -o %t.tileirbc 2>&1 | FileCheck %s

// Tile IR tiles hold at most 2^24 elements (tileiras rejects a larger one when it reads the
// bytecode): a tile of 2^25 elements is an error naming the kernel, so that the kernel takes the
// NVVM backend or its launch fails with a clear message.

// CHECK: error: tileir: kernel 'huge': tile 'tensor<33554432xf32>' has more than 2^24 elements
module {
  func.func @huge(%out: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %c = arith.constant dense<1.0> : tensor<33554432xf32>
    %d = arith.addf %c, %c : tensor<33554432xf32>
    return
  }
}
