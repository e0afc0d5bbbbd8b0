// tensor.h: host tensors and output partitions.
//
// Tensor<T, Rank> is a move-only handle to a dense, row-major array of T (float, half, bfloat16,
// int32_t or bool) with run-time sizes. Copies are explicit (clone()) so that two handles never
// name the same memory by accident: the launcher relies on that to prove outputs are exclusive.
// t.partition<Tile...>() splits t into disjoint, exhaustive tiles of static shape Tile (the last
// tiles overhang ragged edges; the library masks them) and borrows t exclusively for a launch.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/detail/storage.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera {

template <class T, int Rank, int... Tile>
class Partition;

template <class T, int Rank>
class Tensor {
  static_assert(Rank >= 1 && Rank <= 4, "tessera: tensors have rank 1 to 4");

 public:
  using value_type = T;
  static constexpr int rank = Rank;
  static constexpr DType dtype = dtype_v<T>;

  // A zero-filled tensor of the given sizes.
  explicit Tensor(std::array<int64_t, Rank> shape) : shape_(shape) {
    int64_t n = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      if (shape_[d] < 0) throw Error("tessera::Tensor: negative size " + std::to_string(shape_[d]));
      strides_[d] = n;
      n *= shape_[d];
    }
    numel_ = n;
    storage_ = std::make_shared<detail::Storage>(static_cast<std::size_t>(n) * sizeof(T));
  }
  // A tensor holding `values` (row-major); values.size() must equal the element count.
  Tensor(std::array<int64_t, Rank> shape, std::span<const T> values) : Tensor(shape) {
    if (static_cast<int64_t>(values.size()) != numel_)
      throw Error("tessera::Tensor: " + std::to_string(values.size()) + " values given for " +
                  std::to_string(numel_) + " elements");
    std::copy(values.begin(), values.end(), data());
  }

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // A deep copy with its own storage.
  Tensor clone() const {
    Tensor copy(shape_);
    const T* src = data();
    std::copy(src, src + numel_, copy.data());
    return copy;
  }

  const std::array<int64_t, Rank>& shape() const { return shape_; }
  int64_t shape(int d) const { return shape_[d]; }
  const std::array<int64_t, Rank>& strides() const { return strides_; }
  int64_t numel() const { return numel_; }

  // Host access. If a GPU kernel wrote the tensor last, its contents are copied back first;
  // mutable access makes the device copy stale (it is uploaded again by the next GPU launch).
  T* data() { return reinterpret_cast<T*>(storage_->host_for_write()); }
  const T* data() const { return reinterpret_cast<const T*>(storage_->host_for_read()); }
  std::vector<T> to_vector() const {
    const T* p = data();
    return std::vector<T>(p, p + numel_);
  }

  template <class... I>
  T& operator()(I... idx) {
    static_assert(sizeof...(I) == Rank, "tessera: one index per dimension");
    return data()[offset({static_cast<int64_t>(idx)...})];
  }
  template <class... I>
  const T& operator()(I... idx) const {
    static_assert(sizeof...(I) == Rank, "tessera: one index per dimension");
    return data()[offset({static_cast<int64_t>(idx)...})];
  }

  // Sets every element to `value` (on the host; a GPU launch uploads it when it needs it).
  void fill(T value) {
    T* p = data();
    std::fill(p, p + numel_, value);
  }

  // The same elements with new sizes (same element count, row-major); consumes this handle so
  // that one handle owns the storage: auto m = std::move(v).template reshape<2>({rows, cols}).
  template <int NewRank>
  Tensor<T, NewRank> reshape(std::array<int64_t, NewRank> shape) && {
    Tensor<T, NewRank> out(shape, storage_, numel_);
    storage_.reset();
    return out;
  }

  // Borrows this tensor exclusively as a kernel output split into Tile-shaped tiles.
  template <int... Tile>
  Partition<T, Rank, Tile...> partition() & {
    static_assert(sizeof...(Tile) == Rank, "tessera: the partition's tile must have one size per tensor dimension");
    return Partition<T, Rank, Tile...>(*this);
  }
  template <int... Tile>
  void partition() && = delete;  // a temporary cannot be borrowed: keep the tensor in a variable

  // For the launcher.
  const std::shared_ptr<detail::Storage>& storage() const { return storage_; }

 private:
  template <class, int>
  friend class Tensor;
  Tensor(std::array<int64_t, Rank> shape, std::shared_ptr<detail::Storage> storage, int64_t expected_numel)
      : shape_(shape) {
    int64_t n = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      if (shape_[d] < 0) throw Error("tessera::Tensor::reshape: negative size " + std::to_string(shape_[d]));
      strides_[d] = n;
      n *= shape_[d];
    }
    if (n != expected_numel)
      throw Error("tessera::Tensor::reshape: " + std::to_string(expected_numel) + " elements cannot have " +
                  std::to_string(n));
    numel_ = n;
    storage_ = std::move(storage);
  }

  int64_t offset(std::array<int64_t, Rank> idx) const {
    int64_t o = 0;
    for (int d = 0; d < Rank; ++d) o += idx[d] * strides_[d];
    return o;
  }

  std::array<int64_t, Rank> shape_{};
  std::array<int64_t, Rank> strides_{};
  int64_t numel_ = 0;
  std::shared_ptr<detail::Storage> storage_;
};

// An exclusive borrow of a tensor as a kernel output, tiled into Tile-shaped pieces. The grid of a
// launch is ceil(shape[d] / Tile[d]) along each axis d.
template <class T, int Rank, int... Tile>
class Partition {
 public:
  using value_type = T;
  static constexpr int rank = Rank;
  static constexpr std::array<int64_t, Rank> tile{Tile...};

  explicit Partition(Tensor<T, Rank>& t) : tensor_(&t) {}
  Tensor<T, Rank>& tensor() const { return *tensor_; }
  std::array<int64_t, Rank> grid() const {
    std::array<int64_t, Rank> g{};
    for (int d = 0; d < Rank; ++d) g[d] = (tensor_->shape(d) + tile[d] - 1) / tile[d];
    return g;
  }

 private:
  Tensor<T, Rank>* tensor_;
};

}  // namespace tessera
