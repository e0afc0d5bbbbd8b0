// use_after_move_control.cpp: deliberate uses after move of tessera values. Not built; the
// tidy.use_after_move test needs clang-tidy to flag every line marked FLAGGED here, which shows
// that the check works on tessera's host API (with clang 14, which cannot parse all of the DSL).
#include <tessera/tessera.h>

#include <utility>

void control() {
  using namespace tessera;
  auto k = kernel("tidy_control", [](auto out, auto a) { return out.store(a.load_like(out) * c<2.5>); });
  Tensor<float, 1> x({16}), z({16}), v({16});
  auto h = k.launch_async(std::move(z).partition<16>(), x);
  z.fill(1.0f);  // FLAGGED: z was moved into the launch
  Tensor<float, 1> back = std::move(h).get();
  h.wait();  // FLAGGED: the handle gave its result away
  auto m = std::move(v).reshape<2>({4, 4});
  (void)v.numel();  // FLAGGED: v was consumed by reshape
  (void)back;
  (void)m;
}
