// A scratch over 48 KiB (a 128x128 f32 tile reduced along axis 0: 64 KiB)
// lowered for the gpu and compiled to PTX for sm_90: dynamic shared memory,
// an external array of unknown size (`.extern .shared ... name[]`) that every
// access reaches through its address; no static shared array. The launcher
// marks the kernel with nvvm.kernel after conversion (here: sed).
// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=256" \
// RUN:   -convert-scf-to-cf -convert-arith-to-llvm -convert-index-to-llvm \
// RUN:   -convert-cf-to-llvm -convert-vector-to-llvm -finalize-memref-to-llvm \
// RUN:   -convert-func-to-llvm -reconcile-unrealized-casts > %t.mlir
// RUN: FileCheck %s --check-prefix=LLVM < %t.mlir
// RUN: sed -e 's/tile.kernel,/tile.kernel, nvvm.kernel,/' %t.mlir \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx90 \
// RUN:   | FileCheck %s --check-prefix=PTX

// LLVM: llvm.mlir.global external @__tile_dynamic_scratch_columns() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// LLVM: llvm.func @columns(
// LLVM-SAME: tile.dynamic_shared_bytes = 65536 : i32

// PTX: .extern .shared .align 16 .b8 __tile_dynamic_scratch_columns[];
// PTX-NOT: .shared .align
// PTX: .visible .entry columns(
// PTX: st.shared.b32
// PTX: bar.sync 0
// PTX: ld.shared.b32
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x128xf32> -> tensor<1x128xf32>
  tile.store %r, %o[%p, %q] : tensor<1x128xf32>, !m
  return
}
