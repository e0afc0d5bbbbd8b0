// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=512 ctas-per-program=4" -cse | FileCheck %s

// A split given by the options: 512 threads per program in 4 CTAs of 128, each
// thread with 2 chunks of 8 bf16 (vector<8xbf16> accesses, 16 bytes).
// CHECK-LABEL: func.func @add8192
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.ctas_per_program = 4 : i32
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
// CHECK-DAG: arith.shrui %{{.*}}, %c2_i32
// CHECK-DAG: arith.andi %{{.*}}, %c3_i32
// CHECK-DAG: arith.shli %{{.*}}, %c7_i32
// CHECK-DAG: memref.alloca() : memref<16xbf16>
// CHECK: vector.load {{.*}} vector<8xbf16>
!m = memref<?xbf16, strided<[1], offset: ?>>
func.func @add8192(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !m -> tensor<8192xbf16>
  %y = tile.load %b[%p] : !m -> tensor<8192xbf16>
  %z = arith.addf %x, %y : tensor<8192xbf16>
  tile.store %z, %o[%p] : tensor<8192xbf16>, !m
  return
}
