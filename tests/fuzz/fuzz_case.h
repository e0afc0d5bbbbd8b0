// fuzz_case.h: one generated test case of the kernel fuzzer, and the dtype helpers its parts share.
//
// A FuzzCase is everything needed to launch a kernel through the library's internal entry point
// (detail::LaunchRequest: name, AST text, one ArgDesc per parameter) and to evaluate it on the
// host: the AST text (docs/ast-format.md, plain tree form), and per parameter its kind, dtype,
// view (sizes, strides, offset into a storage of `storage_elems` elements), output tile and
// initial storage contents, or a scalar's value. Values are kept as doubles that are exactly
// representable in the parameter's dtype (i1 as 0/1), so the reference interpreter and the runner
// read the same numbers. Also defined: a small deterministic random source (the same sequence on
// every platform, so a seed reproduces a case anywhere) and rounding to a dtype.
#pragma once

#include <tessera/dtype.h>
#include <tessera/launch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::fuzz {

enum class ParamKind { out, in, scalar };

struct ParamSpec {
  ParamKind kind = ParamKind::in;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;    // the view's sizes (tensors)
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // elements from the storage's start to element 0
  int64_t storage_elems = 0;
  std::vector<int64_t> tile;     // outputs
  std::vector<double> storage;   // initial contents of the whole storage (tensors)
  double scalar = 0;             // scalars
  std::string view;              // how the view was made, for reports: "dense", "slice", "transposed", ...
};

struct FuzzCase {
  uint64_t seed = 0;
  std::string name;  // the kernel's name: unique per case (the launcher's fast cache keys on it)
  std::string ast;
  std::vector<ParamSpec> params;
  bool whole_tiles = true;     // LaunchOptions::whole_tiles
  bool static_shapes = false;  // LaunchOptions::static_shapes
  CompilerHints hints;          // LaunchOptions::hints (random_hints)
  bool frozen_inputs = false;   // every input tensor frozen (Tensor::freeze) before the launch
  std::vector<std::string> features;  // what the kernel uses (op and node names), for coverage counts
};

// The grid of the first output: programs along each of the three axes.
std::vector<int64_t> grid_of(const FuzzCase& c);

// The (params ...) node of an AST text declaring `params` (docs/ast-format.md's PARAM).
std::string params_text(const std::vector<ParamSpec>& params);

// Random compiler hints for the case of `seed` (none for most cases; GPU targets read them, the
// CPU target ignores them), and whether its inputs are frozen (which early frozen steps and bulk
// rings need): drawn from a sequence of their own, so that the kernel a seed generates does not
// depend on them. `gemm`: the tensor-core GEMM hints too (pipeline stages, rows of programs).
// Their names join the case's features ("hint:threads", ...; sort_features after it).
void add_random_hints(FuzzCase& c, bool gemm);

// The case's features sorted, each once.
void sort_features(FuzzCase& c);

// A splitmix64 sequence: deterministic on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // An integer in [lo, hi].
  int64_t uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(uniform(0, std::ssize(v) - 1))]; }

 private:
  uint64_t state_;
};

// x rounded to the nearest value of a float dtype (f32 via float; f16/bf16 from that float, which
// equals direct rounding for the values the fuzzer produces: see reference_interpreter.cpp);
// integers: truncated toward zero and wrapped to 32 bits (i32) or tested against zero (i1).
double round_to(DType d, double x);
// The spacing of `d`'s values at |x| (its ulp; the subnormal spacing near zero); 0 for integers.
double ulp_of(DType d, double x);
// The largest finite value of a float dtype.
double max_finite(DType d);

// Encoding of one element in a tensor's storage.
void store_element(DType d, void* base, int64_t index, double value);
double load_element(DType d, const void* base, int64_t index);

}  // namespace tessera::fuzz
