// RUN: %emulate --work %t %s | FileCheck %s
// A program of 256 threads run as 4 CTAs of 64 (ctas-per-program=4; 2 chunks
// of 4 per thread, so a CTA's elements interleave with the others') on a 2-D
// grid: program ids and counts along x are CTA ids divided by 4 (y unchanged),
// iota and the owned elements follow the thread's index within the program
// (CTA mod 4, thread), a one-element tile is broadcast within each thread, and
// a 16-element tile (fewer elements than threads) is replicated. Ragged in
// both dimensions.
// EMU: T=256 S=4 grid=3,2 args=f32[40x100]/104;f32[40x100]/104;f32[1x1];i32[3x16]
// CHECK: arg0: 4160 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 4160 elements, 0 written, 0 differ
// CHECK: arg2: 1 elements, 0 written, 0 differ
// CHECK: arg3: 48 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: split_grid: T=64 S=4 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
!i = memref<?x?xi32, strided<[?, 1], offset: ?>>
func.func @split_grid(%o: !m {tile.align = 16 : i64}, %a: !m, %s: !m, %q: !i) attributes {tile.kernel} {
  %px = tile.program_id 0
  %py = tile.program_id 1
  %nx = tile.num_programs 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%py, %px] : !m -> tensor<32x64xf32>
  %one = tile.load %s[%c0, %c0] : !m -> tensor<1x1xf32>
  %sb = tile.broadcast %one : tensor<1x1xf32> -> tensor<32x64xf32>
  %i = tile.iota : tensor<2048xi32>
  %k = arith.muli %px, %nx : i32
  %kk = arith.addi %k, %py : i32
  %kt = tile.splat %kk : i32 -> tensor<2048xi32>
  %ik = arith.addi %i, %kt : tensor<2048xi32>
  %if = arith.sitofp %ik : tensor<2048xi32> to tensor<2048xf32>
  %ir = tile.reshape %if : tensor<2048xf32> -> tensor<32x64xf32>
  %t = arith.mulf %x, %sb : tensor<32x64xf32>
  %u = arith.addf %t, %ir : tensor<32x64xf32>
  tile.store %u, %o[%py, %px] : tensor<32x64xf32>, !m
  %j = tile.iota : tensor<16xi32>
  %jk = tile.splat %kk : i32 -> tensor<16xi32>
  %js = arith.addi %j, %jk : tensor<16xi32>
  %jr = tile.reshape %js : tensor<16xi32> -> tensor<1x16xi32>
  %pyx = arith.addi %px, %c0 : i32
  tile.store %jr, %q[%pyx, %c0] : tensor<1x16xi32>, !i
  return
}
