// main.cpp: doubles a vector with a tessera kernel and checks it.
#include <tessera/tessera.h>

#include <cstdio>

int main() {
  tessera::Tensor<float, 1> x({300}), y({300});
  for (int i = 0; i < 300; ++i) x(i) = static_cast<float>(i);
  auto twice = tessera::kernel("consumer_twice", [](auto out, auto a) { return out.store(a.load_like(out) * tessera::c<2.0>); });
  twice.launch(y.partition<128>(), x);
  for (int i = 0; i < 300; ++i)
    if (y(i) != 2.0f * static_cast<float>(i)) return 1;
  std::printf("consumer ok\n");
  return 0;
}
