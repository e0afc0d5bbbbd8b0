// codegen_dump.cpp: compiles the example and benchmark kernels (examples/example_kernels.h,
// benchmarks/row_kernels.h, the kernels of bench_elementwise and bench_transpose, and loops of one
// and two carried values) for sm_90 and the CPU target with TESSERA_DUMP_DIR set to a directory
// per kernel inside the one given as argv[1], so that every stage of every compile (tile IR, loops,
// LLVM IR, PTX; see docs/debugging.md) lands there. Two builds' directories compared file by file show
// whether a change to the compiler changed the code of existing kernels:
//   build-a/tests/codegen_dump /tmp/a && build-b/tests/codegen_dump /tmp/b
//   diff -r -x '*.ast.txt' /tmp/a /tmp/b
// (the AST files differ where the serialized format changed). Uses a cache directory of its own
// inside argv[1] so that nothing is served from an earlier run. Needs no GPU; exits non-zero when
// a compile throws.
// With --cubins (`codegen_dump --cubins DIR`, the ctest targets.cubins) it dumps nothing and
// compiles every kernel for every GPU target instead (sm_80 ... sm_120, gpu_targets()),
// failing unless each gives a cubin.
// With --tileir (`codegen_dump --tileir DIR`, the ctest targets.tileir) it compiles every kernel
// through the tileir backend (LaunchOptions::backend) for sm_90 and sm_100a instead: each kernel
// Tile IR can express must give cubins; those it cannot are listed with the reason. Prints
// "skipped" and exits 0 where tileiras is not installed.
#include <tessera/tessera.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "elf_bytes.h"
#include "example_kernels.h"
#include "row_kernels.h"

using namespace tessera;

namespace {

std::filesystem::path root;
int kernels = 0;
bool cubins_only = false;  // --cubins
bool tileir_only = false;  // --tileir
int not_expressible = 0;   // --tileir: kernels Tile IR cannot express

// Thrown to end a --tileir run early: tileiras is not installed.
struct NoTileiras {
  std::string why;
};

using tessera::testing::is_elf;

// Compiles k for both targets, dumping its stages into a directory of its own (kernels of one name,
// such as the two softmaxes, would overwrite each other's files).
template <class K, class... A>
void dump(const K& k, A&&... args) {
  if (tileir_only) {
    for (Target t : {Target::sm_90, Target::sm_100a}) {
      LaunchOptions o;
      o.target = t;
      o.backend = Backend::tileir;
      try {
        if (!is_elf(k.compile(o, args...).cubin))
          throw Error(k.name() + ": no tileir cubin for " + std::string(to_string(t)));
      } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("needs NVIDIA's tileiras") != std::string::npos) throw NoTileiras{what};
        if (what.find("no CUDA Tile IR form") == std::string::npos) throw;
        std::printf("%s: no Tile IR form: %s\n", k.name().c_str(), what.substr(0, what.find('\n')).c_str());
        ++not_expressible;
        return;
      }
    }
    std::printf("%s: tileir cubins for sm_90 and sm_100\n", k.name().c_str());
    return;
  }
  if (cubins_only) {
    for (Target t : gpu_targets())
      if (!is_elf(k.compile(t, args...).cubin)) throw Error(k.name() + ": no cubin for " + std::string(to_string(t)));
    std::printf("%s: a cubin for every GPU target\n", k.name().c_str());
    return;
  }
  const std::filesystem::path dir = root / (std::to_string(kernels++) + "." + k.name());
  setenv("TESSERA_DUMP_DIR", dir.c_str(), 1);
  for (Target t : {Target::sm_90, Target::cpu}) k.compile(t, std::forward<A>(args)...);
  std::printf("%s\n", k.name().c_str());
}

void dump_all() {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  dump(examples::vector_add(), z.partition<128>(), x, y);
  Tensor<float, 2> m({10, 1000}), s({10, 1000});
  dump(examples::softmax(), s.partition<1, 1024>(), m);
  Tensor<bfloat16, 2> xq({300, 256}), yq({300, 512});
  Tensor<float8_e4m3, 2> qx({300, 256}), qw({512, 256});
  Tensor<float, 2> partial({5, 1});
  dump(examples::tile_abs_max(), partial.partition<1, 1>(), xq);
  dump(examples::quantize_e4m3(), qx.partition<1, 1024>(), xq, 2.0f);
  dump(examples::fp8_linear(), yq.partition<128, 128>(), qx, qw.transposed(), 0.5f, 0.25f);

  Tensor<bfloat16, 2> a({64, 8192}), o({64, 8192});
  Tensor<bfloat16, 1> w({8192}), b({8192});
  Tensor<float, 2> sums({64, 1});
  dump(row_kernels::copy(), o.partition<1, 8192>(), a);
  dump(row_kernels::row_sum(), sums.partition<1, 1>(), a);
  dump(row_kernels::row_sum_loop(), sums.partition<1, 1>(), a);
  dump(row_kernels::row_max(), sums.partition<1, 1>(), a);
  dump(row_kernels::softmax(), o.partition<1, 8192>(), a);
  dump(row_kernels::softmax_fast(), o.partition<1, 8192>(), a);
  dump(row_kernels::rmsnorm(), o.partition<1, 8192>(), a, w);
  dump(row_kernels::layernorm(), o.partition<1, 8192>(), a, w, b);

  Tensor<bfloat16, 1> p({5000}), q({5000}), r({5000});
  dump(kernel("add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); }),
       r.partition<4096>(), p, q);
  dump(kernel("fused_chain", [](auto o, auto a, auto b) {
         auto p = cast<DType::f32>(a.load_like(o));
         auto q = cast<DType::f32>(b.load_like(o));
         auto r = tanh(p * q + c<0.5>) * p + exp(q * c<-0.5>) - sqrt(abs(p) + c<1.0>);
         return o.store(cast<DType::bf16>(r));
       }),
       r.partition<4096>(), p, q);
  dump(kernel("fused_chain_fast", [](auto o, auto a, auto b) {
         auto p = cast<DType::f32>(a.load_like(o));
         auto q = cast<DType::f32>(b.load_like(o));
         auto r = fast_tanh(p * q + c<0.5>) * p + fast_exp(q * c<-0.5>) - fast_sqrt(abs(p) + c<1.0>);
         return o.store(cast<DType::bf16>(r));
       }),
       r.partition<4096>(), p, q);

  Tensor<bfloat16, 2> t({256, 256}), tt({256, 256});
  dump(kernel("transpose", [](auto o, auto a) {
         return o.store(transpose(load<64, 64>(a, program_id<1>(), program_id<0>())));
       }),
       tt.partition<64, 64>(), t);

  Tensor<half, 2> ha({128, 128}), hb({128, 128});
  Tensor<float, 2> hc({128, 128});
  dump(kernel("gemm", [](auto o, auto p, auto q) {
         auto acc = for_range(
             (dim<1>(p) + c<15>) / c<16>,
             [=](auto k, auto acc) { return mma(load<16, 16>(p, program_id<0>(), k), load<16, 16>(q, k, program_id<1>()), acc); },
             full<DType::f32, 16, 16>(c<0>));
         return o.store(acc);
       }),
       hc.partition<16, 16>(), ha, hb);

  Tensor<float, 2> lx({64, 1000});
  Tensor<float, 2> ly({64, 1});
  dump(kernel("logsumexp", [](auto o, auto x) {
         auto stats = for_range(
             (dim<1>(x) + c<63>) / c<64>,
             [=](auto j, auto m, auto l) {
               auto t = load<16, 64>(x, program_id<0>(), j);
               auto m2 = maximum(m, max<1>(t));
               return carry(m2, l * exp(m - m2) + sum<1>(exp(t - m2)));
             },
             full<DType::f32, 16, 1>(c<-1e30>), full<DType::f32, 16, 1>(c<0>));
         auto [mx, l] = stats;
         return o.store(mx + log(l));
       }),
       ly.partition<16, 1>(), lx);
}

}  // namespace

int main(int argc, char** argv) {
  cubins_only = argc == 3 && std::string(argv[1]) == "--cubins";
  tileir_only = argc == 3 && std::string(argv[1]) == "--tileir";
  if (argc != 2 && !cubins_only && !tileir_only) {
    std::fprintf(stderr, "usage: %s [--cubins | --tileir] DIR\n", argv[0]);
    return 2;
  }
  root = argv[argc - 1];
  std::filesystem::create_directories(root);
  setenv("TESSERA_CACHE_DIR", (root / "cache").c_str(), 1);
  try {
    dump_all();
    if (tileir_only) std::printf("%d kernels without a Tile IR form\n", not_expressible);
  } catch (const NoTileiras& e) {
    std::printf("skipped: %s\n", e.why.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "codegen_dump: %s\n", e.what());
    return 1;
  }
  std::filesystem::remove_all(root / "cache");
  return 0;
}
