// fuzz_case.cpp: the dtype helpers of fuzz_case.h (rounding, spacing, storage encoding).
#include "fuzz_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::fuzz {

std::string params_text(const std::vector<ParamSpec>& params) {
  std::vector<std::string> decls;
  for (const ParamSpec& p : params) {
    switch (p.kind) {
      case ParamKind::out:
        decls.push_back(fmt::format("(out {} {} [{}])", dtype_name(p.dtype), p.shape.size(), fmt::join(p.tile, " ")));
        break;
      case ParamKind::in: decls.push_back(fmt::format("(in {} {})", dtype_name(p.dtype), p.shape.size())); break;
      case ParamKind::scalar: decls.push_back(fmt::format("(scalar {})", dtype_name(p.dtype))); break;
    }
  }
  return fmt::format("(params {})", fmt::join(decls, " "));
}

void add_random_hints(FuzzCase& c, bool gemm) {
  Rng r(c.seed ^ 0x68696e7473ull);  // "hints"
  if (!r.chance(0.4)) return;
  CompilerHints& h = c.hints;
  auto named = [&](const char* name) { c.features.push_back(fmt::format("hint:{}", name)); };
  if (r.chance(0.4)) h.threads = 1 << r.uniform(5, 10), named("threads");
  if (r.chance(0.3)) h.occupancy = static_cast<int>(r.uniform(1, 8)), named("occupancy");
  if (r.chance(0.3)) h.split_k = 1 << r.uniform(1, 3), named("split_k");
  if (r.chance(0.2)) {
    h.stream_stages = static_cast<int>(r.uniform(1, 8));
    h.bulk_streams = r.chance(0.5);
    named(h.bulk_streams ? "bulk_streams" : "stream_stages");
  }
  if (r.chance(0.3)) h.early_frozen_steps = static_cast<int>(r.uniform(1, 4)), named("early_frozen_steps");
  if (gemm && r.chance(0.4)) h.pipeline_stages = static_cast<int>(r.uniform(2, 8)), named("pipeline_stages");
  if (gemm && r.chance(0.3)) h.group_rows = 1 << r.uniform(0, 6), named("group_rows");
  c.frozen_inputs = r.chance(0.7);
  if (c.frozen_inputs) named("frozen_inputs");
}

void sort_features(FuzzCase& c) {
  std::sort(c.features.begin(), c.features.end());
  c.features.erase(std::unique(c.features.begin(), c.features.end()), c.features.end());
}

std::vector<int64_t> grid_of(const FuzzCase& c) {
  std::vector<int64_t> g{1, 1, 1};
  for (const ParamSpec& p : c.params) {
    if (p.kind != ParamKind::out) continue;
    for (std::size_t d = 0; d < p.shape.size() && d < 3; ++d) g[d] = (p.shape[d] + p.tile[d] - 1) / p.tile[d];
    break;
  }
  return g;
}

double round_to(DType d, double x) {
  switch (d) {
    case DType::f32: return static_cast<float>(x);
    case DType::f16: return static_cast<float>(half(static_cast<float>(x)));
    case DType::bf16: return static_cast<float>(bfloat16(static_cast<float>(x)));
    case DType::i32: {
      if (!std::isfinite(x)) return 0;
      auto v = static_cast<int64_t>(std::trunc(std::fmod(x, 0x1p64)));
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    }
    case DType::i1: return x != 0 ? 1 : 0;
    case DType::f8e4m3: return static_cast<float>(float8_e4m3(static_cast<float>(x)));
    case DType::f8e5m2: return static_cast<float>(float8_e5m2(static_cast<float>(x)));
  }
  return x;
}

double ulp_of(DType d, double x) {
  int mantissa = 0, min_exp = 0;
  switch (d) {
    case DType::f32: mantissa = 23, min_exp = -126; break;
    case DType::f16: mantissa = 10, min_exp = -14; break;
    case DType::bf16: mantissa = 7, min_exp = -126; break;
    case DType::f8e4m3: mantissa = 3, min_exp = -6; break;
    case DType::f8e5m2: mantissa = 2, min_exp = -14; break;
    default: return 0;
  }
  x = std::fabs(x);
  if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
  int e = x == 0 ? min_exp : std::max(std::ilogb(x), min_exp);
  return std::ldexp(1.0, e - mantissa);
}

double max_finite(DType d) {
  switch (d) {
    case DType::f32: return std::numeric_limits<float>::max();
    case DType::f16: return 65504.0;
    case DType::bf16: return static_cast<float>(bfloat16::from_bits(0x7f7f));
    case DType::i32: return 2147483647.0;
    case DType::i1: return 1;
    case DType::f8e4m3: return 448.0;
    case DType::f8e5m2: return 57344.0;
  }
  return 0;
}

void store_element(DType d, void* base, int64_t i, double v) {
  auto* b = static_cast<std::byte*>(base);
  switch (d) {
    case DType::f32: {
      float f = static_cast<float>(v);
      std::memcpy(b + 4 * i, &f, 4);
      break;
    }
    case DType::f16: {
      half h(static_cast<float>(v));
      std::memcpy(b + 2 * i, &h.bits, 2);
      break;
    }
    case DType::bf16: {
      bfloat16 h(static_cast<float>(v));
      std::memcpy(b + 2 * i, &h.bits, 2);
      break;
    }
    case DType::i32: {
      auto x = static_cast<int32_t>(round_to(DType::i32, v));
      std::memcpy(b + 4 * i, &x, 4);
      break;
    }
    case DType::i1: {
      bool x = v != 0;
      std::memcpy(b + i, &x, 1);
      break;
    }
    case DType::f8e4m3: {
      float8_e4m3 h(static_cast<float>(v));
      std::memcpy(b + i, &h.bits, 1);
      break;
    }
    case DType::f8e5m2: {
      float8_e5m2 h(static_cast<float>(v));
      std::memcpy(b + i, &h.bits, 1);
      break;
    }
  }
}

double load_element(DType d, const void* base, int64_t i) {
  const auto* b = static_cast<const std::byte*>(base);
  switch (d) {
    case DType::f32: {
      float f;
      std::memcpy(&f, b + 4 * i, 4);
      return f;
    }
    case DType::f16: {
      uint16_t bits;
      std::memcpy(&bits, b + 2 * i, 2);
      return static_cast<float>(half::from_bits(bits));
    }
    case DType::bf16: {
      uint16_t bits;
      std::memcpy(&bits, b + 2 * i, 2);
      return static_cast<float>(bfloat16::from_bits(bits));
    }
    case DType::i32: {
      int32_t x;
      std::memcpy(&x, b + 4 * i, 4);
      return x;
    }
    case DType::i1: {
      uint8_t x;
      std::memcpy(&x, b + i, 1);
      return x != 0 ? 1 : 0;
    }
    case DType::f8e4m3: {
      uint8_t x;
      std::memcpy(&x, b + i, 1);
      return static_cast<float>(float8_e4m3::from_bits(x));
    }
    case DType::f8e5m2: {
      uint8_t x;
      std::memcpy(&x, b + i, 1);
      return static_cast<float>(float8_e5m2::from_bits(x));
    }
  }
  return 0;
}

}  // namespace tessera::fuzz
