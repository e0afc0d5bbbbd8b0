// test_float8.cpp: the 8-bit float dtypes f8e4m3 and f8e5m2 (tessera::float8_e4m3, float8_e5m2).
//
// The host conversion (dtype.h) is checked against a brute-force one: the nearest of all finite
// codes, ties to the even code, saturating past the largest, on every code's value, every midpoint
// between neighbours and the floats next to it, values past the range, subnormals, infinities,
// NaN and random floats. Kernels on both targets must agree with it bit for bit: casts from f32
// (the same values), to f32 (all 256 codes), to and from bf16, f16, i32 and the other 8-bit
// format; loads padded with a constant, select, transpose and a loop carrying an f8 tile; and mma
// of f8 tiles (exact products, f32 sums) against a host reference, with ragged M, N and K, an
// epilogue that stores a bf16 product as f8e4m3, and a product scaled as torch._scaled_mm does;
// and products with B the transposed view of an N x K matrix (K-major) in the tiles of the 8-bit
// tensor-core lowerings (wgmma k32 on sm_90, mma.sync m16n8k32 on sm_89 and newer), ragged and
// whole. The kernels compile for every GPU target (conversions as the paired cvt instructions
// from sm_89 on, integer arithmetic before; a row-major B's product on the f16 mma.sync,
// a K-major B's on the 8-bit instructions, whose cubins ptxas reports free of spills), and an AST
// that computes on an 8-bit float tile is a malformed-AST error naming the kernel.
#include "driver/nvjitlink.h"
#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"
#include "ptxas_log.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>


using namespace tessera;

namespace {

using exec_test::random_tensor;
using namespace matmul_reference;

static_assert(float8_e4m3(448.0f).bits == 0x7e && float8_e4m3(-448.0f).bits == 0xfe);
static_assert(float8_e5m2(57344.0f).bits == 0x7b && float(float8_e5m2::from_bits(0x7c)) == std::numeric_limits<float>::infinity());
static_assert(float(float8_e4m3::from_bits(0x01)) == 0x1p-9f && float(float8_e5m2::from_bits(0x01)) == 0x1p-16f);
static_assert(float8_e4m3(1.0f).bits == 0x38 && float8_e5m2(1.0f).bits == 0x3c);
static_assert(float8_e4m3(std::numeric_limits<float>::infinity()).bits == 0x7e);  // saturates
static_assert(float8_e5m2(-std::numeric_limits<float>::infinity()).bits == 0xfb);
static_assert(dtype_v<float8_e4m3> == DType::f8e4m3 && dtype_size(DType::f8e5m2) == 1);

template <class T>
constexpr detail::Float8Format format_of() {
  return std::is_same_v<T, float8_e4m3> ? detail::kFloat8E4M3 : detail::kFloat8E5M2;
}

template <class T>
bool is_nan_code(std::uint8_t b) {
  return std::isnan(float(T::from_bits(b)));
}

// The brute-force conversion: the nearest finite code (ties to the even code), saturating.
template <class T>
std::uint8_t nearest_code(float x) {
  if (std::isnan(x)) return static_cast<std::uint8_t>((std::signbit(x) ? 0x80 : 0) | 0x7f);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::abs(static_cast<double>(x));
  const std::uint8_t top = format_of<T>().max_bits;
  if (a >= double(float(T::from_bits(top)))) return sign | top;
  std::uint8_t best = 0;
  for (std::uint8_t c = 1; c <= top; ++c) {
    const double dc = std::abs(double(float(T::from_bits(c))) - a), db = std::abs(double(float(T::from_bits(best))) - a);
    if (dc < db || (dc == db && (c & 1) == 0)) best = c;
  }
  return sign | best;
}

// Values a conversion to T must get right: every finite code's value, the midpoints between
// neighbours and the floats next to them, past the range, subnormal f32, infinities, NaN and
// random floats over the range, each with both signs.
template <class T>
std::vector<float> edge_values() {
  std::vector<float> v;
  const std::uint8_t top = format_of<T>().max_bits;
  for (std::uint8_t c = 0; c <= top; ++c) {
    const float x = float(T::from_bits(c));
    v.push_back(x);
    if (c < top) {
      const float mid = (x + float(T::from_bits(c + 1))) / 2;  // exact: one more significant bit
      v.insert(v.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)});
    }
  }
  const float largest = float(T::from_bits(top));
  v.insert(v.end(), {largest * 1.0625f, largest * 1.125f, largest * 2, 1e30f, std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::denorm_min(), 1e-40f, std::numeric_limits<float>::quiet_NaN()});
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> exponent(-20, 17);
  for (int i = 0; i < 400; ++i) v.push_back(std::exp2(exponent(rng)));
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

template <class T>
void check_host_conversion() {
  INFO(dtype_name(dtype_v<T>));
  int64_t bad = 0;
  for (float x : edge_values<T>()) {
    const std::uint8_t got = T(x).bits, want = nearest_code<T>(x);
    if (std::isnan(x) ? !is_nan_code<T>(got) : got != want) {
      if (bad == 0) UNSCOPED_INFO("first mismatch: " << x << " -> " << int(got) << ", want " << int(want));
      ++bad;
    }
  }
  CHECK(bad == 0);
  for (int c = 0; c < 256; ++c) {  // every finite code reads back as itself
    const auto b = static_cast<std::uint8_t>(c);
    if (std::isfinite(float(T::from_bits(b)))) CHECK(T(float(T::from_bits(b))).bits == b);
  }
}

TEST_CASE("float8: the host conversions round to nearest even and saturate, as a brute-force search does",
          "[float8]") {
  check_host_conversion<float8_e4m3>();
  check_host_conversion<float8_e5m2>();
  CHECK(std::isnan(float(float8_e4m3::from_bits(0xff))));
  CHECK(std::isnan(float(float8_e5m2::from_bits(0x7d))));
  CHECK(std::isnan(float(float8_e4m3(std::numeric_limits<float>::quiet_NaN()))));
}

// Whether two codes are the same value (NaN: both NaN, whatever their bits).
template <class T>
bool same_code(std::uint8_t got, std::uint8_t want) {
  return is_nan_code<T>(want) ? is_nan_code<T>(got) : got == want;
}
bool same_float(float got, float want) {
  return std::isnan(want) ? std::isnan(got) : std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want);
}

template <class T>
void check_casts(Target target) {
  constexpr DType D = dtype_v<T>;
  INFO(dtype_name(D));
  // f32 -> T on the edge values (a count no tile divides).
  const std::vector<float> values = edge_values<T>();
  const auto n = static_cast<int64_t>(values.size());
  Tensor<float, 1> x({n});
  for (int64_t i = 0; i < n; ++i) x(i) = values[static_cast<std::size_t>(i)];
  Tensor<T, 1> narrow({n});
  kernel(std::string("f8_narrow_") + std::string(dtype_name(D)), [](auto out, auto a) {
    return out.store(cast<D>(a.load_like(out)));
  }).launch_on(target, narrow.template partition<128>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !same_code<T>(narrow(i).bits, T(x(i)).bits);
  CHECK(bad == 0);

  // T -> f32, bf16, f16, i32 and the other 8-bit format on all 256 codes; bf16 -> T back.
  using Other = std::conditional_t<std::is_same_v<T, float8_e4m3>, float8_e5m2, float8_e4m3>;
  Tensor<T, 1> codes({256});
  for (int c = 0; c < 256; ++c) codes(c) = T::from_bits(static_cast<std::uint8_t>(c));
  Tensor<float, 1> wide({256});
  Tensor<bfloat16, 1> as_bf16({256});
  Tensor<half, 1> as_f16({256});
  Tensor<std::int32_t, 1> as_i32({256});
  Tensor<Other, 1> as_other({256});
  Tensor<T, 1> from_bf16({256});
  auto widen = kernel(std::string("f8_widen_") + std::string(dtype_name(D)),
                      [](auto f32, auto bf16, auto f16, auto i32, auto other, auto back, auto a) {
                        auto t = a.load_like(f32);
                        return seq(f32.store(cast<DType::f32>(t)), bf16.store(cast<DType::bf16>(t)),
                                        f16.store(cast<DType::f16>(t)), i32.store(cast<DType::i32>(t)),
                                        other.store(cast<dtype_v<Other>>(t)),
                                        back.store(cast<D>(cast<DType::bf16>(t))));
                      });
  widen.launch_on(target, wide.partition<64>(), as_bf16.partition<64>(), as_f16.partition<64>(),
                  as_i32.partition<64>(), as_other.template partition<64>(), from_bf16.template partition<64>(), codes);
  int64_t bad_wide = 0, bad_narrow = 0, bad_int = 0;
  for (int c = 0; c < 256; ++c) {
    const float v = float(codes(c));
    bad_wide += !same_float(wide(c), v) || !same_float(float(as_bf16(c)), v) || !same_float(float(as_f16(c)), v);
    bad_narrow += !same_code<Other>(as_other(c).bits, Other(v).bits) || !same_code<T>(from_bf16(c).bits, T(v).bits);
    if (std::isfinite(v)) bad_int += as_i32(c) != static_cast<std::int32_t>(v);
  }
  CHECK(bad_wide == 0);
  CHECK(bad_narrow == 0);
  CHECK(bad_int == 0);
}

void casts(Target target) {
  check_casts<float8_e4m3>(target);
  check_casts<float8_e5m2>(target);
}

// Data movement of f8 tiles: a ragged load padded with 2 summed in f32; select with a constant; a
// transposed tile; a loop that carries an f8 tile (the maximum by magnitude so far, in f32).
void data_movement(Target target) {
  const int64_t n = 100;
  auto x = random_tensor<float8_e4m3, 1>({n}, -4, 4, 3);
  Tensor<float, 1> total({1});
  kernel("f8_padded_sum", [](auto out, auto a) {
    return out.store(reshape<1>(sum<0>(cast<DType::f32>(load<128>(a, c<0>).padded(c<2>)))));
  }).launch_on(target, total.partition<1>(), x);
  double want = 28 * 2.0;
  for (int64_t i = 0; i < n; ++i) want += float(x(i));
  CHECK(total(0) == Approx(want).epsilon(1e-6));

  Tensor<float8_e4m3, 1> clipped({n});
  kernel("f8_select", [](auto out, auto a) {
    auto t = a.load_like(out);
    return out.store(select(cast<DType::f32>(t) > c<0>, t, c<0.5>));
  }).launch_on(target, clipped.partition<32>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += float(clipped(i)) != (float(x(i)) > 0 ? float(x(i)) : 0.5f);
  CHECK(bad == 0);

  auto m = random_tensor<float8_e5m2, 2>({40, 70}, -8, 8, 4);
  Tensor<float8_e5m2, 2> t({70, 40});
  kernel("f8_transpose", [](auto out, auto a) {
    return out.store(transpose(load<16, 32>(a, program_id<1>(), program_id<0>())));
  }).launch_on(target, t.partition<32, 16>(), m);
  bad = 0;
  for (int64_t i = 0; i < 70; ++i)
    for (int64_t j = 0; j < 40; ++j) bad += t(i, j).bits != m(j, i).bits;
  CHECK(bad == 0);

  // rows: 6 x 64; out(j) = the row value of largest magnitude in column j, kept as f8.
  auto rows = random_tensor<float8_e4m3, 2>({6, 64}, -100, 100, 5);
  Tensor<float8_e4m3, 1> peak({64});
  kernel("f8_loop_carry", [](auto out, auto a) {
    auto best = for_range(dim<0>(a), [=](auto i, auto best) {
      auto row = reshape<64>(load<1, 64>(a, i, c<0>));
      return select(abs(cast<DType::f32>(row)) > abs(cast<DType::f32>(best)), row, best);
    }, full<DType::f8e4m3, 64>(c<0>));
    return out.store(best);
  }).launch_on(target, peak.partition<64>(), rows);
  bad = 0;
  for (int64_t j = 0; j < 64; ++j) {
    float b = 0;
    for (int64_t i = 0; i < 6; ++i) b = std::abs(float(rows(i, j))) > std::abs(b) ? float(rows(i, j)) : b;
    bad += float(peak(j)) != b;
  }
  CHECK(bad == 0);
}

template <class T, class TB = T>
void check_f8_product(Target target, int64_t m, int64_t n, int64_t k, unsigned seed) {
  auto a = random_tensor<T, 2>({m, k}, -2, 2, seed);
  auto b = random_tensor<TB, 2>({k, n}, -2, 2, seed + 1);
  Tensor<float, 2> out({m, n});
  matmul_kernels::matmul<32, 32, 32>().launch_on(target, out.partition<32, 32>(), a, b);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  INFO(dtype_name(dtype_v<T>) << " x " << dtype_name(dtype_v<TB>) << " " << m << " x " << n << " x " << k);
  CHECK(mismatches(r, m, n, product_bound(dtype_v<T>, k), 0, [&](int64_t i, int64_t j) { return d(out(i, j)); },
                   [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
}

// f8 products (exact in f32) summed in f32: whole tiles, M, N and K ragged, K below one tile; a
// bf16 product stored as f8e4m3 (scaled into the format's range first); and a scaled f8 product
// stored as bf16.
void products(Target target) {
  for (auto [m, n, k] : {std::array<int64_t, 3>{64, 64, 64}, {45, 70, 50}, {33, 17, 9}}) {
    check_f8_product<float8_e4m3>(target, m, n, k, 1);
    check_f8_product<float8_e5m2>(target, m, n, k, 7);
    check_f8_product<float8_e5m2, float8_e4m3>(target, m, n, k, 11);  // one of each format
  }
  const int64_t m = 64, n = 96, k = 80;
  auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 21);
  auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 22);
  Tensor<float8_e4m3, 2> out({m, n});
  kernel("bf16_matmul_to_f8", [](auto o, auto a, auto b) {
    auto acc = for_range(
        (dim<1>(a) + c<31>) / c<32>,
        [=](auto k, auto acc) { return mma(load<64, 32>(a, program_id<0>(), k), load<32, 32>(b, k, program_id<1>()), acc); },
        full<DType::f32, 64, 32>(c<0.0>));
    return o.store(cast<DType::f8e4m3>(acc * c<16>));
  }).launch_on(target, out.partition<64, 32>(), a, b);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  // The f32 sum's error, scaled, then one rounding to 3 mantissa bits (relative 2^-4) or, below
  // the normal range, to the subnormal step 2^-9.
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double want = std::clamp(16 * r.at(i, j), -448.0, 448.0);
      const double tol = 16 * product_bound(DType::bf16, k) * r.mag(i, j) * 1.1 + std::abs(want) * 0x1p-4 + 0x1p-10;
      bad += !(std::abs(double(float(out(i, j))) - want) <= tol);
    }
  CHECK(bad == 0);

  // A scaled product as torch._scaled_mm computes it: bf16((a b) * scale_a * scale_b), the
  // operands quantized to f8e4m3 with per-tensor scales passed as f32 scalars.
  const float scale_a = 0.125f, scale_b = 0.5f;
  Tensor<float8_e4m3, 2> qa({m, k}), qb({k, n});
  for (int64_t i = 0; i < qa.numel(); ++i) qa.data()[i] = float8_e4m3(float(a.data()[i]) / scale_a);
  for (int64_t i = 0; i < qb.numel(); ++i) qb.data()[i] = float8_e4m3(float(b.data()[i]) / scale_b);
  Tensor<bfloat16, 2> scaled({m, n});
  kernel("f8_scaled_matmul", [](auto o, auto a, auto b, auto sa, auto sb) {
    auto acc = for_range(
        (dim<1>(a) + c<31>) / c<32>,
        [=](auto k, auto acc) { return mma(load<64, 32>(a, program_id<0>(), k), load<32, 32>(b, k, program_id<1>()), acc); },
        full<DType::f32, 64, 32>(c<0.0>));
    return o.store(cast<DType::bf16>(acc * (sa * sb)));
  }).launch_on(target, scaled.partition<64, 32>(), qa, qb, scale_a, scale_b);
  const auto rq = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(qa(i, kk)) * scale_a; },
                            [&](int64_t kk, int64_t j) { return d(qb(kk, j)) * scale_b; });
  CHECK(mismatches(rq, m, n, product_bound(DType::f8e4m3, k), 0x1p-8, [&](int64_t i, int64_t j) { return d(scaled(i, j)); },
                   [&](int64_t i, int64_t j) { return rq.at(i, j); }) == 0);
}

// a @ w.transposed() for 8-bit float a (m x k) and w (n x k; its transposed view is K-major: the
// tensor cores read 8-bit floats K-major only) against `r` within `bound` of the magnitude, f32
// out, in tiles that take each lowering: on sm_90, those of 128 or 256 bytes of K (BK 128, 256)
// take TMA + wgmma k32 and 64 x 64 x 64 cp.async + mma.sync m16n8k32; on the GPU the small tiles
// are launched for sm_89 too (mma.sync m16n8k32, whatever the tile). A K whose rows are not
// 16-byte aligned takes the loop lowering.
template <class T, class TB>
void check_k_major_tiles(Target target, const Tensor<T, 2>& a, const Tensor<TB, 2>& w, const Reference& r, double bound) {
  const int64_t m = a.shape(0), n = w.shape(0);
  Tensor<float, 2> wide({m, n});
  auto got = [&](int64_t i, int64_t j) { return d(wide(i, j)); };
  auto plain = [&](int64_t i, int64_t j) { return r.at(i, j); };
  matmul_kernels::matmul<128, 128, 128>().launch_on(target, wide.partition<128, 128>(), a, w.transposed());
  CHECK(mismatches(r, m, n, bound, 0, got, plain) == 0);
  matmul_kernels::matmul<64, 128, 256>().launch_on(target, wide.partition<64, 128>(), a, w.transposed());
  CHECK(mismatches(r, m, n, bound, 0, got, plain) == 0);
  std::vector<Target> small{target};
  if (target != Target::cpu) small.push_back(Target::sm_89);
  for (Target t : small) {
    INFO("64 x 64 x 64 tiles for " << to_string(t));
    matmul_kernels::matmul<64, 64, 64>().launch_on(t, wide.partition<64, 64>(), a, w.transposed());
    CHECK(mismatches(r, m, n, bound, 0, got, plain) == 0);
  }
}

// Random a and w in [-2, 2] through check_k_major_tiles, and a bf16 output through the scaled
// kernel (torch._scaled_mm's per-tensor scales). A and B may be one of each 8-bit format (e4m3 x
// e5m2, as FP8 training multiplies gradients by weights).
template <class T, class TB = T>
void check_k_major(Target target, int64_t m, int64_t n, int64_t k, unsigned seed) {
  INFO(dtype_name(dtype_v<T>) << " x " << dtype_name(dtype_v<TB>) << " " << m << " x " << n << " x " << k
                              << ", K-major B");
  auto a = random_tensor<T, 2>({m, k}, -2, 2, seed);
  auto w = random_tensor<TB, 2>({n, k}, -2, 2, seed + 1);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
  const double bound = product_bound(dtype_v<T>, k);
  check_k_major_tiles(target, a, w, r, bound);
  const float scale_a = 0.5f, scale_b = 0.25f;
  Tensor<bfloat16, 2> out({m, n});
  matmul_kernels::scaled_matmul<128, 128, 256>().launch_on(target, out.partition<128, 128>(), a, w.transposed(), scale_a,
                                                          scale_b);
  CHECK(mismatches(r, m, n, bound * scale_a * scale_b, 0x1p-8, [&](int64_t i, int64_t j) { return d(out(i, j)); },
                   [&](int64_t i, int64_t j) { return r.at(i, j) * scale_a * scale_b; }) == 0);
}

void k_major_products(Target target) {
  for (auto [m, n, k] : {std::array<int64_t, 3>{300, 520, 208}, {256, 512, 256}, {129, 264, 48}, {1, 8, 16}, {70, 90, 200}}) {
    check_k_major<float8_e4m3>(target, m, n, k, 31);
    if (k != 208) check_k_major<float8_e5m2>(target, m, n, k, 41);
    if (k == 208 || k == 48) check_k_major<float8_e4m3, float8_e5m2>(target, m, n, k, 51);  // one of each format
  }
}

// Long sums of positive products, where the accumulator grows with K: wgmma's 8-bit sums keep 13
// bits (truncated), so an accumulator carried through every instruction would lose about 2^-14 of
// itself per instruction, 2^-7 over K = 4096. The lowering adds each k-tile's partial sum in f32,
// which keeps the error within a few 2^-13 of each k-tile: bounded here by 2^-10 of the sum.
void long_positive_sums(Target target) {
  const int64_t m = 128, n = 256, k = 4096;
  auto a = random_tensor<float8_e4m3, 2>({m, k}, 0.5, 1, 81);
  auto w = random_tensor<float8_e4m3, 2>({n, k}, 0.5, 1, 82);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
  check_k_major_tiles(target, a, w, r, 2.0 * static_cast<double>(k) * 0x1p-24 + 0x1p-10);
}

}  // namespace

TESSERA_TARGET_TEST_CASE("float8: long sums of positive products keep f32 accuracy on the tensor cores", "[float8][mma]",
                         long_positive_sums)
TESSERA_TARGET_TEST_CASE("float8: casts to and from f32, bf16, f16, i32 and the other format match the host's",
                         "[float8]", casts)
TESSERA_TARGET_TEST_CASE("float8: padded loads, select, transpose and a loop carrying an f8 tile", "[float8]",
                         data_movement)
TESSERA_TARGET_TEST_CASE("float8: mma of f8e4m3 and f8e5m2 tiles (and one of each), ragged, and a product stored as f8e4m3",
                         "[float8][mma]", products)

TESSERA_TARGET_TEST_CASE("float8: products with a K-major B in the tensor cores' tiles, ragged and whole",
                         "[float8][mma]", k_major_products)

TEST_CASE("float8: the kernels compile for every GPU target", "[float8][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<float, 1> x({256});
  Tensor<float8_e4m3, 1> y({256});
  Tensor<float8_e5m2, 2> a({64, 64}), b({64, 64});
  Tensor<float, 2> out({64, 64});
  Tensor<float8_e5m2, 1> z({256});
  auto narrow = kernel("f8_compile_narrow", [](auto o, auto v) { return o.store(cast<DType::f8e4m3>(v.load_like(o))); });
  auto widen = kernel("f8_compile_widen", [](auto o, auto v) { return o.store(cast<DType::f32>(v.load_like(o))); });
  auto gemm = matmul_kernels::matmul<32, 32, 32>();
  for (Target t : gpu_targets()) {
    INFO(to_string(t));
    // From sm_89 on, conversions are the paired cvt instructions; before, integer arithmetic.
    const bool cvt = t != Target::sm_80 && t != Target::sm_86;
    const CompiledArtifact narrowed = narrow.compile(t, y.partition<128>(), x);
    CHECK(!narrowed.cubin.empty());
    CHECK((narrowed.ptx.find("cvt.rn.satfinite.e4m3x2.f32") != std::string::npos) == cvt);
    const CompiledArtifact widened = widen.compile(t, x.partition<128>(), z);
    CHECK(!widened.cubin.empty());
    CHECK((widened.ptx.find("cvt.rn.f16x2.e5m2x2") != std::string::npos) == cvt);
    const CompiledArtifact product = gemm.compile(t, out.partition<32, 32>(), a, b);
    CHECK(!product.cubin.empty());
    // The operands widened to f16 in shared memory, multiplied on the tensor cores.
    CHECK(product.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != std::string::npos);
  }
}

// Products of 8-bit floats with a K-major B: on sm_90 in tiles of BN 64 or 128 and 128 or 256 bytes of K, TMA (byte
// tensor maps) + wgmma m64nNk32 without transpose operands, whose whole-program ptxas log reports
// no spills, no serialized wgmma and no ignored setmaxnreg; on sm_89, sm_100a, sm_120 (and sm_90
// for other tiles), cp.async + ldmatrix + mma.sync m16n8k32 with no spills. sm_80 and sm_86 have
// no 8-bit float mma: the operands are widened to f16 there, as they are everywhere for a
// row-major B (neither instruction reads 8-bit floats MN-major).
TEST_CASE("float8: products with a K-major B compile to 8-bit tensor-core instructions on sm_89 and newer",
          "[float8][mma][compile]") {
  if (!exec_test::toolchain_present()) return;
  auto has = [](const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; };
  Tensor<float8_e4m3, 2> a({512, 256}), w({1024, 256}), b({256, 1024});
  Tensor<float8_e5m2, 2> a5({512, 256}), w5({1024, 256});
  Tensor<bfloat16, 2> out({512, 1024});
  Tensor<float, 2> wide({512, 1024});
  const CompiledArtifact scaled = matmul_kernels::scaled_matmul<128, 128, 128>().compile(
      Target::sm_90, out.partition<128, 128>(), a, w.transposed(), 0.5f, 0.25f);
  CHECK(has(scaled.ptx, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"));
  CHECK(has(scaled.ptx, "p, 1, 1;"));
  CHECK(has(scaled.ptx, "cp.async.bulk.tensor.2d"));
  const CompiledArtifact e5m2 =
      matmul_kernels::matmul<64, 128, 256>().compile(Target::sm_90, wide.partition<64, 128>(), a5, w5.transposed());
  CHECK(has(e5m2.ptx, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"));
  // One of each format: the instructions take A's and B's types apart.
  CHECK(has(matmul_kernels::matmul<128, 128, 128>().compile(Target::sm_90, wide.partition<128, 128>(), a, w5.transposed()).ptx,
            "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2"));
  CHECK(has(matmul_kernels::matmul<64, 64, 64>().compile(Target::sm_89, wide.partition<64, 64>(), a5, w.transposed()).ptx,
            "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32"));
  const std::string ptxas = ptxas_log::toolkit_ptxas_or_warn();
  for (const auto& [name, artifact] : {std::pair<const char*, const CompiledArtifact&>{"e4m3 128x128x128, scaled", scaled},
                                       {"e5m2 64x128x256", e5m2}}) {
    INFO(name);
    ptxas_log::check_gemm_log(ptxas, artifact.ptx);
  }
  // BN 256: each k-tile's partial sum beside the accumulator would exceed the consumers'
  // registers, so wgmma takes 8-bit floats in BN 64 and 128 only.
  CHECK(!has(matmul_kernels::scaled_matmul<128, 256, 128>()
                 .compile(Target::sm_90, out.partition<128, 256>(), a, w.transposed(), 0.5f, 0.25f)
                 .ptx,
             "wgmma"));
  // A row-major B: neither tensor-core lowering reads 8-bit floats MN-major.
  const CompiledArtifact row_major =
      matmul_kernels::matmul<128, 128, 128>().compile(Target::sm_90, wide.partition<128, 128>(), a, b);
  CHECK(!has(row_major.ptx, "wgmma"));
  CHECK(!has(row_major.ptx, "m16n8k32"));
  auto small = matmul_kernels::matmul<64, 64, 64>();
  for (Target t : gpu_targets()) {
    INFO(to_string(t));
    const std::string ptx = small.compile(t, wide.partition<64, 64>(), a, w.transposed()).ptx;
    const bool fp8_mma = t != Target::sm_80 && t != Target::sm_86;
    CHECK(has(ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") == fp8_mma);
    CHECK(has(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == !fp8_mma);
    if (!fp8_mma) continue;
    CHECK(has(ptx, "cp.async.cg.shared.global"));
    CHECK(has(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    const std::string log =
        detail::ptx_to_cubin(ptx, std::string(to_string(t)), std::vector<std::string>{"-verbose"}).info_log;
    INFO(log);
    CHECK(has(log, " 0 bytes spill stores"));
  }
}

TEST_CASE("float8: an AST that computes on an 8-bit float tile is a malformed-AST error", "[float8][robustness]") {
  Tensor<float8_e4m3, 1> x({64}), z({64});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(z.partition<16>()), detail::to_arg(x)};
  for (std::string text :
       {"(kernel (params (out f8e4m3 1 [16]) (in f8e4m3 1)) (body (store 0 (add f8e4m3 [16] (load_like f8e4m3 [16] 1 0) "
        "(load_like f8e4m3 [16] 1 0)))))",
        "(kernel (params (out f8e4m3 1 [16]) (in f8e4m3 1)) (body (store 0 (exp f8e4m3 [16] (load_like f8e4m3 [16] 1 0)))))",
        "(kernel (params (out f8e4m3 1 [16]) (in f8e4m3 1)) (body (store 0 (const f8e4m3 [16] 0x4090000000000000))))"}) {
    INFO(text);
    detail::LaunchRequest r{"f8_text", text, args};
    CHECK_THROWS_WITH(detail::submit(r, Target::cpu), Catch::Contains("kernel 'f8_text'") && Catch::Contains("malformed AST"));
  }
}
