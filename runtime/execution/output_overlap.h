// output_overlap.h: the launch-time check that no two programs of a launch can write the same
// memory, or write memory another argument reads, through tensors whose handles are distinct.
//
// Partitions split an output into disjoint tiles of *indices*; that makes the programs' writes
// disjoint only if distinct indices name distinct elements. Tessera's own tensors and their views
// always do, but Tensor::from_device takes any strides, and two from_device wrappers may cover the
// same memory. So check_output_overlap refuses a launch
//  - with an output whose elements may overlap: ignoring dimensions of size 1, with the dimensions
//    sorted by stride, each stride must exceed the span (the sum of (size - 1) * stride) of all
//    dimensions of smaller stride. This is sufficient for distinct indices to reach distinct
//    elements (each offset then has one digit per dimension, as in a mixed-radix numeral), and
//    fails on a zero stride and on equal strides; a layout it refuses although it is injective
//    (interleaved strides, e.g. sizes [3 2] strides [2 3]) is possible only through from_device;
//  - with an output in foreign device memory whose bytes [first element, last element] overlap
//    those of another argument held by a different foreign storage: one would be written while the
//    other is read or written. Inputs may overlap each other and themselves (they are read-only).
// Foreign device addresses are fixed when the tensor is wrapped, so the check reads them without
// locks. Tessera's own device memory is allocated by tessera and never overlaps another storage;
// a from_device wrapper of memory that tessera owns (a device pointer obtained from a borrow) is
// not detected. The unsafe opt-out (tessera::unsafe::cuda_kernel) is not checked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "tessera/kernel.h"

namespace tessera::detail {

// Why a layout may reach one element twice: dimension `dim` has stride `stride`, which does not
// exceed `span`, the elements spanned by the dimensions of smaller stride.
struct SelfOverlap {
  int dim = 0;
  int64_t stride = 0;
  int64_t span = 0;
};
// nullopt if distinct indices of `shape` reach distinct offsets through `strides` (non-negative)
// by the sufficient test above; else why not.
std::optional<SelfOverlap> self_overlap(std::span<const int64_t> shape, std::span<const int64_t> strides);

// Throws tessera::Error, naming `kernel`, the parameters and the reason and pointing to the unsafe
// opt-out, if an output of `args` may overlap itself or another argument's foreign memory (see the
// file comment). Arguments must already match the kernel's parameters (check_args).
void check_output_overlap(std::string_view kernel, std::span<const ArgDesc> args);

}  // namespace tessera::detail
