// tensor.h: host tensors and output partitions.
//
// Tensor<T, Rank> is a move-only handle to an array of T (float, half, bfloat16, int32_t or bool)
// with run-time sizes, row-major unless wrapped from foreign memory with other strides. Copies
// are explicit (clone()) so that two handles never name the same memory by accident: the launcher
// relies on that to prove outputs are exclusive. t.partition<Tile...>() splits t into disjoint,
// exhaustive tiles of static shape Tile (the last tiles overhang ragged edges; the library masks
// them) and borrows t exclusively for a launch; std::move(t).partition<Tile...>() moves t into the
// launch instead, which gives it back when it is done (LaunchHandle::get, or the return value of a
// synchronous launch). Host access waits for launches in flight that use the tensor (launch.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/detail/storage.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera {

template <class T, int Rank, int... Tile>
class Partition;
template <class T, int Rank, int... Tile>
class OwnedPartition;

namespace detail {
// A Storage for `bytes` bytes of foreign device memory at `device_ptr` (libtessera); `release`
// (if any) is called once no tensor and no work in flight uses it.
std::shared_ptr<Storage> foreign_device_storage(void* device_ptr, std::size_t bytes, std::function<void()> release);

// Sizes are checked before anything is allocated: an element count or a byte size past 2^63-1
// (int64, and so size_t on the 64-bit hosts tessera runs on) throws tessera::Error naming the
// sizes, instead of wrapping around to a small allocation that kernels would then overrun.

// "[a b c]", for messages.
inline std::string sizes_str(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (std::size_t d = 0; d < sizes.size(); ++d) s += (d ? " " : "") + std::to_string(sizes[d]);
  return s + "]";
}
// a * b, or false if it does not fit int64 (a, b >= 0).
inline bool mul_fits(int64_t a, int64_t b, int64_t& out) {
  if (a != 0 && b > INT64_MAX / a) return false;
  out = a * b;
  return true;
}
// The element count of `shape`; throws, naming `what` and the sizes, if a size is negative or the
// count, or its bytes at `element_bytes` each, overflows.
inline int64_t checked_numel(std::span<const int64_t> shape, std::size_t element_bytes, const char* what) {
  bool empty = false;
  for (int64_t s : shape) {
    if (s < 0) throw Error(std::string(what) + ": negative size " + std::to_string(s));
    empty = empty || s == 0;
  }
  if (empty) return 0;
  int64_t n = 1, bytes = 0;
  bool fits = true;
  for (int64_t s : shape) fits = fits && mul_fits(n, s, n);
  fits = fits && mul_fits(n, static_cast<int64_t>(element_bytes), bytes);
  if (!fits)
    throw Error(std::string(what) + ": sizes " + sizes_str(shape) + " of " + std::to_string(element_bytes) +
                "-byte elements overflow: the element count or the byte size exceeds 2^63-1");
  return n;
}
// Row-major strides of `shape` (in elements) into `strides`. They fit int64 wherever the element
// count does; past that (possible only for a tensor with no element, whose strides address
// nothing) they saturate at 0.
inline void row_major_strides(std::span<const int64_t> shape, std::span<int64_t> strides) {
  int64_t n = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = n;
    if (!mul_fits(n, shape[d], n)) n = 0;
  }
}
// The elements one past the largest offset reached by `shape` and `strides` (0 for no element),
// i.e. the elements from the first to the last; throws, naming `what`, on overflow (also of its
// bytes).
inline int64_t checked_extent(std::span<const int64_t> shape, std::span<const int64_t> strides,
                              std::size_t element_bytes, const char* what) {
  int64_t extent = 1, bytes = 0;
  bool fits = true;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    int64_t reach = 0;
    fits = fits && mul_fits(shape[d] - 1, strides[d], reach) && reach <= INT64_MAX - extent;
    if (fits) extent += reach;
  }
  fits = fits && mul_fits(extent, static_cast<int64_t>(element_bytes), bytes);
  if (!fits)
    throw Error(std::string(what) + ": sizes " + sizes_str(shape) + " with strides " + sizes_str(strides) + " of " +
                std::to_string(element_bytes) + "-byte elements reach past 2^63-1 bytes");
  return extent;
}

// Whether elements with these sizes and strides are dense and row-major (a dimension of size 1
// may have any stride).
inline bool dense_row_major(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  int64_t n = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != n) return false;
    n *= shape[d];
  }
  return true;
}
}  // namespace detail

template <class T, int Rank>
class Tensor {
  static_assert(Rank >= 1 && Rank <= 4, "tessera: tensors have rank 1 to 4");

 public:
  using value_type = T;
  static constexpr int rank = Rank;
  static constexpr DType dtype = dtype_v<T>;

  // A zero-filled tensor of the given sizes. No memory is committed yet: the host copy is made
  // (zeroed) at the first host access or CPU launch, the device copy (zeroed on the device) at the
  // first GPU launch (detail/storage.h).
  explicit Tensor(std::array<int64_t, Rank> shape) : shape_(shape) {
    numel_ = detail::checked_numel(shape_, sizeof(T), "tessera::Tensor");
    detail::row_major_strides(shape_, strides_);
    storage_ = std::make_shared<detail::Storage>(static_cast<std::size_t>(numel_) * sizeof(T));
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

  // Wraps device memory allocated by someone else (PyTorch, cudaMalloc, cuBLAS workspaces): no
  // copy is made and tessera does not own it. `strides` are in elements (default: row-major);
  // they must be non-negative. `release`, if given, is called when the last tensor and the last
  // work in flight using the memory are gone (e.g. to drop a reference to the owning framework's
  // tensor). Host access downloads into a host copy made on demand. Needs a GPU to be used.
  static Tensor from_device(void* device_ptr, std::array<int64_t, Rank> shape,
                            std::optional<std::array<int64_t, Rank>> strides = std::nullopt,
                            std::function<void()> release = nullptr) {
    constexpr const char* what = "tessera::Tensor::from_device";
    const int64_t n = detail::checked_numel(shape, sizeof(T), what);
    std::array<int64_t, Rank> st{};
    if (strides)
      st = *strides;
    else
      detail::row_major_strides(shape, st);
    for (int64_t s : st)
      if (s < 0) throw Error(std::string(what) + ": negative stride " + std::to_string(s));
    const int64_t extent = detail::checked_extent(shape, st, sizeof(T), what);
    if (!device_ptr && n != 0) throw Error("tessera::Tensor::from_device: null device pointer");
    auto storage = detail::foreign_device_storage(device_ptr, static_cast<std::size_t>(extent) * sizeof(T),
                                                  std::move(release));
    return Tensor(shape, st, n, std::move(storage));
  }

  // A deep copy with its own (row-major) storage.
  Tensor clone() const {
    Tensor copy(shape_);
    const T* src = data();
    T* dst = copy.data();
    if (contiguous()) {
      std::copy(src, src + numel_, dst);
    } else {
      std::array<int64_t, Rank> idx{};
      for (int64_t i = 0; i < numel_; ++i) {
        dst[i] = src[offset(idx)];
        for (int d = Rank - 1; d >= 0 && ++idx[d] == shape_[d]; --d) idx[d] = 0;
      }
    }
    return copy;
  }

  const std::array<int64_t, Rank>& shape() const { return shape_; }
  int64_t shape(int d) const { return shape_[d]; }
  const std::array<int64_t, Rank>& strides() const { return strides_; }
  int64_t numel() const { return numel_; }
  // Whether the elements are dense and row-major (always, unless wrapped with other strides).
  bool contiguous() const { return detail::dense_row_major(shape_, strides_); }

  // Host access. Waits for launches in flight that write the tensor (mutable access: that use it
  // at all), or throws tessera::Error in strict mode. If a GPU kernel wrote the tensor last, its
  // contents are copied back first; mutable access makes the device copy stale (it is uploaded
  // again by the next GPU launch). The pointer stays valid until the next launch that uses the
  // tensor: keep host access and launches apart. data() and to_vector() follow the strides.
  T* data() { return reinterpret_cast<T*>(storage_->host_for_write()) + offset_; }
  const T* data() const { return reinterpret_cast<const T*>(storage_->host_for_read()) + offset_; }
  std::vector<T> to_vector() const {
    if (contiguous()) {
      const T* p = data();
      return std::vector<T>(p, p + numel_);
    }
    Tensor dense = clone();
    const T* p = dense.data();
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
    if (contiguous()) {
      std::fill(p, p + numel_, value);
      return;
    }
    std::array<int64_t, Rank> idx{};
    for (int64_t i = 0; i < numel_; ++i) {
      p[offset(idx)] = value;
      for (int d = Rank - 1; d >= 0 && ++idx[d] == shape_[d]; --d) idx[d] = 0;
    }
  }

  // The same elements with new sizes (same element count, row-major); consumes this handle so
  // that one handle owns the storage: auto m = std::move(v).template reshape<2>({rows, cols}).
  template <int NewRank>
  Tensor<T, NewRank> reshape(std::array<int64_t, NewRank> shape) && {
    if (!contiguous()) throw Error("tessera::Tensor::reshape: the tensor is not contiguous (clone() it first)");
    Tensor<T, NewRank> out(shape, storage_, numel_);
    out.offset_ = offset_;
    storage_.reset();
    return out;
  }

  // Views: other handles to (some of) the same elements, sharing the storage, no copy. Launches
  // treat all handles of one storage as one tensor: a view and its source (or two views) cannot
  // be an output and another argument of the same launch, and every launch or host access is
  // ordered after the work in flight on the storage, whichever handle it came through. Kernels
  // read and write views through their strides (a strided view is not vectorized).
  //
  // Elements [begin, end) along dimension `dim`.
  Tensor slice(int dim, int64_t begin, int64_t end) const {
    if (dim < 0 || dim >= Rank)
      throw Error("tessera::Tensor::slice: dimension " + std::to_string(dim) + " of a rank-" +
                  std::to_string(Rank) + " tensor");
    if (begin < 0 || begin > end || end > shape_[dim])
      throw Error("tessera::Tensor::slice: [" + std::to_string(begin) + ", " + std::to_string(end) +
                  ") is not within dimension " + std::to_string(dim) + " of size " + std::to_string(shape_[dim]));
    Tensor v = view_of_storage();
    v.shape_[dim] = end - begin;
    v.offset_ += begin * strides_[dim];
    v.numel_ = 1;
    for (int d = 0; d < Rank; ++d) v.numel_ *= v.shape_[d];
    return v;
  }
  // The matrix with its two dimensions swapped (rank 2).
  Tensor transposed() const
    requires(Rank == 2)
  {
    Tensor v = view_of_storage();
    std::swap(v.shape_[0], v.shape_[1]);
    std::swap(v.strides_[0], v.strides_[1]);
    return v;
  }
  // The offset of the first element from the start of the storage, in elements.
  int64_t storage_offset() const { return offset_; }

  // Borrows this tensor exclusively as a kernel output split into Tile-shaped tiles.
  template <int... Tile>
  Partition<T, Rank, Tile...> partition() & {
    static_assert(sizeof...(Tile) == Rank, "tessera: the partition's tile must have one size per tensor dimension");
    return Partition<T, Rank, Tile...>(*this);
  }
  // Moves this tensor into a launch as an output split into Tile-shaped tiles; the launch gives it
  // back when it is done: auto h = k.launch_async(std::move(z).partition<128>(), x); z = std::move(h).get();
  template <int... Tile>
  OwnedPartition<T, Rank, Tile...> partition() && {
    static_assert(sizeof...(Tile) == Rank, "tessera: the partition's tile must have one size per tensor dimension");
    return OwnedPartition<T, Rank, Tile...>(std::move(*this));
  }

  // Makes the tensor (its storage: every view of it) read-only for good, once the work in flight
  // that writes it has ended (waited for here). A launch that would write it, a host write and an
  // exclusive borrow then throw; reading it on the host takes a const handle
  // (std::as_const(t).data(), to_vector()). Its bytes never change again, so kernels may read it
  // before the kernels they follow on the GPU have ended: model weights, which a matrix-vector
  // product's bulk rings (CompilerHints::stream_stages with bulk_streams) then start copying while
  // the kernel before it ends.
  void freeze() const {
    if (!storage_) throw Error("tessera::Tensor::freeze: a moved-from tensor");
    storage_->freeze();
  }
  bool frozen() const { return storage_ && storage_->frozen(); }  // a moved-from tensor: false

  // For the launcher.
  const std::shared_ptr<detail::Storage>& storage() const { return storage_; }

 private:
  template <class, int>
  friend class Tensor;
  Tensor(std::array<int64_t, Rank> shape, std::array<int64_t, Rank> strides, int64_t numel,
         std::shared_ptr<detail::Storage> storage)
      : shape_(shape), strides_(strides), numel_(numel), storage_(std::move(storage)) {}
  Tensor(std::array<int64_t, Rank> shape, std::shared_ptr<detail::Storage> storage, int64_t expected_numel)
      : shape_(shape) {
    const int64_t n = detail::checked_numel(shape_, sizeof(T), "tessera::Tensor::reshape");
    detail::row_major_strides(shape_, strides_);
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
  // A second handle to this tensor's elements.
  Tensor view_of_storage() const {
    if (!storage_) throw Error("tessera::Tensor: a view of a moved-from tensor");
    Tensor v(shape_, strides_, numel_, storage_);
    v.offset_ = offset_;
    return v;
  }

  std::array<int64_t, Rank> shape_{};
  std::array<int64_t, Rank> strides_{};
  int64_t numel_ = 0;
  int64_t offset_ = 0;  // elements from the start of the storage to element 0
  std::shared_ptr<detail::Storage> storage_;
};

// An exclusive borrow of a tensor as a kernel output, tiled into Tile-shaped pieces. The grid of a
// launch is ceil(shape[d] / Tile[d]) along each axis d; the grid has three axes, so outputs have
// rank 1 to 3 (a rank-4 tensor can be an input).
template <class T, int Rank, int... Tile>
class Partition {
  static_assert(Rank <= 3,
                "tessera: an output partition has rank 1 to 3 (one grid axis per dim, program_id<0..2>); "
                "reshape the tensor to rank 3 or less to write it, e.g. std::move(t).reshape<3>({a * b, c, d})");

 public:
  using value_type = T;
  static constexpr int rank = Rank;
  static constexpr std::array<int64_t, Rank> tile{Tile...};

  explicit Partition(Tensor<T, Rank>& t) : tensor_(&t) {}
  Tensor<T, Rank>& tensor() const { return *tensor_; }
  std::array<int64_t, Rank> grid() const {
    std::array<int64_t, Rank> g{};
    for (int d = 0; d < Rank; ++d) g[d] = tensor_->shape(d) / tile[d] + (tensor_->shape(d) % tile[d] != 0);
    return g;
  }

 private:
  Tensor<T, Rank>* tensor_;
};

// An output moved into a launch: like Partition, but the launch owns the tensor until it is done.
template <class T, int Rank, int... Tile>
class OwnedPartition {
  static_assert(Rank <= 3,
                "tessera: an output partition has rank 1 to 3 (one grid axis per dim, program_id<0..2>); "
                "reshape the tensor to rank 3 or less to write it, e.g. std::move(t).reshape<3>({a * b, c, d})");

 public:
  using value_type = T;
  static constexpr int rank = Rank;
  static constexpr std::array<int64_t, Rank> tile{Tile...};

  explicit OwnedPartition(Tensor<T, Rank>&& t) : tensor_(std::move(t)) {}
  const Tensor<T, Rank>& tensor() const { return tensor_; }
  Tensor<T, Rank> take() && { return std::move(tensor_); }

 private:
  Tensor<T, Rank> tensor_;
};

}  // namespace tessera
