// test_compiler_robustness.cpp: the compiler side never aborts the process (issue #26).
//
//  - AST text: seeded random mutations and truncations of real kernels' ASTs, and nesting past
//    kMaxAstDepth, through the parser (parse_ast and the walkers of the parsed tree), through
//    detail::compile and through detail::submit with hand-written requests: every case compiles
//    (and runs) or throws tessera::Error (std::bad_alloc for memory); nesting just under the limit
//    compiles and computes the right values on the CPU target; a store, load_like or own whose
//    tile is not the output's is an error (such a store once ran past its tensor).
//  - LLVM's fatal-error and bad-alloc handlers: in child processes, an LLVM fatal error and an
//    allocation failure inside LLVM become tessera::Error naming the kernel and std::bad_alloc; a
//    compile under a lowered RLIMIT_AS ends in one of those (or succeeds), never in a signal.
//  - CPU tiles beyond a thread's stack: a row max over a 2^26-element tile and a kernel of 160
//    distinct row sums of 16 KiB tiles (2.5 MiB of private arrays, run with 512 KiB thread
//    stacks), launched synchronously and asynchronously, against host references.
// Children are forked from the test process and exit with _exit; their output goes to a pipe that
// the parent reads.
#include "execution_helpers.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/kernels.h"
#include "compiler/pipeline.h"
#include "execution/threads.h"
#include "compiler/whole_tiles.h"
#include "frontend/ast.h"

using namespace tessera;

namespace {

using exec_test::random_tensor;

// ---- kernels whose AST texts the mutations start from ----------------------------------------

// A kernel's AST and arguments, for hand-written requests.
struct Case {
  std::string name;
  std::string ast;
  std::vector<detail::ArgDesc> args;
  bool loops = false;  // has a for_range (mutated trip counts could run for long: not submitted)
};

template <class K, class... A>
Case case_of(const K& k, bool loops, A&&... args) {
  return {k.name(), std::string(K::template ast<A...>()), {detail::to_arg(args)...}, loops};
}

// Tensors the cases' arguments point to (kept alive for the whole test).
struct Inputs {
  Tensor<float, 1> x1 = random_tensor<float, 1>({1000}, -4, 4, 1);
  Tensor<float, 1> y1 = random_tensor<float, 1>({1000}, -4, 4, 2);
  Tensor<float, 1> z1{std::array<int64_t, 1>{1000}};
  Tensor<float, 2> x2 = random_tensor<float, 2>({40, 300}, -4, 4, 3);
  Tensor<float, 2> z2{std::array<int64_t, 2>{40, 300}};
  Tensor<float, 2> s2{std::array<int64_t, 2>{40, 1}};
  Tensor<bfloat16, 2> b2 = random_tensor<bfloat16, 2>({40, 256}, -4, 4, 4);
  Tensor<bfloat16, 2> bz2{std::array<int64_t, 2>{40, 256}};
  Tensor<half, 2> h2 = random_tensor<half, 2>({64, 64}, -1, 1, 5);
  Tensor<float, 2> m2{std::array<int64_t, 2>{64, 64}};
  Tensor<int32_t, 1> i1 = random_tensor<int32_t, 1>({1000}, -100, 100, 6);
  Tensor<int32_t, 1> iz1{std::array<int64_t, 1>{1000}};
};

std::vector<Case> base_cases(Inputs& in) {
  std::vector<Case> cases;
  auto add = kernel("rb_add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) * c<2.0> + b.load_like(o)); });
  cases.push_back(case_of(add, false, in.z1.partition<128>(), in.x1, in.y1));
  auto shifted = kernel("rb_shifted", [](auto o, auto off, auto a) {
    return o.store(load<128>(a, program_id<0>() + off) - o.load());
  });
  cases.push_back(case_of(shifted, false, in.z1.partition<128>(), int32_t{1}, in.x1));
  auto softmax = kernel("rb_softmax", [](auto o, auto a) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto e = exp(t - max<1>(t));
    return o.store(cast<DType::bf16>(e / sum<1>(e)));
  });
  cases.push_back(case_of(softmax, false, in.bz2.partition<1, 256>(), in.b2));
  auto mixed = kernel("rb_mixed", [](auto o, auto a) {
    auto t = a.load_like(o);
    auto u = select(t > c<0>, sqrt(abs(t)), tanh(t) * c<-3>);
    return o.store(transpose(transpose(u)) + broadcast_to<8, 32>(sum<0>(t)) - broadcast_to<8, 32>(min<1>(t)));
  });
  cases.push_back(case_of(mixed, false, in.z2.partition<8, 32>(), in.x2));
  auto ints = kernel("rb_ints", [](auto o, auto a) {
    auto t = a.load_like(o);
    return o.store(select(t != c<0>, t / (t - c<1>), -t) + iota<64>() * program_id<0>());
  });
  cases.push_back(case_of(ints, false, in.iz1.partition<64>(), in.i1));
  auto row_sum = kernel("rb_row_sum_loop", [](auto o, auto a) {
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto j, auto acc) { return acc + load<1, 64>(a, program_id<0>(), j); },
        full<DType::f32, 1, 64>(c<0.0>));
    return o.store(sum<1>(acc));
  });
  cases.push_back(case_of(row_sum, true, in.s2.partition<1, 1>(), in.x2));
  auto gemm = kernel("rb_gemm", [](auto o, auto x) {
    auto acc = for_range(
        dim<1>(x) / c<16>,
        [=](auto k, auto acc) { return mma(load<16, 16>(x, program_id<0>(), k), load<16, 16>(x, k, program_id<1>()), acc); },
        full<DType::f32, 16, 16>(c<0.0>));
    return o.store(acc);
  });
  cases.push_back(case_of(gemm, true, in.m2.partition<16, 16>(), in.h2));
  auto lse = kernel("rb_logsumexp", [](auto o, auto a) {
    auto r = for_range(
        (dim<1>(a) + c<127.0>) / c<128.0>,
        [=](auto j, auto m, auto s) {
          auto t = load<1, 128>(a, program_id<0>(), j);
          auto m2 = maximum(m, max<1>(t));
          return carry(m2, s * exp(m - m2) + sum<1>(exp(t - m2)));
        },
        full<DType::f32, 1, 1>(c<-1e30>), full<DType::f32, 1, 1>(c<0.0>));
    return o.store(get<0>(r) + log(get<1>(r)));
  });
  cases.push_back(case_of(lse, true, in.s2.partition<1, 1>(), in.x2));
  return cases;
}

// ---- mutations ---------------------------------------------------------------------------------

// The [begin, end) of every list of `s` (balanced brackets only).
std::vector<std::pair<std::size_t, std::size_t>> lists_of(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') open.push_back(i);
    if ((s[i] == ')' || s[i] == ']') && !open.empty()) {
      out.emplace_back(open.back(), i + 1);
      open.pop_back();
    }
  }
  return out;
}

// The [begin, end) of every atom of `s`.
std::vector<std::pair<std::size_t, std::size_t>> atoms_of(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  auto delim = [](char c) { return c == ' ' || c == '(' || c == ')' || c == '[' || c == ']'; };
  for (std::size_t i = 0; i < s.size();) {
    if (delim(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !delim(s[j])) ++j;
    out.emplace_back(i, j);
    i = j;
  }
  return out;
}

// One random edit of `s`: a truncation, a character deleted, inserted or replaced, an atom
// replaced by another atom of the text or by an extreme number, a list replaced by another list
// of the text (a well-formed tree of the wrong kind or type), a list deleted or duplicated.
void mutate_once(std::string& s, std::mt19937& rng) {
  static constexpr std::string_view kChars = "()[] -0123456789abcdefx";
  static constexpr std::string_view kNumbers[] = {"-1", "0", "3", "7", "4096", "2147483648", "-2147483649",
                                                  "99999999999999999999", "0x7ff8000000000000",
                                                  "0xffffffffffffffff", "65536", "4294967296"};
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const auto atoms = atoms_of(s);
  const auto lists = lists_of(s);
  switch (rng() % 9) {
    case 0: s.resize(pick(s.size() + 1)); break;
    case 1:
      if (!s.empty()) s.erase(pick(s.size()), 1);
      break;
    case 2: s.insert(pick(s.size() + 1), 1, kChars[pick(kChars.size())]); break;
    case 3:
      if (!s.empty()) s[pick(s.size())] = kChars[pick(kChars.size())];
      break;
    case 4:
      if (!atoms.empty()) {
        auto [b, e] = atoms[pick(atoms.size())];
        auto [b2, e2] = atoms[pick(atoms.size())];
        s.replace(b, e - b, s.substr(b2, e2 - b2));
      }
      break;
    case 5:
      if (!atoms.empty()) {
        auto [b, e] = atoms[pick(atoms.size())];
        s.replace(b, e - b, kNumbers[pick(std::size(kNumbers))]);
      }
      break;
    case 6:
      if (!lists.empty()) {
        auto [b, e] = lists[pick(lists.size())];
        auto [b2, e2] = lists[pick(lists.size())];
        s.replace(b, e - b, s.substr(b2, e2 - b2));
      }
      break;
    case 7:
      if (!lists.empty()) {
        auto [b, e] = lists[pick(lists.size())];
        s.erase(b, e - b);
      }
      break;
    default:
      if (!lists.empty()) {
        auto [b, e] = lists[pick(lists.size())];
        s.insert(e, " " + s.substr(b, e - b));
      }
      break;
  }
}

std::string mutated(const std::string& text, std::mt19937& rng) {
  std::string s = text;
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < edits; ++i) mutate_once(s, rng);
  return s;
}

// What a compile or launch of a malformed kernel may end in.
enum class Outcome { ok, error, no_memory };

// Runs `f`; an exception other than tessera::Error naming kernel `name` and std::bad_alloc fails
// the test.
Outcome outcome_of(const std::function<void()>& f, const std::string& name) {
  try {
    f();
    return Outcome::ok;
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("kernel '" + name + "'"));
    return Outcome::error;
  } catch (const std::bad_alloc&) {
    return Outcome::no_memory;
  } catch (const std::exception& e) {
    FAIL("unexpected exception for " << name << ": " << e.what());
  }
  return Outcome::error;
}

// Parses `text` and walks the tree as the launcher does; true if it parsed.
bool parse_and_walk(std::string_view name, const std::string& text) {
  detail::KernelAst ast = detail::parse_ast(name, text);
  detail::WholeTiles check(ast);
  (void)detail::device_functions(name, ast);
  return true;
}

// ---- deep nesting ------------------------------------------------------------------------------

// (kernel (params (out f32 1 [16]) (scalar f32)) (body (store 0 (broadcast f32 [16] X)))) with X
// = `adds` nested adds of the scalar: s + s + ... (adds + 1 terms), nesting adds + 5 lists deep.
// Scalars keep the compile cheap (a chain of tile ops this deep costs LLVM minutes).
std::string deep_sum_ast(int adds) {
  const std::string arg = "(arg f32 [] 1)";
  std::string s = "(kernel (params (out f32 1 [16]) (scalar f32)) (body (store 0 (broadcast f32 [16] ";
  for (int i = 0; i < adds; ++i) s += "(add f32 [] ";
  s += arg;
  for (int i = 0; i < adds; ++i) s += " " + arg + ")";
  return s + "))))";
}

// ---- child processes ---------------------------------------------------------------------------

struct ChildResult {
  int status = 0;  // as waitpid reports it
  std::string output;
};

// Runs `child` in a forked process with its stdout and stderr on a pipe; its return value is the
// exit code (an exception escaping it: 98).
ChildResult run_child(const std::function<int()>& child) {
  std::fflush(nullptr);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    int rc = 98;
    try {
      rc = child();
    } catch (const std::exception& e) {
      std::printf("exception: %s\n", e.what());
    } catch (...) {
    }
    std::fflush(nullptr);
    _exit(rc);
  }
  close(fds[1]);
  REQUIRE(pid > 0);
  ChildResult r;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

std::string describe(const ChildResult& r) {
  if (WIFSIGNALED(r.status)) return "killed by signal " + std::to_string(WTERMSIG(r.status)) + ", output: " + r.output;
  return "exit code " + std::to_string(WEXITSTATUS(r.status)) + ", output: " + r.output;
}

// The child's address space in use (VmSize), in bytes.
std::size_t address_space_in_use() {
  std::size_t pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%zu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// ---- big tiles ---------------------------------------------------------------------------------

constexpr int64_t kBigTile = int64_t{1} << 26;  // 256 MiB of f32: far beyond any thread's stack

// Row sums of N distinct 4096-element tiles (16 KiB each) of x, added up as a balanced tree.
template <int Lo, int N, class X>
constexpr auto tile_sums(X x) {
  if constexpr (N == 1)
    return sum<0>(load<4096>(x, c<Lo>));
  else
    return tile_sums<Lo, N / 2>(x) + tile_sums<Lo + N / 2, N - N / 2>(x);
}
constexpr int kSumTiles = 160;

// Runs `f` on a thread of `stack_bytes` of stack (a user's thread, not tessera's), waits for it
// and rethrows what it threw.
void on_thread_with_stack(std::size_t stack_bytes, const std::function<void()>& f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  struct Call {
    const std::function<void()>* f;
    std::exception_ptr error;
    static void* run(void* p) {
      auto* call = static_cast<Call*>(p);
      try {
        (*call->f)();
      } catch (...) {
        call->error = std::current_exception();
      }
      return nullptr;
    }
  } call{&f, nullptr};
  pthread_t t;
  const int rc = pthread_create(&t, &attr, &Call::run, &call);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("pthread_create failed");
  pthread_join(t, nullptr);
  if (call.error) std::rethrow_exception(call.error);
}

}  // namespace

TEST_CASE("robustness: mutated and truncated AST texts parse or are errors naming the kernel", "[robustness]") {
  Inputs in;
  const std::vector<Case> cases = base_cases(in);
  for (const Case& c : cases) CHECK(parse_and_walk(c.name, c.ast));
  std::mt19937 rng(20261126);
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    const Case& c = cases[i % cases.size()];
    const std::string text = mutated(c.ast, rng);
    try {
      parse_and_walk(c.name, text);
      ++parsed;
    } catch (const Error& e) {
      ++rejected;
      INFO(text);
      CHECK_THAT(e.what(), Catch::Contains("kernel '" + c.name + "'"));
    }
  }
  INFO(parsed << " parsed, " << rejected << " rejected");
  CHECK(parsed > 100);
  CHECK(rejected > 100);
  // Every truncation of one text.
  const std::string& text = cases[2].ast;
  for (std::size_t n = 0; n < text.size(); ++n)
    CHECK_THROWS_AS(detail::parse_ast("truncated", std::string_view(text).substr(0, n)), Error);
}

// Parses `text` as the launcher does: on a stack of the compiler's size (kCompilerStackBytes), which
// the parser's recursion at kMaxAstDepth needs under a sanitizer's larger frames.
static detail::KernelAst parse_on_compiler_stack(std::string_view kernel, std::string_view text) {
  detail::KernelAst ast;
  detail::run_with_stack(detail::kCompilerStackBytes, [&] { ast = detail::parse_ast(kernel, text); }, "a test");
  return ast;
}

TEST_CASE("robustness: nesting deeper than kMaxAstDepth is an error, not a stack overflow", "[robustness]") {
  for (int depth : {detail::kMaxAstDepth + 1, 100000, 3000000}) {
    const std::string text = std::string(static_cast<std::size_t>(depth), '(') + std::string(static_cast<std::size_t>(depth), ')');
    CHECK_THROWS_WITH(parse_on_compiler_stack("deep", text),
                      Catch::Contains("kernel 'deep'") && Catch::Contains("nested deeper than"));
    const std::string brackets = std::string(static_cast<std::size_t>(depth), '[');
    CHECK_THROWS_WITH(parse_on_compiler_stack("deep", brackets), Catch::Contains("kernel 'deep'"));
  }
  // Through a launch request: the kernel is named, nothing runs.
  Tensor<float, 1> z({128});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(z.partition<16>()), detail::to_arg(1.0f)};
  const std::string text = deep_sum_ast(detail::kMaxAstDepth);
  detail::LaunchRequest r{"deep_sum", text, args};
  CHECK_THROWS_WITH(detail::compile(r, Target::cpu), Catch::Contains("kernel 'deep_sum'") && Catch::Contains("nested deeper than"));
  CHECK_THROWS_WITH(detail::submit(r, Target::cpu), Catch::Contains("kernel 'deep_sum'"));
}

TEST_CASE("robustness: an expression nested just under kMaxAstDepth compiles and computes", "[robustness]") {
  const int adds = detail::kMaxAstDepth - 8;
  const std::string text = deep_sum_ast(adds);
  CHECK_NOTHROW(parse_on_compiler_stack("deep_sum", text));
  Tensor<float, 1> z({300});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(z.partition<16>()), detail::to_arg(3.0f)};
  detail::LaunchRequest r{"deep_sum", text, args};
  detail::submit(r, Target::cpu);
  int64_t bad = 0;
  for (int64_t i = 0; i < z.numel(); ++i) bad += z(i) != 3.0f * static_cast<float>(adds + 1);  // exact: integers
  CHECK(bad == 0);
  // The GPU pipeline up to PTX (no GPU needed) on the same tree, on a stack of the compiler's size.
  detail::KernelAst ast = parse_on_compiler_stack("deep_sum", text);
  std::string ptx;
  detail::run_with_stack(
      detail::kCompilerStackBytes, [&] { ptx = detail::compile_ptx("deep_sum", ast, detail::Specialization{}, "sm_90").ptx; }, "a test");
  CHECK(ptx.find(".entry") != std::string::npos);
}

TEST_CASE("robustness: a program's own tiles must have the output's tile type", "[robustness]") {
  // The whole-tiles check bounds what a program stores, loads like an output or reads back by the
  // output's tile: a store of a wider tile (found by the mutations: it ran past the tensor in the
  // variant without bounds tests) is an error, as are load_like and own of another tile.
  Tensor<float, 1> x({256}), z({256});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(z.partition<16>()), detail::to_arg(x)};
  for (std::string text : {"(kernel (params (out f32 1 [16]) (in f32 1)) (body (store 0 (load f32 [32] 1 (program_id i32 [] 0)))))",
                           "(kernel (params (out f32 1 [16]) (in f32 1)) (body (store 0 (load_like f32 [32] 1 0))))",
                           "(kernel (params (out f32 1 [16]) (in f32 1)) (body (store 0 (own f32 [8] 0))))",
                           "(kernel (params (out f32 1 [16]) (in f32 1)) (body (store 0 (load_like i32 [16] 1 0))))"}) {
    detail::LaunchRequest r{"own_tile", text, args};
    INFO(text);
    CHECK_THROWS_WITH(detail::submit(r, Target::cpu), Catch::Contains("kernel 'own_tile'") && Catch::Contains("malformed AST"));
  }
}

TEST_CASE("robustness: mutated kernels through detail::compile and detail::submit compile or are errors",
          "[robustness]") {
  Inputs in;
  const std::vector<Case> cases = base_cases(in);
  std::mt19937 rng(9102);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  int counts[3] = {0, 0, 0};
  int ran = 0, tried = 0;
  for (int i = 0; i < 600 && std::chrono::steady_clock::now() < deadline; ++i, ++tried) {
    const Case& c = cases[rng() % cases.size()];
    const std::string text = mutated(c.ast, rng);
    // A name of its own per case: the cache keys on the text anyway.
    const std::string name = c.name + "_m" + std::to_string(i);
    if (i % 50 == 49) clear_memory_cache();  // the compiled variants are not needed again
    detail::LaunchRequest r{name, text, c.args};
    INFO(name << ": " << text);
    Outcome o = outcome_of([&] { detail::compile(r, Target::cpu); }, name);
    ++counts[static_cast<int>(o)];
    if (o != Outcome::ok || c.loops) continue;
    // It compiled: run it (loads and stores past the tensors are masked, or the launch is refused).
    outcome_of([&] { detail::submit(r, Target::cpu); }, name);
    ++ran;
  }
  INFO(tried << " tried: " << counts[0] << " compiled, " << counts[1] << " errors, " << counts[2]
             << " out of memory; " << ran << " launched");
  CHECK(counts[1] > 0);
  WARN(tried << " mutated kernels: " << counts[0] << " compiled (" << ran << " launched), " << counts[1]
             << " tessera::Error, " << counts[2] << " std::bad_alloc");
}

TEST_CASE("robustness: LLVM fatal errors and allocation failures become exceptions", "[robustness]") {
  ChildResult fatal = run_child([] {
    try {
      detail::raise_llvm_error("llvm_fatal", false);
    } catch (const Error& e) {
      std::printf("%s\n", e.what());
      return 0;
    }
    return 1;
  });
  INFO(describe(fatal));
  CHECK((WIFEXITED(fatal.status) && WEXITSTATUS(fatal.status) == 0));
  CHECK_THAT(fatal.output, Catch::Contains("kernel 'llvm_fatal'") && Catch::Contains("a test of the fatal-error handler"));
  CHECK_THAT(fatal.output, !Catch::Contains("LLVM ERROR"));

  ChildResult oom = run_child([] {
    try {
      detail::raise_llvm_error("llvm_oom", true);
    } catch (const std::bad_alloc&) {
      std::printf("bad_alloc\n");
      return 0;
    }
    return 1;
  });
  INFO(describe(oom));
  CHECK((WIFEXITED(oom.status) && WEXITSTATUS(oom.status) == 0));
  CHECK_THAT(oom.output, Catch::Contains("bad_alloc") && !Catch::Contains("LLVM ERROR"));
}

TEST_CASE("robustness: a compile under a lowered RLIMIT_AS throws, never aborts", "[robustness]") {
  // Each child compiles a kernel of its own (CPU target) with its address space capped at what it
  // uses plus `headroom`: 0 compiled, 1 std::bad_alloc, 2 tessera::Error. With little headroom
  // the compile's thread or its memory check (kCompileMemoryBytes) fails first.
  int failed_cleanly = 0;
  int compiled = 0;
  for (std::size_t headroom_mib : {4, 16, 48, 96, 200, 300, 400, 600, 1024}) {
    ChildResult r = run_child([headroom_mib] {
      const std::size_t limit = address_space_in_use() + (headroom_mib << 20);
      rlimit rl{limit, limit};
      if (setrlimit(RLIMIT_AS, &rl) != 0) return 3;
      try {
        auto k = kernel("rlimit_softmax_" + std::to_string(headroom_mib), [](auto o, auto a) {
          auto t = a.load_like(o);
          auto e = exp(t - max<1>(t));
          return o.store(e / sum<1>(e));
        });
        Tensor<float, 2> x({4, 256}), z({4, 256});
        k.compile(Target::cpu, z.partition<1, 256>(), x);
        std::printf("compiled\n");
        return 0;
      } catch (const std::bad_alloc&) {
        std::printf("bad_alloc\n");
        return 1;
      } catch (const Error& e) {
        std::printf("%s\n", e.what());
        return 2;
      }
    });
    INFO("headroom " << headroom_mib << " MiB: " << describe(r));
    REQUIRE(WIFEXITED(r.status));
    const int code = WEXITSTATUS(r.status);
    CHECK((code == 0 || code == 1 || code == 2));
    CHECK_THAT(r.output, !Catch::Contains("LLVM ERROR"));
    if (code == 2) CHECK_THAT(r.output, Catch::Contains("rlimit_softmax_"));
    failed_cleanly += code == 1 || code == 2;
    compiled += code == 0;
  }
  CHECK(failed_cleanly > 0);
  CHECK(compiled > 0);
}

TEST_CASE("robustness: a row max over a 2^26-element tile runs on the CPU target, sync and async", "[robustness]") {
  auto k = kernel("rb_big_max", [](auto out, auto x) { return out.store(max<0>(load<kBigTile>(x, program_id<0>()))); });
  Tensor<float, 1> x({kBigTile});
  std::mt19937 rng(12);
  for (int64_t i = 0; i < kBigTile; ++i) x.data()[i] = static_cast<float>(rng() % 1000000) * 1e-3f;
  x.data()[kBigTile / 3] = 2000.5f;
  float want = -1;
  for (int64_t i = 0; i < kBigTile; ++i) want = std::max(want, x.data()[i]);
  for (bool async : {false, true}) {
    Tensor<float, 1> z({1});
    if (async)
      k.launch_async(exec_test::on(Target::cpu), z.partition<1>(), x).wait();
    else
      k.launch_on(Target::cpu, z.partition<1>(), x);
    INFO((async ? "async" : "sync"));
    CHECK(z(0) == want);
  }
  // Its tiles live in the workspace; its frame is small.
  Tensor<float, 1> z({1});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(z.partition<1>()), detail::to_arg(x)};
  using K = std::remove_cvref_t<decltype(k)>;
  auto compiled =
      detail::lookup_or_compile({k.name(), K::template ast<Partition<float, 1, 1>, Tensor<float, 1>>(), args}, Target::cpu);
  CHECK(compiled->cpu->workspace_bytes() >= static_cast<std::size_t>(kBigTile) * 4);
  CHECK(compiled->cpu->stack_bytes() < (std::size_t{1} << 20));
}

TEST_CASE("robustness: 160 distinct row sums of 16 KiB tiles run on 512 KiB thread stacks, sync and async",
          "[robustness]") {
  // In a child whose threads get 512 KiB stacks by default (the stream's worker too), launched
  // from such a thread: the kernel's 2.5 MiB of private arrays must not be on those stacks.
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer starts no threads in a child forked from a process with threads.
  WARN("built with ThreadSanitizer: skipped (threads in a forked child)");
  return;
#endif
  ChildResult r = run_child([] {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 512 << 10);
    if (pthread_setattr_default_np(&attr) != 0) return 3;
    pthread_attr_destroy(&attr);
    int bad = 0;
    on_thread_with_stack(512 << 10, [&] {
      auto k = kernel("rb_many_sums", [](auto out, auto x) { return out.store(tile_sums<0, kSumTiles>(x)); });
      auto x = random_tensor<float, 1>({kSumTiles * 4096}, 0, 1, 13);
      double want = 0;
      for (int64_t i = 0; i < x.numel(); ++i) want += x(i);
      Stream stream = Stream::create();
      for (bool async : {false, true}) {
        Tensor<float, 1> z({1});
        if (async) {
          LaunchOptions o = exec_test::on(Target::cpu);
          o.stream = stream;
          k.launch_async(o, z.partition<1>(), x).wait();
        } else {
          k.launch_on(Target::cpu, z.partition<1>(), x);
        }
        const bool ok = std::abs(z(0) - want) <= 1e-4 * want;
        std::printf("%s: %f against %f\n", async ? "async" : "sync", static_cast<double>(z(0)), want);
        bad += !ok;
      }
    });
    return bad;
  });
  INFO(describe(r));
  CHECK((WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0));
}
