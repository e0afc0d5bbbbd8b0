// tessera/shape.h: static tile shapes and the shape algebra of tile expressions.
//
// Defines Shape<Dims...> (rank, size, dims, dim<I>) and the compile-time shape functions that the
// expression templates use: power-of-two tile checks (tile_shape_t), numpy broadcasting
// (broadcast_t, broadcastable_v), keepdim reductions (reduce_t), transposition (transpose_t) and
// rank padding (pad_rank_t). A failed check is a static_assert whose message starts with
// "tessera:"; after one, the functions still yield a plausible shape so that a user sees one error
// rather than a cascade. Assumes nothing but the standard library.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tessera {

template <int... Dims>
struct Shape {
  static constexpr int rank = static_cast<int>(sizeof...(Dims));
  static constexpr std::size_t size = (std::size_t{1} * ... * static_cast<std::size_t>(Dims));
  static constexpr std::array<int, sizeof...(Dims)> dims{Dims...};
  template <int I>
    requires(I >= 0 && I < rank)
  static constexpr int dim = dims[I];
};

template <class T> struct is_shape : std::false_type {};
template <int... D> struct is_shape<Shape<D...>> : std::true_type {};
template <class T> inline constexpr bool is_shape_v = is_shape<T>::value;

constexpr bool is_pow2(int d) { return d > 0 && (d & (d - 1)) == 0; }

template <class S> inline constexpr bool is_pow2_shape_v = false;
template <int... D> inline constexpr bool is_pow2_shape_v<Shape<D...>> = (is_pow2(D) && ...);

template <class S>
concept PowerOfTwoShape = is_pow2_shape_v<S>;

namespace detail {

// a[i] with an int index (shape code counts dims with ints).
template <class Arr>
constexpr auto& at(Arr& a, int i) { return a[static_cast<std::size_t>(i)]; }

// Shape<Arr[0], Arr[1], ...> from a std::array<int, N> constant.
template <auto Arr, class Seq> struct shape_from_array;
template <auto Arr, std::size_t... I>
struct shape_from_array<Arr, std::index_sequence<I...>> { using type = Shape<Arr[I]...>; };
template <auto Arr>
using shape_from_array_t = typename shape_from_array<Arr, std::make_index_sequence<Arr.size()>>::type;

template <class S>
struct tile_shape_check {
  static_assert(is_pow2_shape_v<S>, "tessera: tile dims must be powers of two");
  using type = S;
};

template <class A, class B>
struct broadcast_impl {
  static constexpr int R = A::rank > B::rank ? A::rank : B::rank;
  struct result { std::array<int, static_cast<std::size_t>(R)> d{}; bool ok = true; };
  static constexpr result compute() {
    result r;
    for (int i = 0; i < R; ++i) {  // i counts dims from the trailing end
      const int a = i < A::rank ? at(A::dims, A::rank - 1 - i) : 1;
      const int b = i < B::rank ? at(B::dims, B::rank - 1 - i) : 1;
      at(r.d, R - 1 - i) = (a == 1) ? b : a;
      if (a != b && a != 1 && b != 1) r.ok = false;
    }
    return r;
  }
  static constexpr result value = compute();
};

template <class A, class B>
struct broadcast_check {
  static_assert(broadcast_impl<A, B>::value.ok, "tessera: tile shapes cannot be broadcast together");
  using type = shape_from_array_t<broadcast_impl<A, B>::value.d>;
};

template <class S, int Axis>
struct reduce_check {
  static_assert(Axis >= 0 && Axis < S::rank, "tessera: reduction axis out of range");
  static constexpr auto dims = [] {
    std::array<int, S::rank> d = S::dims;
    if (Axis >= 0 && Axis < S::rank) at(d, Axis) = 1;
    return d;
  }();
  using type = shape_from_array_t<dims>;
};

template <class S>
struct transpose_check {
  static_assert(S::rank == 2, "tessera: transpose needs a rank-2 tile");
  static constexpr auto dims = [] {
    std::array<int, S::rank> d = S::dims;
    if constexpr (S::rank == 2) d = {S::dims[1], S::dims[0]};
    return d;
  }();
  using type = shape_from_array_t<dims>;
};

template <class S, int R>
struct pad_rank {
  static_assert(S::rank <= R, "tessera: cannot pad a shape to a lower rank");
  static constexpr auto dims = [] {
    std::array<int, (R > S::rank ? R : S::rank)> d{};
    const int lead = static_cast<int>(d.size()) - S::rank;
    for (int i = 0; i < static_cast<int>(d.size()); ++i) at(d, i) = i < lead ? 1 : at(S::dims, i - lead);
    return d;
  }();
  using type = shape_from_array_t<dims>;
};

}  // namespace detail

// Shape<Dims...> after checking that every dim is a power of two.
template <int... Dims>
using tile_shape_t = typename detail::tile_shape_check<Shape<Dims...>>::type;

// Whether A and B broadcast together (numpy rules: align trailing dims; each pair equal or one 1).
template <class A, class B>
inline constexpr bool broadcastable_v = detail::broadcast_impl<A, B>::value.ok;

// The numpy broadcast of A and B; a static_assert if they do not broadcast.
template <class A, class B>
using broadcast_t = typename detail::broadcast_check<A, B>::type;

// S with dim Axis set to 1 (a keepdim reduction); a static_assert if Axis is out of range.
template <class S, int Axis>
using reduce_t = typename detail::reduce_check<S, Axis>::type;

// S with its two dims swapped; a static_assert unless S has rank 2.
template <class S>
using transpose_t = typename detail::transpose_check<S>::type;

// S with leading 1s added up to rank R (numpy's implicit rank alignment, made explicit).
template <class S, int R>
using pad_rank_t = typename detail::pad_rank<S, R>::type;

}  // namespace tessera
