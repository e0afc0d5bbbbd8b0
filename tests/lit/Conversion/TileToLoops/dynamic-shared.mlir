// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=256" -canonicalize -cse | FileCheck %s

// A scratch over the 48 KiB of static shared memory is dynamic shared memory,
// up to max-shared-bytes (227 KiB by default): an external global of no
// elements, viewed past its declared size, and the bytes each launch must
// pass on the function. A 128x128 f32 tile reduced along axis 0 is written to
// the scratch whole: 64 KiB. (With max-shared-bytes=49152 the same kernels are
// errors: dynamic-shared-invalid.mlir.)
// CHECK-LABEL: memref.global @__tile_dynamic_scratch_columns_128 : memref<0xi8, 3> {alignment = 16 : i64}
// CHECK-LABEL: func.func @columns_128
// CHECK-SAME: tile.dynamic_shared_bytes = 65536 : i32
// CHECK: %[[BASE:.*]] = memref.get_global @__tile_dynamic_scratch_columns_128 : memref<0xi8, 3>
// CHECK: %[[VIEW:.*]] = memref.view %[[BASE]][%c0][] : memref<0xi8, 3> to memref<16384xf32, 3>
// CHECK: memref.store %{{.*}}, %[[VIEW]][%{{.*}}] : memref<16384xf32, 3>
// CHECK: nvvm.barrier0
// CHECK: memref.load %[[VIEW]][%{{.*}}] : memref<16384xf32, 3>
// CHECK: return
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns_128(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x128xf32> -> tensor<1x128xf32>
  tile.store %r, %o[%p, %q] : tensor<1x128xf32>, !m
  return
}

// -----

// Two reductions of a 512x32 tile share the 64 KiB region (a barrier after
// each); the row sum of a 1x2048 tile runs once and gets a region of its own
// after it: the partials of its 8 warps, 32 bytes.
// CHECK-LABEL: memref.global @__tile_dynamic_scratch_columns_512x32 : memref<0xi8, 3> {alignment = 16 : i64}
// CHECK-LABEL: func.func @columns_512x32
// CHECK-SAME: tile.dynamic_shared_bytes = 65568 : i32
// CHECK-DAG: memref.view %{{.*}}[%c0][] : memref<0xi8, 3> to memref<16384xf32, 3>
// CHECK-DAG: memref.view %{{.*}}[%c65536][] : memref<0xi8, 3> to memref<8xf32, 3>
// CHECK: return
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns_512x32(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<512x32xf32>
  %s = tile.reduce %x {kind = sum, axis = 0} : tensor<512x32xf32> -> tensor<1x32xf32>
  %m = tile.reduce %x {kind = max, axis = 0} : tensor<512x32xf32> -> tensor<1x32xf32>
  %d = arith.subf %s, %m : tensor<1x32xf32>
  %y = tile.load %a[%p, %q] : !m -> tensor<1x2048xf32>
  %t = tile.reduce %y {kind = sum, axis = 1} : tensor<1x2048xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %t : tensor<1x1xf32> -> tensor<1x32xf32>
  %e = arith.addf %d, %b : tensor<1x32xf32>
  tile.store %e, %o[%p, %q] : tensor<1x32xf32>, !m
  return
}

// -----

// A scratch that fits 48 KiB stays a static array (32 KiB here).
// CHECK-LABEL: memref.global "private" @__tile_scratch_columns_128x64 : memref<32768xi8, 3> = uninitialized {alignment = 16 : i64}
// CHECK-LABEL: func.func @columns_128x64
// CHECK-NOT: tile.dynamic_shared_bytes
// CHECK: memref.get_global @__tile_scratch_columns_128x64 : memref<32768xi8, 3>
// CHECK: return
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns_128x64(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x64xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x64xf32> -> tensor<1x64xf32>
  tile.store %r, %o[%p, %q] : tensor<1x64xf32>, !m
  return
}
