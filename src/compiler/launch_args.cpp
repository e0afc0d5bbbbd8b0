// launch_args.cpp: a launch's arguments against its compiled kernel (check_args: kinds, dtypes,
// ranks, tile shapes of loads "like" an output, grid agreement between outputs, aliasing, grid
// limits) and the CUDA grid and block of a launch. How the arguments become parameter slots is the
// execution layer's (LaunchPlan::fill_slots, execution/launch_plan.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "compiler/kernels.h"
#include "driver/cuda_driver.h"
#include "execution/output_overlap.h"
#include "execution/device_memory.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

// The most programs a launch may have along each grid axis, on every target (check_args).
constexpr int64_t kMaxGridX = 0x7fffffff;
constexpr int64_t kMaxGridYZ = 65535;

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::out: return "output";
    case Kind::in: return "input";
    case Kind::scalar: return "scalar";
  }
  return "?";
}
std::string_view kind_name(ParamInfo::Kind k) {
  switch (k) {
    case ParamInfo::Kind::out: return "output";
    case ParamInfo::Kind::in: return "input";
    case ParamInfo::Kind::scalar: return "scalar";
  }
  return "?";
}
std::string shape_str(const ArgDesc& a) {
  return fmt::format("[{}]", fmt::join(a.shape.begin(), a.shape.begin() + a.rank, " "));
}

}  // namespace

void check_hints(std::string_view kernel, const CompilerHints& hints) {
  if (hints.pipeline_stages != 0 && (hints.pipeline_stages < 2 || hints.pipeline_stages > 8))
    fail(kernel, fmt::format("LaunchOptions::hints.pipeline_stages is {}: expected 0 (the compiler's choice) or 2 to 8",
                             hints.pipeline_stages));
  if (hints.group_rows != 0 && (hints.group_rows < 1 || hints.group_rows > 64))
    fail(kernel, fmt::format("LaunchOptions::hints.group_rows is {}: expected 0 (the compiler's choice) or 1 to 64",
                             hints.group_rows));
  if (hints.occupancy != 0 && (hints.occupancy < 1 || hints.occupancy > 32))
    fail(kernel, fmt::format("LaunchOptions::hints.occupancy is {}: expected 0 (the compiler's choice) or 1 to 32",
                             hints.occupancy));
  if (hints.stream_stages != 0 && (hints.stream_stages < 1 || hints.stream_stages > 8))
    fail(kernel, fmt::format("LaunchOptions::hints.stream_stages is {}: expected 0 (the compiler's choice), 1 (no "
                             "ring) or 2 to 8",
                             hints.stream_stages));
  const int t = hints.threads;
  if (t != 0 && (t < 32 || t > 1024 || (t & (t - 1)) != 0))
    fail(kernel, fmt::format("LaunchOptions::hints.threads is {}: expected 0 (the compiler's choice) or a power of "
                             "two from 32 to 1024",
                             t));
  const int s = hints.split_k;
  if (s != 0 && s != 1 && s != 2 && s != 4 && s != 8)
    fail(kernel, fmt::format("LaunchOptions::hints.split_k is {}: expected 0 (the compiler's choice), 1 (none), 2, 4 "
                             "or 8",
                             s));
  if (hints.early_frozen_steps < 0 || hints.early_frozen_steps > 4)
    fail(kernel, fmt::format("LaunchOptions::hints.early_frozen_steps is {}: expected 0 (the compiler's choice: none) "
                             "or 1 to 4",
                             hints.early_frozen_steps));
  const int c = hints.cluster_programs;
  if (c != 0 && (c < 1 || c > 16 || (c & (c - 1)) != 0))
    fail(kernel, fmt::format("LaunchOptions::hints.cluster_programs is {}: expected 0 (the compiler's choice) or 1, "
                             "2, 4, 8 or 16",
                             c));
}

[[noreturn]] void fail(std::string_view kernel, const std::string& what) {
  throw Error(fmt::format("tessera: kernel '{}': {}", kernel, what));
}
// The programs of an output partition along each grid axis: its shape over its tile, rounded up
// without overflow (1 along an axis whose tile size is not positive, which check_args rejects).
Grid partition_grid(const ArgDesc& out) {
  Grid g;
  for (int d = 0; d < out.rank && d < 3; ++d)
    if (out.tile[d] > 0) g.dims[d] = out.shape[d] / out.tile[d] + (out.shape[d] % out.tile[d] != 0);
  return g;
}

Grid check_args(std::string_view kernel, const Compiled& compiled, std::span<const ArgDesc> args) {
  const KernelAst& ast = compiled.ast;
  if (args.size() != ast.params.size())
    fail(kernel, fmt::format("expected {} arguments, got {}", ast.params.size(), args.size()));
  Grid grid;
  int first_out = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    const ParamInfo& p = ast.params[i];
    if (kind_name(a.kind) != kind_name(p.kind) || a.dtype != p.dtype ||
        (a.kind != Kind::scalar && a.rank != p.rank))
      fail(kernel, fmt::format("parameter {}: expected {} {} of rank {}, got {} {} of rank {}", i, kind_name(p.kind),
                               dtype_name(p.dtype), p.rank, kind_name(a.kind), dtype_name(a.dtype), a.rank));
    if (a.kind != Kind::out) continue;
    if (a.storage && a.storage->frozen())
      fail(kernel, fmt::format("output parameter {} is frozen (Tensor::freeze made it read-only)", i));
    if (a.rank > 3) fail(kernel, fmt::format("parameter {}: outputs have rank 1 to 3 (one grid axis per dim)", i));
    for (int d = 0; d < a.rank; ++d)
      if (a.tile[d] <= 0) fail(kernel, fmt::format("parameter {}: tile sizes must be positive", i));
    // The grid comes from the partition's tile, the kernel's accesses from the AST's.
    if (!std::equal(p.tile.begin(), p.tile.end(), a.tile.begin(), a.tile.begin() + a.rank))
      fail(kernel, fmt::format("parameter {}: the partition's tile [{}] is not the kernel's tile [{}]", i,
                               fmt::join(a.tile.begin(), a.tile.begin() + a.rank, " "), fmt::join(p.tile, " ")));
    const Grid g = partition_grid(a);
    if (first_out < 0) {
      first_out = static_cast<int>(i);
      grid = g;
    } else if (g.dims != grid.dims) {
      fail(kernel, fmt::format("output parameter {} has grid [{}] but output parameter {} has grid [{}]; all outputs "
                               "of a launch must have the same grid",
                               i, fmt::join(g.dims, " "), first_out, fmt::join(grid.dims, " ")));
    }
  }
  if (first_out < 0) fail(kernel, "a kernel needs at least one output partition");
  // Program ids are i32 (num_programs too); the GPU's limits hold on every target, so that a launch
  // that runs on the CPU runs on the GPU too (cuda_grid checks the CTAs a program may take).
  if (grid.dims[0] > kMaxGridX || grid.dims[1] > kMaxGridYZ || grid.dims[2] > kMaxGridYZ) {
    const ArgDesc& out = args[first_out];
    fail(kernel, fmt::format("output parameter {} ({} in tiles of [{}]) makes a grid of [{}] programs, more than the "
                             "limits of 2^31-1 along x (its first dimension) and 65535 along y and z; use larger tiles",
                             first_out, shape_str(out), fmt::join(out.tile.begin(), out.tile.begin() + out.rank, " "),
                             fmt::join(grid.dims, " ")));
  }
  // Outputs are exclusive: no other argument may name the same memory.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != Kind::out) continue;
    for (std::size_t j = 0; j < args.size(); ++j) {
      if (j == i || args[j].kind == Kind::scalar || args[j].storage != args[i].storage) continue;
      fail(kernel, fmt::format("output parameter {} aliases {} parameter {}: an output must not be passed twice or "
                               "also read as an input",
                               i, kind_name(args[j].kind), j));
    }
  }
  // Nor may an output reach one element twice, or share foreign memory with another argument.
  check_output_overlap(kernel, args);
  for (auto [p, q] : compiled.load_likes) {
    const ArgDesc& in = args[p];
    const ArgDesc& out = args[q];
    if (in.rank != out.rank || !std::equal(in.shape.begin(), in.shape.begin() + in.rank, out.shape.begin()))
      fail(kernel, fmt::format("input parameter {} has shape {} but is loaded like output parameter {} of shape {}; "
                               "they must have the same shape",
                               p, shape_str(in), q, shape_str(out)));
  }
  return grid;
}

unsigned cuda_block(const Compiled& compiled, const Grid& grid) {
  const int64_t threads = compiled.gpu.block_size / compiled.gpu.programs_per_cta;
  return static_cast<unsigned>(threads * programs_per_cta_of_launch(compiled.gpu.programs_per_cta, grid.dims[0]));
}

std::array<int64_t, 3> cuda_grid(std::string_view kernel, const Compiled& compiled, const Grid& grid,
                                 int64_t resident_clusters) {
  if (compiled.gpu.persistent) {
    // One CTA per SM at most; the kernel counts the programs in 32 bits.
    if (grid.count() > 0x7fffffff)
      throw Error(fmt::format("tessera: kernel '{}': {} programs exceed the limit of 2^31-1", kernel, grid.count()));
    static const int64_t sms = CudaDriver::get_if_available() ? CudaDriver::get().multiprocessor_count() : 1;
    // Split code runs clusters of S CTAs, as many as are resident at once at most: the kernel
    // splits the programs of its last round over a cluster's CTAs (all of them where they are
    // fewer than the clusters), and a cluster that started only after another ended would add a
    // round.
    const int64_t split = compiled.gpu.ctas_per_program;
    if (split > 1) {
      const int64_t clusters = resident_clusters > 0 ? resident_clusters : std::max<int64_t>(1, sms / split);
      return {split * std::max<int64_t>(1, std::min(grid.count(), clusters)), 1, 1};
    }
    return {std::max<int64_t>(1, std::min(grid.count(), sms)), 1, 1};
  }
  std::array<int64_t, 3> dims = grid.dims;
  const int64_t ctas = compiled.gpu.ctas_per_program;
  if (ctas > 1 && dims[0] > 0x7fffffff / ctas)
    throw Error(fmt::format("tessera: kernel '{}': {} programs along grid x, each run as {} CTAs, exceed the GPU's "
                            "limit of 2^31-1 CTAs",
                            kernel, dims[0], ctas));
  dims[0] *= ctas;
  // Programs sharing CTAs: program ids (i32, like the count the kernel takes) must still fit.
  const int64_t shared = programs_per_cta_of_launch(compiled.gpu.programs_per_cta, grid.dims[0]);
  if (shared > 1 && dims[0] > 0x7fffffff)
    throw Error(fmt::format("tessera: kernel '{}': {} programs along grid x exceed the limit of 2^31-1", kernel,
                            dims[0]));
  dims[0] = (dims[0] + shared - 1) / shared;
  check_grid(kernel, dims);
  return dims;
}

}  // namespace tessera::detail
