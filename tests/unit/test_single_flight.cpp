// Tests for runtime/cache/single_flight.h: concurrent callers of one key compute it once and share
// the value, distinct keys do not wait for each other, a failed computation is forgotten (and its
// exception reaches every caller that waited for it), and clear() forgets values.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cache/single_flight.h"

using tessera::detail::SingleFlight;

TEST_CASE("concurrent callers of one key compute it once", "[single_flight]") {
  SingleFlight<std::shared_ptr<int>> flights;
  std::atomic<int> computed{0};
  std::vector<std::shared_ptr<int>> got(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      got[i] = flights.get("k", [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the others arrive meanwhile
        computed++;
        return std::make_shared<int>(42);
      });
    });
  for (auto& t : threads) t.join();
  CHECK(computed == 1);
  for (const auto& v : got) CHECK(v == got[0]);
  bool found = false;
  CHECK(*flights.get("k", [] { return std::make_shared<int>(0); }, &found) == 42);
  CHECK(found);
  CHECK(*flights.get("other", [] { return std::make_shared<int>(7); }, &found) == 7);
  CHECK_FALSE(found);
}

TEST_CASE("a failed computation is forgotten", "[single_flight]") {
  SingleFlight<int> flights;
  CHECK_THROWS_WITH(flights.get("k", []() -> int { throw std::runtime_error("no compiler"); }), "no compiler");
  CHECK(flights.get("k", [] { return 3; }) == 3);  // tried again
  flights.clear();
  CHECK(flights.get("k", [] { return 4; }) == 4);
}
