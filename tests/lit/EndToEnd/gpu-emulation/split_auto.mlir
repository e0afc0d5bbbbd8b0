// RUN: %emulate --work %t %s | FileCheck %s
// A bf16 add of 4096-element tiles, threads and CTAs chosen by the pass
// (block-size=0, ctas-per-program=0): the threads never exchange data, so each
// program runs as 2 CTAs of 128 threads (two chunks of 8 each, each CTA
// owning half of the tile); 10000 elements leave a ragged last tile, split
// over both CTAs of its program.
// EMU: T=0 S=0 grid=3,1 args=bf16[10000];bf16[10000];bf16[10000]
// CHECK: arg0: 10000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 10000 elements, 0 written, 0 differ
// CHECK: arg2: 10000 elements, 0 written, 0 differ
// CHECK: split_auto: T=128 S=2 OK
!m = memref<?xbf16, strided<[1], offset: ?>>
func.func @split_auto(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !m -> tensor<4096xbf16>
  %y = tile.load %b[%p] : !m -> tensor<4096xbf16>
  %z = arith.addf %x, %y : tensor<4096xbf16>
  tile.store %z, %o[%p] : tensor<4096xbf16>, !m
  return
}
