// launch_timed returns the kernel's time, not outputs: it takes borrowed outputs only.
// expect: tessera: launch_timed takes borrowed outputs
//
// Built twice by tests/compile_fail/CMakeLists.txt (see store_into_input.cpp).
#include "tessera/kernel.h"

#include <utility>

void f() {
  using namespace tessera;
  auto k = kernel("timed_owned", [](auto out, auto a) { return out.store(a.load_like(out)); });
  Tensor<float, 1> x({16}), z({16});
#ifdef TESSERA_SHOULD_FAIL
  k.launch_timed(Target::cpu, std::move(z).partition<16>(), x);
#else
  k.launch_timed(Target::cpu, z.partition<16>(), x);
#endif
}
