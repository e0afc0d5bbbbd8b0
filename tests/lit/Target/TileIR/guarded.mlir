// RUN: tessera-opt %s -tile-guard-tile-indices | tessera-tileir-translate -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// REQUIRES: tileirdisasm

// A kernel guarded by tile-guard-tile-indices (what the tileir backend runs
// before the writer): each access under an `if` on the tile's origin, the
// load's else branch its padding; the written tensor's token comes out of
// the store's `if`.
// CHECK-LABEL: entry @shifted(
// CHECK: cmpi less_than %{{.*}}, %{{.*}}, unsigned : tile<i64> -> tile<i1>
// CHECK: if %{{.*}} -> (tile<128xf32>)
// CHECK:   load_view_tko weak
// CHECK: else
// CHECK:   broadcast
// CHECK: if %{{.*}} -> (token)
// CHECK:   store_view_tko weak
module {
  func.func @shifted(%o: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>, %k: i32) attributes {tile.kernel} {
    %p = tile.program_id 0
    %i = arith.addi %p, %k : i32
    %x = tile.load %a[%i] padding = -inf : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    tile.store %x, %o[%p] : tensor<128xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
