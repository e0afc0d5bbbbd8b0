// test_autotune.cpp: autotuned launches (tessera/autotune.h) on both targets.
//
// Covers: the first launch of a problem times every option and runs the fastest; later launches
// take the choice from the process, and after clear_tuning() from the disk cache (whose entry's
// metadata and the dump directory say what was chosen); another shape is another problem; a kernel
// that reads its output sees it as the caller left it, however often tuning ran it; an option
// that throws is skipped and a tuner whose every option throws names each error; TESSERA_AUTOTUNE=0
// and graph capture take the first option untimed; options differ in their kernels, their hints or
// their back ends, and the record names the hints and back ends; prepare (the tuner's compiles)
// loads the kernel onto the GPU.
// Every test has its own cache directory.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/kernels.h"
#include "execution_helpers.h"
#include "scoped_env.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

// y = 2 x + 1, in tiles of B.
template <int B>
auto twice_plus_one() {
  return kernel("tune_twice_plus_one_" + std::to_string(B),
                [](auto out, auto x) { return out.store(x.load_like(out) * c<2.0f> + c<1.0f>); });
}

// y = y + x: reads its own tile back.
template <int B>
auto accumulate() {
  return kernel("tune_accumulate_" + std::to_string(B),
                [](auto out, auto x) { return out.store(out.load() + x.load_like(out)); });
}

// y = 2 x + 1 with x loaded by program id (so x may be longer than y).
auto twice_plus_one_by_id() {
  return kernel("tune_by_id", [](auto out, auto x) { return out.store(load<256>(x, program_id<0>()) * c<2.0f> + c<1.0f>); });
}

Tensor<float, 1> ramp(int64_t n) {
  Tensor<float, 1> x({n});
  for (int64_t i = 0; i < n; ++i) x(i) = 0.25f * static_cast<float>(i % 97);
  return x;
}

// Every y(i) == 2 x(i) + 1.
bool twice_plus_one_holds(const Tensor<float, 1>& y, const Tensor<float, 1>& x) {
  for (int64_t i = 0; i < y.shape(0); ++i)
    if (y(i) != 2.0f * x(i) + 1.0f) return false;
  return true;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The metadata.json of every disk-cache entry under `dir` that holds a tuning record.
std::vector<std::string> tuning_entries(const std::filesystem::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (std::filesystem::exists(e.path() / "tuning")) found.push_back(read_file(e.path() / "metadata.json"));
  return found;
}

// A disk cache of the test's own and no choices in the process's memory: what a test starts from.
struct FreshTuning : test_env::FreshDiskCache {
  FreshTuning() { clear_tuning(); }
};

}  // namespace

static void tunes_once_per_problem(Target t) {
  FreshTuning fresh;
  test_env::TempDir dump;
  fresh.env.set("TESSERA_DUMP_DIR", dump.path.c_str());
  const std::filesystem::path& cache = fresh.cache.path;
  const LaunchOptions on{.target = t};
  auto tuned = autotune("tune_twice", tile_option<64>(twice_plus_one<64>()), tile_option<256>(twice_plus_one<256>()));
  auto x = ramp(3000);
  Tensor<float, 1> y({3000});

  TuningResult first = tuned.launch(on, y, std::as_const(x));
  CHECK(first.source == TuningResult::Source::timed);
  REQUIRE(first.ms.size() == 2);
  CHECK(first.ms[0] >= 0);
  CHECK(first.ms[1] >= 0);
  CHECK(first.kernel == (first.index == 0 ? "tune_twice_plus_one_64" : "tune_twice_plus_one_256"));
  CHECK(twice_plus_one_holds(y, x));

  y.fill(0.0f);
  TuningResult again = tuned.launch(on, y, std::as_const(x));
  CHECK(again.source == TuningResult::Source::memory);
  CHECK(again.index == first.index);
  CHECK(twice_plus_one_holds(y, x));

  clear_tuning();  // as a new process would: the disk cache has the choice
  y.fill(0.0f);
  TuningResult loaded = tuned.launch(on, y, std::as_const(x));
  CHECK(loaded.source == TuningResult::Source::disk);
  CHECK(loaded.index == first.index);
  CHECK(loaded.ms == first.ms);
  CHECK(twice_plus_one_holds(y, x));

  const std::vector<std::string> entries = tuning_entries(cache);
  REQUIRE(entries.size() == 1);
  CHECK_THAT(entries[0], Contains("\"tuner\": \"tune_twice\"") &&
                             Contains("\"chosen\": " + std::to_string(first.index)) && Contains("\"tile\": \"256\""));
  const std::string dumped = read_file(dump.path / ("tune_twice." + std::string(to_string(t)) + ".tuning.json"));
  CHECK_THAT(dumped, Contains("\"kernel\":\"" + first.kernel + "\""));

  auto x2 = ramp(1000);  // another shape: another problem
  Tensor<float, 1> y2({1000});
  CHECK(tuned.launch(on, y2, std::as_const(x2)).source == TuningResult::Source::timed);
  CHECK(twice_plus_one_holds(y2, x2));
  CHECK(tuning_entries(cache).size() == 2);
}
TESSERA_TARGET_TEST_CASE("an autotuned launch times its options once per problem and keeps the choice", "[autotune]",
                         tunes_once_per_problem)

static void output_restored_after_tuning(Target t) {
  FreshTuning fresh;
  const LaunchOptions on{.target = t};
  auto tuned = autotune("tune_acc", tile_option<128>(accumulate<128>()), tile_option<512>(accumulate<512>()));
  const int64_t n = 2000;
  auto x = ramp(n);
  Tensor<float, 1> y({n});
  y.fill(1.0f);
  TuningResult r = tuned.launch(on, y, std::as_const(x));
  CHECK(r.source == TuningResult::Source::timed);
  bool once = true;
  for (int64_t i = 0; i < n; ++i) once = once && std::as_const(y)(i) == 1.0f + x(i);
  CHECK(once);  // tuning ran each option several times; the output holds one application
  CHECK(tuned.launch(on, y, std::as_const(x)).source == TuningResult::Source::memory);
  for (int64_t i = 0; i < n; ++i) once = once && std::as_const(y)(i) == 1.0f + 2.0f * x(i);
  CHECK(once);
}
TESSERA_TARGET_TEST_CASE("a tuned kernel that reads its output sees it as the caller left it", "[autotune]",
                         output_restored_after_tuning)

static void failing_options(Target t) {
  FreshTuning fresh;
  const LaunchOptions on{.target = t};
  // x is longer than y: loading it like y's tiles is refused at launch, loading it by id is not.
  auto x = ramp(1024);
  Tensor<float, 1> y({1000});
  auto tuned = autotune("tune_skip", tile_option<256>(twice_plus_one<256>()), tile_option<256>(twice_plus_one_by_id()));
  TuningResult r = tuned.launch(on, y, std::as_const(x));
  CHECK(r.index == 1);
  REQUIRE(r.ms.size() == 2);
  CHECK(r.ms[0] < 0);
  CHECK(r.ms[1] >= 0);
  for (int64_t i = 0; i < 1000; ++i) REQUIRE(std::as_const(y)(i) == 2.0f * x(i) + 1.0f);

  auto broken = autotune("tune_broken", tile_option<64>(twice_plus_one<64>()), tile_option<256>(twice_plus_one<256>()));
  CHECK_THROWS_WITH(broken.launch(on, y, std::as_const(x)),
                    Contains("tessera::autotune 'tune_broken': every option failed") &&
                        Contains("option 0 (tune_twice_plus_one_64, tile 64)") &&
                        Contains("input parameter 1 has shape [1024]"));
}
TESSERA_TARGET_TEST_CASE("an option that throws is skipped; a tuner whose every option throws says why", "[autotune]",
                         failing_options)

static void untuned_launches(Target t) {
  FreshTuning fresh;
  const std::filesystem::path& cache = fresh.cache.path;
  const LaunchOptions on{.target = t};
  auto tuned = autotune("tune_off", tile_option<64>(twice_plus_one<64>()), tile_option<256>(twice_plus_one<256>()));
  auto x = ramp(500);
  Tensor<float, 1> y({500});
  {
    test_env::EnvGuard off;
    off.set("TESSERA_AUTOTUNE", "0");
    TuningResult r = tuned.launch(on, y, std::as_const(x));
    CHECK(r.source == TuningResult::Source::off);
    CHECK(r.index == 0);
    CHECK(r.ms.empty());
    CHECK(twice_plus_one_holds(y, x));
  }
  CHECK(tuning_entries(cache).empty());  // nothing was recorded

  Tensor<float, 1> z({500});
  Graph g(t);
  {
    auto recording = g.capture();
    CHECK(tuned.launch(on, z, std::as_const(x)).source == TuningResult::Source::off);
  }
  g.replay();
  CHECK(twice_plus_one_holds(z, x));
  CHECK(tuned.launch(on, z, std::as_const(x)).source == TuningResult::Source::timed);
}
TESSERA_TARGET_TEST_CASE("TESSERA_AUTOTUNE=0 and graph capture take the first option untimed", "[autotune]",
                         untuned_launches)

TEST_CASE("autotuned options differ in their kernels, their hints or their back ends", "[autotune][cpu]") {
  FreshTuning fresh;
  const std::filesystem::path& cache = fresh.cache.path;
  auto same = autotune("tune_same", tile_option<64>(twice_plus_one<64>()), tile_option<64>(twice_plus_one<64>()));
  auto x = ramp(100);
  Tensor<float, 1> y({100});
  const LaunchOptions on{.target = Target::cpu};
  CHECK_THROWS_WITH(same.launch(on, y, std::as_const(x)),
                    Contains("tessera::autotune 'tune_same': options 0 and 1 are both kernel 'tune_twice_plus_one_64' "
                             "with the same hints"));
  // The same kernel with other hints is another option (the CPU target ignores hints, so both run
  // the same code here); the record names each option's hints.
  auto hinted = autotune("tune_hinted", tile_option<64>(twice_plus_one<64>()),
                         tile_option<64>(twice_plus_one<64>(), {.pipeline_stages = 3, .group_rows = 16}));
  TuningResult r = hinted.launch(on, y, std::as_const(x));
  CHECK(r.source == TuningResult::Source::timed);
  CHECK(twice_plus_one_holds(y, x));
  const std::vector<std::string> entries = tuning_entries(cache);
  REQUIRE(entries.size() == 1);
  CHECK_THAT(entries[0], Contains("\"pipeline_stages\": 3") && Contains("\"group_rows\": 16"));

  // The same kernel on another back end is another option too (the CPU target has no back ends);
  // the record names the back end of each option that sets one.
  auto backends = autotune("tune_backends", tile_option<64>(twice_plus_one<64>(), Backend::nvvm),
                           tile_option<64>(twice_plus_one<64>(), Backend::tileir, {.occupancy = 2}));
  y.fill(0.0f);
  CHECK(backends.launch(on, y, std::as_const(x)).source == TuningResult::Source::timed);
  CHECK(twice_plus_one_holds(y, x));
  REQUIRE(tuning_entries(cache).size() == 2);
  bool named = false;
  for (const std::string& e : tuning_entries(cache))
    named = named || (e.find("tune_backends") != std::string::npos && e.find("\"backend\": \"nvvm\"") != std::string::npos &&
                      e.find("\"backend\": \"tileir\"") != std::string::npos && e.find("\"occupancy\": 2") != std::string::npos);
  CHECK(named);
  auto twice = autotune("tune_twice_tileir", tile_option<64>(twice_plus_one<64>(), Backend::tileir),
                        tile_option<64>(twice_plus_one<64>(), Backend::tileir));
  CHECK_THROWS_WITH(twice.launch(on, y, std::as_const(x)), Contains("with the same hints and back end"));
}

TEST_CASE("prepare loads a kernel onto the GPU, so that its first launch compiles nothing", "[gpu][autotune]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  FreshTuning fresh;
  // A kernel of its own name, so that no other test loaded it first in this process.
  auto k = kernel("prepare_loads", [](auto out, auto x) { return out.store(x.load_like(out) * c<2.0f> + c<1.0f>); });
  auto x = ramp(1000);
  Tensor<float, 1> y({1000});
  const LaunchOptions o;
  k.prepare(o, y.partition<128>(), std::as_const(x));
  // The compiled kernel the launch will find in the process's cache: loaded already.
  const std::array<detail::ArgDesc, 2> args{detail::to_arg(y.partition<128>()), detail::to_arg(std::as_const(x))};
  const detail::LaunchRequest r{"prepare_loads", decltype(k)::ast<decltype(y.partition<128>()), const Tensor<float, 1>&>(),
                                args, nullptr, &o};
  CHECK(detail::lookup_or_compile(r, default_target())->code.loaded.loaded());
  k.launch(o, y.partition<128>(), std::as_const(x));
  CHECK(twice_plus_one_holds(y, x));
}
