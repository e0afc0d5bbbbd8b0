// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=128" | FileCheck %s

// A bf16 mma with B the transpose of a loaded tile, as attention's scores:
// the operands go to the scratch buffer (k as B^T: the transpose emits
// nothing), the warps multiply 16 x 16 blocks with mma.sync m16n8k16, and the
// product is added to the accumulator: three barriers in all (operands
// written, products written, products read back), none of a transpose's.
// CHECK-LABEL: func.func @scores
// CHECK-COUNT-1: nvvm.barrier0
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-2: nvvm.mma.sync A[{{.*}}] {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-COUNT-2: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: return
!h = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @scores(%s: !f {tile.align = 16 : i64}, %q: !h {tile.align = 16 : i64}, %k: !h {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %qt = tile.load %q[%c0, %c0] : !h -> tensor<4x128xbf16>
  %kt = tile.load %k[%c0, %c0] : !h -> tensor<64x128xbf16>
  %ktt = tile.transpose %kt : tensor<64x128xbf16> -> tensor<128x64xbf16>
  %z = arith.constant dense<0.0> : tensor<4x64xf32>
  %m = tile.mma %qt, %ktt, %z : tensor<4x128xbf16>, tensor<128x64xbf16>, tensor<4x64xf32> -> tensor<4x64xf32>
  tile.store %m, %s[%c0, %c0] : tensor<4x64xf32>, !f
  return
}

// -----

// f32 operands (no bf16 or f16 mma.sync): multiplied element by element from
// the scratch buffer.
// CHECK-LABEL: func.func @f32_operands
// CHECK-NOT: nvvm.mma.sync
// CHECK: return
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @f32_operands(%o: !f {tile.align = 16 : i64}, %a: !f {tile.align = 16 : i64}, %b: !f {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !f -> tensor<16x64xf32>
  %y = tile.load %b[%c0, %c0] : !f -> tensor<64x32xf32>
  %z = arith.constant dense<0.0> : tensor<16x32xf32>
  %m = tile.mma %x, %y, %z : tensor<16x64xf32>, tensor<64x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  tile.store %m, %o[%c0, %c0] : tensor<16x32xf32>, !f
  return
}

// -----

// N = 8 (not a multiple of 16): element by element.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: nvvm.mma.sync
// CHECK: return
!h = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @narrow(%o: !f {tile.align = 16 : i64}, %a: !h {tile.align = 16 : i64}, %b: !h {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !h -> tensor<16x64xbf16>
  %y = tile.load %b[%c0, %c0] : !h -> tensor<64x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %m = tile.mma %x, %y, %z : tensor<16x64xbf16>, tensor<64x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %m, %o[%c0, %c0] : tensor<16x8xf32>, !f
  return
}

// -----

// 8-bit float operands: written to the shared rows widened to f16 (exact), and
// multiplied by the f16 mma.sync.
// CHECK-LABEL: func.func @float8_operands
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f16
// CHECK: memref.store %{{.*}} : memref<{{.*}}xf16
// CHECK: nvvm.mma.sync A[{{.*}}] {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: return
!e = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @float8_operands(%o: !f {tile.align = 16 : i64}, %a: !e {tile.align = 16 : i64}, %b: !e {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : !e -> tensor<32x64xf8E4M3FN>
  %y = tile.load %b[%c0, %c0] : !e -> tensor<64x32xf8E4M3FN>
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %m = tile.mma %x, %y, %z : tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
  tile.store %m, %o[%c0, %c0] : tensor<32x32xf32>, !f
  return
}
