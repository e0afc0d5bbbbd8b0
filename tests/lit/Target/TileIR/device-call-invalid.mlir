// RUN: not tessera-tileir-translate %s -o %t.tileirbc 2>&1 | FileCheck %s

// An op with no CUDA Tile IR form is an error naming the kernel and the op; nothing is written.

// CHECK: error: tileir: kernel 'calls': tile.device_call has no CUDA Tile IR form
module {
  func.func @calls(%out: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %t = tile.load %a[%x] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    %r = tile.device_call @twice(%t) : (tensor<128xf32>) -> tensor<128xf32>
    tile.store %r, %out[%x] : tensor<128xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
