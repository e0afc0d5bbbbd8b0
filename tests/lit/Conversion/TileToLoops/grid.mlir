// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=32" | FileCheck %s

// A kernel compiled for one launch's shapes (LaunchOptions::static_shapes)
// carries its grid as tile.grid: the CTA ids it reads carry their range (so
// that LLVM folds bounds tests of whole tiles) and the program counts are
// constants.
// CHECK-LABEL: func.func @grid
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 6> : i32
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.y range <i32, 0, 3> : i32
// CHECK-DAG: arith.constant 3 : i32
// CHECK-NOT: nvvm.read.ptx.sreg.nctaid
// CHECK: return
!m = memref<6x96xf32, strided<[96, 1]>>
func.func @grid(%o: !m, %a: !m) attributes {tile.kernel, tile.grid = array<i64: 6, 3, 1>} {
  %x = tile.program_id 0
  %y = tile.program_id 1
  %n = tile.num_programs 1
  %t = tile.load %a[%x, %y] : !m -> tensor<1x32xf32>
  %s = tile.splat %n : i32 -> tensor<1x32xi32>
  %f = arith.sitofp %s : tensor<1x32xi32> to tensor<1x32xf32>
  %r = arith.addf %t, %f : tensor<1x32xf32>
  tile.store %r, %o[%x, %y] : tensor<1x32xf32>, !m
  return
}

// -----

// Without tile.grid the ids have no range and the counts are read.
// CHECK-LABEL: func.func @no_grid
// CHECK: nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: nvvm.read.ptx.sreg.nctaid.x : i32
!d = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @no_grid(%o: !d, %a: !d) attributes {tile.kernel} {
  %x = tile.program_id 0
  %n = tile.num_programs 0
  %c0 = arith.constant 0 : i32
  %t = tile.load %a[%x, %c0] : !d -> tensor<1x32xf32>
  %s = tile.splat %n : i32 -> tensor<1x32xi32>
  %f = arith.sitofp %s : tensor<1x32xi32> to tensor<1x32xf32>
  %r = arith.addf %t, %f : tensor<1x32xf32>
  tile.store %r, %o[%x, %c0] : tensor<1x32xf32>, !d
  return
}
