// two_rows_kernel.h: a row kernel of two 16-bit inputs combined through two reductions,
// p * sum(p * q) + q * max(q) over 1 x W rows, widened to f32 and stored in the inputs' dtype.
// Both rows are used again after the reductions: the case of the launcher's register cap, its
// retry with fewer threads (f16) and its variant that widens bf16 rows again after a reduction
// (bf16). Shared by test_occupancy.cpp (what it compiles to) and test_kernels.cpp (what it computes).
#pragma once

#include <tessera/tessera.h>

#include <string>

namespace test_kernels {

template <tessera::DType DT>
auto two_rows(std::string name) {
  using namespace tessera;
  return kernel(std::move(name), [](auto o, auto p_in, auto q_in) {
    auto p = cast<DType::f32>(p_in.load_like(o));
    auto q = cast<DType::f32>(q_in.load_like(o));
    return o.store(cast<DT>(p * sum<1>(p * q) + q * max<1>(q)));
  });
}

}  // namespace test_kernels
