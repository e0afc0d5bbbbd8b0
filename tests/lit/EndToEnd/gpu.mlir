// The gpu lowering (with convert-math-to-nvvm before convert-math-to-llvm)
// followed by the upstream conversions leaves only the LLVM and NVVM
// dialects, translates to LLVM IR and compiles to PTX for sm_90. The
// launcher marks the kernel with nvvm.kernel after conversion (here: sed).
// RUN: tessera-opt %s -convert-tile-to-loops=target=gpu -convert-math-to-nvvm \
// RUN:   -convert-scf-to-cf -convert-math-to-llvm -convert-arith-to-llvm \
// RUN:   -convert-cf-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm \
// RUN:   -reconcile-unrealized-casts > %t.mlir
// RUN: FileCheck %s --check-prefix=LLVM < %t.mlir --implicit-check-not=memref. \
// RUN:   --implicit-check-not=arith. --implicit-check-not=scf. --implicit-check-not=cf. \
// RUN:   --implicit-check-not=math. --implicit-check-not=func.func \
// RUN:   --implicit-check-not=func.return --implicit-check-not=unrealized_conversion_cast \
// RUN:   --implicit-check-not=tile.load --implicit-check-not=tile.store \
// RUN:   --implicit-check-not=tile.program_id --implicit-check-not=tile.reduce \
// RUN:   --implicit-check-not=tile.broadcast --implicit-check-not='tensor<'
// RUN: sed -e 's/tile.kernel}/tile.kernel, nvvm.kernel}/' %t.mlir \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx90 \
// RUN:   | FileCheck %s --check-prefix=PTX

// LLVM: llvm.mlir.global private @__tile_scratch_add_exp_rowmax() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<{{[0-9]+}} x i8>
// LLVM: llvm.func @add_exp_rowmax(
// LLVM-SAME: tile.block_size = 128 : i32
// LLVM: nvvm.read.ptx.sreg.tid.x
// LLVM: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// LLVM: nvvm.barrier0
// LLVM: llvm.return

// PTX: .visible .entry add_exp_rowmax(
// PTX: ex2.approx.f32
// PTX: bar.sync 0
// PTX: ret;
func.func @add_exp_rowmax(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                          %b: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%pid, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<16x32xf32>
  %y = tile.load %b[%pid, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<16x32xf32>
  %s = arith.addf %x, %y : tensor<16x32xf32>
  %e = math.exp %s : tensor<16x32xf32>
  %m = tile.reduce %e {kind = max, axis = 1} : tensor<16x32xf32> -> tensor<16x1xf32>
  %mb = tile.broadcast %m : tensor<16x1xf32> -> tensor<16x32xf32>
  tile.store %mb, %b[%pid, %c0] : tensor<16x32xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}
