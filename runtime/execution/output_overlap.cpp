// output_overlap.cpp: see output_overlap.h.
#include "execution/output_overlap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "tessera/errors.h"
#include "tessera/tensor.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

constexpr std::string_view kOptOut =
    "to write such memory anyway, use the unsafe opt-out tessera::unsafe::cuda_kernel (tessera/unsafe.h)";

std::string_view kind_name(Kind k) { return k == Kind::out ? "output" : "input"; }

std::string layout_str(const ArgDesc& a) {
  const auto rank = static_cast<std::size_t>(a.rank);
  return fmt::format("shape [{}], strides [{}]", fmt::join(a.shape.begin(), a.shape.begin() + rank, " "),
                     fmt::join(a.strides.begin(), a.strides.begin() + rank, " "));
}

// The device bytes [begin, end) from the first to the last element of a tensor argument in foreign
// memory; empty for a tensor without elements. 128-bit: no address arithmetic wraps.
struct ByteRange {
  unsigned __int128 begin = 0, end = 0;
  bool overlaps(const ByteRange& o) const { return begin < o.end && o.begin < end; }
};
ByteRange foreign_bytes(const ArgDesc& a) {
  const auto element = static_cast<unsigned __int128>(dtype_size(a.dtype));
  unsigned __int128 last = 0;  // the last element's offset from the first, in elements
  for (int d = 0; d < a.rank; ++d) {
    if (a.shape[d] == 0) return {};
    last += static_cast<unsigned __int128>(a.shape[d] - 1) * static_cast<unsigned __int128>(a.strides[d]);
  }
  ByteRange r;
  r.begin = a.storage->mirror->address() + static_cast<unsigned __int128>(a.offset) * element;
  r.end = r.begin + (last + 1) * element;
  return r;
}

std::string hex(unsigned __int128 v) { return fmt::format("{:#x}", static_cast<std::uint64_t>(v)); }

}  // namespace

std::optional<SelfOverlap> self_overlap(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  if (dense_row_major(shape, strides)) return std::nullopt;  // the common case, at once
  std::array<int, 4> dims{};
  std::size_t n = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return std::nullopt;  // no element at all
    if (shape[d] != 1) dims[n++] = static_cast<int>(d);
  }
  std::sort(dims.begin(), dims.begin() + n, [&](int a, int b) { return strides[a] < strides[b]; });
  int64_t span = 0;  // the largest offset reached by the dimensions sorted so far
  for (std::size_t i = 0; i < n; ++i) {
    const int d = dims[i];
    if (strides[d] <= span) return SelfOverlap{d, strides[d], span};
    int64_t reach = 0;
    // Past int64 the layout cannot be addressed anyway (from_device refuses such extents).
    if (!mul_fits(shape[d] - 1, strides[d], reach) || reach > INT64_MAX - span)
      return SelfOverlap{d, strides[d], INT64_MAX};
    span += reach;
  }
  return std::nullopt;
}

void check_output_overlap(std::string_view kernel, std::span<const ArgDesc> args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& out = args[i];
    if (out.kind != Kind::out) continue;
    const auto rank = static_cast<std::size_t>(out.rank);
    if (auto why = self_overlap({out.shape.data(), rank}, {out.strides.data(), rank}))
      throw Error(fmt::format(
          "tessera: kernel '{}': output parameter {} ({}) may reach one element through several indices: "
          "dimension {} has stride {}, not more than {}, the largest offset the dimensions of smaller stride "
          "reach, so several programs could write the same memory (a race). An output's elements must be "
          "distinct: with its dimensions of size > 1 sorted by stride, each stride must exceed the sum of "
          "(size - 1) * stride of the smaller ones (inputs may overlap); {}",
          kernel, i, layout_str(out), why->dim, why->stride, why->span, kOptOut));
    if (!out.storage->foreign_device()) continue;
    const ByteRange mine = foreign_bytes(out);
    for (std::size_t j = 0; j < args.size(); ++j) {
      const ArgDesc& other = args[j];
      if (j == i || other.kind == Kind::scalar || other.storage == out.storage || !other.storage->foreign_device())
        continue;
      const ByteRange theirs = foreign_bytes(other);
      if (!mine.overlaps(theirs)) continue;
      throw Error(fmt::format(
          "tessera: kernel '{}': output parameter {} (device bytes [{}, {})) overlaps {} parameter {} (device bytes "
          "[{}, {})): two Tensor::from_device wrappers of the same memory, one written while the other is {} (a "
          "race). An output must not share memory with another argument; {}",
          kernel, i, hex(mine.begin), hex(mine.end), kind_name(other.kind), j, hex(theirs.begin), hex(theirs.end),
          other.kind == Kind::out ? "written" : "read", kOptOut));
    }
  }
}

}  // namespace tessera::detail
