// An unsafe kernel takes tessera tensors only as explicit borrows, unsafe::out(t) or
// unsafe::in(t): a plain tensor does not say whether the kernel may write it.
// expect: tessera::unsafe: pass tensors as unsafe::out\(t\) or unsafe::in\(t\)
//
// Built twice by tests/compile_fail/CMakeLists.txt (see store_into_input.cpp).
#include "tessera/unsafe.h"

void f() {
  using namespace tessera;
  auto k = unsafe::cuda_kernel("copy", R"(extern "C" __global__ void copy(float* o, const float* i) { o[0] = i[0]; })");
  Tensor<float, 1> x({16}), z({16});
#ifdef TESSERA_SHOULD_FAIL
  k.launch({.blocks = {1}}, z, unsafe::in(x));
#else
  k.launch({.blocks = {1}}, unsafe::out(z), unsafe::in(x));
#endif
}
