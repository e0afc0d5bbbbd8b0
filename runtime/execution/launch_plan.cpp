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
    case DeviceLoad::cubin:
      if (loads_ptx) return {ptx.data(), ptx.size() + 1};
      return cubin;
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

int KernelCode::resident_clusters(CudaDriver& driver, unsigned block, unsigned shared_bytes, unsigned cluster) const {
  if (const int known = loaded.known_resident_clusters()) return known;
  function(driver, shared_bytes);
  try {
    return loaded.resident_clusters(driver, block, shared_bytes, cluster);
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
  for (const TensorMapSpec& map : code->tensor_maps) {
    TensorMapBytes bytes;
    encode_tensor_map(map, args, addresses, &bytes);
    slots.insert(slots.end(), std::begin(bytes.words), std::end(bytes.words));
  }
}

void LaunchPlan::parameter_pointers(std::vector<int64_t>& slots, std::vector<void*>& params) const {
  params.clear();
  const std::size_t wide = code->tensor_maps.size() * kTensorMapSlots;
  const std::size_t narrow = slots.size() - wide;
  for (std::size_t i = 0; i < narrow; ++i) params.push_back(&slots[i]);
  for (std::size_t i = narrow; i < slots.size(); i += kTensorMapSlots) params.push_back(&slots[i]);
}

void LaunchPlan::encode_tensor_map(const TensorMapSpec& map, std::span<const ArgDesc> args,
                                   std::span<const int64_t> addresses, TensorMapBytes* out) const {
  const ArgDesc& a = args[static_cast<std::size_t>(map.param)];
  const std::size_t bytes = dtype_size(a.dtype);
  const int data_type = a.dtype == DType::bf16 ? kTensorMapBFloat16
                        : a.dtype == DType::f16 ? kTensorMapFloat16
                        : is_float8(a.dtype)    ? kTensorMapUInt8
                                                : kTensorMapFloat32;
  const int swizzle = map.swizzle_bytes == 128 ? kTensorMapSwizzle128B
                      : map.swizzle_bytes == 64 ? kTensorMapSwizzle64B
                      : map.swizzle_bytes == 32 ? kTensorMapSwizzle32B
                                                : 0;
  // The contiguous dimension is the map's inner one: the rows of a row-major view, the columns of
  // a view with contiguous columns (ArgLayout::aligned_columns, e.g. a transposed weight).
  const int inner = a.strides[1] == 1 ? 1 : 0;
  const std::uint64_t dims[2] = {static_cast<std::uint64_t>(a.shape[inner]),
                                 static_cast<std::uint64_t>(a.shape[1 - inner])};
  const std::uint64_t strides[1] = {static_cast<std::uint64_t>(a.strides[1 - inner]) * bytes};
  const unsigned box[2] = {map.box_inner, map.box_outer};
  const unsigned element_strides[2] = {1, 1};
  void* address = reinterpret_cast<void*>(addresses[static_cast<std::size_t>(map.param)] +
                                          a.offset * static_cast<int64_t>(bytes));
  CudaDriver& driver = CudaDriver::get();
  const CUresult r = driver.cuTensorMapEncodeTiled(out, data_type, 2, address, dims, strides, box, element_strides,
                                                   kTensorMapInterleaveNone, swizzle, kTensorMapL2Promotion256B,
                                                   kTensorMapOobFillZeros);
  if (r != kCudaSuccess)
    throw Error(fmt::format("tessera: {}: argument {}: the GPU's driver cannot describe it for TMA ({} x {} {}, "
                            "strides {} x {} elements, address {}): {}",
                            *code->label, map.param, a.shape[0], a.shape[1], dtype_name(a.dtype), a.strides[0],
                            a.strides[1], address, driver.error_text(r)));
}

bool covers_storage(const ArgDesc& a) {
  const auto rank = static_cast<std::size_t>(a.rank);
  if (a.offset != 0 || !dense_row_major({a.shape.data(), rank}, {a.strides.data(), rank})) return false;
  int64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= a.shape[d];
  return static_cast<std::size_t>(n) * dtype_size(a.dtype) == a.storage->bytes();
}

}  // namespace tessera::detail
