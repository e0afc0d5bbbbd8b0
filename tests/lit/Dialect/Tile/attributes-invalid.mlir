// RUN: tessera-opt %s -split-input-file -verify-diagnostics

// The dialect's attributes are checked wherever they appear (TileDialect.td).

// expected-error @+1 {{attribute 'tile.kernel' must be a unit attribute}}
func.func @kernel_not_unit() attributes {tile.kernel = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.block_size' must be an i32 up to 1024, a power of two or whole warpgroups (a multiple of 128)}}
func.func @block_not_pow2() attributes {tile.kernel, tile.block_size = 96 : i32} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.block_size' must be an i32 up to 1024, a power of two or whole warpgroups (a multiple of 128)}}
func.func @block_i64() attributes {tile.kernel, tile.block_size = 128 : i64} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.programs_per_cta' must be an i32 power of two}}
func.func @programs_zero() attributes {tile.kernel, tile.programs_per_cta = 0 : i32} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.dynamic_shared_bytes' must be a positive i32}}
func.func @shared_negative() attributes {tile.kernel, tile.dynamic_shared_bytes = -4 : i32} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.workspace_bytes' must be a non-negative i64}}
func.func @workspace_i32() attributes {tile.kernel, tile.workspace_bytes = 64 : i32} {
  return
}

// -----

// expected-error @+1 {{unknown attribute 'tile.blocksize' of the tile dialect}}
func.func @misspelt() attributes {tile.kernel, tile.blocksize = 128 : i32} {
  return
}

// -----

// expected-error @+1 {{argument 0: attribute 'tile.align' must be an i64 power of two}}
func.func @align_odd(%o: memref<?xf32> {tile.align = 12 : i64}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{unknown argument attribute 'tile.aligned' of the tile dialect}}
func.func @align_misspelt(%o: memref<?xf32> {tile.aligned = 16 : i64}) attributes {tile.kernel} {
  return
}

// -----

func.func @interior_not_unit(%o: memref<?xf32>) attributes {tile.kernel} {
  %p = tile.program_id 0
  // expected-error @+1 {{attribute 'tile.interior' must be a unit attribute}}
  %t = tile.load %o[%p] {tile.interior = true} : memref<?xf32> -> tensor<16xf32>
  return
}

// -----

// expected-error @+1 {{attribute 'tile.persistent' must be a unit attribute}}
func.func @persistent_not_unit() attributes {tile.kernel, tile.persistent = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.tensor_maps' must be a non-empty array of array<i64: param, box_inner (1-256), box_outer (1-256), swizzle_bytes (0, 32, 64 or 128)>}}
func.func @tensor_map_box() attributes {tile.kernel, tile.tensor_maps = [array<i64: 0, 512, 64, 128>]} {
  return
}

// -----

// expected-error @+1 {{attribute 'tile.split_k' must be an i32 power of two from 2 to 8, got 3 : i32}}
func.func @split_k_three() attributes {tile.kernel, tile.split_k = 3 : i32} {
  return
}
