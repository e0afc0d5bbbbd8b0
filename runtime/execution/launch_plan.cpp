// launch_plan.cpp: the GPU code of a KernelCode (which image a GPU loads, its loaded entry point)
// and the kernel ABI: how a launch's arguments become parameter slots (see launch_plan.h).
#include "execution/launch_plan.h"

#include <fmt/format.h>

#include <cstring>

#include "tessera/errors.h"
#include "tessera/tensor.h"

namespace tessera::detail {

using Kind = ArgDesc::Kind;

std::span<const char> KernelCode::image(const CudaDriver& driver) const {
  switch (device_load(*target, driver.compute_capability())) {
    case DeviceLoad::cubin: return cubin;
    case DeviceLoad::ptx:
      if (!linked) return {ptx.data(), ptx.size() + 1};
      throw Error(fmt::format("tessera: {}: compiled for {}, which the GPU ({}, {}) runs only through PTX, and it links "
                              "device code that its PTX alone does not hold; compile it for the GPU's own target",
                              *label, target->name, driver.device_name(), driver.arch()));
    case DeviceLoad::none: break;
  }
  throw Error(fmt::format("tessera: {}: compiled for {} but the GPU ({}) is {}, which runs neither its cubin nor its "
                          "PTX; launch for the GPU's own target (the default) or Target::cpu",
                          *label, target->name, driver.device_name(), driver.arch()));
}

CUfunction KernelCode::function(CudaDriver& driver, unsigned shared_bytes) const {
  const std::span<const char> loads = image(driver);  // its errors name the label already
  try {
    return loaded.function(driver, loads, symbol, shared_bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("tessera: {}: {}", *label, e.what()));
  }
}

void LaunchPlan::fill_slots(std::span<const ArgDesc> args, std::span<const int64_t> addresses,
                            std::vector<int64_t>& slots) const {
  slots.clear();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (a.kind == Kind::scalar) {
      int64_t v = 0;
      std::memcpy(&v, a.scalar.data(), sizeof(v));
      slots.push_back(v);
      continue;
    }
    const int64_t p = addresses[i];
    if (code->abi == ArgumentAbi::pointer) {
      slots.push_back(p + a.offset * static_cast<int64_t>(dtype_size(a.dtype)));
      continue;
    }
    slots.push_back(p);
    slots.push_back(p);
    slots.push_back(a.offset);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.shape[d]);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.strides[d]);
  }
  if (code->programs_slot) slots.push_back(programs.dims[0]);
}

bool covers_storage(const ArgDesc& a) {
  const auto rank = static_cast<std::size_t>(a.rank);
  if (a.offset != 0 || !dense_row_major({a.shape.data(), rank}, {a.strides.data(), rank})) return false;
  int64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= a.shape[d];
  return static_cast<std::size_t>(n) * dtype_size(a.dtype) == a.storage->bytes();
}

}  // namespace tessera::detail
