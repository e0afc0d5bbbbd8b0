// test_stream_loads.cpp: K loops whose weight tiles tile-stream-loads copies ahead into rings in
// shared memory (per-thread cp.async; with CompilerHints::bulk_streams on sm_90 bulk rings: one
// thread's cp.async.bulk per row, the vector chunks too). The products match a host reference in
// double, on both targets and on ragged shapes (rows past N, columns past K, K shorter than one
// tile: the element path of a bulk ring; rows not aligned to 16 bytes, which are not streamed),
// with rings of four and of two slots and none (CompilerHints::stream_stages 4, 2, and 1 or 0, the
// compiler's choice), per-thread and bulk; the sm_90 PTX (no GPU needed) has the copies and the
// waits the hints ask for.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "execution_helpers.h"
#include "matvec_reference.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;
using exec_test::random_tensor;
using matvec_reference::mismatches;
using matvec_reference::product;
using matvec_reference::Rows;

namespace {

// y = W v for W [N, K] bf16 row-major and v f32 [K]: 16 x 512 weight tiles, 16 KiB per
// iteration (streamed), the vector broadcast along the tile's rows (not streamed).
auto stream_matvec() { return matvec_reference::matvec_16x512("stream_matvec"); }

// y = (Wa v) * (Wb v): two weight tiles per iteration, one ring each (32 KiB per iteration).
auto stream_pair() {
  return kernel("stream_pair", [](auto y, auto wa, auto wb, auto v) {
    auto r = for_range(
        (dim<0>(v) + c<511>) / c<512>,
        [=](auto k, auto a, auto b) {
          auto x = reshape<1, 512>(load<512>(v, k));
          return carry(a + cast<DType::f32>(load<16, 512>(wa, program_id<0>(), k)) * x,
                       b + cast<DType::f32>(load<16, 512>(wb, program_id<0>(), k)) * x);
        },
        full<DType::f32, 16, 512>(c<0.0>), full<DType::f32, 16, 512>(c<0.0>));
    return y.store(reshape<16>(sum<1>(get<0>(r))) * reshape<16>(sum<1>(get<1>(r))));
  });
}

void streamed_products(Target target) {
  const std::pair<int64_t, int64_t> shapes[] = {{37, 1000}, {64, 8}, {16, 2048}, {3, 520}, {40, 300}};
  for (auto [n, k] : shapes)
    for (auto [stages, bulk] : {std::pair{0, false}, {1, false}, {2, false}, {4, false}, {2, true}, {4, true}}) {
      INFO("N = " << n << ", K = " << k << ", stream_stages = " << stages << ", bulk_streams = " << bulk);
      auto w = random_tensor<bfloat16, 2>({n, k}, -1, 1, 31);
      auto w2 = random_tensor<bfloat16, 2>({n, k}, -1, 1, 32);
      auto v = random_tensor<float, 1>({k}, -1, 1, 33);
      LaunchOptions options;
      options.target = target;
      options.hints.stream_stages = stages;
      options.hints.bulk_streams = bulk;
      Tensor<float, 1> y({n}), z({n});
      stream_matvec().launch(options, y.partition<16>(), w, v);
      const Rows a = product(w, v), b = product(w2, v);
      CHECK(mismatches(y, a.value, a.magnitude, k) == 0);
      stream_pair().launch(options, z.partition<16>(), w, w2, v);
      std::vector<double> want(n), magnitude(n);
      for (int64_t i = 0; i < n; ++i) {
        want[i] = a.value[i] * b.value[i];
        magnitude[i] = a.magnitude[i] * std::abs(b.value[i]) + std::abs(a.value[i]) * b.magnitude[i];
      }
      CHECK(mismatches(z, want, magnitude, 2 * k) == 0);
    }
}

// The pending counts of the PTX's `cp.async.wait_group N` instructions.
std::vector<int> waits(const std::string& ptx) {
  std::vector<int> n;
  const std::string op = "cp.async.wait_group";
  for (auto at = ptx.find(op); at != std::string::npos; at = ptx.find(op, at + 1))
    n.push_back(std::stoi(ptx.substr(ptx.find_first_not_of(" \t", at + op.size()))));
  return n;
}

// The sm_90 PTX of `k` for a 64-element output in 16-row tiles, with rings of `stages` slots
// (bulk rings with `bulk`).
template <class K, class... Args>
std::string sm90_ptx(int stages, bool bulk, K&& k, Args&&... args) {
  Tensor<float, 1> y({64});
  LaunchOptions o;
  o.target = Target::sm_90;
  o.hints.stream_stages = stages;
  o.hints.bulk_streams = bulk;
  return k.compile(o, y.partition<16>(), args...).ptx;
}

}  // namespace

TESSERA_TARGET_TEST_CASE("streamed loads: matrix-vector products on ragged shapes", "[stream]", streamed_products)

TEST_CASE("streamed loads: the sm_90 PTX copies the weight tiles ahead as the hint asks", "[stream][compile]") {
  Tensor<bfloat16, 2> w({64, 1024}), odd({64, 300});
  Tensor<float, 1> v({1024}), v_odd({300});
  auto ptx = [&](int stages, auto&& k, auto&&... args) { return sm90_ptx(stages, false, k, args...); };
  // Every wait of `text` leaves `pending` groups in flight, and there is one.
  auto waits_for = [](const std::string& text, int pending) {
    const std::vector<int> w = waits(text);
    return !w.empty() && std::all_of(w.begin(), w.end(), [&](int n) { return n == pending; });
  };
  // Four slots of 16 KiB, three tiles ahead (two 16-byte copies per thread and tile at 512
  // threads): each iteration (the loop is unrolled for the vector's loads) waits for all but the
  // three newest groups. The ring is dynamic shared memory.
  const std::string ring = ptx(4, stream_matvec(), w, v);
  CHECK(occurrences(ring, "cp.async.cg.shared.global") > 0);
  CHECK(occurrences(ring, "cp.async.bulk") == 0);
  CHECK(waits_for(ring, 3));
  CHECK(occurrences(ring, "// tessera.dynamic_shared_bytes") == 1);
  CHECK(waits_for(ptx(2, stream_matvec(), w, v), 1));
  // Two streams of 16 KiB: two slots each within the 64 KiB the rings of a loop may take.
  CHECK(waits_for(ptx(4, stream_pair(), w, w, v), 1));
  // No ring, by default or asked for: the tiles are loaded into registers.
  CHECK(occurrences(ptx(0, stream_matvec(), w, v), "cp.async") == 0);
  CHECK(occurrences(ptx(1, stream_matvec(), w, v), "cp.async") == 0);
  // Rows of 600 bytes are not 16-byte aligned: loaded into registers.
  CHECK(occurrences(ptx(4, stream_matvec(), odd, v_odd), "cp.async") == 0);
}

TEST_CASE("streamed loads: the sm_90 PTX fills bulk rings, the vector chunks included", "[stream][compile]") {
  Tensor<bfloat16, 2> w({64, 1024}), odd({64, 300});
  Tensor<float, 1> v({1024}), v_odd({300}), y({64});
  auto ptx = [&](int stages, auto&& k, auto&&... args) { return sm90_ptx(stages, true, k, args...); };
  // One thread's cp.async.bulk per row of each tile (in a loop over the rows), completing on the
  // slot's full barrier, which every thread waits for; a slot is released once per warp. No
  // per-thread cp.async, and no vector load from global memory in the K loop: the vector chunk
  // comes through its own ring.
  const std::string ring = ptx(4, stream_matvec(), w, v);
  CHECK(occurrences(ring, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") >= 2);
  CHECK(occurrences(ring, "mbarrier.try_wait.parity") > 0);
  CHECK(occurrences(ring, "mbarrier.arrive.expect_tx") > 0);
  CHECK(occurrences(ring, "bar.warp.sync") > 0);
  CHECK(occurrences(ring, "cp.async.cg") == 0);
  CHECK(occurrences(ring, "cp.async.wait_group") == 0);
  CHECK(occurrences(ring, "// tessera.dynamic_shared_bytes") == 1);
  CHECK(occurrences(ptx(4, stream_pair(), w, w, v), "cp.async.bulk.shared::cluster") >= 3);
  // No ring by default, nor for rows that are not 16-byte aligned.
  CHECK(occurrences(ptx(0, stream_matvec(), w, v), "cp.async") == 0);
  CHECK(occurrences(ptx(4, stream_matvec(), odd, v_odd), "cp.async") == 0);
  // Before sm_90 the hint is ignored: per-thread cp.async rings.
  LaunchOptions o80;
  o80.target = Target::sm_80;
  o80.hints.stream_stages = 4;
  o80.hints.bulk_streams = true;
  const std::string ampere = stream_matvec().compile(o80, y.partition<16>(), w, v).ptx;
  CHECK(occurrences(ampere, "cp.async.cg.shared.global") > 0);
  CHECK(occurrences(ampere, "cp.async.bulk") == 0);
}

TEST_CASE("streamed loads: stream_stages outside 0 to 8 is an error naming the kernel", "[stream]") {
  Tensor<bfloat16, 2> w({64, 1024});
  Tensor<float, 1> v({1024}), y({64});
  LaunchOptions o;
  o.target = Target::cpu;
  o.hints.stream_stages = 9;
  CHECK_THROWS_WITH(stream_matvec().launch(o, y.partition<16>(), w, v),
                    Catch::Contains("kernel 'stream_matvec'") && Catch::Contains("stream_stages is 9"));
}
