// fuzz_kernels.cpp: the kernel fuzzer's command line.
//
//   fuzz_kernels [--seed S] [--count N] [--time SECONDS]
//                [--target cpu|sm_80|sm_89|sm_90|sm_100a | --gpu] [--gemm] [--mutate] [--minimize]
//                [--print] [--max-elems N] [--case-timeout SECONDS] [--memory-limit-mb N]
//                [--compile-only]
//
// Case i of a run has seed S + i (S: --seed, else random, printed first); a failing case prints
// its seed, and `--seed <it> --count 1` runs that case alone. Default mode: each case is a
// generated kernel (kernel_generator.h) launched on the target and compared with the reference
// interpreter (fuzz_runner.h); --minimize shrinks a failing kernel's AST before printing it.
// --gemm: the kernels are of the tensor-core GEMM class instead (gemm_generator.h), which the
// general generator seldom writes; sm_80 and sm_89 (their PTX runs on any later GPU) reach the
// mma.sync lowering and its 8-bit form, sm_90 the wgmma one.
// --mutate: each case is a generated kernel's text after random edits (ast_mutator.h), which must
// run or throw tessera::Error. --compile-only: each generated kernel is only compiled for the
// target, which must succeed (sm_90 and sm_100a need no GPU then). The process supervises workers (itself with --worker) that run the
// cases, so that a case that crashes the process or runs past --case-timeout is reported with its
// seed and the run goes on with the next one. On the CPU target a worker's heap is limited
// (RLIMIT_DATA, default 4 GiB; not under ASan or TSan, whose shadow memory counts against it) so that a mutated text
// asking for a huge tile fails its allocation instead of exhausting the shared machine. Exit
// status 0 when every case passed, 1 otherwise, 2 on bad usage or a GPU target without a GPU.
#include <fmt/format.h>
#include <tessera/tessera.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast_mutator.h"
#include "case_minimizer.h"
#include "fuzz_runner.h"
#include "gemm_generator.h"
#include "kernel_generator.h"

using namespace tessera;
using namespace tessera::fuzz;

namespace {

struct Options {
  uint64_t seed = 0;
  bool seed_given = false;
  uint64_t count = 0;  // 0: no limit
  double time_s = 0;   // 0: no limit
  std::string target = "cpu";
  bool mutate = false, minimize = false, print = false, worker = false, compile_only = false, gemm = false;
  int max_elems = 1024;
  int case_timeout_s = 120;
  int64_t memory_limit_mb = -1;  // -1: 4096 on the CPU target, none on a GPU (the driver maps much)
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "fuzz_kernels: %s\nusage: fuzz_kernels [--seed S] [--count N] [--time SECONDS] "
               "[--target cpu|sm_80|sm_89|sm_90|sm_100a | --gpu] [--gemm] [--mutate] [--minimize] [--print] [--max-elems N] "
               "[--case-timeout SECONDS] [--memory-limit-mb N] [--compile-only]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--seed") o.seed = std::stoull(value()), o.seed_given = true;
    else if (a == "--count") o.count = std::stoull(value());
    else if (a == "--time") o.time_s = std::stod(value());
    else if (a == "--target") o.target = value();
    else if (a == "--gpu") o.target = "sm_90";
    else if (a == "--mutate") o.mutate = true;
    else if (a == "--gemm") o.gemm = true;
    else if (a == "--minimize") o.minimize = true;
    else if (a == "--print") o.print = true;
    else if (a == "--worker") o.worker = true;
    else if (a == "--compile-only") o.compile_only = true;
    else if (a == "--max-elems") o.max_elems = std::stoi(value());
    else if (a == "--case-timeout") o.case_timeout_s = std::stoi(value());
    else if (a == "--memory-limit-mb") o.memory_limit_mb = std::stoll(value());
    else usage(("unknown option " + a).c_str());
  }
  if (o.target != "cpu" && o.target != "sm_80" && o.target != "sm_89" && o.target != "sm_90" && o.target != "sm_100a")
    usage("unknown target");
  if (o.memory_limit_mb < 0) o.memory_limit_mb = o.target == "cpu" ? 4096 : 0;
  return o;
}

Target target_of(const std::string& t) {
  return t == "sm_80"     ? Target::sm_80
         : t == "sm_89"   ? Target::sm_89
         : t == "sm_90"   ? Target::sm_90
         : t == "sm_100a" ? Target::sm_100a
                          : Target::cpu;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void line(const std::string& s) {
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

// ---- worker: runs cases ------------------------------------------------------------------------

// Before a case runs: its description, printed (--print) or handed to the supervisor as "@text"
// lines, which it shows only if the case kills the worker.
void announce(const FuzzCase& c, bool print) {
  const std::string d = describe(c);
  if (print) return line(d);
  std::string tagged;
  for (std::size_t at = 0; at < d.size();) {
    const std::size_t end = std::min(d.find('\n', at), d.size());
    tagged += "@text " + d.substr(at, end - at) + "\n";
    at = end + 1;
  }
  line(tagged);
}

// Whether this binary runs under ASan or TSan (GCC's and clang's macros).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

int work(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!kSanitized && o.memory_limit_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(o.memory_limit_mb) << 20;
    const rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_DATA, &limit);
  }
  const Target target = target_of(o.target);
  GeneratorOptions g;
  g.max_elems = o.max_elems;
  int64_t cases = 0, failures = 0, checked = 0, unknown = 0, threw = 0;
  std::map<std::string, int64_t> features;
  for (uint64_t seed = o.seed; o.count == 0 || seed < o.seed + o.count; ++seed) {
    if (o.time_s > 0 && seconds_since(t0) >= o.time_s) break;
    line(fmt::format("@case {}\n", seed));
    alarm(static_cast<unsigned>(o.case_timeout_s));
    const FuzzCase c = o.gemm ? generate_gemm(seed) : generate_kernel(seed, g);
    ++cases;
    if (o.mutate) {
      Rng rng(seed ^ 0x6a09e667f3bcc909ull);
      const FuzzCase m = with_ast(c, mutate_ast(c.ast, rng));
      announce(m, o.print);
      const LaunchOnly r = launch_only(m, target);
      threw += r.threw;
      if (!r.ok) {
        ++failures;
        line(fmt::format("FAIL seed {} (mutated text): {}\n  reproduce: fuzz_kernels --mutate --seed {} --count 1\n{}",
                         seed, r.message, seed, describe(m)));
      }
    } else if (o.compile_only) {
      announce(c, o.print);
      const std::string error = compile_only(c, target);
      for (const std::string& f : c.features) ++features[f];
      if (!error.empty()) {
        ++failures;
        line(fmt::format("FAIL seed {} for {}: {}\n  reproduce: fuzz_kernels --compile-only{} --target {} --seed {} --count 1\n{}",
                         seed, o.target, error, o.gemm ? " --gemm" : "", o.target, seed, describe(c)));
      }
    } else {
      announce(c, o.print);
      const Outcome r = run_case(c, target);
      checked += r.checked;
      unknown += r.unknown;
      for (const std::string& f : c.features) ++features[f];
      if (r.kind != Outcome::Kind::pass) {
        ++failures;
        line(fmt::format("FAIL seed {} on {}: {}\n  reproduce: fuzz_kernels{} --target {} --seed {} --count 1\n{}", seed,
                         o.target, r.report, o.gemm ? " --gemm" : "", o.target, seed, describe(c)));
        if (o.minimize) {
          const Outcome::Kind kind = r.kind;
          FuzzCase small = minimize_case(c, [&](const FuzzCase& v) { return run_case(v, target).kind == kind; });
          line(fmt::format("  minimized ({} -> {} characters): {}\n  {}", c.ast.size(), small.ast.size(), small.ast,
                           run_case(small, target).report));
        }
      }
    }
    alarm(0);
    clear_memory_cache();
    line("@done\n");
  }
  std::string summary = fmt::format("worker: {} cases in {:.1f} s, {} failed", cases, seconds_since(t0), failures);
  if (o.mutate) {
    summary += fmt::format("; {} threw tessera::Error, {} ran\n", threw, cases - threw - failures);
  } else {
    summary += fmt::format("; {} output elements checked, {} ({:.1f}%) left unchecked as unbounded\n", checked, unknown,
                           checked + unknown ? 100.0 * unknown / (checked + unknown) : 0.0);
    summary += "coverage (cases using each feature):";
    int k = 0;
    for (const auto& [f, n] : features) summary += fmt::format("{}{}={}", k++ % 6 ? ", " : "\n  ", f, n);
    summary += "\n";
  }
  line(summary);
  return failures ? 1 : 0;
}

// ---- supervisor: runs workers, reports the cases that kill them -------------------------------

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int supervise(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  line(fmt::format("fuzz_kernels: seed {}, target {}, {}{}{}{}\n", o.seed, o.target,
                   o.mutate         ? "mutated texts (must run or throw tessera::Error)"
                   : o.compile_only ? "generated kernels, compiled only"
                                    : "generated kernels against the reference",
                   o.gemm ? " (GEMM class)" : "",
                   o.count ? fmt::format(", {} cases", o.count) : "",
                   o.time_s > 0 ? fmt::format(", {} s", o.time_s) : ""));
  line(fmt::format("  reproduce a failing case with: fuzz_kernels{}{} --target {} --seed <its seed> --count 1\n",
                   o.mutate ? " --mutate" : "", o.gemm ? " --gemm" : "", o.target));
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) usage("cannot find its own executable");
  exe[len] = 0;
  int64_t failures = 0, crashes = 0;
  uint64_t next = o.seed;
  const uint64_t end = o.count ? o.seed + o.count : UINT64_MAX;
  while (next < end) {
    const double left = o.time_s > 0 ? o.time_s - seconds_since(t0) : 0;
    if (o.time_s > 0 && left <= 0) break;
    std::string cmd = fmt::format("exec {} --worker --seed {} --target {} --max-elems {} --case-timeout {} --memory-limit-mb {}",
                                  quote(exe), next, o.target, o.max_elems, o.case_timeout_s, o.memory_limit_mb);
    if (o.count) cmd += fmt::format(" --count {}", end - next);
    if (o.time_s > 0) cmd += fmt::format(" --time {}", left);
    if (o.mutate) cmd += " --mutate";
    if (o.minimize) cmd += " --minimize";
    if (o.print) cmd += " --print";
    if (o.compile_only) cmd += " --compile-only";
    if (o.gemm) cmd += " --gemm";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) usage("cannot start a worker");
    uint64_t current = next;
    bool in_case = false;
    std::string text;  // the current case's description
    static char buf[1 << 20];
    while (std::fgets(buf, sizeof(buf), pipe)) {
      std::string_view l(buf);
      if (l.starts_with("@case ")) {
        current = std::strtoull(buf + 6, nullptr, 10);
        in_case = true;
        text.clear();
        continue;
      }
      if (l.starts_with("@text ")) {
        text += l.substr(6);
        continue;
      }
      if (l.starts_with("@done")) {
        in_case = false;
        continue;
      }
      if (l.starts_with("FAIL ")) ++failures;
      std::fputs(buf, stdout);
    }
    std::fflush(stdout);
    const int status = pclose(pipe);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1) && !in_case) break;
    ++crashes;
    const std::string how = WIFSIGNALED(status) ? (WTERMSIG(status) == SIGALRM
                                                       ? fmt::format("ran past {} s", o.case_timeout_s)
                                                       : fmt::format("died of signal {} ({})", WTERMSIG(status),
                                                                     strsignal(WTERMSIG(status))))
                                                : fmt::format("exited with status {}", WEXITSTATUS(status));
    line(fmt::format("FAIL seed {}: the process {} during this case\n  reproduce: fuzz_kernels{}{}{} --target {} --seed {} "
                     "--count 1\n{}",
                     current, how, o.mutate ? " --mutate" : "", o.compile_only ? " --compile-only" : "",
                     o.gemm ? " --gemm" : "", o.target, current, text));
    if (!in_case) break;
    next = current + 1;
  }
  line(fmt::format("fuzz_kernels: seed {}: {} failing cases, {} of them crashes or timeouts ({:.1f} s)\n", o.seed,
                   failures + crashes, crashes, seconds_since(t0)));
  return failures + crashes ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (!o.seed_given) o.seed = (std::random_device()() * 0x9e3779b97f4a7c15ull) >> 16;
  if (o.target != "cpu" && !o.compile_only && !gpu_available()) {
    std::fprintf(stderr, "fuzz_kernels: --target %s needs a GPU, and none is usable here\n", o.target.c_str());
    return 2;
  }
  return o.worker ? work(o) : supervise(o);
}
