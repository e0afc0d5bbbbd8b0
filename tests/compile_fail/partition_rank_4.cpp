// An output partition of rank 4 is rejected: the grid of programs has three axes, so a program's
// tile is indexed by program_id<0..2> (a rank-4 tensor can still be an input).
// expect: tessera: an output partition has rank 1 to 3
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the partition below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/tensor.h"

void partition_it() {
#ifdef TESSERA_SHOULD_FAIL
  tessera::Tensor<float, 4> t({2, 3, 4, 64});
  auto p = t.partition<1, 1, 1, 64>();
#else
  tessera::Tensor<float, 4> t4({2, 3, 4, 64});
  auto t = std::move(t4).reshape<3>({6, 4, 64});
  auto p = t.partition<1, 1, 64>();
#endif
  (void)p;
}
