// cache_probe.cpp: compiles one kernel for sm_90 and prints the cache counters, for the
// multi-process disk-cache test (tools/cache_across_processes.cmake). With the argument "other" it
// compiles another kernel of the same name (another AST, so another cache key), whose entry the
// test swaps with the first one's. Needs no GPU.
#include <tessera/tessera.h>

#include <cstdio>
#include <string_view>

namespace {

template <class K>
int probe(K& k) {
  using namespace tessera;
  Tensor<float, 1> x({256}), z({256});
  try {
    CompiledArtifact art = k.compile(Target::sm_90, z.partition<128>(), x);
    CacheStats s = cache_stats();
    std::printf("compiles=%lld disk_hits=%lld disk_corrupt=%lld cubin_bytes=%zu\n", static_cast<long long>(s.compiles),
                static_cast<long long>(s.disk_hits), static_cast<long long>(s.disk_corrupt), art.cubin.size());
    return art.cubin.empty() ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  if (argc > 1 && std::string_view(argv[1]) == "other") {
    auto k = kernel("cache_probe", [](auto o, auto a) { return o.store(a.load_like(o) * c<3.0> - c<1.0>); });
    return probe(k);
  }
  auto k = kernel("cache_probe", [](auto o, auto a) { return o.store(a.load_like(o) * c<2.0> + c<1.0>); });
  return probe(k);
}
