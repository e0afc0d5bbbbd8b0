// RUN: tessera-tileir-translate %s -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// REQUIRES: tileirdisasm

// The entry and its ABI (per memref its descriptor: allocated and aligned pointers, offset, sizes,
// strides; static ones stay in the view's type), tile.align as a divisibility fact of the base and
// of the row stride (16 bytes: 8 bf16), views with the loads' paddings, program ids, bf16
// arithmetic in f32, a transpose, a splat and a row reduction kept 2-D.

// CHECK-LABEL: entry @rows(%arg0: tile<ptr<bf16>>, %arg1: tile<ptr<bf16>>, %arg2: tile<i64>, %arg3: tile<i64>, %arg4: tile<i64>, %arg5: tile<i64>, %arg6: tile<i64>, %arg7: tile<ptr<bf16>>, %arg8: tile<ptr<bf16>>, %arg9: tile<i64>, %arg10: tile<i64>, %arg11: tile<i64>, %arg12: tile<i64>, %arg13: tile<i64>, %arg14: tile<f32>)
// CHECK: %[[B:[^ ,]+]] = offset %arg1, %arg2 : tile<ptr<bf16>>, tile<i64> -> tile<ptr<bf16>>
// CHECK: %[[P:[^ ,]+]] = assume div_by<16>, %[[B]] : tile<ptr<bf16>>
// CHECK: %[[S:[^ ,]+]] = assume div_by<8>, %arg5 : tile<i64>
// CHECK: make_tensor_view %[[P]], shape = [%arg3, %arg4], strides = [%[[S]], 1] : tile<i64> -> tensor_view<?x?xbf16, strides=[?,1]>
// CHECK: %[[A:[^ ,]+]] = offset %arg8, %arg9
// CHECK: make_tensor_view %[[A]], shape = [%arg10, %arg11], strides = [%arg12, 1]
// CHECK: %[[IN:[^ ,]+]] = make_partition_view %{{.*}} : partition_view<tile=(32x64), padding_value = neg_inf, tensor_view<?x?xbf16, strides=[?,1]>>
// CHECK: %[[OUT:[^ ,]+]] = make_partition_view %{{.*}} : partition_view<tile=(64x32), tensor_view<?x?xbf16, strides=[?,1]>>
// CHECK: %[[X:[^ ,]+]], %{{.*}} = get_tile_block_id : tile<i32>
// CHECK: %{{.*}}, %[[Y:[^ ,]+]], %{{.*}} = get_tile_block_id : tile<i32>
// CHECK: %[[T:[^ ,]+]], %{{.*}} = load_view_tko weak %[[IN]][%[[X]], %[[Y]]]
// CHECK: %[[W:[^ ,]+]] = ftof %[[T]] : tile<32x64xbf16> -> tile<32x64xf32>
// CHECK: reduce %[[W]] dim=1 identities=[0xFF800000 : f32] : tile<32x64xf32> -> tile<32xf32>
// CHECK:   maxf %{{.*}} propagate_nan
// CHECK: reshape %{{.*}} : tile<32xf32> -> tile<32x1xf32>
// CHECK: reshape %arg14 : tile<f32> -> tile<1x1xf32>
// CHECK: broadcast %{{.*}} : tile<1x1xf32> -> tile<32x64xf32>
// CHECK: mulf %{{.*}} : tile<32x64xf32>
// CHECK: ftof %{{.*}} : tile<32x64xf32> -> tile<32x64xbf16>
// CHECK: permute %{{.*}} [1, 0] : tile<32x64xbf16> -> tile<64x32xbf16>
// CHECK: store_view_tko weak %{{.*}}, %[[OUT]][%[[Y]], %[[X]]] : tile<64x32xbf16>
// CHECK: return
module {
  func.func @rows(%out: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                  %a: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %s: f32) attributes {tile.kernel} {
    %x = tile.program_id 0
    %y = tile.program_id 1
    %t = tile.load %a[%x, %y] padding = -inf : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<32x64xbf16>
    %w = arith.extf %t : tensor<32x64xbf16> to tensor<32x64xf32>
    %m = tile.reduce %w {kind = max, axis = 1} : tensor<32x64xf32> -> tensor<32x1xf32>
    %b = tile.broadcast %m : tensor<32x1xf32> -> tensor<32x64xf32>
    %k = tile.splat %s : f32 -> tensor<32x64xf32>
    %p = arith.mulf %b, %k : tensor<32x64xf32>
    %n = arith.truncf %p : tensor<32x64xf32> to tensor<32x64xbf16>
    %tr = tile.transpose %n : tensor<32x64xbf16> -> tensor<64x32xbf16>
    tile.store %tr, %out[%y, %x] : tensor<64x32xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
    return
  }
}
