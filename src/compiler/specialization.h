// specialization.h: what a compiled kernel is specialized for besides its AST and its target: the
// layout of each argument, the shapes of one launch (LaunchOptions::static_shapes) and the promise
// that every tile is whole (LaunchOptions::whole_tiles, compiler/whole_tiles.h).
//
// The kernel cache makes one per launch (specialize) and finds the compiled kernel by it, the
// kernel and the target (operator== and hash()); the compiler reads it: codegen for tile.align,
// the static memref types, tile.grid and tile.whole_tiles (codegen/mlir_gen.h), the pipeline for
// the variant's dump names. key_text() is its one serialization, written and never parsed back:
// the variant in the disk cache's key (CacheKeyMaterial::variant). It is the text the key held
// before this record existed, so entries cached by earlier builds of the same version still hit.
//
// The target is not part of it: a cache looks kernels up by (kernel, AST, target, Specialization)
// and the compiler is told the target beside it (compile_cpu, compile_ptx's arch).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "llvm/ADT/SmallVector.h"
#include "tessera/kernel.h"

namespace tessera::detail {

// What the code may assume of an argument's memory. The letter is the argument's in key_text().
enum class ArgLayout : uint8_t {
  scalar,      // '-': a scalar argument
  strided,     // 's': any strides
  contiguous,  // 'c': rows contiguous (innermost stride 1)
  aligned,     // 'a': contiguous rows whose base and row strides are 16-byte aligned
  // 't': a 2-d view whose columns are contiguous (strides [1, s], a transposed row-major matrix)
  // with base and column stride 16-byte aligned
  aligned_columns,
};

// One argument of a launch compiled for its shapes.
struct StaticTensor {
  int64_t offset = 0;                            // elements from the storage's start
  llvm::SmallVector<int64_t, 4> sizes, strides;  // empty for a scalar
  bool operator==(const StaticTensor&) const = default;
};

// The shapes of a launch (LaunchOptions::static_shapes): one entry per parameter, and its grid.
struct StaticShapes {
  llvm::SmallVector<StaticTensor, 8> tensors;
  std::array<int64_t, 3> grid{1, 1, 1};  // programs along each axis, each at least 1
  bool operator==(const StaticShapes&) const = default;
};

struct Specialization {
  llvm::SmallVector<ArgLayout, 16> layouts;  // one per parameter; a missing one is strided
  std::optional<StaticShapes> shapes;        // compiled for one launch's shapes
  bool whole_tiles = false;                  // compiled for launches whose tiles are all whole
  // The tileir backend's facts of the launch (add_tileir_facts; never set for the NVVM backend,
  // which has no use for them): every size and stride of its tensors below 2^31, and the size of
  // the unit-stride dimension of every aligned tensor a multiple of 16 bytes. The Tile IR writer
  // states them to tileiras (TileIRFacts), which then indexes in i32 and moves tiles with TMA.
  bool i32_extents = false;
  bool aligned_extents = false;
  CompilerHints hints;                       // GPU targets: LaunchOptions::hints
  // Bit i: parameter i is an input whose tensor is frozen (Tensor::freeze), so no kernel still
  // running writes it. Set only where it changes the code: NVVM launches on GPU targets with
  // hints.stream_stages of 2 or more and hints.bulk_streams (frozen_inputs), whose rings may copy
  // such tiles before the kernel waits for the grids it depends on, or with
  // hints.early_frozen_steps, which loads them into registers there.
  uint32_t frozen = 0;
  bool frozen_input(std::size_t i) const { return i < 32 && (frozen >> i & 1u); }

  ArgLayout layout(std::size_t i) const { return i < layouts.size() ? layouts[i] : ArgLayout::strided; }
  bool operator==(const Specialization&) const = default;
  // For the process cache, computed per launch: a few operations per argument.
  std::size_t hash() const;

  // The layout letters, then for static shapes "|" and per parameter "-" (a scalar) or
  // "OFFSET:S0xS1...:T0xT1..." (offset, sizes, strides) joined by ';', then "@G0,G1,G2" (the
  // grid), then "/whole" for whole tiles, "/i32" and "/x16" for the tileir facts, then the hints
  // that are set ("/stages3", "/group16", "/occupancy2", "/cluster2", "/tma" or "/notma"), then
  // "/frozen" and the frozen inputs' mask in hex if any:
  // "ac", "ac/whole", "ac|0:4x1:1x1;0:4x64:64x1@4,1,1", "aaa/whole/stages3/group16".
  std::string key_text() const;
};

// Sets spec's tileir facts (i32_extents, aligned_extents) from the launch's arguments; spec's
// layouts are set (specialize).
void add_tileir_facts(std::span<const ArgDesc> args, Specialization& spec);

// The frozen inputs of a launch (Specialization::frozen): bit i for an input parameter i < 32 whose
// storage is frozen.
uint32_t frozen_inputs(std::span<const ArgDesc> args);

// The hints that are set, as key_text() writes them ("/stages3/group16", "" for none).
std::string hints_text(const CompilerHints& hints);

// Sets `spec` (cleared first; whole_tiles false) to what a launch with these arguments may be
// compiled for on `target`: each argument's layout, and with `static_shapes` the arguments' shapes
// and the grid of the first output. Reuses `spec`'s storage: the launch path allocates nothing for
// up to 16 arguments (8 with static shapes).
void specialize(std::span<const ArgDesc> args, Target target, bool static_shapes, Specialization& spec);

}  // namespace tessera::detail
