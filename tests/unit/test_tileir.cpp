// test_tileir.cpp: the tileir backend's compile (src/compiler/tileir.h). The test suite's kernels
// that CUDA Tile IR can express -- elementwise f32 and bf16, softmax over a 2-D grid, RMSNorm, row
// sums, a K-loop matmul with mma -- are written as Tile IR bytecode that NVIDIA's tileirdisasm reads
// back with the expected ops and tileiras compiles to cubins for sm_90 and sm_100. Kernels Tile IR
// cannot express are clear errors naming the kernel and the op.
//
// tileiras comes from the install step (scripts/install-tileiras.sh); where it is missing, the
// cases that need it say so and check only what needs no tileiras. No GPU is needed.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <array>
#include <string>

#include "compiler/specialization.h"
#include "compiler/tileir.h"
#include "compiler/tileiras.h"
#include "elf_bytes.h"
#include "example_kernels.h"
#include "frontend/ast.h"
#include "row_kernels.h"

using namespace tessera;

namespace {

// The kernel's AST and specialization for these arguments, as a launch on sm_90 computes them.
template <class K, class... A>
std::pair<detail::KernelAst, detail::Specialization> prepare(const K& k, const A&... args) {
  std::array<detail::ArgDesc, sizeof...(A)> descs{detail::to_arg(args)...};
  detail::Specialization spec;
  detail::specialize(descs, Target::sm_90, false, spec);
  return {detail::parse_ast(k.name(), K::template ast<const A&...>()), spec};
}

// The tileiras the tests use, or nullopt (then a warning says what was not checked).
std::optional<std::string> tileiras_or_warn() {
  auto t = detail::find_tileiras();
  if (!t) WARN("tileiras not found (scripts/install-tileiras.sh installs it): only the writer is checked");
  return t;
}

using tessera::testing::is_elf;

// Writes the kernel's bytecode, checks its header, and where tileiras is present: that
// tileirdisasm shows each of `ops` and tileiras compiles it for sm_90 and sm_100.
template <class K, class... A>
void check_tileir(const K& k, std::initializer_list<std::string_view> ops, const A&... args) {
  auto [ast, spec] = prepare(k, args...);
  std::vector<uint8_t> bc = detail::tileir_bytecode(k.name(), ast, spec);
  INFO("kernel " << k.name());
  REQUIRE(bc.size() > 12);
  CHECK(std::string(bc.begin(), bc.begin() + 8) == std::string("\x7fTileIR\0", 8));
  CHECK(bc[8] == 13);  // bytecode 13.3
  CHECK(bc[9] == 3);
  auto tileiras = tileiras_or_warn();
  if (!tileiras) return;
  std::string text = detail::run_tileirdisasm(*tileiras, bc, k.name());
  INFO(text);
  CHECK(text.find("entry @") != std::string::npos);
  for (std::string_view op : ops) CHECK(text.find(op) != std::string::npos);
  for (std::string_view arch : {"sm_90", "sm_100"}) {
    INFO("arch " << arch);
    detail::TileIrCode code = detail::compile_tileir(k.name(), ast, spec, arch);
    CHECK(is_elf(code.cubin));
    CHECK(code.bytecode == bc);
    CHECK(code.tileiras_version.starts_with("V13."));
  }
}

}  // namespace

TEST_CASE("elementwise kernels are written as Tile IR that tileiras compiles", "[tileir]") {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  check_tileir(examples::vector_add(), {"make_tensor_view", "make_partition_view", "load_view_tko", "addf",
                                        "store_view_tko", "get_tile_block_id"},
               z.partition<128>(), x, y);
  Tensor<bfloat16, 1> a({1000}), b({1000}), r({1000});
  // bf16 arithmetic is computed in f32 and rounded back (ftof both ways).
  check_tileir(kernel("tileir_bf16_add", [](auto o, auto p, auto q) { return o.store(p.load_like(o) + q.load_like(o)); }),
               {"ftof", "addf", "tile<256xbf16>"}, r.partition<256>(), a, b);
  check_tileir(kernel("tileir_math", [](auto o, auto p) {
                 auto t = p.load_like(o);
                 return o.store(sqrt(abs(t)) + tanh(t) - exp(t) * log(abs(t) + c<1.0>));
               }),
               {"sqrt", "tanh", "exp", "log", "absf", "mulf", "subf"}, z.partition<128>(), x);
}

TEST_CASE("softmax, RMSNorm and row sums are written as Tile IR that tileiras compiles", "[tileir]") {
  Tensor<float, 2> m({10, 1000}), s({10, 1000});
  // Program ids on two axes, a -inf padding, two reductions.
  check_tileir(examples::softmax(), {"padding_value = neg_inf", "reduce", "maxf", "broadcast", "exp", "divf"},
               s.partition<1, 1024>(), m);
  Tensor<bfloat16, 2> rows({4, 8192}), out({4, 8192});
  Tensor<bfloat16, 1> w({8192});
  check_tileir(row_kernels::rmsnorm(), {"rsqrt", "reduce", "ftof"}, out.partition<1, 8192>(), rows, w);
  check_tileir(row_kernels::softmax(), {"reduce", "exp"}, out.partition<1, 8192>(), rows);
  Tensor<float, 2> sums({4, 1});
  check_tileir(row_kernels::row_sum(), {"reduce", "addf", "reshape"}, sums.partition<1, 1>(), rows);
  check_tileir(row_kernels::row_sum_loop(), {"for", "continue", "reduce"}, sums.partition<1, 1>(), rows);
}

TEST_CASE("a K-loop matmul with mma is written as Tile IR that tileiras compiles", "[tileir]") {
  Tensor<bfloat16, 2> a({300, 200}), b({200, 520}), out({300, 520});
  Tensor<bfloat16, 1> bias({520});
  check_tileir(examples::matmul_bias_relu(), {"for", "mmaf", "iter_values", "continue", "maxf"},
               out.partition<128, 128>(), a, b, bias);
  Tensor<half, 2> p({128, 128}), q({128, 128});
  Tensor<float, 2> cm({128, 128});
  check_tileir(kernel("tileir_gemm_f16", [](auto o, auto x, auto y) {
                 auto acc = for_range(
                     (dim<1>(x) + c<15.0>) / c<16.0>,
                     [=](auto k, auto acc) {
                       return mma(load<16, 16>(x, program_id<0>(), k), load<16, 16>(y, k, program_id<1>()), acc);
                     },
                     full<DType::f32, 16, 16>(c<0.0>));
                 return o.store(acc);
               }),
               {"mmaf", "tile<16x16xf16>"}, cm.partition<16, 16>(), p, q);
}

TEST_CASE("a kernel that reads what it wrote orders the accesses with tokens", "[tileir]") {
  // The output is read, then written: the store takes the load's token (write after read).
  Tensor<float, 1> x({1000}), z({1000});
  auto k = kernel("tileir_rewrite", [](auto o, auto a) { return o.store(o.load() * c<2.0> + a.load_like(o)); });
  auto [ast, spec] = prepare(k, z.partition<128>(), x);
  spec.whole_tiles = true;  // no guards (tile-guard-tile-indices) around the accesses
  std::vector<uint8_t> bc = detail::tileir_bytecode(k.name(), ast, spec);
  auto tileiras = tileiras_or_warn();
  if (!tileiras) return;
  std::string text = detail::run_tileirdisasm(*tileiras, bc, k.name());
  INFO(text);
  // One token operand: the store's, the output load's result token. The input, never written, is
  // read without tokens.
  std::size_t token = text.find("token = %result_token");
  REQUIRE(token != std::string::npos);
  CHECK(text.find("token = ", token + 1) == std::string::npos);
  CHECK(text.rfind("store_view_tko", token) > text.rfind("load_view_tko", token));
}

TEST_CASE("kernels Tile IR cannot express are errors naming the kernel and the op", "[tileir]") {
  Tensor<float, 1> x({1000}), z({1000});
  // A load padding that a partition view cannot hold.
  auto padded = kernel("tileir_padding", [](auto o, auto a) { return o.store(a.load_like(o).padded(c<2.5>)); });
  auto [ast, spec] = prepare(padded, z.partition<128>(), x);
  CHECK_THROWS_WITH(detail::tileir_bytecode(padded.name(), ast, spec),
                    Catch::Contains("tileir_padding") && Catch::Contains("padding 2.5") &&
                        Catch::Contains("no CUDA Tile IR form"));
  // A tile of more than 2^24 elements, which tileiras rejects: an error before tileiras runs.
  Tensor<float, 1> big({1000}), one({1});  // the tile, not the tensor, is what is too large
  auto huge = kernel("tileir_huge_tile", [](auto o, auto a) { return o.store(max<0>(load<1 << 25>(a, c<0>))); });
  auto [huge_ast, huge_spec] = prepare(huge, one.partition<1>(), big);
  CHECK_THROWS_WITH(detail::tileir_bytecode(huge.name(), huge_ast, huge_spec),
                    Catch::Contains("tileir_huge_tile") && Catch::Contains("more than 2^24 elements") &&
                        Catch::Contains("no CUDA Tile IR form"));
}

TEST_CASE("tileiras' failures are errors carrying its stderr, the kernel and the architecture", "[tileir]") {
  // An `a` architecture is refused before tileiras runs.
  const std::vector<uint8_t> garbage = {0x7f, 'T', 'i', 'l', 'e', 'I', 'R', 0, 13, 3, 0, 0, 0x42};
  try {
    detail::run_tileiras("/nonexistent/tileiras", garbage, "some_kernel", "sm_90a");
    FAIL("sm_90a was accepted");
  } catch (const detail::TileirasError& e) {
    CHECK(std::string(e.what()).find("not 'sm_90a'") != std::string::npos);
    CHECK(e.kernel == "some_kernel");
    CHECK(e.arch == "sm_90a");
  }
  auto tileiras = tileiras_or_warn();
  if (!tileiras) return;
  try {
    detail::run_tileiras(*tileiras, garbage, "some_kernel", "sm_90");
    FAIL("tileiras accepted a truncated module");
  } catch (const detail::TileirasError& e) {
    INFO(e.what());
    CHECK(!e.stderr_text.empty());
    CHECK(std::string(e.what()).find(e.stderr_text) != std::string::npos);
    CHECK(std::string(e.what()).find("kernel 'some_kernel'") != std::string::npos);
    CHECK(std::string(e.what()).find("for sm_90") != std::string::npos);
    CHECK(e.arch == "sm_90");
  }
  // A binary that is not there is the same kind of error.
  CHECK_THROWS_AS(detail::run_tileiras("/nonexistent/tileiras", garbage, "some_kernel", "sm_90"), detail::TileirasError);
}
