// tileir_targets.cpp: the --tileir-targets observer (tileir_targets.h). Each new (kernel,
// specialization) a launch or compile request brings is compiled for sm_90 and sm_100a through
// the tileir backend while the request waits (the two on two threads); the results are kept for the
// report at the end. The second thread's own compile requests reach the observer again and end at
// the check of the kernels already seen.
#include "tileir_targets.h"

#include <fmt/format.h>

#include <cstdio>

#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/kernels.h"
#include "compiler/specialization.h"
#include "compiler/tileir.h"
#include "elf_bytes.h"
#include "tessera/kernel.h"

namespace tessera::testing {
namespace {

struct Results {
  std::mutex mutex;
  std::set<std::string> seen;                  // target, kernel, specialization and AST
  std::set<std::string> compiled;              // kernel names with cubins for both
  std::map<std::string, std::string> no_form;  // kernel name -> why Tile IR cannot express it
  std::vector<std::string> failures;           // kernel, architecture and error
  int with_cubins = 0;                         // specializations compiled for both
  int without_form = 0;                        // specializations Tile IR cannot express
};

Results& results() {
  static Results* r = new Results();
  return *r;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

void compile_for_tileir_targets(const detail::LaunchRequest& r, Target) {
  const bool fixed = r.options && r.options->static_shapes;
  detail::Specialization spec;
  detail::specialize(r.args, Target::sm_90, fixed, spec);
  std::string key = fmt::format("{}\n{}\n{}", r.kernel, spec.key_text(), r.ast);
  Results& res = results();
  {
    std::lock_guard lock(res.mutex);
    if (!res.seen.insert(std::move(key)).second) return;
  }
  // Both architectures at once (tileiras is a process of its own): the one outcome kept is, in
  // this order, a failure, no Tile IR form, or cubins for both.
  auto compile_for = [&r](Target t) -> std::pair<int, std::string> {  // 0 cubin, 1 no form, 2 failure
    LaunchOptions options = r.options ? *r.options : LaunchOptions{};
    options.backend = Backend::tileir;
    options.target = t;
    detail::LaunchRequest q = r;
    q.options = &options;
    q.elapsed_ms = nullptr;
    try {
      if (is_elf(detail::compile(q, t).cubin)) return {0, ""};
      return {2, fmt::format("{} for {}: no cubin", r.kernel, to_string(t))};
    } catch (const detail::TileIrUnsupported& e) {
      return {1, first_line(e.what())};
    } catch (const std::exception& e) {
      return {2, fmt::format("{} for {}: {}", r.kernel, to_string(t), e.what())};
    }
  };
  std::future<std::pair<int, std::string>> sm100 = std::async(std::launch::async, compile_for, Target::sm_100a);
  std::pair<int, std::string> outcome = compile_for(Target::sm_90);
  std::pair<int, std::string> other = sm100.get();
  if (other.first > outcome.first) outcome = std::move(other);
  std::lock_guard lock(res.mutex);
  if (outcome.first == 2) {
    res.failures.push_back(std::move(outcome.second));
  } else if (outcome.first == 1) {
    res.no_form.emplace(std::string(r.kernel), std::move(outcome.second));
    ++res.without_form;
  } else {
    res.compiled.insert(std::string(r.kernel));
    ++res.with_cubins;
  }
}

// Prints what the observer compiled and why the rest could not be; returns the number of failed
// compiles.
int report_tileir_targets(std::FILE* out) {
  Results& res = results();
  std::lock_guard lock(res.mutex);
  fmt::print(out, "tileir targets: {} specializations of {} kernels gave cubins for sm_90 and sm_100a\n",
             res.with_cubins, res.compiled.size());
  fmt::print(out, "tileir targets: {} specializations of {} kernels without a Tile IR form:\n", res.without_form,
             res.no_form.size());
  for (const auto& [kernel, why] : res.no_form) fmt::print(out, "  {}: {}\n", kernel, why);
  fmt::print(out, "tileir targets: {} failed compiles{}\n", res.failures.size(), res.failures.empty() ? "" : ":");
  for (const std::string& f : res.failures) fmt::print(out, "  {}\n", f);
  return static_cast<int>(res.failures.size());
}

}  // namespace

int run_with_tileir_targets(const std::function<int()>& run_tests) {
  if (!backend_available(Backend::tileir)) {
    std::printf("tileir targets skipped: tileiras is not installed (scripts/install-tileiras.sh)\n");
    return 0;
  }
  detail::set_launch_observer(&compile_for_tileir_targets);
  const int status = run_tests();
  const int failed = report_tileir_targets(stdout);
  return status != 0 ? status : failed != 0 ? 1 : 0;
}

}  // namespace tessera::testing
