// specialization.cpp: a launch's Specialization, its hash and its key text (specialization.h).
#include "compiler/specialization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "compiler/kernels.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

// Our device and host allocations are at least 64-byte aligned; a view's offset into its storage
// and foreign device memory (`gpu`: on GPU targets) are checked.
// A 2-d view with contiguous columns (the transposed view of a row-major matrix) is told apart
// only when it is aligned: tensor-core code reads such a B operand with TMA.
ArgLayout layout_of(const ArgDesc& a, bool gpu) {
  if (a.kind == Kind::scalar) return ArgLayout::scalar;
  const auto bytes = static_cast<int64_t>(dtype_size(a.dtype));
  bool aligned = (a.offset * bytes) % 16 == 0;
  if (gpu && a.storage->foreign_device()) aligned = aligned && a.storage->mirror->address() % 16 == 0;
  if (a.strides[a.rank - 1] != 1) {
    const bool columns = a.rank == 2 && a.strides[0] == 1 && (a.strides[1] * bytes) % 16 == 0;
    return aligned && columns ? ArgLayout::aligned_columns : ArgLayout::strided;
  }
  for (int d = 0; d + 1 < a.rank; ++d) aligned = aligned && (a.strides[d] * bytes) % 16 == 0;
  return aligned ? ArgLayout::aligned : ArgLayout::contiguous;
}

char letter(ArgLayout l) {
  switch (l) {
    case ArgLayout::scalar: return '-';
    case ArgLayout::strided: return 's';
    case ArgLayout::contiguous: return 'c';
    case ArgLayout::aligned: return 'a';
    case ArgLayout::aligned_columns: return 't';
  }
  return 's';
}

}  // namespace

void specialize(std::span<const ArgDesc> args, Target target, bool static_shapes, Specialization& spec) {
  spec.shapes.reset();
  spec.whole_tiles = false;
  spec.layouts.resize_for_overwrite(args.size());
  const bool gpu = is_gpu(target);
  for (std::size_t i = 0; i < args.size(); ++i) spec.layouts[i] = layout_of(args[i], gpu);
  if (!static_shapes) return;
  StaticShapes& shapes = spec.shapes.emplace();
  const ArgDesc* first_out = nullptr;
  for (const ArgDesc& a : args) {
    StaticTensor& t = shapes.tensors.emplace_back();
    if (a.kind == Kind::scalar) continue;
    const auto rank = static_cast<std::size_t>(a.rank);
    t.offset = a.offset;
    t.sizes.assign(a.shape.begin(), a.shape.begin() + rank);
    t.strides.assign(a.strides.begin(), a.strides.begin() + rank);
    if (a.kind == Kind::out && !first_out) first_out = &a;
  }
  // The grid is that of the first output (check_args rejects launches whose outputs disagree);
  // tile.grid counts at least one program per axis (an empty launch runs none anyway).
  if (first_out) shapes.grid = partition_grid(*first_out).dims;
  for (int64_t& g : shapes.grid) g = std::max<int64_t>(g, 1);
}

std::string Specialization::key_text() const {
  std::string s;
  for (ArgLayout l : layouts) s += letter(l);
  if (shapes) {
    s += '|';
    for (std::size_t i = 0; i < shapes->tensors.size(); ++i) {
      const StaticTensor& t = shapes->tensors[i];
      if (i) s += ';';
      if (t.sizes.empty()) {
        s += '-';
        continue;
      }
      s += fmt::format("{}:{}:{}", t.offset, fmt::join(t.sizes, "x"), fmt::join(t.strides, "x"));
    }
    s += fmt::format("@{}", fmt::join(shapes->grid, ","));
  }
  if (whole_tiles) s += "/whole";
  if (i32_extents) s += "/i32";
  if (aligned_extents) s += "/x16";
  s += hints_text(hints);
  if (frozen) s += fmt::format("/frozen{:x}", frozen);
  return s;
}

void add_tileir_facts(std::span<const ArgDesc> args, Specialization& spec) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  spec.i32_extents = spec.aligned_extents = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (a.kind == Kind::scalar) continue;
    for (int d = 0; d < a.rank; ++d)
      if (a.shape[d] > kMax || a.strides[d] < 0 || a.strides[d] > kMax) spec.i32_extents = false;
    const ArgLayout l = i < spec.layouts.size() ? spec.layouts[i] : ArgLayout::strided;
    if (l != ArgLayout::aligned && l != ArgLayout::aligned_columns) continue;
    const int unit = l == ArgLayout::aligned ? a.rank - 1 : 0;  // 't': strides [1, s]
    if (a.rank > 0 && (a.shape[unit] * static_cast<int64_t>(dtype_size(a.dtype))) % 16 != 0)
      spec.aligned_extents = false;
  }
}

uint32_t frozen_inputs(std::span<const ArgDesc> args) {
  uint32_t mask = 0;
  for (std::size_t i = 0; i < args.size() && i < 32; ++i)
    if (args[i].kind == Kind::in && args[i].storage && args[i].storage->frozen()) mask |= 1u << i;
  return mask;
}

std::string hints_text(const CompilerHints& hints) {
  std::string s;
  if (hints.pipeline_stages) s += fmt::format("/stages{}", hints.pipeline_stages);
  if (hints.group_rows) s += fmt::format("/group{}", hints.group_rows);
  if (hints.occupancy) s += fmt::format("/occupancy{}", hints.occupancy);
  if (hints.cluster_programs) s += fmt::format("/cluster{}", hints.cluster_programs);
  if (hints.tma) s += *hints.tma ? "/tma" : "/notma";
  if (hints.stream_stages) s += fmt::format("/stream{}", hints.stream_stages);
  if (hints.bulk_streams) s += "/bulk";
  if (hints.threads) s += fmt::format("/threads{}", hints.threads);
  if (hints.split_k) s += fmt::format("/splitk{}", hints.split_k);
  if (hints.early_frozen_steps) s += fmt::format("/early{}", hints.early_frozen_steps);
  if (hints.ping_pong) s += "/pingpong";
  return s;
}

std::size_t Specialization::hash() const {
  // Each layout rotated in two bits at a time: the launch path hashes a few arguments without a call.
  std::size_t h = layouts.size();
  for (ArgLayout l : layouts) h = (h << 2 | h >> 62) ^ static_cast<std::size_t>(l);
  const auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  if (whole_tiles) mix(1);
  if (i32_extents || aligned_extents) mix(2 + i32_extents + 2 * aligned_extents);
  if (hints.pipeline_stages || hints.group_rows)
    mix(static_cast<uint64_t>(hints.pipeline_stages) << 32 | static_cast<uint32_t>(hints.group_rows));
  if (hints.occupancy || hints.cluster_programs || hints.tma)
    mix(static_cast<uint64_t>(hints.occupancy) << 32 | static_cast<uint64_t>(hints.cluster_programs) << 8 |
        (hints.tma ? 2u + *hints.tma : 0u));
  if (hints.stream_stages) mix(0x5100u + static_cast<uint64_t>(hints.stream_stages));
  if (hints.bulk_streams) mix(0xb0b0u);
  if (hints.threads) mix(0x7400u + static_cast<uint64_t>(hints.threads));
  if (hints.split_k) mix(0x5b00u + static_cast<uint64_t>(hints.split_k));
  if (hints.early_frozen_steps) mix(0xea00u + static_cast<uint64_t>(hints.early_frozen_steps));
  if (hints.ping_pong) mix(0x9090u);
  if (frozen) mix(0xf0000000ull + frozen);
  if (shapes) {
    for (const StaticTensor& t : shapes->tensors) {
      mix(static_cast<uint64_t>(t.offset));
      for (int64_t v : t.sizes) mix(static_cast<uint64_t>(v));
      for (int64_t v : t.strides) mix(static_cast<uint64_t>(v));
    }
    for (int64_t g : shapes->grid) mix(static_cast<uint64_t>(g));
  }
  return h;
}

}  // namespace tessera::detail
