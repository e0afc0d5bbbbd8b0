// RUN: %emulate --work %t %s | FileCheck %s
// bf16 add, 2048-element tiles over 128 threads: chunks of 8 (16-byte
// vector<8xbf16> accesses); 5000 elements leave a ragged last tile.
// EMU: T=128 grid=3,1 args=bf16[5000];bf16[5000];bf16[5000]
// CHECK: arg0: 5000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 5000 elements, 0 written, 0 differ
// CHECK: arg2: 5000 elements, 0 written, 0 differ
// CHECK: add_bf16: T=128 OK
!m = memref<?xbf16, strided<[1], offset: ?>>
func.func @add_bf16(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !m -> tensor<2048xbf16>
  %y = tile.load %b[%p] : !m -> tensor<2048xbf16>
  %z = arith.addf %x, %y : tensor<2048xbf16>
  tile.store %z, %o[%p] : tensor<2048xbf16>, !m
  return
}
