// RUN: tessera-opt %s -split-input-file -tile-cpu-workspace | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-cpu-workspace="stack-bytes=64 buffer-bytes=32" | FileCheck %s --check-prefix=SMALL

// Arrays that fit the budget stay on the stack: the kernel is unchanged (no
// workspace argument, no attribute).
// CHECK-LABEL: func.func @fits
// CHECK-SAME: (%{{.*}}: i32) attributes {tile.kernel}
// CHECK-NEXT: memref.alloca() : memref<4096xf32>
// CHECK-NEXT: memref.alloca() : memref<2xf32>
// SMALL-LABEL: func.func @fits
// SMALL-SAME: (%{{.*}}: i32, %[[WS:.*]]: memref<?xi8> {llvm.align = 64 : i64, llvm.noalias}) attributes {tile.kernel, tile.workspace_bytes = 16384 : i64}
// SMALL: %[[C0:.*]] = arith.constant 0 : index
// SMALL-NEXT: memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<4096xf32>
// SMALL-NEXT: memref.alloca() : memref<2xf32>
func.func @fits(%p: i32) attributes {tile.kernel} {
  %a = memref.alloca() : memref<4096xf32>
  %b = memref.alloca() : memref<2xf32>
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4096xf32>
  memref.store %x, %b[%c0] : memref<2xf32>
  return
}

// -----

// An array over 16 KiB moves to offset 0 of the workspace; the next one,
// aligned to 128 bytes, goes to the next multiple of 128 after it (a 64-byte
// boundary otherwise); i1 elements take one byte each.
// CHECK-LABEL: func.func @large
// CHECK-SAME: (%[[WS:.*]]: memref<?xi8> {llvm.align = 64 : i64, llvm.noalias}) attributes {tile.kernel, tile.workspace_bytes = 82112 : i64}
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[BIG:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<8193xf64>
// CHECK: %[[C65664:.*]] = arith.constant 65664 : index
// CHECK-NEXT: %[[SCRATCH:.*]] = memref.view %[[WS]][%[[C65664]]][] : memref<?xi8> to memref<16385xi8>
// CHECK-NOT: memref.alloca
// CHECK: memref.load %[[BIG]]
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
func.func @large() attributes {tile.kernel} {
  %a = memref.alloca() : memref<8193xf64>
  %s = memref.alloca() {alignment = 128 : i64} : memref<16385xi8>
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8193xf64>
  %y = arith.fptosi %x : f64 to i8
  memref.store %y, %s[%c0] : memref<16385xi8>
  return
}

// -----

// Arrays of 16 KiB each stay on the stack up to 128 KiB in all: the ninth
// moves.
// CHECK-LABEL: func.func @budget
// CHECK-SAME: attributes {tile.kernel, tile.workspace_bytes = 16384 : i64}
// CHECK-COUNT-8: memref.alloca() : memref<4096xf32>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: memref.view
// CHECK-NOT: memref.alloca
func.func @budget() attributes {tile.kernel} {
  %a0 = memref.alloca() : memref<4096xf32>
  %a1 = memref.alloca() : memref<4096xf32>
  %a2 = memref.alloca() : memref<4096xf32>
  %a3 = memref.alloca() : memref<4096xf32>
  %a4 = memref.alloca() : memref<4096xf32>
  %a5 = memref.alloca() : memref<4096xf32>
  %a6 = memref.alloca() : memref<4096xf32>
  %a7 = memref.alloca() : memref<4096xf32>
  %a8 = memref.alloca() : memref<4096xf32>
  return
}

// -----

// An alloca inside a loop (new stack at every iteration) moves whatever its
// size; its view is taken where it was, in the loop.
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME: (%{{.*}}: index, %[[WS:.*]]: memref<?xi8> {llvm.align = 64 : i64, llvm.noalias}) attributes {tile.kernel, tile.workspace_bytes = 64 : i64}
// CHECK: scf.for
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<2xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[V]]
func.func @in_loop(%n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloca() : memref<2xf32>
    memref.store %f, %a[%c0] : memref<2xf32>
  }
  return
}

// -----

// Functions other than tile kernels are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NEXT: memref.alloca() : memref<65536xf32>
// SMALL-LABEL: func.func @not_a_kernel
// SMALL-NEXT: memref.alloca() : memref<65536xf32>
func.func @not_a_kernel() {
  %a = memref.alloca() : memref<65536xf32>
  return
}
