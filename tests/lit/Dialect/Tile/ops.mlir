// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @ids
func.func @ids() -> (i32, i32) attributes {tile.kernel} {
  // CHECK: %{{.*}} = tile.program_id 2
  %0 = tile.program_id 2
  // CHECK: %{{.*}} = tile.num_programs 0
  %1 = tile.num_programs 0
  return %0, %1 : i32, i32
}

// CHECK-LABEL: func.func @load_store
func.func @load_store(%src: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                      %dst: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                      %i: i32, %j: i32) attributes {tile.kernel} {
  // CHECK: %[[A:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  %a = tile.load %src[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] padding = -inf : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  %b = tile.load %src[%i, %j] padding = -inf : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] padding = inf :
  %c = tile.load %src[%i, %j] padding = inf : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  // CHECK: tile.store %[[A]], %{{.*}}[%{{.*}}, %{{.*}}] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  tile.store %a, %dst[%i, %j] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// Padding values of every element type, in the custom syntax: infinities and
// nan, finite floats (shortest form, with a fraction), integers, i1. Zero
// written out stays; no padding is zero.
// CHECK-LABEL: func.func @load_padding
func.func @load_padding(%f: memref<?xf32, strided<[?], offset: ?>>,
                        %h: memref<?xf16, strided<[?], offset: ?>>,
                        %b: memref<?xbf16, strided<[?], offset: ?>>,
                        %n: memref<?xi32, strided<[?], offset: ?>>,
                        %p: memref<?xi1, strided<[?], offset: ?>>, %i: i32) attributes {tile.kernel} {
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = nan : memref<?xf32
  %0 = tile.load %f[%i] padding = nan : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = -2.5 : memref<?xf32
  %1 = tile.load %f[%i] padding = -2.5 : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 3.0 : memref<?xf32
  %2 = tile.load %f[%i] padding = 3 : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 1.0e+30 : memref<?xf32
  %3 = tile.load %f[%i] padding = 1.0e30 : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = -0.0 : memref<?xf32
  %4 = tile.load %f[%i] padding = -0.0 : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 0.0 : memref<?xf32
  %5 = tile.load %f[%i] padding = 0.0 : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 65504.0 : memref<?xf16
  %6 = tile.load %h[%i] padding = 65504.0 : memref<?xf16, strided<[?], offset: ?>> -> tensor<64xf16>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = -inf : memref<?xbf16
  %7 = tile.load %b[%i] padding = -inf : memref<?xbf16, strided<[?], offset: ?>> -> tensor<64xbf16>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = -2147483648 : memref<?xi32
  %8 = tile.load %n[%i] padding = -2147483648 : memref<?xi32, strided<[?], offset: ?>> -> tensor<64xi32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 1 : memref<?xi1
  %9 = tile.load %p[%i] padding = 1 : memref<?xi1, strided<[?], offset: ?>> -> tensor<64xi1>
  // CHECK: tile.load %{{.*}}[%{{.*}}] {tile.interior} : memref<?xi32
  %10 = tile.load %n[%i] {tile.interior} : memref<?xi32, strided<[?], offset: ?>> -> tensor<64xi32>
  // CHECK: tile.load %{{.*}}[%{{.*}}] padding = 7 {tile.interior} : memref<?xi32
  %11 = tile.load %n[%i] padding = 7 {tile.interior} : memref<?xi32, strided<[?], offset: ?>> -> tensor<64xi32>
  return
}

// CHECK-LABEL: func.func @load_rank1
func.func @load_rank1(%src: memref<?xf16, strided<[?], offset: ?>>, %i: i32) -> tensor<256xf16> {
  // CHECK: tile.load %{{.*}}[%{{.*}}] : memref<?xf16, strided<[?], offset: ?>> -> tensor<256xf16>
  %a = tile.load %src[%i] : memref<?xf16, strided<[?], offset: ?>> -> tensor<256xf16>
  return %a : tensor<256xf16>
}

// CHECK-LABEL: func.func @layout
func.func @layout(%s: f32, %row: tensor<1x64xf32>, %x: tensor<64x32xf32>) {
  // CHECK: tile.splat %{{.*}} : f32 -> tensor<64x64xf32>
  %0 = tile.splat %s : f32 -> tensor<64x64xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<1x64xf32> -> tensor<64x64xf32>
  %1 = tile.broadcast %row : tensor<1x64xf32> -> tensor<64x64xf32>
  // CHECK: tile.reshape %{{.*}} : tensor<64x64xf32> -> tensor<4096xf32>
  %2 = tile.reshape %1 : tensor<64x64xf32> -> tensor<4096xf32>
  // CHECK: tile.transpose %{{.*}} : tensor<64x32xf32> -> tensor<32x64xf32>
  %3 = tile.transpose %x : tensor<64x32xf32> -> tensor<32x64xf32>
  // CHECK: tile.iota : tensor<128xi32>
  %4 = tile.iota : tensor<128xi32>
  return
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<64x64xf32>, %h: tensor<16x32xbf16>, %n: tensor<8xi32>) {
  // CHECK: tile.reduce %{{.*}} {kind = sum, axis = 1} : tensor<64x64xf32> -> tensor<64x1xf32>
  %0 = tile.reduce %x {kind = sum, axis = 1} : tensor<64x64xf32> -> tensor<64x1xf32>
  // CHECK: tile.reduce %{{.*}} {kind = max, axis = 0} : tensor<16x32xbf16> -> tensor<1x32xbf16>
  %1 = tile.reduce %h {kind = max, axis = 0} : tensor<16x32xbf16> -> tensor<1x32xbf16>
  // CHECK: tile.reduce %{{.*}} {kind = min, axis = 0} : tensor<8xi32> -> tensor<1xi32>
  %2 = tile.reduce %n {kind = min, axis = 0} : tensor<8xi32> -> tensor<1xi32>
  return
}

// CHECK-LABEL: func.func @mma
func.func @mma(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>,
               %a32: tensor<16x16xf32>, %c32: tensor<16x16xf32>,
               %a8: tensor<64x32xf8E4M3FN>, %b8: tensor<32x16xf8E5M2>) {
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16>, tensor<32x16xf16>, tensor<64x16xf32> -> tensor<64x16xf32>
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x16xf16>, tensor<64x16xf32> -> tensor<64x16xf32>
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %1 = tile.mma %a32, %a32, %c32 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // One of each 8-bit float format.
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf8E4M3FN>, tensor<32x16xf8E5M2>, tensor<64x16xf32> -> tensor<64x16xf32>
  %2 = tile.mma %a8, %b8, %c : tensor<64x32xf8E4M3FN>, tensor<32x16xf8E5M2>, tensor<64x16xf32> -> tensor<64x16xf32>
  return
}

// CHECK-LABEL: func.func @device_call
// CHECK: tile.device_call @twice_plus(%{{.*}}, %{{.*}}) : (tensor<128xf32>, tensor<128xi32>) -> tensor<128xf32>
func.func @device_call(%x: tensor<128xf32>, %n: tensor<128xi32>) -> tensor<128xf32> {
  %0 = tile.device_call @twice_plus(%x, %n) : (tensor<128xf32>, tensor<128xi32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// CHECK-LABEL: func.func @streams
// CHECK: %[[RING:.*]] = tile.stream_buffer : memref<4x16x512xbf16>
// CHECK: tile.stream_copy %{{.*}}[%{{.*}}, %{{.*}}] to %[[RING]][%{{.*}}] if %{{.*}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
// CHECK: tile.stream_commit
// CHECK: tile.stream_wait 3
// CHECK: tile.stream_take %[[RING]][%{{.*}}] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
func.func @streams(%w: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %i: i32, %s: index, %v: i1)
    attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<4x16x512xbf16>
  tile.stream_copy %w[%i, %i] to %ring[%s] if %v : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
  tile.stream_commit
  tile.stream_wait 3
  %t = tile.stream_take %ring[%s] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
  return
}

// CHECK-LABEL: func.func @grid_wait
// CHECK-SAME: tile.settled
// CHECK: tile.grid_dependency_wait
func.func @grid_wait(%w: memref<?xf32> {tile.settled}) attributes {tile.kernel} {
  tile.grid_dependency_wait
  return
}

// CHECK-LABEL: func.func @bulk_streams
// CHECK: %[[RING:.*]] = tile.stream_buffer bulk : memref<4x16x512xbf16>
// CHECK: tile.stream_copy %{{.*}}[%{{.*}}, %{{.*}}] to %[[RING]][%{{.*}}] if %{{.*}} round %{{.*}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
// CHECK: tile.stream_ready %[[RING]][%{{.*}}] round %{{.*}} : memref<4x16x512xbf16>
// CHECK: tile.stream_take %[[RING]][%{{.*}}] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
// CHECK: tile.stream_release %[[RING]][%{{.*}}] : memref<4x16x512xbf16>
func.func @bulk_streams(%w: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %i: i32, %s: index, %r: index, %v: i1)
    attributes {tile.kernel} {
  %ring = tile.stream_buffer bulk : memref<4x16x512xbf16>
  tile.stream_copy %w[%i, %i] to %ring[%s] if %v round %r : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
  tile.stream_ready %ring[%s] round %r : memref<4x16x512xbf16>
  %t = tile.stream_take %ring[%s] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
  tile.stream_release %ring[%s] : memref<4x16x512xbf16>
  return
}

// CHECK-LABEL: func.func @split_k
// CHECK-SAME: tile.split_k = 4 : i32
// CHECK: %[[R:.*]] = tile.split_rank
// CHECK: tile.split_sum %{{.*}}, %{{.*}} : tensor<16x1xf32>, tensor<1xf32> -> tensor<16x1xf32>, tensor<1xf32>
func.func @split_k(%a: tensor<16x1xf32>, %b: tensor<1xf32>, %v: i1) attributes {tile.kernel, tile.split_k = 4 : i32} {
  %r = tile.split_rank
  scf.if %v {
    %s:2 = tile.split_sum %a, %b : tensor<16x1xf32>, tensor<1xf32> -> tensor<16x1xf32>, tensor<1xf32>
  }
  return
}
