// abi_check.h: compares function signatures we wrote by hand for dlsym'ed libraries (libcuda,
// libnvJitLink, libnvrtc) with the vendor's header, by ABI. Enums count as int, opaque structs as one
// placeholder, pointers and const are kept. Used only in static_asserts when the header exists.
#pragma once

#include <type_traits>

namespace tessera::detail::abi_check {

struct Opaque;

template <class T> constexpr auto abi_of() {
  if constexpr (std::is_pointer_v<T>) {
    using Pointee = std::remove_pointer_t<T>;
    using Mapped = typename decltype(abi_of<std::remove_cv_t<Pointee>>())::type;
    if constexpr (std::is_const_v<Pointee>)
      return std::type_identity<const Mapped*>{};
    else
      return std::type_identity<Mapped*>{};
  } else if constexpr (std::is_enum_v<T>) {
    return std::type_identity<int>{};
  } else if constexpr (std::is_class_v<T>) {
    return std::type_identity<Opaque>{};
  } else {
    return std::type_identity<T>{};
  }
}

template <class T> using abi_t = typename decltype(abi_of<T>())::type;

template <class F> struct fn;
template <class R, class... A> struct fn<R (*)(A...)> {
  using type = abi_t<R> (*)(abi_t<A>...);
};

template <class Ours, class Theirs>
inline constexpr bool same_abi = std::is_same_v<typename fn<Ours>::type, typename fn<Theirs>::type>;

}  // namespace tessera::detail::abi_check
