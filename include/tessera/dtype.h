// tessera/dtype.h: the element types of tiles and tensors.
//
// Defines DType (the seven element types a kernel can use), their names and storage sizes, the
// 16-bit host types tessera::half (IEEE binary16) and tessera::bfloat16, the 8-bit host types
// tessera::float8_e4m3 and tessera::float8_e5m2 (bit containers with a round-to-nearest-even
// conversion from float), and the maps between host C++ types and DType: dtype_v<T> (float, half,
// bfloat16, float8_e4m3, float8_e5m2, int32_t, bool) and host_type_t<D>.
// The 8-bit floats are the OCP FP8 formats as NVIDIA's tensor cores read them: E4M3 (bias 7, no
// infinities, one NaN per sign, largest 448) and E5M2 (bias 15, IEEE-like, largest 57344). They
// hold data: a kernel loads, stores and casts them and multiplies them with mma; arithmetic needs a
// cast to a wider float first. A conversion to them rounds to nearest even and saturates: a value
// past the largest finite one (an infinity too) becomes that largest value, with its sign; NaN
// stays NaN. That is what the GPU's cvt.rn.satfinite does, on the CPU target as well.
// Assumes nothing but the standard library; everything here is constexpr.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tessera {

enum class DType : std::uint8_t { f32, f16, bf16, i32, i1, f8e4m3, f8e5m2 };

// "f32", "f16", "bf16", "i32", "i1", "f8e4m3", "f8e5m2": the spelling used in the serialized
// kernel AST.
constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i1: return "i1";
    case DType::f8e4m3: return "f8e4m3";
    case DType::f8e5m2: return "f8e5m2";
  }
  return "?";
}

// Bytes per element in host and device memory (i1 is stored as one byte).
constexpr std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::i32: return 4;
    case DType::i1: return 1;
    case DType::f8e4m3: return 1;
    case DType::f8e5m2: return 1;
  }
  return 0;
}

constexpr bool is_float8(DType d) { return d == DType::f8e4m3 || d == DType::f8e5m2; }
constexpr bool is_floating(DType d) {
  return d == DType::f32 || d == DType::f16 || d == DType::bf16 || is_float8(d);
}
constexpr bool is_integer(DType d) { return d == DType::i32 || d == DType::i1; }

namespace detail {

template <class...> inline constexpr bool always_false = false;

// float -> IEEE binary16, round to nearest even; overflow gives inf, NaN stays a (quiet) NaN.
constexpr std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  const std::uint32_t man = x & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
  const int e = static_cast<int>(exp) - 112;  // rebias 127 -> 15
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // half subnormal (or zero): unit is 2^-24
    if (e < -10) return static_cast<std::uint16_t>(sign);
    const std::uint32_t m = man | 0x800000u;
    const std::uint32_t shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t r = (static_cast<std::uint32_t>(e) << 10) | (man >> 13);
  const std::uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // a carry may round up to inf: correct
  return static_cast<std::uint16_t>(sign | r);
}

constexpr float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return std::bit_cast<float>(sign);
    exp = 113;  // normalize a subnormal: value = man * 2^-24
    while (!(man & 0x400u)) { man <<= 1; --exp; }
    return std::bit_cast<float>(sign | (exp << 23) | ((man & 0x3ffu) << 13));
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

// float -> bfloat16 (the top 16 bits of a float), round to nearest even; NaN stays a quiet NaN.
constexpr std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float bf16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// An 8-bit float format: exponent and mantissa bits, exponent bias, whether the all-ones exponent
// holds infinities (E5M2) or only the all-ones code is NaN (E4M3), and the code of the largest
// finite magnitude.
struct Float8Format {
  int exp_bits, man_bits, bias;
  bool has_inf;
  std::uint8_t max_bits;
};
inline constexpr Float8Format kFloat8E4M3{4, 3, 7, false, 0x7e};  // 448 = 1.75 * 2^8
inline constexpr Float8Format kFloat8E5M2{5, 2, 15, true, 0x7b};  // 57344 = 1.75 * 2^15

// float -> 8-bit float: round to nearest even; magnitudes past the largest finite one (infinities
// included) saturate to it; NaN gives the NaN code 0x7f with the input's sign.
constexpr std::uint8_t float_to_f8_bits(float f, Float8Format fmt) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint32_t>((x >> 24) & 0x80u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);
  const int shift = 23 - fmt.man_bits;
  const auto min_normal = static_cast<std::uint32_t>(127 + 1 - fmt.bias) << 23;
  std::uint32_t r = 0;
  if (a >= min_normal) {  // rebias the rounded f32 code: exponent 127 -> bias
    r = ((a + (1u << (shift - 1)) - 1u + ((a >> shift) & 1u)) >> shift) -
        (static_cast<std::uint32_t>(127 - fmt.bias) << fmt.man_bits);
  } else if (a >= 0x00800000u) {  // an 8-bit subnormal: m * 2^-s units of 2^(1 - bias - man_bits)
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const int s = 150 + 1 - fmt.bias - fmt.man_bits - static_cast<int>(a >> 23);
    if (s < 25) {
      r = m >> s;
      const std::uint32_t rem = m & ((1u << s) - 1u), halfway = 1u << (s - 1);
      if (rem > halfway || (rem == halfway && (r & 1u))) ++r;  // may round up to the smallest normal
    }
  }  // f32 subnormals are far below half the smallest 8-bit subnormal: +-0
  if (r > fmt.max_bits) r = fmt.max_bits;
  return static_cast<std::uint8_t>(sign | r);
}

// 8-bit float -> float, exactly.
constexpr float f8_bits_to_float(std::uint8_t b, Float8Format fmt) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24, mag = b & 0x7fu;
  const std::uint32_t exp = mag >> fmt.man_bits, man = mag & ((1u << fmt.man_bits) - 1u);
  if (fmt.has_inf ? exp == (1u << fmt.exp_bits) - 1u : mag == 0x7fu)
    return std::bit_cast<float>(sign | (fmt.has_inf && man == 0 ? 0x7f800000u : 0x7fc00000u));
  if (exp == 0) {  // subnormal or zero: man units of 2^(1 - bias - man_bits)
    const float unit = std::bit_cast<float>(static_cast<std::uint32_t>(127 + 1 - fmt.bias - fmt.man_bits) << 23);
    const float v = static_cast<float>(man) * unit;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((mag << (23 - fmt.man_bits)) + (static_cast<std::uint32_t>(127 - fmt.bias) << 23)));
}

}  // namespace detail

// IEEE binary16 host value. Trivially copyable, 2 bytes; `half{}` is +0. Equality compares values
// (so -0 == +0 and NaN != NaN); compare `bits` for bitwise equality.
struct half {
  std::uint16_t bits;
  half() = default;
  constexpr explicit half(float f) : bits(detail::float_to_half_bits(f)) {}
  static constexpr half from_bits(std::uint16_t b) { half h{}; h.bits = b; return h; }
  constexpr operator float() const { return detail::half_bits_to_float(bits); }
  friend constexpr bool operator==(half a, half b) { return float(a) == float(b); }
};

// bfloat16 host value (8-bit exponent, 7-bit mantissa); same conventions as half.
struct bfloat16 {
  std::uint16_t bits;
  bfloat16() = default;
  constexpr explicit bfloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  static constexpr bfloat16 from_bits(std::uint16_t b) { bfloat16 h{}; h.bits = b; return h; }
  constexpr operator float() const { return detail::bf16_bits_to_float(bits); }
  friend constexpr bool operator==(bfloat16 a, bfloat16 b) { return float(a) == float(b); }
};

// OCP FP8 E4M3 host value (4-bit exponent, 3-bit mantissa, no infinities, largest 448); same
// conventions as half. The conversion from float saturates (see the top of this file).
struct float8_e4m3 {
  std::uint8_t bits;
  float8_e4m3() = default;
  constexpr explicit float8_e4m3(float f) : bits(detail::float_to_f8_bits(f, detail::kFloat8E4M3)) {}
  static constexpr float8_e4m3 from_bits(std::uint8_t b) { float8_e4m3 h{}; h.bits = b; return h; }
  constexpr operator float() const { return detail::f8_bits_to_float(bits, detail::kFloat8E4M3); }
  friend constexpr bool operator==(float8_e4m3 a, float8_e4m3 b) { return float(a) == float(b); }
};

// OCP FP8 E5M2 host value (5-bit exponent, 2-bit mantissa, infinities, largest 57344); same
// conventions as float8_e4m3.
struct float8_e5m2 {
  std::uint8_t bits;
  float8_e5m2() = default;
  constexpr explicit float8_e5m2(float f) : bits(detail::float_to_f8_bits(f, detail::kFloat8E5M2)) {}
  static constexpr float8_e5m2 from_bits(std::uint8_t b) { float8_e5m2 h{}; h.bits = b; return h; }
  constexpr operator float() const { return detail::f8_bits_to_float(bits, detail::kFloat8E5M2); }
  friend constexpr bool operator==(float8_e5m2 a, float8_e5m2 b) { return float(a) == float(b); }
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>);
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16>);
static_assert(sizeof(float8_e4m3) == 1 && std::is_trivially_copyable_v<float8_e4m3>);
static_assert(sizeof(float8_e5m2) == 1 && std::is_trivially_copyable_v<float8_e5m2>);

// dtype_of<T>::value / dtype_v<T>: the DType of a host element type (cv-qualifiers ignored).
template <class T>
struct dtype_of {
  static_assert(detail::always_false<T>,
                "tessera: unsupported element type; use float, tessera::half, tessera::bfloat16, "
                "tessera::float8_e4m3, tessera::float8_e5m2, std::int32_t or bool");
  static constexpr DType value = DType::f32;  // keeps later diagnostics quiet
};
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::i1; };
template <> struct dtype_of<float8_e4m3> { static constexpr DType value = DType::f8e4m3; };
template <> struct dtype_of<float8_e5m2> { static constexpr DType value = DType::f8e5m2; };

template <class T>
inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

// host_type<D>::type / host_type_t<D>: the host element type of a DType.
template <DType D> struct host_type;
template <> struct host_type<DType::f32> { using type = float; };
template <> struct host_type<DType::f16> { using type = half; };
template <> struct host_type<DType::bf16> { using type = bfloat16; };
template <> struct host_type<DType::i32> { using type = std::int32_t; };
template <> struct host_type<DType::i1> { using type = bool; };
template <> struct host_type<DType::f8e4m3> { using type = float8_e4m3; };
template <> struct host_type<DType::f8e5m2> { using type = float8_e5m2; };

template <DType D>
using host_type_t = typename host_type<D>::type;

}  // namespace tessera
