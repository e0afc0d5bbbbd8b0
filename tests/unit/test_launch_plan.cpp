// Tests for runtime/execution/launch_plan.h: how a launch's arguments become parameter slots in
// each ABI (tile kernels' memref descriptors with the trailing programs count, unsafe kernels'
// element addresses), and which tensor arguments cover their storage.
#include <catch2/catch.hpp>

#include <tessera/tessera.h>

#include <cstdint>
#include <vector>

#include "execution/launch_plan.h"

using namespace tessera;
using detail::ArgDesc;
using detail::ArgumentAbi;
using detail::KernelCode;
using detail::LaunchPlan;

namespace {

// A scalar argument: an int32 in the low bytes of its 8-byte slot.
ArgDesc scalar_of(std::int32_t v) { return detail::to_arg(v); }

}  // namespace

TEST_CASE("a tile kernel's slots are memref descriptors, then the programs along x", "[launch_plan]") {
  Tensor<float, 2> t({4, 8});
  Tensor<float, 2> view = t.slice(0, 1, 3);
  std::vector<ArgDesc> args{detail::tensor_arg(ArgDesc::Kind::out, t), detail::tensor_arg(ArgDesc::Kind::in, view),
                            scalar_of(7)};
  KernelCode code;
  code.abi = ArgumentAbi::memref;
  LaunchPlan plan;
  plan.code = &code;
  plan.programs.dims = {5, 2, 1};
  std::vector<int64_t> slots{99};  // cleared first
  plan.fill_slots(args, std::vector<int64_t>{1000, 2000, 0}, slots);
  // (ptr, ptr, offset, sizes, strides) per tensor; the view keeps its storage's address and offset.
  CHECK(slots == std::vector<int64_t>{1000, 1000, 0, 4, 8, 8, 1, 2000, 2000, 8, 2, 8, 8, 1, 7});
  code.programs_slot = true;  // programs sharing CTAs: the count along x follows
  plan.fill_slots(args, std::vector<int64_t>{1000, 2000, 0}, slots);
  CHECK(slots.size() == 16);
  CHECK(slots.back() == 5);
}

TEST_CASE("an unsafe kernel's slots are element addresses and values", "[launch_plan]") {
  Tensor<float, 2> t({4, 8});
  Tensor<float, 2> view = t.slice(0, 1, 3);
  std::vector<ArgDesc> args{detail::tensor_arg(ArgDesc::Kind::out, view), scalar_of(5)};
  KernelCode code;
  code.abi = ArgumentAbi::pointer;
  LaunchPlan plan;
  plan.code = &code;
  std::vector<int64_t> slots;
  plan.fill_slots(args, std::vector<int64_t>{4096, 0}, slots);
  CHECK(slots == std::vector<int64_t>{4096 + 8 * 4, 5});  // the view starts 8 floats in
}

TEST_CASE("only a dense tensor from its storage's start covers it", "[launch_plan]") {
  Tensor<float, 2> t({4, 8});
  CHECK(detail::covers_storage(detail::tensor_arg(ArgDesc::Kind::out, t)));
  CHECK_FALSE(detail::covers_storage(detail::tensor_arg(ArgDesc::Kind::out, t.slice(0, 0, 2))));
  CHECK_FALSE(detail::covers_storage(detail::tensor_arg(ArgDesc::Kind::out, t.slice(1, 0, 4))));
}

TEST_CASE("a plan with no programs is empty", "[launch_plan]") {
  LaunchPlan plan;
  CHECK_FALSE(plan.empty());
  plan.programs.dims = {3, 0, 1};
  CHECK(plan.empty());
}
