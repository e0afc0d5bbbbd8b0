// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops=target=gpu -verify-diagnostics
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops=target=xpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=96" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=2048" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu vector-bytes=12" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu ctas-per-program=3" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=4096 ctas-per-program=2" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu split-chunks=3" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu max-shared-bytes=-1" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu fuse-above=-1" 2>&1 | FileCheck %s --check-prefix=BLOCK

// TARGET: convert-tile-to-loops: target must be 'cpu' or 'gpu', got 'xpu'
// BLOCK: block-size must be 0 or a power of two, at most 1024 per CTA, ctas-per-program 0 or a power of two, split-chunks a power of two up to 256, vector-width and vector-bytes positive powers of two

func.func @non_pow2() attributes {tile.kernel} {
  // expected-error @+1 {{uses tile type 'tensor<3xf32>', but convert-tile-to-loops needs tiles of rank >= 1 with static power-of-two dimensions}}
  %0 = arith.constant dense<1.0> : tensor<3xf32>
  return
}

// -----

func.func @rank0() attributes {tile.kernel} {
  // expected-error @+1 {{uses tile type 'tensor<f32>'}}
  %0 = arith.constant dense<1.0> : tensor<f32>
  return
}

// -----

func.func @element_type() attributes {tile.kernel} {
  // expected-error @+1 {{uses tile element type 'index', but convert-tile-to-loops supports i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN and f8E5M2}}
  %0 = arith.constant dense<1> : tensor<4xindex>
  return
}

// -----

func.func @non_splat() attributes {tile.kernel} {
  // expected-error @+1 {{tile constants must be splat dense attributes}}
  %0 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return
}

// -----

func.func @unknown_op() attributes {tile.kernel} {
  // expected-error @+1 {{'llvm.mlir.zero' op is not supported inside a tile kernel}}
  %0 = llvm.mlir.zero : !llvm.ptr
  return
}

// -----

func.func @tile_in_while(%n: i1) attributes {tile.kernel} {
  %0 = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{'scf.while' op cannot take or produce tiles inside a tile kernel}}
  %1 = scf.while (%arg = %0) : (tensor<4xf32>) -> tensor<4xf32> {
    scf.condition(%n) %arg : tensor<4xf32>
  } do {
  ^bb0(%arg: tensor<4xf32>):
    scf.yield %arg : tensor<4xf32>
  }
  return
}

// -----

// expected-error @+1 {{tile kernel arguments must be scalars or memrefs, got 'tensor<4xf32>'}}
func.func @tensor_arg(%t: tensor<4xf32>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{tile kernels cannot return tiles, got 'tensor<4xf32>'}}
func.func @tensor_result() -> tensor<4xf32> attributes {tile.kernel} {
  %0 = arith.constant dense<1.0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{tile kernel 'decl' has no body}}
func.func private @decl() attributes {tile.kernel}

// -----

// Scratch over 48 KiB is dynamic shared memory, up to max-shared-bytes (227
// KiB by default): 256 KiB is too much.
func.func @shared_memory(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<256x256xf32>
  // expected-error @+1 {{'tile.transpose' op needs 262144 bytes of shared memory scratch, more than the 232448 bytes (227 KiB) of shared memory a CTA can use on this target; use smaller tiles}}
  %t = tile.transpose %x : tensor<256x256xf32> -> tensor<256x256xf32>
  tile.store %t, %a[%c0, %c0] : tensor<256x256xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

// The dialect's verifier (TileDialect.td) rejects a malformed tile.align or
// tile.interior before the pass runs; the pass rejects an align on a scalar.
// expected-error @+1 {{argument 0: attribute 'tile.align' must be an i64 power of two, got 12 : i64}}
func.func @align_not_pow2(%a: memref<?xf32, strided<[1], offset: ?>> {tile.align = 12 : i64}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{argument 1: 'tile.align' must be a positive power-of-two integer on a memref argument, got 16 : i64}}
func.func @align_on_scalar(%a: memref<?xf32, strided<[1], offset: ?>>, %s: f32 {tile.align = 16 : i64}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{argument 0: attribute 'tile.align' must be an i64 power of two, got "16"}}
func.func @align_not_integer(%a: memref<?xf32, strided<[1], offset: ?>> {tile.align = "16"}) attributes {tile.kernel} {
  return
}

// -----

// A row reduction keeps its scratch small (one partial per warp and row); a
// reduction along axis 0 writes the whole tile to the scratch, and 256 KiB
// does not fit.
func.func @shared_memory_reduce_ok(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<128x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<128x128xf32> -> tensor<128x1xf32>
  tile.store %r, %a[%c0, %c0] : tensor<128x1xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

func.func @shared_memory_reduce_columns(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<256x256xf32>
  // expected-error @+1 {{'tile.reduce' op needs 262144 bytes of shared memory scratch}}
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<256x256xf32> -> tensor<1x256xf32>
  tile.store %r, %a[%c0, %c0] : tensor<1x256xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

func.func private @h(f32) -> i32
func.func @callee_type(%o: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %o[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<32xf32>
  // expected-error @+1 {{callee 'h' is declared as '(f32) -> i32' but called as '(f32) -> f32'}}
  %y = tile.device_call @h(%x) : (tensor<32xf32>) -> tensor<32xf32>
  tile.store %y, %o[%p] : tensor<32xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// tile.interior (see tile-version-interior) marks in-bounds loads and stores.
func.func @interior_elsewhere() attributes {tile.kernel} {
  // expected-error @+1 {{carries 'tile.interior', a unit attribute of tile.load, tile.store and tile.stream_copy only}}
  %0 = arith.constant {tile.interior} dense<1.0> : tensor<4xf32>
  return
}

// -----

!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @interior_not_unit(%a: !f1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{attribute 'tile.interior' must be a unit attribute, got 1 : i32}}
  %x = tile.load %a[%c0] {tile.interior = 1 : i32} : !f1 -> tensor<4xf32>
  return
}
