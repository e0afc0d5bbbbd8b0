// RUN: tessera-tileir-translate %s --arch=sm_90 --num-cta-in-cga=2 --occupancy=3 --allow-tma=false -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// RUN: tessera-tileir-translate %s --arch=sm_100 --occupancy=2 -o %t.sm100.tileirbc
// RUN: %tileirdisasm %t.sm100.tileirbc | FileCheck %s --check-prefix=ENTRY-ONLY
// REQUIRES: tileirdisasm

// Optimization hints for one architecture: the entry's num_cta_in_cga and occupancy, and allow_tma
// on every load and store (a written tensor's accesses keep their tokens beside the hints).

// CHECK-LABEL: entry @scaled(
// CHECK-SAME: optimization_hints=<sm_90 = {num_cta_in_cga = 2, occupancy = 3}>
// CHECK: load_view_tko weak %{{.*}} optimization_hints = <sm_90 = {allow_tma = false}>
// CHECK: load_view_tko weak %{{.*}} optimization_hints = <sm_90 = {allow_tma = false}>
// CHECK: store_view_tko weak %{{.*}} token = %{{.*}} optimization_hints = <sm_90 = {allow_tma = false}>

// ENTRY-ONLY: optimization_hints=<sm_100 = {occupancy = 2}>
// ENTRY-ONLY-NOT: allow_tma
module {
  func.func @scaled(%out: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %t = tile.load %a[%x] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    %u = tile.load %out[%x] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    %s = arith.addf %t, %u : tensor<128xf32>
    tile.store %s, %out[%x] : tensor<128xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
