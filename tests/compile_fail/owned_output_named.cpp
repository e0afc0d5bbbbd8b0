// An output moved into a launch through a named OwnedPartition must be passed with std::move:
// the launch takes the tensor, so the call site has to say so.
// expect: tessera: pass a named OwnedPartition with std::move
//
// Built twice by tests/compile_fail/CMakeLists.txt (see store_into_input.cpp).
#include "tessera/kernel.h"

#include <utility>

void f() {
  using namespace tessera;
  auto k = kernel("owned_named", [](auto out, auto a) { return out.store(a.load_like(out)); });
  Tensor<float, 1> x({16}), z({16});
  auto p = std::move(z).partition<16>();
#ifdef TESSERA_SHOULD_FAIL
  auto h = k.launch_async(p, x);
#else
  auto h = k.launch_async(std::move(p), x);
#endif
  Tensor<float, 1> back = std::move(h).get();
}
